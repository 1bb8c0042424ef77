/*
 * svg.c - the pipeline timeline and the charts' primitives (see svg.h).
 * Plain SVG 1.1, no scripts, no external fonts; coordinates are rounded to
 * 0.01 px.
 */
#include "report/svg.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "report/out.h"

#define SVG_LEFT 80.0 /* room for the stage labels */
#define SVG_TOP 40.0  /* room for the title */
#define SVG_ROW 30.0  /* one stage */
#define SVG_BOX 24.0  /* box height inside a row */
#define SVG_RIGHT 20.0

/* Each kind's colour on even chunks, and a lighter one (with dark labels)
 * on odd chunks: zb-v's two chunks, interleaved's alternate ones. */
static const struct {
	const char *fill, *odd, *name;
} kinds[] = {
	[CS_SCHED_F] = { "#4e79a7", "#a0cbe8", "F forward" },
	[CS_SCHED_B] = { "#f28e2b", "#ffbe7d", "B input gradient" },
	[CS_SCHED_W] = { "#59a14f", "#8cd17d", "W weight gradient" },
	[CS_SCHED_BW] = { "#e15759", "#ff9d9a", "BW full backward" },
};

double cs__svg_step(double span, int n)
{
	double raw = span / n, mag = pow(10.0, floor(log10(raw)));
	double f = raw / mag;

	return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * mag;
}

static void draw_axis(FILE *f, const cs_pipe_result *res, double width, double y, double ticks_per_unit,
		      const char *unit)
{
	double span = (double)res->makespan / ticks_per_unit;
	double step = cs__svg_step(span > 0 ? span : 1.0, 10);

	fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>\n", SVG_LEFT, y,
		SVG_LEFT + width, y);
	for (double u = 0; u <= span * (1 + 1e-9); u += step) {
		double x = SVG_LEFT + (span > 0 ? u / span : 0) * width;
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>\n", x, y,
			x, y + 5);
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%g</text>\n", x, y + 18, u);
	}
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">time (%s)</text>\n",
		SVG_LEFT + width / 2, y + 36, unit);
}

static void draw_legend(FILE *f, int split, int64_t chunks, double y)
{
	double x = SVG_LEFT;
	int which[3] = { CS_SCHED_F, split ? CS_SCHED_B : CS_SCHED_BW, split ? CS_SCHED_W : -1 };

	for (int i = 0; i < 3; i++) {
		if (which[i] < 0)
			continue;
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", x, y,
			kinds[which[i]].fill);
		if (chunks > 1)
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n",
				x + 16, y, kinds[which[i]].odd);
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%s</text>\n", x + (chunks > 1 ? 36 : 20), y + 12,
			kinds[which[i]].name);
		x += 170;
	}
	if (chunks > 1)
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">dark: chunks 0, 2...; light: chunks 1, 3...</text>\n",
			SVG_LEFT, y + 32);
}

