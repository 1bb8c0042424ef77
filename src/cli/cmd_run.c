/*
 * cmd_run.c - `clustersim run`: simulate a scenario and report; and
 * `clustersim validate`: load and check a scenario without running it.
 */
#include "cli/commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/progress.h"
#include "clustersim/clustersim.h"
#include "coll/coll.h"
#include "config/scenario.h"
#include "model/memory.h"
#include "model/routing.h"
#include "program/mesh.h"
#include "report/out.h"
#include "report/report.h"
#include "report/trace.h"
#include "study/study.h"

static const char run_help[] =
	"usage: clustersim run SCENARIO [options]\n"
	"\n"
	"Simulate one or more training steps of SCENARIO rank by rank and report\n"
	"step time, MFU, exposed communication, bubble and memory per GPU.\n"
	"SCENARIO is a YAML file, or the name of a shipped one ('clustersim list\n"
	"scenarios'): ddp-gpt-small reads scenarios/ddp-gpt-small.yaml. A plan that\n"
	"does not fit in the GPU's memory is simulated anyway, with a warning.\n"
	"\n"
	"options:\n"
	"  --set KEY=VALUE     override a scalar of the scenario (repeatable), with\n"
	"                      the file's units and checks: --set cluster.nodes=4\n"
	"  --format text|json|csv  output format (default text); csv: a header and\n"
	"                      one row, the columns of 'clustersim sweep'\n"
	"  --per-rank FILE     write one CSV row per rank (end, busy, idle, exposed\n"
	"                      communication by kind, activation peak, compute factor)\n"
	"  --trace FILE        write a Chrome trace JSON (open it in Perfetto): one\n"
	"                      process per traced rank, one thread per stream\n"
	"  --trace-ranks LIST  ranks to trace, e.g. 0,8,16-23 (default: the first\n"
	"                      rank of each pipeline stage)\n"
	"  --timeline FILE     draw the pipeline schedule as an SVG\n"
	"  --critical-path     trace the critical path even on large runs (it is traced\n"
	"                      by default with stragglers and up to 4,096 ranks)\n"
	"  --no-critical-path  never trace it: a perturbed run then takes the time of a\n"
	"                      plain one (tracing costs 2-3x on large runs)\n"
	"  --progress          show progress on stderr (the default: a rewritten line\n"
	"                      on a terminal, elsewhere a line every 10 s), and a\n"
	"                      'wrote FILE' line for each file written\n"
	"  --no-progress       show neither\n"
	"  --jobs N            simulate on N threads (simulate.threads; default: the\n"
	"                      machine's cores): the data-parallel replicas run in\n"
	"                      parts side by side; the result is the same for every N\n"
	"                      (--threads N is the same option)\n"
	"  -h, --help          this help\n"
	"\n"
	"examples:\n"
	"  clustersim run scenarios/llama3-405b-16k.yaml\n"
	"  clustersim run scenarios/llama3-405b-16k.yaml --jobs 4\n"
	"  clustersim run 3d-llama3-70b-64gpu --jobs 2\n"
	"  clustersim run scenarios/fsdp-llama3-8b-16gpu.yaml --format json\n"
	"  clustersim run scenarios/3d-llama3-70b-64gpu.yaml --set parallelism.data_parallel.overlap=false\n"
	"\n"
	"exit status: 0 success, 1 simulation failure, 2 bad input\n";

