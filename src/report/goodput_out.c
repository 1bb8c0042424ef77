/*
 * goodput_out.c - goodput reports and the timeline of one run (goodput_out.h).
 */
#include "report/goodput_out.h"

#include <math.h>
#include <stdlib.h>

#include "report/out.h"

static void interval(FILE *f, double s)
{
	if (s >= 3600)
		fprintf(f, "%.2f h", s / 3600);
	else if (s >= 60)
		fprintf(f, "%.1f min", s / 60);
	else
		fprintf(f, "%.3g s", s);
}

void cs_goodput_write_text(FILE *f, const char *name, const cs_goodput_report *g)
{
	double expected = 0;
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		expected += g->fail_per_day[c];
	fprintf(f, "%s: %lld GPUs on %lld node%s, %lld runs of %g days\n", name, (long long)g->gpus,
		(long long)g->nodes, g->nodes == 1 ? "" : "s", (long long)g->runs, g->days);
	fprintf(f, "  step               %.4f s, %.0f tokens\n", g->step_s, g->tokens_per_step);
	if (g->elastic_step_s > 0)
		fprintf(f, "  elastic step       %.4f s with one of %lld replicas fewer\n", g->elastic_step_s,
			(long long)g->replicas);
	fprintf(f, "  expected stops     %.2f a day:", expected);
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		fprintf(f, "%s %s %.2f", c ? "," : "", cs_fail_class_name(c), g->fail_per_day[c]);
	fputc('\n', f);
	if (isfinite(g->mtbf_h))
		fprintf(f, "  job MTBF           %.2f h between unexpected failures\n", g->mtbf_h);
	else
		fprintf(f, "  job MTBF           never fails (no unexpected failure rate)\n");
	fprintf(f, "  checkpoint         %.3g TB", g->checkpoint_bytes / 1e12);
	if (g->write_s > 0) {
		fputs(": a ", f);
		interval(f, g->stall_s);
		fputs(" snapshot stall, then ", f);
		interval(f, g->write_s);
		fputs(" written behind", f);
	} else {
		fputs(" written in ", f);
		interval(f, g->stall_s);
		fputs(" (the job stalls)", f);
	}
	if (g->interval_s > 0) {
		fputs(", every ", f);
		interval(f, g->interval_s);
	} else {
		fputs(", none taken", f);
	}
	if (isfinite(g->young_daly_s) && g->young_daly_s > 0) {
		fputs(" (Young/Daly: ", f);
		interval(f, g->young_daly_s);
		fputc(')', f);
	} else if (!isfinite(g->young_daly_s)) {
		fputs(" (Young/Daly: never, without failures)", f);
	}
	fputc('\n', f);
	fputs("  restart            ", f);
	interval(f, g->restart_s);
	fputs(" with the checkpoint load\n", f);
	fprintf(f, "effective training   %.2f %% (99 %% CI %.2f - %.2f)", 100 * g->ett.mean, 100 * g->ett.lo,
		100 * g->ett.hi);
	if (g->interval_s > 0 && isfinite(g->mtbf_h))
		fprintf(f, "; first order %.2f %%", 100 * (1 - g->first_order_lost));
	fputc('\n', f);
	fprintf(f, "interruptions a day  %.2f (99 %% CI %.2f - %.2f):", g->interruptions_per_day.mean,
		g->interruptions_per_day.lo, g->interruptions_per_day.hi);
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		fprintf(f, "%s %s %.2f", c ? "," : "", cs_fail_class_name(c), g->per_day[c].mean);
	fputc('\n', f);
	fputs("time lost           ", f);
	for (int k = 0; k < CS_LOSS_KINDS; k++)
		fprintf(f, "%s %s %.2f %%", k ? "," : "", cs_rel_loss_name((cs_rel_loss)k),
			100 * g->lost[k].mean);
	fputc('\n', f);
	if (g->ttt_ideal_days > 0)
		fprintf(f,
			"time to train        %.1f days (99 %% CI %.1f - %.1f); %.1f days without "
			"stops\n",
			g->ttt_days.mean, g->ttt_days.lo, g->ttt_days.hi, g->ttt_ideal_days);
}

static void kv_ci(cs_jw *w, const char *key, cs_goodput_ci c)
{
	cs_jw_key(w, key);
	cs_jw_begin_obj(w);
	cs_jw_kv_num(w, "mean", c.mean);
	cs_jw_kv_num(w, "lo99", c.lo);
	cs_jw_kv_num(w, "hi99", c.hi);
	cs_jw_end_obj(w);
}

