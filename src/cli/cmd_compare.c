/*
 * cmd_compare.c - `clustersim compare`: a PyTorch profiler (Kineto) trace
 * of one GPU's training steps beside the simulation of a scenario, per
 * class of kernel: time and kernels per step, measured and simulated.
 *
 * The trace and the simulation come from src/study/compare.c (shared with
 * `clustersim calibrate`): the trace summarised by kineto.c, the scenario
 * loaded with the --set overrides and simulated as `clustersim run` does.
 * Everything allocated here is freed here.
 */
#include "cli/commands.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "clustersim/clustersim.h"
#include "config/scenario.h"
#include "ingest/kineto.h"
#include "report/out.h"
#include "study/compare.h"

static const char compare_help[] =
"usage: clustersim compare TRACE.json[.gz] SCENARIO.yaml [options]\n"
"\n"
"Set a PyTorch profiler (Kineto) Chrome trace of one GPU's training steps\n"
"beside a simulation of SCENARIO. Per class of kernel, per step: the\n"
"trace's kernel time and count, the simulated time and count of the\n"
"critical rank, and the error. Then the four classes together (compute),\n"
"what the trace has and the simulation does not time as kernels (NCCL\n"
"kernels, memcpy, memset), the GPU's idle time (trace: from its first\n"
"kernel's start to its last one's end, minus the union of the kernels;\n"
"simulated: host launch waits and idle time no transfer explains), and\n"
"that span against the simulated step time.\n"
"\n"
"Kernels are classified by name, ignoring case: 'nccl' communication;\n"
"'adam' (or multi_tensor_apply with 'fusedoptimizer') optimizer; 'sdpa',\n"
"'fmha', 'flash', 'cudnn::fusion', 'attention' attention; 'nvjet', 'gemm',\n"
"'cutlass', 'xmma', 'cublas' gemm; anything else memory_bound. Steps are\n"
"the trace's ProfilerStep#N annotations (without any, the whole trace is\n"
"one step); the figures are the trace's totals divided by the steps.\n"
"The trace may be gzip-compressed. It is read whole into memory: traces of\n"
"more than 1024 MiB (decompressed) are refused.\n"
"\n"
"options:\n"
"  --set KEY=VALUE     override a scalar of the scenario (repeatable)\n"
"  --steps N           the trace holds N steps (default: its ProfilerStep\n"
"                      annotations, or 1)\n"
"  --format text|json|csv   output format (default text)\n"
"  -h, --help          this help\n"
"\n"
"examples:\n"
"  clustersim compare tests/data/trace_llama8l-h4096-s8192.json.gz \\\n"
"      scenarios/h200-llama8l-h4096-s8192.yaml\n"
"  clustersim compare tests/data/trace_gpt-h5120-8l-s2048-mb4.json.gz \\\n"
"      scenarios/h200-gpt-h5120-8l-s2048-mb4.yaml --format json\n"
"  clustersim compare tests/data/trace_llama8l-h4096-s8192.json.gz \\\n"
"      scenarios/h200-llama8l-h4096-s8192.yaml --set training.cuda_graphs=true --format csv\n"
"\n"
"exit status: 0 success, 1 simulation failure, 2 bad input\n";

enum { O_SET = 1, O_STEPS, O_FORMAT, O_HELP };

static const cs_opt compare_opts[] = {
	{ "set", 1, O_SET }, { "steps", 1, O_STEPS }, { "format", 1, O_FORMAT }, { "help", 0, O_HELP },
	{ 0, 0, 0 },
};

enum { F_TEXT, F_JSON, F_CSV };

typedef struct compare_args {
	cs_trace_args in;
	int format;
} compare_args;

/* One line of the comparison, per step; NAN where a side has no figure. */
typedef struct row {
	const char *name;
	double trace_s, trace_kernels;
	double sim_s, sim_kernels;
} row;

/* the classes' rows, then the compute sum, then the trace-only classes */
enum { ROWS = CS_KINETO_CLASSES + 3, R_COMPUTE = CS_KINETO_COMM, R_IDLE = ROWS - 2, R_STEP = ROWS - 1 };

static int parse(cs_args *a, compare_args *r)
{
	const char *val;
	int id;
	memset(r, 0, sizeof *r);
	while ((id = cs_args_next(a, compare_opts, &val)) != CS_ARGS_END) {
		int taken = cs_trace_args_take(a, id, val, O_SET, O_STEPS, &r->in);
		if (taken == 2)
			return 2;
		if (taken)
			continue;
		switch (id) {
		case CS_ARGS_ERROR:
			return 2;
		case O_FORMAT:
			if (strcmp(val, "text") == 0)
				r->format = F_TEXT;
			else if (strcmp(val, "json") == 0)
				r->format = F_JSON;
			else if (strcmp(val, "csv") == 0)
				r->format = F_CSV;
			else
				return cs_args_fail(a, "unknown format '%s' (text, json or csv)", val);
			break;
		case O_HELP:
			fputs(compare_help, stdout);
			return CS_ARGS_HELP_SHOWN;
		}
	}
	return cs_trace_args_check(a, &r->in);
}

