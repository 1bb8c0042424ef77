/*
 * sweep_plot.c - a sweep's metric against its first varied key, as SVG.
 *
 * The x axis places the first key's values by their number (read with the
 * key's unit: "400Gb/s", "25 MiB", "2 us"; on a log scale when they are all
 * positive and span two decades or more) and labels each with the text as
 * given; values that are not all numbers are spaced evenly. The axes are
 * labelled with the key's and the metric's names in words and their unit
 * (the key's description, the unit the values share), the raw names under
 * the title. The y axis has rounded ticks and starts at 0 unless the data
 * lie in its upper half, where it starts below the lowest point and says
 * so (svg.h). One polyline (and a dot per point) per combination of the
 * other keys' values, the legend titled with their names, wrapped to fit;
 * failed and unfinished points are left out of their line.
 */
#include "report/sweep_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "report/out.h"
#include "report/svg.h"

#define W 900.0
#define H 500.0
#define LEFT 90.0
#define RIGHT 250.0
#define TOP 60.0
#define BOTTOM 70.0
#define MAX_LEGEND 30
#define LEGEND_CHARS 32 /* of 12 px text in the legend's 230 px */

/* The value as a number with the key's unit; 0 when it is none. */
static int as_number(const cs_config_key *k, const char *text, double *out)
{
	char msg[256], *end;
	int64_t ns;
	switch (k ? k->kind : CS_KIND_STRING) {
	case CS_KIND_INT:
	case CS_KIND_FLOAT:
	case CS_KIND_RATIO: *out = strtod(text, &end); return end != text && !*end && isfinite(*out);
	case CS_KIND_SIZE: return cs_parse_size(text, out, msg, sizeof msg) == CS_OK;
	case CS_KIND_BANDWIDTH: return cs_parse_bandwidth(text, out, msg, sizeof msg) == CS_OK;
	case CS_KIND_FLOPS: return cs_parse_flops(text, out, msg, sizeof msg) == CS_OK;
	case CS_KIND_TIME:
		if (cs_parse_time(text, &ns, msg, sizeof msg) != CS_OK)
			return 0;
		*out = (double)ns;
		return 1;
	default: return 0;
	}
}

/* A key in words: its description up to " (", ": " or "; ", or, where that is a list of values or long, its last two
 * names ("pipeline schedule"). */
static void key_name(const char *path, char *buf, size_t n)
{
	const cs_config_key *k = cs_config_key_find(path);
	const char *d = k ? k->desc : NULL;
	size_t len = 0;
	while (d && d[len] && strncmp(d + len, " (", 2) && strncmp(d + len, ": ", 2) &&
	       strncmp(d + len, "; ", 2))
		len++;
	while (len && d[len - 1] == ' ')
		len--;
	if (d && len && len <= 40 && !memchr(d, '|', len) && !memchr(d, '=', len)) {
		snprintf(buf, n, "%.*s", (int)len, d);
		return;
	}
	const char *dot = strrchr(path, '.'), *from = path;
	for (const char *p = path; dot && p < dot; p++)
		if (*p == '.')
			from = p + 1;
	snprintf(buf, n, "%s", from);
	for (char *p = buf; *p; p++)
		if (*p == '.' || *p == '_')
			*p = ' ';
}

/* The unit the values of key 0 share after their numbers ("Gb/s" of
 * 100Gb/s and 400Gb/s), or "" when they share none or are not numbers. */
static void shared_unit(const cs_sweep *sw, char *buf, size_t n)
{
	const cs_config_key *k = cs_config_key_find(cs_sweep_key(sw, 0));
	buf[0] = 0;
	if (!k || k->kind == CS_KIND_INT || k->kind == CS_KIND_FLOAT || k->kind == CS_KIND_RATIO ||
	    k->kind == CS_KIND_ENUM || k->kind == CS_KIND_STRING || k->kind == CS_KIND_BOOL)
		return;
	for (size_t v = 0; v < cs_sweep_nvalues(sw, 0); v++) {
		const char *t = cs_sweep_value(sw, 0, v);
		char *end;
		strtod(t, &end);
		if (end == t)
			goto none;
		while (*end == ' ')
			end++;
		if (!*end || (v && strcmp(buf, end)))
			goto none;
		snprintf(buf, n, "%s", end);
	}
	return;
none:
	buf[0] = 0;
}

/* A metric column in words (into name) and its unit (into unit, "" when
 * it has none). */