void cs_goodput_write_json(FILE *f, const char *name, const cs_goodput_report *g)
{
	cs_jw w;
	cs_jw_init(&w, f, 2);
	cs_jw_begin_obj(&w);
	cs_jw_kv_str(&w, "scenario", name);
	cs_jw_kv_int(&w, "gpus", g->gpus);
	cs_jw_kv_int(&w, "nodes", g->nodes);
	cs_jw_kv_int(&w, "runs", g->runs);
	cs_jw_kv_num(&w, "days", g->days);
	cs_jw_kv_num(&w, "step_time_s", g->step_s);
	cs_jw_kv_num(&w, "tokens_per_step", g->tokens_per_step);
	cs_jw_kv_num(&w, "elastic_step_time_s", g->elastic_step_s);
	cs_jw_key(&w, "expected_per_day");
	cs_jw_begin_obj(&w);
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		cs_jw_kv_num(&w, cs_fail_class_name(c), g->fail_per_day[c]);
	cs_jw_end_obj(&w);
	cs_jw_kv_num(&w, "mtbf_h", g->mtbf_h); /* null when infinite */
	cs_jw_kv_num(&w, "checkpoint_bytes", g->checkpoint_bytes);
	cs_jw_kv_num(&w, "checkpoint_stall_s", g->stall_s);
	cs_jw_kv_num(&w, "checkpoint_write_behind_s", g->write_s);
	cs_jw_kv_num(&w, "checkpoint_interval_s", g->interval_s);
	cs_jw_kv_num(&w, "young_daly_interval_s", g->young_daly_s);
	cs_jw_kv_num(&w, "restart_s", g->restart_s);
	cs_jw_kv_num(&w, "first_order_lost", isfinite(g->first_order_lost) ? g->first_order_lost : 0);
	kv_ci(&w, "effective_training", g->ett);
	kv_ci(&w, "interruptions_per_day", g->interruptions_per_day);
	cs_jw_key(&w, "interruptions_per_day_by_cause");
	cs_jw_begin_obj(&w);
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		kv_ci(&w, cs_fail_class_name(c), g->per_day[c]);
	cs_jw_end_obj(&w);
	cs_jw_key(&w, "lost_fraction");
	cs_jw_begin_obj(&w);
	for (int k = 0; k < CS_LOSS_KINDS; k++)
		kv_ci(&w, cs_rel_loss_name((cs_rel_loss)k), g->lost[k]);
	cs_jw_end_obj(&w);
	if (g->ttt_ideal_days > 0) {
		kv_ci(&w, "time_to_train_days", g->ttt_days);
		cs_jw_kv_num(&w, "time_to_train_ideal_days", g->ttt_ideal_days);
	}
	cs_jw_end_obj(&w);
	cs_jw_finish(&w);
	fputc('\n', f);
}

/* ---- the timeline ---------------------------------------------------------- */

typedef struct stretch {
	int64_t t0, t1;
	int state, cls;
} stretch;

struct cs_goodput_timeline {
	stretch *v;
	size_t n, cap;
	int failed; /* a span was dropped for want of memory */
};

cs_goodput_timeline *cs_goodput_timeline_new(void) { return calloc(1, sizeof(cs_goodput_timeline)); }

void cs_goodput_timeline_free(cs_goodput_timeline *tl)
{
	if (!tl)
		return;
	free(tl->v);
	free(tl);
}

void cs_goodput_timeline_span(void *ctx, cs_rel_state s, int64_t t0, int64_t t1, int cls)
{
	cs_goodput_timeline *tl = ctx;
	if (tl->n && tl->v[tl->n - 1].state == (int)s && tl->v[tl->n - 1].t1 == t0 && cls < 0) {
		tl->v[tl->n - 1].t1 = t1;
		return;
	}
	if (tl->n == tl->cap) {
		size_t cap = tl->cap ? 2 * tl->cap : 256;
		stretch *v = realloc(tl->v, cap * sizeof *v);
		if (!v) {
			tl->failed = 1;
			return;
		}
		tl->v = v;
		tl->cap = cap;
	}
	tl->v[tl->n++] = (stretch){ t0, t1, (int)s, cls };
}

/* The bar is drawn by pixel column: each column (1.4 hours of 54 days) a
 * stack of the states' shares of its time, so a restart of minutes shows as
 * a short mark, not a box of a few thousandths of a pixel nor one wider
 * than its time; a state other than training is at least GP_MIN_PX high
 * wherever it happens (a checkpoint of seconds in every column, a restart
 * in one). Runs of columns that are one state whole are one box. */
#define GP_COLS 940
#define GP_MIN_PX 3.0

