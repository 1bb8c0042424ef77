/*
 * sweep_plot.c - a sweep's metric against its first varied key, as SVG.
 *
 * The x axis places the first key's values by their number (read with the
 * key's unit: "400Gb/s", "25 MiB", "2 us"; on a log scale when they are all
 * positive and span two decades or more) and labels each with the text as
 * given; values that are not all numbers are spaced evenly. The y axis runs
 * from min(0, lowest) to the highest value with rounded ticks. One polyline
 * (and a dot per point) per combination of the other keys' values; failed
 * and unfinished points are left out of their line.
 */
#include "report/sweep_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "report/out.h"

#define W 860.0
#define H 500.0
#define LEFT 90.0
#define RIGHT 230.0
#define TOP 50.0
#define BOTTOM 70.0
#define MAX_LEGEND 30

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};

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

static double nice_step(double range)
{
	double raw = range / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

typedef struct frame {
	double *xpos;  /* per value of the first key, in plot pixels */
	double y0, y1; /* metric range */
} frame;

static double ypix(const frame *fr, double v)
{
	return TOP + (H - TOP - BOTTOM) * (1 - (v - fr->y0) / (fr->y1 - fr->y0));
}

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

static void series_label(const cs_sweep *sw, size_t s, const char *metric, FILE *f)
{
	if (cs_sweep_nkeys(sw) < 2) {
		cs_xml_text(f, metric);
		return;
	}
	/* point s has the first key's first value and the series' other values */
	for (size_t k = 1; k < cs_sweep_nkeys(sw); k++) {
		if (k > 1)
			fputs(", ", f);
		if (cs_sweep_nkeys(sw) > 2) {
			cs_xml_text(f, cs_sweep_key(sw, k));
			fputc('=', f);
		}
		cs_xml_text(f, cs_sweep_value(sw, k, cs_sweep_point_index(sw, s, k)));
	}
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
	if (!(lo <= hi))
		lo = hi = 0;
	lo = fmin(lo, 0);
	if (hi <= lo)
		hi = lo + 1;
	double step = nice_step(hi - lo);
	fr.y0 = floor(lo / step) * step;
	fr.y1 = ceil(hi / step) * step;

	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
		W, H, W, H, W, H);
	fprintf(f, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">",
		(LEFT + W - RIGHT) / 2);
	cs_xml_text(f, metric);
	fputs(" against ", f);
	cs_xml_text(f, cs_sweep_key(sw, 0));
	fputs("</text>\n", f);

	/* axes, grid and ticks */
	fprintf(f,
		"<g stroke=\"black\" fill=\"none\">\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		"y2=\"%.1f\"/>\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n</g>\n",
		LEFT, H - BOTTOM, W - RIGHT, H - BOTTOM, LEFT, TOP, LEFT, H - BOTTOM);
	fputs("<g class=\"y-ticks\" text-anchor=\"end\">\n", f);
	for (int i = 0; i <= 1000; i++) {
		double v = fr.y0 + i * step;
		if (v > fr.y1 + step / 2)
			break;
		double y = ypix(&fr, v);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
			"<text x=\"%.1f\" y=\"%.1f\">%.6g</text>\n",
			LEFT, y, W - RIGHT, y, LEFT - 5, y, LEFT, y, LEFT - 8, y + 4,
			fabs(v) < step * 1e-9 ? 0.0 : v);
	}
	fputs("</g>\n<g class=\"x-ticks\" text-anchor=\"middle\">\n", f);
	for (size_t i = 0; i < nx; i++) {
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
			"<text x=\"%.1f\" y=\"%.1f\">",
			fr.xpos[i], H - BOTTOM, fr.xpos[i], H - BOTTOM + 5, fr.xpos[i], H - BOTTOM + 20);
		cs_xml_text(f, cs_sweep_value(sw, 0, i));
		fputs("</text>\n", f);
	}
	fprintf(f, "</g>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (LEFT + W - RIGHT) / 2,
		H - 20);
	cs_xml_text(f, cs_sweep_key(sw, 0));
	fprintf(f,
		"</text>\n<text x=\"20\" y=\"%.1f\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 20 %.1f)\">",
		(TOP + H - BOTTOM) / 2, (TOP + H - BOTTOM) / 2);
	cs_xml_text(f, metric);
	fputs("</text>\n", f);

	/* one line per series; series s holds points i * nseries + s */
	for (size_t s = 0; s < nseries; s++) {
		const char *c = palette[s % (sizeof palette / sizeof palette[0])];
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

	/* legend */
	fprintf(f, "<g class=\"legend\">\n");
	if (cs_sweep_nkeys(sw) > 1) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">", W - RIGHT + 20, TOP);
		for (size_t k = 1; k < cs_sweep_nkeys(sw) && cs_sweep_nkeys(sw) == 2; k++)
			cs_xml_text(f, cs_sweep_key(sw, k));
		if (cs_sweep_nkeys(sw) > 2)
			fputs("series", f);
		fputs("</text>\n", f);
	}
	for (size_t s = 0; s < nseries && s < MAX_LEGEND; s++) {
		double y = TOP + 20 + 18.0 * (double)s;
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"2\"/>\n<text x=\"%.1f\" y=\"%.1f\">",
			W - RIGHT + 20, y - 4, W - RIGHT + 44, y - 4,
			palette[s % (sizeof palette / sizeof palette[0])], W - RIGHT + 50, y);
		series_label(sw, s, metric, f);
		fputs("</text>\n", f);
	}
	if (nseries > MAX_LEGEND)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">and %zu more</text>\n", W - RIGHT + 50,
			TOP + 20 + 18.0 * MAX_LEGEND, nseries - MAX_LEGEND);
	fputs("</g>\n</svg>\n", f);
	free(order);
	free(fr.xpos);
	if (ferror(f)) {
		snprintf(diag->msg, sizeof diag->msg, "cannot write the plot");
		return -2;
	}
	return 0;
}