int cs_svg_pipeline(FILE *f, const cs_pipe_result *res, double ticks_per_unit, const char *unit)
{
	double per_op =
		res->n_spans > 0 && res->stages > 0 ? (double)res->n_spans / (double)res->stages : 1.0;
	double width =
		fmin(1600.0, fmax(640.0, per_op * (res->chunks > 1 ? 30.0 : 22.0))); /* room for "m.c" */
	double plot_h = (double)res->stages * SVG_ROW;
	double height = SVG_TOP + plot_h + (res->chunks > 1 ? 110 : 90);
	double scale = res->makespan > 0 ? width / (double)res->makespan : 0.0;
	int split = cs_sched_split_backward(res->sched);

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
		SVG_LEFT + width + SVG_RIGHT, height, SVG_LEFT + width + SVG_RIGHT, height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f,
		"<text x=\"%.2f\" y=\"22\" font-size=\"14\">%s: %lld stages, %lld micro-batches, "
		"%lld chunk%s per stage; makespan %g %s, bubble %.1f %%</text>\n",
		SVG_LEFT, cs_sched_name(res->sched), (long long)res->stages, (long long)res->micro_batches,
		(long long)res->chunks, res->chunks == 1 ? "" : "s", (double)res->makespan / ticks_per_unit,
		unit, 100 * res->bubble_fraction);
	for (int64_t s = 0; s < res->stages; s++) {
		double y = SVG_TOP + (double)s * SVG_ROW;
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">stage %lld</text>\n",
			SVG_LEFT - 8, y + SVG_ROW / 2 + 4, (long long)s);
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#f4f4f4\"/>\n",
			SVG_LEFT, y + (SVG_ROW - SVG_BOX) / 2, width, SVG_BOX);
	}
	for (int64_t i = 0; i < res->n_spans; i++) {
		const cs_pipe_span *sp = &res->spans[i];
		double x = SVG_LEFT + (double)sp->start * scale;
		double w = (double)(sp->end - sp->start) * scale;
		double y = SVG_TOP + (double)sp->stage * SVG_ROW + (SVG_ROW - SVG_BOX) / 2;
		int kind = sp->op.kind <= CS_SCHED_BW ? sp->op.kind : CS_SCHED_F;
		bool odd = sp->op.chunk % 2 == 1;

		fprintf(f,
			"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
			"stroke=\"white\" stroke-width=\"0.5\"><title>%c%d chunk %d: %g-%g</title></rect>\n",
			x, y, w, SVG_BOX, odd ? kinds[kind].odd : kinds[kind].fill, "FBWB"[kind],
			(int)sp -> op.micro, (int)sp->op.chunk, (double)sp->start / ticks_per_unit,
			(double)sp->end / ticks_per_unit);
		if (w < (res->chunks > 1 ? 22.0 : 12.0))
			continue;
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" fill=\"%s\">", x + w / 2,
			y + SVG_BOX / 2 + 4, odd ? "#222" : "white");
		if (res->chunks > 1)
			fprintf(f, "%d.%d</text>\n", (int)sp->op.micro, (int)sp->op.chunk);
		else
			fprintf(f, "%d</text>\n", (int)sp->op.micro);
	}
	draw_axis(f, res, width, SVG_TOP + plot_h + 4, ticks_per_unit, unit);
	draw_legend(f, split, res->chunks, SVG_TOP + plot_h + 56);
	fprintf(f, "</svg>\n");
	return ferror(f) ? -1 : 0;
}

/* ---- the charts' primitives -------------------------------------------------- */

void cs__svg_begin(FILE *f, double width, double height)
{
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
		width, height, width, height, width, height);
}

int cs__svg_end(FILE *f)
{
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}

void cs__svg_text(FILE *f, double x, double y, const char *attrs, const char *text)
{
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\"%s%s>", x, y, *attrs ? " " : "", attrs);
	cs_xml_text(f, text);
	fputs("</text>\n", f);
}

void cs__svg_axis_lin(cs__svg_axis *a, double lo, double hi, double p0, double p1)
{
	if (!(lo <= hi))
		lo = hi = 0;
	a->cut = lo > 0 && hi > lo && lo > hi / 2;
	if (!a->cut)
		lo = fmin(lo, 0);
	if (hi <= lo)
		hi = lo + (lo > 0 ? lo : 1);
	a->step = cs__svg_step(hi - lo, 5);
	a->lo = floor(lo / a->step) * a->step;
	if (a->cut && a->lo >= lo - a->step / 4) /* room below the lowest point */
		a->lo -= a->step;
	a->cut = a->lo > 0;
	a->hi = ceil(hi / a->step) * a->step;
	a->p0 = p0;
	a->p1 = p1;
	a->log = false;
}

void cs__svg_axis_log(cs__svg_axis *a, double lo, double hi, double p0, double p1, int base)
{
	double b = base == 2 ? 2 : 10;
	a->lo = pow(b, floor(log(lo) / log(b) + 1e-9));
	a->hi = pow(b, ceil(log(hi) / log(b) - 1e-9));
	if (a->hi <= a->lo)
		a->hi = a->lo * b;
	double decades = log(a->hi / a->lo) / log(b);
	int every = base == 2 ? (int)ceil(decades / 10) : 1;
	a->step = pow(b, every < 1 ? 1 : every);
	a->p0 = p0;
	a->p1 = p1;
	a->log = true;
	a->cut = false;
}

double cs__svg_pos(const cs__svg_axis *a, double v)
{
	double t = a->log ? log(v / a->lo) / log(a->hi / a->lo) : (v - a->lo) / (a->hi - a->lo);
	return a->p0 + (a->p1 - a->p0) * t;
}

/* The tick values, lowest first; returns how many (at most cap). */
static int ticks(const cs__svg_axis *a, double *v, int cap)
{
	int n = 0;
	for (int i = 0; n < cap; i++) {
		double t = a->log ? a->lo * pow(a->step, i) : a->lo + i * a->step;
		if (t > a->hi * (1 + 1e-9) + (a->log ? 0 : a->step * 1e-9))
			break;
		v[n++] = !a->log && fabs(t) < a->step * 1e-9 ? 0.0 : t;
	}
	return n;
}