/* The rows: the four compute classes, their sum, what only the trace has,
 * GPU idle and the step. */
static void make_rows(const cs_kineto *t, int64_t steps, const cs_metrics *m, row *rows)
{
	double per = 1.0 / (double)steps;
	double tsum = 0, tk = 0, ssum = 0, sk = 0;
	for (int c = 0; c < CS_KINETO_CLASSES; c++) {
		double ts = 1e-9 * (double)cs_kineto_class_ns(t, (cs_kineto_class)c) * per;
		double tn = (double)cs_kineto_class_count(t, (cs_kineto_class)c) * per;
		int compute = c < CS_KINETO_COMM;
		int at = compute ? c : c + 1;   /* the compute sum comes after the classes */
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

static void write_text(FILE *f, const compare_args *r, const cs_kineto *t, int64_t steps,
		       const char *name, const cs_metrics *m, const row *rows)
{
	fprintf(f, "trace      %s: %lld step%s (%s), %lld kernels\n", r->in.trace, (long long)steps,
		steps == 1 ? "" : "s",
		r->in.steps ? "--steps" : cs_kineto_steps_marked(t) ? "ProfilerStep annotations"
							  : "no ProfilerStep annotations: the whole trace",
		(long long)cs_kineto_kernels(t));
	fprintf(f, "simulated  %s: %lld GPU%s, critical rank %lld, %s%s\n", name, (long long)m->gpus,
		m->gpus == 1 ? "" : "s", (long long)m->critical_rank,
		m->profile[0] ? "kernel profile " : "flat efficiencies", m->profile);
	fprintf(f, "\n%-14s %13s %9s %13s %9s %10s\n", "per step", "trace ms", "kernels", "simulated ms",
		"kernels", "error");
	for (int i = 0; i < ROWS; i++) {
		char a[32], b[32], c[32], d[32], e[32] = "-";
		text_num(a, sizeof a, rows[i].trace_s, 0);
		text_num(b, sizeof b, rows[i].trace_kernels, 1);
		text_num(c, sizeof c, rows[i].sim_s, 0);
		text_num(d, sizeof d, rows[i].sim_kernels, 1);
		double err = rel_error(&rows[i]);
		if (!isnan(err))
			snprintf(e, sizeof e, "%+.1f %%", 100 * err);
		fprintf(f, "%-14s %13s %9s %13s %9s %10s\n", rows[i].name, a, b, c, d, e);
	}
}

static void jw_num_or_null(cs_jw *w, const char *key, double v)
{
	cs_jw_key(w, key);
	if (isnan(v))
		cs_jw_null(w);
	else
		cs_jw_num(w, v);
}

static void write_json(FILE *f, const compare_args *r, const cs_kineto *t, int64_t steps,
		       const char *name, const cs_metrics *m, const row *rows)
{
	cs_jw w;
	cs_jw_init(&w, f, 2);
	cs_jw_begin_obj(&w);
	cs_jw_kv_str(&w, "trace", r->in.trace);
	cs_jw_kv_int(&w, "steps", steps);
	cs_jw_kv_str(&w, "steps_from", r->in.steps ? "option" : cs_kineto_steps_marked(t) ? "profiler_steps"
										 : "whole_trace");
	cs_jw_kv_int(&w, "trace_kernels", cs_kineto_kernels(t));
	cs_jw_kv_str(&w, "scenario", name);
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
	cs_jw_end_obj(&w);
	cs_jw_finish(&w);
}

static void write_csv(FILE *f, const row *rows)
{
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

int cs_cmd_compare(int argc, char **argv)
{
	cs_args a;
	compare_args r;
	cs_args_init(&a, "compare", argc, argv);
	int prc = parse(&a, &r);
	if (prc)
		return prc == CS_ARGS_HELP_SHOWN ? 0 : 2;
	cs_diag diag = { { 0 } };
	cs_compare c;
	cs_status st = cs_compare_open(r.in.trace, r.in.sc.file, r.in.sc.sets, r.in.sc.nsets, r.in.steps, &c, &diag);
	if (st != CS_OK) {
		if (!c.sim_failed) {
			fprintf(stderr, "%s\n", CS_CLEAN(diag));
			return st;
		}
		fprintf(stderr, "clustersim compare: %s\n", CS_CLEAN(diag));
		return st == CS_ERR_INPUT ? 2 : 1;
	}
	row rows[ROWS];
	make_rows(c.trace, c.steps, c.m, rows);
	if (r.format == F_JSON)
		write_json(stdout, &r, c.trace, c.steps, c.sc->name, c.m, rows);
	else if (r.format == F_CSV)
		write_csv(stdout, rows);
	else
		write_text(stdout, &r, c.trace, c.steps, c.sc->name, c.m, rows);
	cs_compare_close(&c);
	return 0;
}
