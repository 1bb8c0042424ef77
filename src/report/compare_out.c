/*
 * compare_out.c - a profiler trace beside a simulation, per class of
 * kernel and per step, as text, JSON, CSV or a chart (compare_out.h).
 */
#include "report/compare_out.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/scenario.h"
#include "ingest/kineto.h"
#include "report/out.h"
#include "report/svg.h"

/* One line of the comparison, per step; NAN where a side has no figure. */
typedef struct row {
	const char *name;
	double trace_s, trace_kernels;
	double sim_s, sim_kernels;
} row;

/* the classes' rows, then the compute sum, then the trace-only classes */
enum { ROWS = CS_KINETO_CLASSES + 3, R_COMPUTE = CS_KINETO_COMM, R_IDLE = ROWS - 2, R_STEP = ROWS - 1 };

/* The rows: the four compute classes, their sum, what only the trace has,
 * GPU idle and the step. */
static void make_rows(const cs_compare *cmp, row *rows)
{
	const cs_kineto *t = cmp->trace;
	const cs_metrics *m = cmp->m;
	double per = cmp->per;
	double tsum = 0, tk = 0, ssum = 0, sk = 0;
	for (int c = 0; c < CS_KINETO_CLASSES; c++) {
		double ts = 1e-9 * (double)cs_kineto_class_ns(t, (cs_kineto_class)c) * per;
		double tn = (double)cs_kineto_class_count(t, (cs_kineto_class)c) * per;
		int compute = c < CS_KINETO_COMM;
		int at = compute ? c : c + 1; /* the compute sum comes after the classes */
		rows[at] = (row){ cs_kineto_class_name((cs_kineto_class)c), ts, tn, NAN, NAN };
		if (compute) {
			rows[at].sim_s = m->compute_kind_s[c];
			rows[at].sim_kernels = (double)m->compute_kind_kernels[c];
			tsum += ts;
			tk += tn;
			ssum += rows[at].sim_s;
			sk += rows[at].sim_kernels;
		}
	}
	rows[R_COMPUTE] = (row){ "compute", tsum, tk, ssum, sk };
	double span = 1e-9 * (double)cs_kineto_span_ns(t) * per;
	double idle = 1e-9 * (double)(cs_kineto_span_ns(t) - cs_kineto_busy_ns(t)) * per;
	rows[R_IDLE] = (row){ "gpu_idle", idle, NAN, m->bubble_s + m->compute_kind_s[CS_COMPUTE_HOST], NAN };
	rows[R_STEP] = (row){ "step", span, NAN, m->step_time_s, NAN };
}

/* (sim - trace) / trace, NAN without both. */
static double rel_error(const row *r)
{
	if (isnan(r->sim_s) || !(r->trace_s > 0))
		return NAN;
	return (r->sim_s - r->trace_s) / r->trace_s;
}

static void text_num(char *buf, size_t n, double v, int kernels)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (!kernels)
		snprintf(buf, n, "%.2f", 1e3 * v);
	else if (v == floor(v))
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.1f", v);
}

/* Trace i's own figures per step: compute, NCCL kernels, idle, span (s). */
typedef struct rank_row {
	double compute_s, comm_s, idle_s, step_s, kernels;
} rank_row;

static rank_row rank_figures(const cs_compare *c, const cs_kineto_rank *r)
{
	double per = 1.0 / (double)c->steps, ns = 0;
	for (int k = 0; k < CS_KINETO_COMM; k++)
		ns += (double)r->ns[k];
	return (rank_row){ .compute_s = 1e-9 * ns * per,
			   .comm_s = 1e-9 * (double)r->ns[CS_KINETO_COMM] * per,
			   .idle_s = 1e-9 * (double)(r->span_ns - r->busy_ns) * per,
			   .step_s = 1e-9 * (double)r->span_ns * per,
			   .kernels = (double)r->kernels * per };
}

