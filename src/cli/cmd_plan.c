/*
 * cmd_plan.c - `clustersim plan`: enumerate, prune and simulate the parallel
 * plans of a scenario's cluster, model and batch; print the best, and where
 * the classic heuristic choice (the distributed-training chapter's
 * choose_parallelism) ranks among them.
 */
#include "cli/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/progress.h"
#include "clustersim/clustersim.h"
#include "config/scenario.h"
#include "report/out.h"
#include "report/plan_out.h"
#include "study/planner.h"
#include "study/search.h"

static const char plan_help[] =
	"usage: clustersim plan SCENARIO.yaml [options]\n"
	"\n"
	"Search the parallel plans for SCENARIO's cluster, model and training batch\n"
	"(its own plan is ignored): tp (divisors of the heads, up to twice the\n"
	"scale-up domain, marked '*' beyond it), pp (up to the layers, uneven splits\n"
	"allowed), dp (the rest), cp (powers of two up to 16 from 32K tokens on),\n"
	"virtual stages 1, 2, 4 (interleaved), micro-batch 1, 2, 4 (and the\n"
	"scenario's), sharding none | zero1 | zero2 (also FSDP shard-grad-op) |\n"
	"zero3, recompute none | selective | full (the scenario's method, layers or\n"
	"modules with its own granularity) and, for a model with experts, ep\n"
	"(each power of two dividing dp and the experts) and the experts folded\n"
	"over tp x cp x dp (etp each power of two below tp x cp's span, ep tp / etp\n"
	"x cp times a power of two of dp; column etp, '-' unfolded). Plans over the\n"
	"memory budget\n"
	"(--headroom x HBM, by the formula of 'clustersim memory') or refused\n"
	"by the scenario checks are dropped; the rest, at most --max-sims of them\n"
	"chosen by an analytic estimate, are simulated (folded, one step, without\n"
	"the scenario's stragglers) and ranked by step time, then memory.\n"
	"The classic heuristic choice (choose_parallelism: the smallest tp x pp that\n"
	"fits) is simulated too and its rank printed. The scenario's own plan must\n"
	"still pass its checks (change it with --set parallelism.KEY=VALUE if an\n"
	"override breaks it).\n"
	"\n"
	"options:\n"
	"  --gpus N            plan for N GPUs instead of the scenario's cluster\n"
	"                      (a multiple of gpus_per_node, or a divisor of it)\n"
	"  --top K             plans to print (default 10; csv writes all)\n"
	"  --jobs J            simulation threads (default: the online CPUs)\n"
	"  --format text|json|csv|megatron   output format (default text); megatron:\n"
	"                      each plan as the torchrun and Megatron-LM flags that\n"
	"                      run it\n"
	"  --out FILE          write the output to FILE atomically (default stdout)\n"
	"  --plot FILE.svg     also chart the --top plans (at most 40): step time and\n"
	"                      memory per GPU against HBM, the chosen plan marked\n"
	"  --headroom F        fraction of HBM a plan may use (default 0.90)\n"
	"  --max-sims N        most plans simulated (default 2000)\n"
	"  --set KEY=VALUE     override a scalar of the scenario (repeatable)\n"
	"  --progress          show progress on stderr (the default: a rewritten line\n"
	"                      on a terminal, elsewhere a line every 10 s), and a\n"
	"                      'wrote FILE' line for each file written\n"
	"  --no-progress       show neither\n"
	"  -h, --help          this help\n"
	"\n"
	"examples:\n"
	"  clustersim plan scenarios/ddp-llama2-7b-2node.yaml\n"
	"  clustersim plan scenarios/llama3-405b-16k.yaml --gpus 2048 --top 5\n"
	"  clustersim plan scenarios/ddp-gpt-small.yaml --format csv --out plans.csv\n"
	"  clustersim plan scenarios/llama3-405b-8k.yaml --set model.preset=llama3-70b --jobs 8\n"
	"\n"
	"exit status: 0 success, 1 no plan could be simulated, 2 bad input\n";

enum {
	O_SET = 1,
	O_GPUS,
	O_TOP,
	O_JOBS,
	O_FORMAT,
	O_OUT,
	O_HEADROOM,
	O_MAX_SIMS,
	O_PLOT,
	O_PROGRESS,
	O_NO_PROGRESS,
	O_HELP
};

static const cs_opt plan_opts[] = {
	{ "set", 1, O_SET },
	{ "gpus", 1, O_GPUS },
	{ "top", 1, O_TOP },
	{ "jobs", 1, O_JOBS },
	{ "format", 1, O_FORMAT },
	{ "out", 1, O_OUT },
	{ "headroom", 1, O_HEADROOM },
	{ "max-sims", 1, O_MAX_SIMS },
	{ "plot", 1, O_PLOT },
	{ "progress", 0, O_PROGRESS },
	{ "no-progress", 0, O_NO_PROGRESS },
	{ "help", 0, O_HELP },
	{ 0, 0, 0 },
};

enum { F_TEXT, F_JSON, F_CSV, F_MEGATRON };

typedef struct plan_args {
	cs_scenario_args sc;
	int format;
	const char *out;
	const char *plot; /* --plot FILE.svg */
	int64_t top;
	int progress; /* CS_PROGRESS_* */
	cs_plan_opts opts;
} plan_args;

static int int_arg(cs_args *a, const char *name, const char *val, int64_t lo, int64_t hi, int64_t *out)
{
	if (cs_args_parse_int(val, lo, hi, out))
		return cs_args_fail(a, "'--%s' needs a whole number from %lld to %lld (got '%s')", name,
				    (long long)lo, (long long)hi, val);
	return 0;
}