static void tick_label(char *buf, size_t n, double v, cs__svg_fmt *fmt)
{
	if (fmt)
		fmt(buf, n, v);
	else
		snprintf(buf, n, "%.6g", v);
}

/* A line from (along, across) to (along2, across2): along the axis is y on
 * a vertical one, x on a horizontal one. */
static void line(FILE *f, bool vertical, double u1, double v1, double u2, double v2, const char *stroke)
{
	fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>\n",
		vertical ? v1 : u1, vertical ? u1 : v1, vertical ? v2 : u2, vertical ? u2 : v2, stroke);
}

/* An axis at `at` across, its grid lines reaching `grid` across. */
static void axis(FILE *f, const cs__svg_axis *a, bool vertical, double at, double grid, const char *label,
		 cs__svg_fmt *fmt)
{
	double v[64], lo = fmin(a->p0, a->p1), hi = fmax(a->p0, a->p1), mid = (lo + hi) / 2;
	double out = vertical ? -5 : 5; /* ticks point away from the plot */
	char buf[64];
	int n = ticks(a, v, 64);
	fprintf(f, "<g class=\"%c-axis\">\n", vertical ? 'y' : 'x');
	for (int i = 0; i < n; i++) {
		double u = cs__svg_pos(a, v[i]);
		tick_label(buf, sizeof buf, v[i], fmt);
		line(f, vertical, u, at, u, grid, "#ddd");
		line(f, vertical, u, at + out, u, at, "black");
		if (vertical)
			cs__svg_text(f, at - 8, u + 4, "text-anchor=\"end\"", buf);
		else
			cs__svg_text(f, u, at + 18, "text-anchor=\"middle\"", buf);
	}
	line(f, vertical, lo, at, hi, at, "black");
	if (a->cut && vertical) /* a break in the axis: it does not come from 0 */
		fprintf(f,
			"<path d=\"M%.2f %.2fL%.2f %.2fL%.2f %.2fL%.2f %.2f\" fill=\"white\" "
			"stroke=\"black\"/>\n",
			at, hi - 8, at - 5, hi - 12, at + 5, hi - 18, at, hi - 22);
	if (vertical)
		fprintf(f,
			"<text x=\"16\" y=\"%.2f\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.2f)\">",
			mid, mid);
	else
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", mid, at + 38);
	cs_xml_text(f, label);
	if (a->cut)
		fputs("; the axis does not start at 0", f);
	fputs("</text>\n</g>\n", f);
}

void cs__svg_yaxis(FILE *f, const cs__svg_axis *a, double x, double x_end, const char *label,
		   cs__svg_fmt *fmt)
{
	axis(f, a, true, x, x_end, label, fmt);
}

void cs__svg_xaxis(FILE *f, const cs__svg_axis *a, double y, double y_top, const char *label,
		   cs__svg_fmt *fmt)
{
	axis(f, a, false, y, y_top, label, fmt);
}

const char *cs__svg_colour(size_t i)
{
	static const char *const palette[] = {
		"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
		"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
	};
	return palette[i % (sizeof palette / sizeof palette[0])];
}

void cs__svg_key(FILE *f, double x, double y, const char *colour, bool box, const char *text)
{
	if (box)
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x + 6,
			y - 10, colour);
	else
		fprintf(f,
			"<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
			"stroke-width=\"2\"/>\n",
			x, y - 4, x + 24, y - 4, colour);
	cs__svg_text(f, x + 30, y, "", text);
}

int cs__svg_lines(FILE *f, double x, double y, double dy, const char *attrs, const char *text, size_t width)
{
	int lines = 0;
	while (*text) {
		size_t len = strlen(text), cut = len;
		if (len > width) { /* the last space within width, else the first after */
			cut = 0;
			for (size_t i = 1; i < len && (i <= width || !cut); i++)
				if (text[i] == ' ')
					cut = i;
			if (!cut)
				cut = len;
		}
		char buf[256];
		snprintf(buf, sizeof buf, "%.*s", (int)(cut < sizeof buf ? cut : sizeof buf - 1), text);
		cs__svg_text(f, x, y + dy * lines++, attrs, buf);
		text += cut;
		while (*text == ' ')
			text++;
	}
	return lines;
}

void cs__svg_fmt_bytes(char *buf, size_t n, double v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;
	while (u < 5 && fabs(v) >= 1024) {
		v /= 1024;
		u++;
	}
	snprintf(buf, n, "%g %s", v, unit[u]);
}