/* The GPUs' traces of a folder, one line each, and the slowest. */
static void write_ranks_text(FILE *f, const cs_compare *c)
{
	size_t n = cs_kineto_ranks(c->trace), slow = 0;
	double sum = 0, worst = -1;
	fprintf(f, "\n%-14s %11s %11s %11s %11s %9s  %s\n", "per GPU", "compute ms", "nccl ms", "idle ms",
		"step ms", "kernels", "trace");
	for (size_t i = 0; i < n; i++) {
		const cs_kineto_rank *r = cs_kineto_rank_at(c->trace, i);
		rank_row x = rank_figures(c, r);
		char id[32];
		if (r->rank >= 0)
			snprintf(id, sizeof id, "rank %lld", (long long)r->rank);
		else
			snprintf(id, sizeof id, "trace %zu", i);
		fprintf(f, "%-14s %11.2f %11.2f %11.2f %11.2f %9.0f  %s\n", id, 1e3 * x.compute_s,
			1e3 * x.comm_s, 1e3 * x.idle_s, 1e3 * x.step_s, x.kernels, r->file);
		sum += x.step_s;
		if (x.step_s > worst)
			worst = x.step_s, slow = i;
	}
	double mean = sum / (double)n;
	fprintf(f, "slowest        %s: a step %.2f ms, %+.1f %% against the GPUs' mean\n",
		cs_kineto_rank_at(c->trace, slow)->file, 1e3 * worst,
		mean > 0 ? 100 * (worst / mean - 1) : 0.0);
}

void cs_compare_write_text(FILE *f, const cs_compare *c, const char *trace, bool steps_given)
{
	const cs_kineto *t = c->trace;
	const cs_metrics *m = c->m;
	int64_t steps = c->steps;
	row rows[ROWS];
	make_rows(c, rows);
	char gpus[64] = "";
	if (c->ranks > 1)
		snprintf(gpus, sizeof gpus, "%lld GPUs' traces (their mean), ", (long long)c->ranks);
	fprintf(f, "trace      %s: %s%lld step%s (%s), %lld kernels\n", trace, gpus, (long long)steps,
		steps == 1 ? "" : "s",
		steps_given                 ? "--steps"
		: cs_kineto_steps_marked(t) ? "ProfilerStep annotations"
					    : "no ProfilerStep annotations: the whole trace",
		(long long)cs_kineto_kernels(t));
	fprintf(f, "simulated  %s: %lld GPU%s, critical rank %lld, %s%s\n", c->sc->name, (long long)m->gpus,
		m->gpus == 1 ? "" : "s", (long long)m->critical_rank,
		m->profile[0] ? "kernel profile " : "flat efficiencies", m->profile);
	fprintf(f, "\n%-14s %13s %9s %13s %9s %10s\n", "per step", "trace ms", "kernels", "simulated ms",
		"kernels", "error");
	for (int i = 0; i < ROWS; i++) {
		char a[32], b[32], s[32], d[32], e[32] = "-";
		text_num(a, sizeof a, rows[i].trace_s, 0);
		text_num(b, sizeof b, rows[i].trace_kernels, 1);
		text_num(s, sizeof s, rows[i].sim_s, 0);
		text_num(d, sizeof d, rows[i].sim_kernels, 1);
		double err = rel_error(&rows[i]);
		if (!isnan(err))
			snprintf(e, sizeof e, "%+.1f %%", 100 * err);
		fprintf(f, "%-14s %13s %9s %13s %9s %10s\n", rows[i].name, a, b, s, d, e);
	}
	if (c->ranks > 1)
		write_ranks_text(f, c);
}

static void jw_num_or_null(cs_jw *w, const char *key, double v)
{
	cs_jw_key(w, key);
	if (isnan(v))
		cs_jw_null(w);
	else
		cs_jw_num(w, v);
}