static const char validate_help[] =
	"usage: clustersim validate SCENARIO [--set KEY=VALUE]... [--allow-oom]\n"
	"\n"
	"Load and check SCENARIO (a YAML file, or a shipped scenario's name: YAML,\n"
	"units, presets, the parallel plan, and that the plan fits in the GPU's\n"
	"memory) without simulating it. Prints 'ok' and a one-line summary, or the\n"
	"first problem as FILE:LINE:COL: MESSAGE with exit status 2. A plan that\n"
	"needs more memory per GPU than the GPU has is reported with exit status 1\n"
	"('clustersim memory SCENARIO' breaks the need down).\n"
	"\n"
	"options:\n"
	"  --set KEY=VALUE     override a scalar of the scenario (repeatable)\n"
	"  --allow-oom         accept a plan that does not fit: 'ok' and exit 0,\n"
	"                      with the warning (run simulates such a plan anyway)\n"
	"  -h, --help          this help\n"
	"\n"
	"examples:\n"
	"  clustersim validate scenarios/ddp-gpt-small.yaml --set cluster.nodes=2\n"
	"  clustersim validate ddp-llama2-7b-2node --allow-oom\n"
	"\n"
	"exit status: 0 success, 1 the plan does not fit in memory, 2 bad input\n";

enum {
	O_SET = 1,
	O_FORMAT,
	O_PER_RANK,
	O_PROGRESS,
	O_NO_PROGRESS,
	O_HELP,
	O_TRACE,
	O_TRACE_RANKS,
	O_TIMELINE,
	O_CRITICAL_PATH,
	O_NO_CRITICAL_PATH,
	O_THREADS,
	O_JOBS,
	O_ALLOW_OOM
};

#define MAX_TRACE_RANKS 4096

static const cs_opt run_opts[] = {
	{ "set", 1, O_SET },
	{ "format", 1, O_FORMAT },
	{ "per-rank", 1, O_PER_RANK },
	{ "progress", 0, O_PROGRESS },
	{ "no-progress", 0, O_NO_PROGRESS },
	{ "help", 0, O_HELP },
	{ "critical-path", 0, O_CRITICAL_PATH },
	{ "no-critical-path", 0, O_NO_CRITICAL_PATH },
	{ "trace", 1, O_TRACE },
	{ "trace-ranks", 1, O_TRACE_RANKS },
	{ "timeline", 1, O_TIMELINE },
	{ "jobs", 1, O_JOBS },
	{ "threads", 1, O_THREADS },
	{ 0, 0, 0 },
};

static const cs_opt validate_opts[] = {
	{ "set", 1, O_SET },
	{ "allow-oom", 0, O_ALLOW_OOM },
	{ "help", 0, O_HELP },
	{ 0, 0, 0 },
};

typedef struct run_args {
	cs_scenario_args sc;
	int json; /* 0 text, 1 json, 2 csv */
	int progress;
	const char *per_rank;
	const char *trace, *timeline;
	int critical_path;
	int64_t trace_ranks[MAX_TRACE_RANKS];
	size_t n_trace_ranks;
	char threads[48]; /* --jobs N as the override it stands for */
	bool allow_oom;   /* validate --allow-oom */
} run_args;