static int parse(cs_args *a, plan_args *r)
{
	const char *val;
	int id;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(r, 0, sizeof *r);
	r->top = 10;
	r->progress = cs_cli_progress_default();
	r->opts.jobs = cpus > 0 ? (cpus > 64 ? 64 : (int)cpus) : 1;
	while ((id = cs_args_next(a, plan_opts, &val)) != CS_ARGS_END) {
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
		case O_GPUS:
			if (int_arg(a, "gpus", val, 1, 10000000, &r->opts.gpus))
				return 2;
			break;
		case O_TOP:
			if (int_arg(a, "top", val, 1, 1000000, &r->top))
				return 2;
			break;
		case O_JOBS:
			if (cs_args_jobs(a, "jobs", val, 256, &r->opts.jobs))
				return 2;
			break;
		case O_MAX_SIMS:
			if (int_arg(a, "max-sims", val, 1, 100000000, &r->opts.max_sims))
				return 2;
			break;
		case O_HEADROOM: {
			char *end;
			double h = strtod(val, &end);
			if (end == val || *end || !(h > 0.0 && h <= 1.0))
				return cs_args_fail(a, "'--headroom' needs a fraction in (0, 1] (got '%s')",
						    val);
			r->opts.headroom = h;
			break;
		}
		case O_FORMAT:
			if (strcmp(val, "text") == 0)
				r->format = F_TEXT;
			else if (strcmp(val, "json") == 0)
				r->format = F_JSON;
			else if (strcmp(val, "csv") == 0)
				r->format = F_CSV;
			else if (strcmp(val, "megatron") == 0)
				r->format = F_MEGATRON;
			else
				return cs_args_fail(a, "unknown format '%s' (text, json, csv or megatron)",
						    val);
			break;
		case O_OUT: r->out = val; break;
		case O_PLOT:
			if (!val[0] || strcmp(val, "-") == 0)
				return cs_args_fail(a, "'--plot' needs a file name (got '%s')", val);
			r->plot = val;
			break;
		case O_PROGRESS: r->progress = cs_cli_progress_default(); break;
		case O_NO_PROGRESS: r->progress = CS_PROGRESS_NONE; break;
		case O_HELP: fputs(plan_help, stdout); return CS_ARGS_HELP_SHOWN;
		}
	}
	if (!r->sc.file)
		return cs_args_fail(a, "no scenario file given");
	return 0;
}

typedef struct plot {
	const cs_scenario *sc;
	const cs_plan_search *s;
	int64_t top;
} plot;

static int write_plot(FILE *f, const void *ctx)
{
	const plot *p = ctx;
	return cs_plan_write_svg(f, p->sc, p->s, p->top);
}

int cs_cmd_plan(int argc, char **argv)
{
	cs_args a;
	plan_args r;
	cs_diag diag = { { 0 } };
	cs_scenario *sc = NULL;
	cs_plan_search *s = NULL;

	cs_args_init(&a, "plan", argc, argv);
	int prc = parse(&a, &r);
	if (prc)
		return prc == CS_ARGS_HELP_SHOWN ? 0 : 2;
	cs_status st = cs_scenario_load(r.sc.file, r.sc.sets, r.sc.nsets, &sc, &diag);
	if (st != CS_OK) {
		fprintf(stderr, "%s\n", CS_CLEAN(diag));
		return st;
	}
	const char *outs[] = { r.out, r.plot }, *ins[] = { r.sc.file };
	if (cs_cli_check_outputs("plan", outs, 2, ins, 1, sc) != 0) {
		cs_scenario_free(sc);
		return 2;
	}
	cs_cli_progress pr;
	cs_cli_progress_init(&pr, r.progress, "plans");
	cs_pool_opts pool = { .progress = r.progress ? cs_cli_progress_pool : NULL, .progress_ud = &pr };
	st = cs_study_plans(sc, &r.opts, &pool, &s, &diag);
	cs_cli_progress_end(&pr);
	if (st != CS_OK) {
		fprintf(stderr, "clustersim plan: %s\n", CS_CLEAN(diag));
		cs_scenario_free(sc);
		return st == CS_ERR_INPUT ? 2 : 1;
	}
	if (r.opts.gpus > 0)
		cs_plan_resize(sc, r.opts.gpus, &diag); /* for the header; checked above */

	int rc = 0;
	cs_out *o = cs_out_open(r.out ? r.out : "-", &diag);
	if (!o) {
		fprintf(stderr, "clustersim plan: %s\n", CS_CLEAN(diag));
		rc = 1;
		goto done;
	}
	FILE *f = cs_out_file(o);
	if (r.format == F_JSON)
		cs_plan_write_json(f, sc, s, r.top);
	else if (r.format == F_CSV)
		cs_plan_write_csv(f, s);
	else if (r.format == F_MEGATRON)
		cs_plan_write_megatron(f, sc, s, r.top);
	else
		cs_plan_write_text(f, sc, s, r.top);
	if (cs_out_commit(o, &diag) != 0) {
		fprintf(stderr, "clustersim plan: %s\n", CS_CLEAN(diag));
		rc = 1;
		goto done;
	}
	cs_cli_wrote(r.progress, r.out);
	if (r.plot && s->nplans > 0) {
		if (cs_cli_write("plan", r.plot, write_plot, &(plot){ sc, s, r.top }) != 0) {
			rc = 1;
			goto done;
		}
		cs_cli_wrote(r.progress, r.plot);
	}
	if (s->nplans == 0) {
		fprintf(stderr,
			"clustersim plan: no plan could be simulated: %lld over the memory "
			"budget, %lld invalid%s%s\n",
			(long long)s->pruned_memory, (long long)s->pruned_invalid,
			s->first_invalid[0] ? "; first refusal: " : "", s->first_invalid);
		rc = 1;
	}
done:
	cs_plan_search_free(s);
	cs_scenario_free(sc);
	return rc;
}