void cs_compare_write_json(FILE *f, const cs_compare *c, const char *trace, bool steps_given)
{
	const cs_kineto *t = c->trace;
	const cs_metrics *m = c->m;
	int64_t steps = c->steps;
	row rows[ROWS];
	make_rows(c, rows);
	cs_jw w;
	cs_jw_init(&w, f, 2);
	cs_jw_begin_obj(&w);
	cs_jw_kv_str(&w, "trace", trace);
	cs_jw_kv_int(&w, "steps", steps);
	cs_jw_kv_str(&w, "steps_from",
		     steps_given                 ? "option"
		     : cs_kineto_steps_marked(t) ? "profiler_steps"
						 : "whole_trace");
	cs_jw_kv_int(&w, "trace_kernels", cs_kineto_kernels(t));
	cs_jw_kv_int(&w, "ranks", c->ranks);
	cs_jw_kv_str(&w, "scenario", c->sc->name);
	cs_jw_kv_int(&w, "gpus", m->gpus);
	cs_jw_kv_int(&w, "critical_rank", m->critical_rank);
	cs_jw_kv_str(&w, "kernel_profile", m->profile[0] ? m->profile : "none");
	cs_jw_key(&w, "per_step");
	cs_jw_begin_obj(&w);
	for (int i = 0; i < ROWS; i++) {
		cs_jw_key(&w, rows[i].name);
		cs_jw_begin_obj(&w);
		jw_num_or_null(&w, "trace_s", rows[i].trace_s);
		jw_num_or_null(&w, "trace_kernels", rows[i].trace_kernels);
		jw_num_or_null(&w, "sim_s", rows[i].sim_s);
		jw_num_or_null(&w, "sim_kernels", rows[i].sim_kernels);
		jw_num_or_null(&w, "rel_error", rel_error(&rows[i]));
		cs_jw_end_obj(&w);
	}
	cs_jw_end_obj(&w);
	cs_jw_key(&w, "per_rank");
	cs_jw_begin_arr(&w);
	for (size_t i = 0; i < (size_t)c->ranks; i++) {
		const cs_kineto_rank *r = cs_kineto_rank_at(t, i);
		rank_row x = rank_figures(c, r);
		cs_jw_begin_obj(&w);
		cs_jw_kv_str(&w, "file", r->file);
		cs_jw_key(&w, "rank");
		if (r->rank >= 0)
			cs_jw_int(&w, r->rank);
		else
			cs_jw_null(&w);
		cs_jw_kv_num(&w, "compute_s", x.compute_s);
		cs_jw_kv_num(&w, "communication_s", x.comm_s);
		cs_jw_kv_num(&w, "gpu_idle_s", x.idle_s);
		cs_jw_kv_num(&w, "step_s", x.step_s);
		cs_jw_kv_num(&w, "kernels", x.kernels);
		cs_jw_end_obj(&w);
	}
	cs_jw_end_arr(&w);
	cs_jw_end_obj(&w);
	cs_jw_finish(&w);
}

void cs_compare_write_csv(FILE *f, const cs_compare *c)
{
	row rows[ROWS];
	make_rows(c, rows);
	fputs("class,trace_s,trace_kernels,sim_s,sim_kernels,rel_error\n", f);
	for (int i = 0; i < ROWS; i++) {
		double v[5] = { rows[i].trace_s, rows[i].trace_kernels, rows[i].sim_s, rows[i].sim_kernels,
				rel_error(&rows[i]) };
		cs_csv_field(f, rows[i].name);
		for (int k = 0; k < 5; k++) {
			fputc(',', f);
			cs_csv_num(f, v[k]);
		}
		fputc('\n', f);
	}
}

void cs_compare_write_kernels(FILE *f, const cs_compare *c, const char *trace, int format)
{
	size_t n;
	const cs_kineto_kernel *k = cs_kineto_kernels_by_name(c->trace, &n);
	double per = c->per;
	if (format == CS_COMPARE_JSON) {
		cs_jw w;
		cs_jw_init(&w, f, 2);
		cs_jw_begin_obj(&w);
		cs_jw_kv_str(&w, "trace", trace);
		cs_jw_kv_int(&w, "steps", c->steps);
		cs_jw_key(&w, "kernels");
		cs_jw_begin_arr(&w);
		for (size_t i = 0; i < n; i++) {
			cs_jw_begin_obj(&w);
			cs_jw_kv_str(&w, "name", k[i].name);
			cs_jw_kv_str(&w, "class", cs_kineto_class_name(k[i].cls));
			cs_jw_kv_num(&w, "kernels_per_step", (double)k[i].count * per);
			cs_jw_kv_num(&w, "time_per_step_s", 1e-9 * (double)k[i].ns * per);
			cs_jw_end_obj(&w);
		}
		cs_jw_end_arr(&w);
		cs_jw_end_obj(&w);
		cs_jw_finish(&w);
		return;
	}
	if (format == CS_COMPARE_CSV) {
		fputs("name,class,kernels_per_step,time_per_step_s\n", f);
		for (size_t i = 0; i < n; i++) {
			cs_csv_field(f, k[i].name);
			fputc(',', f);
			cs_csv_field(f, cs_kineto_class_name(k[i].cls));
			fputc(',', f);
			cs_csv_num(f, (double)k[i].count * per);
			fputc(',', f);
			cs_csv_num(f, 1e-9 * (double)k[i].ns * per);
			fputc('\n', f);
		}
		return;
	}
	fprintf(f, "trace      %s: %lld step%s, %zu kernel name%s, the most time first\n\n", trace,
		(long long)c->steps, c->steps == 1 ? "" : "s", n, n == 1 ? "" : "s");
	fprintf(f, "%12s %9s  %-14s %s\n", "ms per step", "kernels", "class", "name");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%12.3f %9.1f  %-14s %s\n", 1e-6 * (double)k[i].ns * per, (double)k[i].count * per,
			cs_kineto_class_name(k[i].cls), k[i].name);
}

