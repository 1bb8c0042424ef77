/*
 * svg.c - the pipeline timeline (see svg.h). Plain SVG 1.1, no scripts, no
 * external fonts; coordinates are rounded to 0.01 px.
 */
#include "report/svg.h"

#include <math.h>
#include <stdbool.h>

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

/* A round step (1, 2 or 5 times a power of ten) giving about n ticks. */
static double nice_step(double span, int n)
{
	double raw = span / n, mag = pow(10.0, floor(log10(raw)));
	double f = raw / mag;

	return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * mag;
}

static void draw_axis(FILE *f, const cs_pipe_result *res, double width, double y, double ticks_per_unit,
		      const char *unit)
{
	double span = (double)res->makespan / ticks_per_unit;
	double step = nice_step(span > 0 ? span : 1.0, 10);

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
	double width = fmin(1600.0, fmax(640.0, per_op * 22.0));
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