/* "0,8,16-23" */
static int parse_ranks(cs_args *a, const char *text, run_args *r)
{
	const char *p = text;
	while (*p) {
		char *end;
		long long lo = strtoll(p, &end, 10), hi = lo;
		if (end == p || lo < 0)
			return cs_args_fail(a, "bad rank list '%s' (e.g. 0,8,16-23)", text);
		p = end;
		if (*p == '-') {
			hi = strtoll(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return cs_args_fail(a, "bad rank range in '%s'", text);
			p = end;
		}
		for (long long x = lo; x <= hi; x++) {
			if (r->n_trace_ranks == MAX_TRACE_RANKS)
				return cs_args_fail(a, "more than %d ranks to trace", MAX_TRACE_RANKS);
			r->trace_ranks[r->n_trace_ranks++] = x;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return cs_args_fail(a, "bad rank list '%s' (e.g. 0,8,16-23)", text);
	}
	return 0;
}

static int parse(cs_args *a, const cs_opt *opts, const char *help, run_args *r)
{
	const char *val;
	int id;
	memset(r, 0, sizeof(*r));
	r->progress = cs_cli_progress_default();
	while ((id = cs_args_next(a, opts, &val)) != CS_ARGS_END) {
		switch (id) {
		case CS_ARGS_ERROR: return 2;
		case CS_ARGS_POSITIONAL:
			if (cs_args_scenario(a, &r->sc, 0, val))
				return 2;
			break;
		case O_SET:
			if (cs_args_scenario(a, &r->sc, 1, val))
				return 2;
			break;
		case O_FORMAT:
			if (strcmp(val, "text") && strcmp(val, "json") && strcmp(val, "csv"))
				return cs_args_fail(a, "unknown format '%s' (text, json or csv)", val);
			r->json = strcmp(val, "json") == 0 ? 1 : strcmp(val, "csv") == 0 ? 2 : 0;
			break;
		case O_PER_RANK: r->per_rank = val; break;
		case O_TRACE: r->trace = val; break;
		case O_CRITICAL_PATH: r->critical_path = 1; break;
		case O_NO_CRITICAL_PATH: r->critical_path = -1; break;
		case O_TIMELINE: r->timeline = val; break;
		case O_TRACE_RANKS:
			if (parse_ranks(a, val, r))
				return 2;
			break;
		case O_JOBS:
		case O_THREADS: {
			int n;
			if (cs_args_jobs(a, id == O_JOBS ? "jobs" : "threads", val, 256, &n))
				return 2;
			snprintf(r->threads, sizeof r->threads, "simulate.threads=%d", n);
			if (cs_args_scenario(a, &r->sc, 1, r->threads))
				return 2;
			break;
		}
		case O_PROGRESS: r->progress = cs_cli_progress_default(); break;
		case O_NO_PROGRESS: r->progress = 0; break;
		case O_ALLOW_OOM: r->allow_oom = true; break;
		case O_HELP: fputs(help, stdout); return CS_ARGS_HELP_SHOWN;
		}
	}
	if (!r->sc.file)
		return cs_args_fail(a, "no scenario file given");
	return 0;
}

/* Plans that are allowed but rarely what one wants. */
static void warn_plan(const cs_scenario *sc)
{
	cs_mesh m;
	cs_mesh_init(&m, &sc->parallel);
	/* on a torus the scale-up tier is the whole pod */
	if (sc->cluster.topology == CS_TOPO_FAT_TREE &&
	    cs_mesh_tp_crosses_domain(&m, sc->cluster.scale_up_domain))
		fprintf(stderr,
			"warning: tensor-parallel groups of %lld span more than one %d-GPU NVLink "
			"domain; their collectives cross the scale-out fabric\n",
			(long long)sc->parallel.tp, sc->cluster.scale_up_domain);
	const char *why = cs_coll_algo_unavailable(&sc->cluster, sc->coll.algorithm);
	if (why) {
		fprintf(stderr,
			"warning: 'collectives.algorithm: %s' is not available on this cluster (%s); "
			"every collective uses what NCCL uses instead\n",
			cs_coll_algo_name(sc->coll.algorithm), why);
		return;
	}
	/* the NCCL collectives the plan runs that the forced algorithm cannot */
	const cs_parallel_spec *p = &sc->parallel;
	bool dp = p->dp * p->cp > 1, tp = p->tp > 1;
	bool uses[CS_COLL_OPS] = { false };
	uses[CS_COLL_ALL_REDUCE] = (tp && !p->sequence_parallel) || dp;
	uses[CS_COLL_REDUCE_SCATTER] = (tp && p->sequence_parallel) || (dp && p->sharding != CS_SHARD_NONE);
	uses[CS_COLL_ALL_GATHER] =
		uses[CS_COLL_REDUCE_SCATTER] || (p->cp > 1 && p->cp_kind == CS_CP_ALLGATHER);
	uses[CS_COLL_ALL_TO_ALL] = p->ep > 1 && p->moe_dispatcher == CS_MOE_ALLTOALL;
	char list[128] = "";
	for (int op = 0; op < CS_COLL_OPS; op++)
		if (uses[op] && !cs_coll_algo_applies(sc->coll.algorithm, (cs_coll_op)op))
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "",
				 cs_coll_op_name((cs_coll_op)op));
	if (list[0])
		fprintf(stderr,
			"warning: 'collectives.algorithm: %s' does not apply to %s; those collectives use "
			"what NCCL uses instead\n",
			cs_coll_algo_name(sc->coll.algorithm), list);
}

static int write_per_rank(const char *path, const cs_result *res)
{
	cs_diag diag;
	cs_out *o = cs_out_open(path, &diag);
	if (!o) {
		fprintf(stderr, "clustersim run: %s\n", CS_CLEAN(diag));
		return 1;
	}
	int64_t n;
	const cs_rank_row *rows = cs__result_rows(res, &n);
	cs_report_ranks_csv(cs_out_file(o), rows, n);
	if (cs_out_commit(o, &diag) != 0) {
		fprintf(stderr, "clustersim run: %s\n", CS_CLEAN(diag));
		return 1;
	}
	return 0;
}

/* Parse the command line and load its scenario; 0, or the exit status. */
static int load(const char *cmd, int argc, char **argv, const cs_opt *opts, const char *help, run_args *r,
		cs_scenario **sc)
{
	cs_args a;
	cs_args_init(&a, cmd, argc, argv);
	int rc = parse(&a, opts, help, r);
	if (rc)
		return rc == CS_ARGS_HELP_SHOWN ? rc : 2;
	cs_diag diag = { { 0 } };
	cs_status st = cs_scenario_load(r->sc.file, r->sc.sets, r->sc.nsets, sc, &diag);
	if (st != CS_OK) {
		fprintf(stderr, "%s\n", CS_CLEAN(diag));
		return st;
	}
	warn_plan(*sc);
	return 0;
}

int cs_cmd_run(int argc, char **argv)
{
	run_args r;
	cs_scenario *sc = NULL;
	int rc = load("run", argc, argv, run_opts, run_help, &r, &sc);
	if (rc)
		return rc == CS_ARGS_HELP_SHOWN ? 0 : rc;
	const char *outs[] = { r.trace, r.timeline, r.per_rank }, *ins[] = { r.sc.file };
	if ((rc = cs_cli_check_outputs("run", outs, 3, ins, 1, sc)) != 0) {
		cs_scenario_free(sc);
		return rc;
	}
	cs_diag diag = { { 0 } };
	cs_status st;
	cs_run_opts opts = { .progress = r.progress,
			     .trace_ranks = r.trace_ranks,
			     .n_trace_ranks = r.n_trace_ranks,
			     .critical_path = r.critical_path };
	cs_trace *trace = r.trace || r.timeline ? cs_trace_new() : NULL;
	cs_span_sink sink = { .on_span = cs_trace_span,
			      .ctx = trace,
			      .stage_heads = r.timeline != NULL,
			      .admit = r.trace ? cs_trace_admit : NULL };
	cs_result *res = NULL;
	if ((r.trace || r.timeline) && !trace) {
		snprintf(diag.msg, sizeof diag.msg, "out of memory for the trace");
		st = CS_ERR_NOMEM;
	} else {
		cs__sim_request rq = { .opts = &opts,
				       .sink = trace ? &sink : NULL,
				       .want_rows = r.per_rank != NULL };
		st = cs__simulate(sc, &rq, &res, &diag);
	}
	if (st == CS_OK && trace) {
		cs_mesh mesh;
		cs_mesh_init(&mesh, &sc->parallel);
		if ((r.trace && cs_trace_write_chrome(trace, r.trace, &diag)) ||
		    (r.timeline && cs_trace_write_timeline(trace, sc, &mesh, r.timeline, &diag)))
			st = CS_ERR_SIM; /* checked before the run: it is the writing that failed */
		else {
			cs_cli_wrote(r.progress, r.trace);
			cs_cli_wrote(r.progress, r.timeline);
		}
	}
	cs_trace_free(trace);
	if (st != CS_OK) {
		fprintf(stderr, "clustersim run: %s\n", CS_CLEAN(diag));
		cs_result_free(res);
		cs_scenario_free(sc);
		return st == CS_ERR_INPUT ? 2 : 1;
	}
	const cs_metrics *m = cs_result_metrics(res);
	if (!m->memory.fits)
		fprintf(stderr,
			"warning: the plan needs %.1f GB per GPU, more than the %.1f GB the GPU has; "
			"simulated anyway\n",
			m->memory.total / 1e9, m->memory.capacity / 1e9);
	if (r.json == 2)
		cs_report_csv(stdout, sc->name, m);
	else if (r.json)
		cs_report_json(stdout, sc->name, m, 2);
	else
		cs_report_text(stdout, sc->name, m, cs_cli_color(1));
	if (r.per_rank && (rc = write_per_rank(r.per_rank, res)) == 0)
		cs_cli_wrote(r.progress, r.per_rank);
	cs_result_free(res);
	cs_scenario_free(sc);
	return rc;
}

int cs_cmd_validate(int argc, char **argv)
{
	run_args r;
	cs_scenario *sc = NULL;
	int rc = load("validate", argc, argv, validate_opts, validate_help, &r, &sc);
	if (rc)
		return rc == CS_ARGS_HELP_SHOWN ? 0 : rc;
	const cs_parallel_spec *p = &sc->parallel;
	cs_diag diag = { { 0 } };
	cs_status st = cs__simulate_check(sc, &diag);
	if (st != CS_OK) {
		fprintf(stderr, "%s\n", CS_CLEAN(diag));
		cs_scenario_free(sc);
		return st == CS_ERR_INPUT ? 2 : 1;
	}
	cs_mem_breakdown mb = cs_mem_per_gpu(&sc->model, &sc->training, &sc->parallel, &sc->cluster.gpu,
					     cs_cluster_shard_unit(&sc->cluster));
	if (!mb.fits && !r.allow_oom) {
		fprintf(stderr,
			"clustersim validate: %s: the plan needs %.1f GB per GPU, more than the %.1f GB "
			"the GPU has (--allow-oom accepts it)\n",
			r.sc.file, mb.total / 1e9, mb.capacity / 1e9);
		cs_scenario_free(sc);
		return 1;
	}
	if (!mb.fits)
		fprintf(stderr,
			"warning: the plan needs %.1f GB per GPU, more than the %.1f GB the GPU "
			"has\n",
			mb.total / 1e9, mb.capacity / 1e9);
	int64_t gpus = cs_scenario_gpus(sc), micro = cs_scenario_micro_batches(sc);
	char etp[112] = "";
	if (cs_parallel_folded(p)) /* the experts folded over tp x cp x dp */
		snprintf(etp, sizeof etp, " (etp %lld, edp %lld)", (long long)p->etp,
			 (long long)cs_parallel_edp(p));
	if (p->moe_routing != CS_ROUTE_BALANCED) {
		size_t at = strlen(etp);
		snprintf(etp + at, sizeof etp - at, " (%s routing: the busiest rank x%.3f)",
			 p->moe_routing == CS_ROUTE_ZIPF ? "zipf" : "uniform", cs_moe_imbalance(sc));
	}
	printf("ok: %s: %lld GPU%s (%lld node%s x %d), tp %lld, cp %lld, pp %lld, dp %lld, ep %lld%s, "
	       "%lld micro-batch%s per replica\n",
	       r.sc.file, (long long)gpus, gpus == 1 ? "" : "s", (long long)sc->cluster.nodes,
	       sc->cluster.nodes == 1 ? "" : "s", sc->cluster.gpus_per_node, (long long)p->tp,
	       (long long)p->cp, (long long)p->pp, (long long)p->dp, (long long)p->ep, etp, (long long)micro,
	       micro == 1 ? "" : "es");
	cs_scenario_free(sc);
	return 0;
}