/* ---- the chart --------------------------------------------------------------- */

#define CB_W 900.0
#define CB_LEFT 130.0 /* the rows' names */
#define CB_RIGHT 90.0 /* the errors beside the bars */
#define CB_TOP 76.0
#define CB_BAR 14.0
#define CB_GAP 12.0

int cs_compare_write_svg(FILE *f, const cs_compare *c, const char *trace, const cs_compare *after)
{
	row rows[ROWS], later[ROWS];
	make_rows(c, rows);
	if (after)
		make_rows(after, later);
	const char *const what[3] = { "trace (measured)",
				      after ? "simulated before calibration" : "simulated",
				      "simulated after calibration" };
	static const char *const colour[3] = { "#7f7f7f", "#1f77b4", "#2ca02c" };
	int bars = after ? 3 : 2;
	double top = 0, group = bars * CB_BAR + CB_GAP;
	for (int i = 0; i < ROWS; i++) {
		double v[3] = { rows[i].trace_s, rows[i].sim_s, after ? later[i].sim_s : NAN };
		for (int b = 0; b < bars; b++)
			if (isfinite(v[b]))
				top = fmax(top, 1e3 * v[b]);
	}
	double foot = CB_TOP + ROWS * group, height = foot + 60;
	cs__svg_axis x;
	cs__svg_axis_lin(&x, 0, top, CB_LEFT, CB_W - CB_RIGHT);
	cs__svg_begin(f, CB_W, height);
	const char *base = strrchr(trace, '/');
	char title[320];
	snprintf(title, sizeof title, "%s beside %s: kernel time per step by class",
		 base && base[1] ? base + 1 : trace, c->sc->name);
	cs__svg_text(f, CB_W / 2, 24, "text-anchor=\"middle\" font-size=\"15\"", title);
	for (int b = 0; b < bars; b++)
		cs__svg_key(f, CB_LEFT + 230.0 * b, 50, colour[b], true, what[b]);
	cs__svg_xaxis(f, &x, foot, CB_TOP - 6, "time per step (ms)", NULL);
	for (int i = 0; i < ROWS; i++) {
		double y = CB_TOP + i * group;
		double v[3] = { rows[i].trace_s, rows[i].sim_s, after ? later[i].sim_s : NAN };
		cs__svg_text(f, CB_LEFT - 8, y + bars * CB_BAR / 2 + 4, "text-anchor=\"end\"", rows[i].name);
		for (int b = 0; b < bars; b++) {
			double by = y + b * CB_BAR;
			if (!isfinite(v[b])) {
				if (b == 1)
					cs__svg_text(f, CB_LEFT + 4, by + CB_BAR - 3,
						     "fill=\"#555\" font-size=\"11\"", "not simulated");
				continue;
			}
			double w = cs__svg_pos(&x, 1e3 * v[b]) - CB_LEFT;
			fprintf(f,
				"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
				"<title>%s: %.3f ms</title></rect>\n",
				CB_LEFT, by + 1, w, CB_BAR - 2, colour[b], what[b], 1e3 * v[b]);
			if (b == 0 || !(v[0] > 0))
				continue;
			char err[32];
			snprintf(err, sizeof err, "%+.1f %%", 100 * (v[b] - v[0]) / v[0]);
			cs__svg_text(f, CB_LEFT + w + 4, by + CB_BAR - 3, "font-size=\"11\"", err);
		}
	}
	return cs__svg_end(f);
}