static void metric_name(const char *col, char *name, size_t n, char *unit, size_t un)
{
	static const struct {
		const char *col, *name, *unit;
	} names[] = {
		{ "step_time_s", "step time", "s" },
		{ "tokens_per_s", "throughput", "tokens/s" },
		{ "tflops_per_gpu", "model FLOP rate per GPU", "TFLOP/s" },
		{ "tflops_per_gpu_megatron", "FLOP rate per GPU, Megatron's count", "TFLOP/s" },
		{ "tflops_per_gpu_hardware", "hardware FLOP rate per GPU", "TFLOP/s" },
		{ "mfu", "MFU", "fraction of peak" },
		{ "mfu_megatron", "MFU, Megatron's count", "fraction of peak" },
		{ "hfu", "HFU", "fraction of peak" },
		{ "memory_total_bytes", "memory per GPU", "bytes" },
		{ "effective_training", "effective training", "fraction of the time" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(col, names[i].col)) {
			snprintf(name, n, "%s", names[i].name);
			snprintf(unit, un, "%s", names[i].unit);
			return;
		}
	/* the rest: words, and the unit its suffix names */
	size_t len = strlen(col);
	snprintf(unit, un, "%s", "");
	if (len > 2 && !strcmp(col + len - 2, "_s")) {
		snprintf(unit, un, "%s", "s");
		len -= 2;
	} else if (len > 6 && !strcmp(col + len - 6, "_bytes")) {
		snprintf(unit, un, "%s", "bytes");
		len -= 6;
	}
	snprintf(name, n, "%.*s", (int)len, col);
	for (char *p = name; *p; p++)
		if (*p == '_')
			*p = ' ';
}

typedef struct frame {
	double *xpos;   /* per value of the first key, in plot pixels */
	cs__svg_axis y; /* the metric */
} frame;

static double ypix(const frame *fr, double v) { return cs__svg_pos(&fr->y, v); }

static void place_x(const cs_sweep *sw, double *xpos)
{
	size_t n = cs_sweep_nvalues(sw, 0);
	const cs_config_key *k = cs_config_key_find(cs_sweep_key(sw, 0));
	double lo = INFINITY, hi = -INFINITY, x0 = LEFT + 30, x1 = W - RIGHT - 30;
	int numeric = 1;
	for (size_t v = 0; v < n && numeric; v++) {
		numeric = as_number(k, cs_sweep_value(sw, 0, v), &xpos[v]);
		if (numeric) {
			lo = fmin(lo, xpos[v]);
			hi = fmax(hi, xpos[v]);
		}
	}
	if (!numeric || n < 2 || hi == lo) {
		for (size_t v = 0; v < n; v++)
			xpos[v] = n < 2 ? (x0 + x1) / 2 : x0 + (x1 - x0) * (double)v / (double)(n - 1);
		return;
	}
	int logx = lo > 0 && hi / lo >= 100;
	for (size_t v = 0; v < n; v++) {
		double t = logx ? log(xpos[v] / lo) / log(hi / lo) : (xpos[v] - lo) / (hi - lo);
		xpos[v] = x0 + (x1 - x0) * t;
	}
}

/* Series s's values of the keys after the first, ", " between; with one
 * key, the metric's name. */
static void series_label(const cs_sweep *sw, size_t s, const char *metric, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = 0;
	if (cs_sweep_nkeys(sw) < 2) {
		snprintf(buf, n, "%s", metric);
		return;
	}
	/* point s has the first key's first value and the series' other values */
	for (size_t k = 1; k < cs_sweep_nkeys(sw) && len < n; k++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", k > 1 ? ", " : "",
					cs_sweep_value(sw, k, cs_sweep_point_index(sw, s, k)));
}

static int cmp_x(const void *a, const void *b, const double *xpos)
{
	double d = xpos[*(const size_t *)a] - xpos[*(const size_t *)b];
	return (d > 0) - (d < 0);
}

int cs_sweep_plot(const cs_sweep *sw, const char *metric, FILE *f, cs_diag *diag)
{
	int col = cs_sweep_column_find(sw, metric);
	if (col < 0) {
		snprintf(diag->msg, sizeof diag->msg,
			 "unknown metric '%.100s' (a column of the CSV, "
			 "e.g. step_time_s)",
			 metric);
		return -1;
	}
	if (!cs_sweep_nkeys(sw)) {
		snprintf(diag->msg, sizeof diag->msg, "a plot needs a varied key");
		return -1;
	}
	size_t nx = cs_sweep_nvalues(sw, 0), nseries = cs_sweep_points(sw) / nx;
	frame fr;
	size_t *order = malloc(nx * sizeof *order);
	fr.xpos = malloc(nx * sizeof *fr.xpos);
	if (!order || !fr.xpos) {
		free(order);
		free(fr.xpos);
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		return -1;
	}
	place_x(sw, fr.xpos);
	for (size_t i = 0; i < nx; i++)
		order[i] = i;
	for (size_t i = 1; i < nx; i++) /* insertion sort by x: stable, small n */
		for (size_t j = i; j > 0 && cmp_x(&order[j - 1], &order[j], fr.xpos) > 0; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}

	double lo = INFINITY, hi = -INFINITY;
	for (size_t p = 0; p < cs_sweep_points(sw); p++) {
		const double *v = cs_sweep_point_values(sw, p);
		if (v && isfinite(v[col])) {
			lo = fmin(lo, v[col]);
			hi = fmax(hi, v[col]);
		}
	}
	cs__svg_axis_lin(&fr.y, lo, hi, H - BOTTOM, TOP);

	char xname[128], unit[32], xlabel[192], yname[128], yunit[32], ylabel[192], line[512];
	key_name(cs_sweep_key(sw, 0), xname, sizeof xname);
	shared_unit(sw, unit, sizeof unit);
	snprintf(xlabel, sizeof xlabel, "%s%s%s%s", xname, *unit ? " (" : "", unit, *unit ? ")" : "");
	metric_name(metric, yname, sizeof yname, yunit, sizeof yunit);
	snprintf(ylabel, sizeof ylabel, "%s%s%s%s", yname, *yunit ? " (" : "", yunit, *yunit ? ")" : "");
	cs__svg_begin(f, W, H);
	snprintf(line, sizeof line, "%s against %s", yname, xname);
	cs__svg_text(f, (LEFT + W - RIGHT) / 2, 24, "text-anchor=\"middle\" font-size=\"15\"", line);
	snprintf(line, sizeof line, "%s against %s", metric, cs_sweep_key(sw, 0));
	cs__svg_text(f, (LEFT + W - RIGHT) / 2, 42, "text-anchor=\"middle\" fill=\"#555\"", line);

	/* axes, grid and ticks */
	cs__svg_yaxis(f, &fr.y, LEFT, W - RIGHT, ylabel, NULL);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", LEFT,
		H - BOTTOM, W - RIGHT, H - BOTTOM);
	fputs("<g class=\"x-ticks\" text-anchor=\"middle\">\n", f);
	for (size_t i = 0; i < nx; i++) {
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
			"<text x=\"%.1f\" y=\"%.1f\">",
			fr.xpos[i], H - BOTTOM, fr.xpos[i], H - BOTTOM + 5, fr.xpos[i], H - BOTTOM + 20);
		cs_xml_text(f, cs_sweep_value(sw, 0, i));
		fputs("</text>\n", f);
	}
	fputs("</g>\n", f);
	cs__svg_text(f, (LEFT + W - RIGHT) / 2, H - 20, "text-anchor=\"middle\"", xlabel);

	/* one line per series; series s holds points i * nseries + s */
	for (size_t s = 0; s < nseries; s++) {
		const char *c = cs__svg_colour(s);
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
		int first = 1;
		for (size_t i = 0; i < nx; i++) {
			const double *v = cs_sweep_point_values(sw, order[i] * nseries + s);
			if (!v || !isfinite(v[col]))
				continue;
			fprintf(f, "%s%.2f,%.2f", first ? "" : " ", fr.xpos[order[i]], ypix(&fr, v[col]));
			first = 0;
		}
		fputs("\"/>\n", f);
		for (size_t i = 0; i < nx; i++) {
			const double *v = cs_sweep_point_values(sw, i * nseries + s);
			if (v && isfinite(v[col]))
				fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n",
					fr.xpos[i], ypix(&fr, v[col]), c);
		}
	}

	/* legend: the other keys' names, then a line per series */
	double ly = TOP;
	fprintf(f, "<g class=\"legend\">\n");
	for (size_t k = 1; k < cs_sweep_nkeys(sw); k++) {
		key_name(cs_sweep_key(sw, k), xname, sizeof xname);
		snprintf(line, sizeof line, "%s%s", xname, k + 1 < cs_sweep_nkeys(sw) ? "," : "");
		ly += 16.0 * cs__svg_lines(f, W - RIGHT + 20, ly, 16, "font-weight=\"bold\"", line,
					   LEGEND_CHARS - 2);
	}
	for (size_t s = 0; s < nseries && s < MAX_LEGEND; s++) {
		series_label(sw, s, yname, line, sizeof line);
		cs__svg_key(f, W - RIGHT + 20, ly + 6 + 18.0 * (double)s, cs__svg_colour(s), false, line);
	}
	if (nseries > MAX_LEGEND)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">and %zu more</text>\n", W - RIGHT + 50,
			ly + 6 + 18.0 * MAX_LEGEND, nseries - MAX_LEGEND);
	fputs("</g>\n", f);
	cs__svg_end(f);
	free(order);
	free(fr.xpos);
	if (ferror(f)) {
		snprintf(diag->msg, sizeof diag->msg, "cannot write the plot");
		return -2;
	}
	return 0;
}