typedef struct column {
	double share[CS_GP_STATES]; /* of the column's width, 0 to 1 */
} column;

/* Each state's height in a column of `row` px: its share, at least
 * GP_MIN_PX for one that happens, taken from the largest. */
static void heights(const column *c, double row, double *h)
{
	int big = 0;
	for (int k = 0; k < CS_GP_STATES; k++) {
		h[k] = c->share[k] * row;
		if (c->share[k] > c->share[big])
			big = k;
	}
	for (int k = 0; k < CS_GP_STATES; k++)
		if (k != big && h[k] > 0 && h[k] < GP_MIN_PX && h[big] > 2 * GP_MIN_PX) {
			h[big] -= GP_MIN_PX - h[k];
			h[k] = GP_MIN_PX;
		}
}

static int whole(const column *c)
{
	for (int k = 0; k < CS_GP_STATES; k++)
		if (c->share[k] > 1 - 1e-9)
			return k;
	return -1;
}

int cs_goodput_write_svg(FILE *f, const char *name, const cs_goodput_report *g, const cs_goodput_timeline *tl,
			 const cs_rel_run *run)
{
	if (tl->failed)
		return -1;
	static const char *const colour[CS_GP_STATES] = { "#2ca02c", "#bcbd22", "#1f77b4", "#d62728",
							  "#7f7f7f" };
	static const char *const label[CS_GP_STATES] = { "training", "training, fewer replicas", "checkpoint",
							 "restart", "waiting for a node" };
	const double W = 1000, left = 40, top = 50, row = 40;
	double days = g->days, span_ns = days * 86400e9, x_per_ns = GP_COLS / span_ns;
	column *col = calloc(GP_COLS, sizeof *col);
	if (!col)
		return -1;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n",
		W, top + row + 110);
	fprintf(f, "<text x=\"%.0f\" y=\"20\" font-size=\"14\">", left);
	cs_xml_text(f, name);
	double full_rate = g->tokens_per_step / g->step_s;
	fprintf(f,
		": one sampled run of %g days, effective training %.1f %% (the mean of %lld "
		"runs: %.1f %%)</text>\n",
		days, 100 * run->tokens / (days * 86400 * full_rate), (long long)g->runs, 100 * g->ett.mean);
	/* each stretch's share of each column it covers; a failure's class as a
	 * tick above the bar */
	for (size_t i = 0; i < tl->n; i++) {
		const stretch *s = &tl->v[i];
		double a = (double)s->t0 * x_per_ns, b = (double)s->t1 * x_per_ns;
		for (double x = a; x < b && x < GP_COLS; x = floor(x) + 1) {
			int c = x < 0 ? 0 : (int)x;
			col[c].share[s->state] += fmin(b, (double)c + 1) - x;
		}
		if (s->cls >= 0 && s->state != CS_GP_CHECKPOINT)
			fprintf(f,
				"<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" "
				"stroke=\"#000\" stroke-width=\"0.5\"><title>%s</title></line>\n",
				left + a, top - 6, left + a, top, cs_fail_class_name(s->cls));
	}
	for (int c = 0; c < GP_COLS;) {
		int k = whole(&col[c]), c1 = c + 1;
		if (k >= 0) {
			while (c1 < GP_COLS && whole(&col[c1]) == k)
				c1++;
			fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%.0f\" fill=\"%s\"/>\n",
				left + c, top, c1 - c, row, colour[k]);
			c = c1;
			continue;
		}
		double h[CS_GP_STATES], y = top + row;
		heights(&col[c], row, h);
		for (k = 0; k < CS_GP_STATES; k++) /* training at the bottom */
			if (h[k] > 0) {
				y -= h[k];
				fprintf(f,
					"<rect x=\"%.0f\" y=\"%.2f\" width=\"1\" height=\"%.2f\" "
					"fill=\"%s\"/>\n",
					left + c, y, h[k], colour[k]);
			}
		c = c1;
	}
	free(col);
	for (int d = 0; d <= (int)days; d += days > 20 ? 7 : 1) {
		double x = left + (double)d * 86400e9 * x_per_ns;
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#000\"/>"
			"<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>\n",
			x, top + row, x, top + row + 5, x, top + row + 18, d);
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">days</text>\n", W / 2, top + row + 34);
	for (int s = 0; s < CS_GP_STATES; s++)
		fprintf(f,
			"<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
			left + 190.0 * s, top + row + 50, colour[s], left + 190.0 * s + 16, top + row + 60,
			label[s]);
	fputs("</svg>\n", f);
	return 0;
}
