/*
 * cmd_goodput.c - `clustersim goodput`: the scenario's reliability section
 * over a run of days, sampled many times (study/goodput.h), as text or
 * JSON, with an optional SVG timeline of one sampled run.
 */
#include "cli/commands.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/progress.h"
#include "clustersim/clustersim.h"
#include "config/scenario.h"
#include "report/goodput_out.h"
#include "report/out.h"
#include "study/goodput.h"

static const char goodput_help[] =
	"usage: clustersim goodput SCENARIO.yaml [options]\n"
	"\n"
	"How much of a long run's wall clock becomes training: the scenario's step\n"
	"is simulated, then its 'reliability' section (failure rates by component,\n"
	"checkpoints, restarts, spare nodes, elastic running) is sampled over many\n"
	"runs. Reports the effective training time with its 99 % confidence\n"
	"interval, interruptions per day by cause, the time lost by cause, the\n"
	"Young/Daly checkpoint interval beside the one configured and, with\n"
	"--tokens, the days to train.\n"
	"\n"
	"options:\n"
	"  --days D            length of each run in days (default 54)\n"
	"  --runs N            sampled runs, 1 to 1000000 (default 1000)\n"
	"  --tokens T          token budget for the time to train (e.g. 15.6e12)\n"
	"  --jobs J            threads (default: the online CPUs)\n"
	"  --format text|json  output format (default text)\n"
	"  --out FILE          write the report to FILE atomically (default stdout)\n"
	"  --plot FILE.svg     the timeline of the first sampled run\n"
	"  --set KEY=VALUE     override a scalar of the scenario (repeatable), e.g.\n"
	"                      --set reliability.checkpoint.interval=10min\n"
	"  --progress          show progress on stderr (the default: a rewritten line\n"
	"                      on a terminal, elsewhere a line every 10 s), and a\n"
	"                      'wrote FILE' line for each file written\n"
	"  --no-progress       show neither\n"
	"  -h, --help          this help\n"
	"\n"
	"examples:\n"
	"  clustersim goodput scenarios/llama3-405b-16k-goodput.yaml\n"
	"  clustersim goodput scenarios/ddp-gpt-small.yaml --set reliability.preset=llama3 \\\n"
	"      --set reliability.checkpoint.interval=30min --days 30\n"
	"  clustersim goodput scenarios/llama3-405b-16k-goodput.yaml --tokens 15.6e12 --days 90\n"
	"  clustersim goodput scenarios/llama3-405b-16k-goodput.yaml --set reliability.spares=0\n"
	"\n"
	"exit status: 0 success, 1 simulation failure, 2 bad input\n";

enum {
	O_SET = 1,
	O_DAYS,
	O_RUNS,
	O_TOKENS,
	O_JOBS,
	O_FORMAT,
	O_OUT,
	O_PLOT,
	O_PROGRESS,
	O_NO_PROGRESS,
	O_HELP
};

static const cs_opt goodput_opts[] = {
	{ "set", 1, O_SET },           { "days", 1, O_DAYS },
	{ "runs", 1, O_RUNS },         { "tokens", 1, O_TOKENS },
	{ "jobs", 1, O_JOBS },         { "format", 1, O_FORMAT },
	{ "out", 1, O_OUT },           { "plot", 1, O_PLOT },
	{ "progress", 0, O_PROGRESS }, { "no-progress", 0, O_NO_PROGRESS },
	{ "help", 0, O_HELP },         { 0, 0, 0 },
};

typedef struct goodput_args {
	cs_scenario_args sc;
	cs_goodput_opts o;
	int json, progress;
	const char *out, *plot;
} goodput_args;

static int positive(cs_args *a, const char *name, const char *val, double max, double *out)
{
	char *end;
	double v = strtod(val, &end);
	if (end == val || *end || !(v > 0 && v <= max))
		return cs_args_fail(a, "'--%s' needs a number in (0, %g] (got '%s')", name, max, val);
	*out = v;
	return 0;
}

static int parse(cs_args *a, goodput_args *r)
{
	const char *val;
	int id;
	int64_t v;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	memset(r, 0, sizeof *r);
	r->o.days = 54;
	r->o.runs = 1000;
	r->o.jobs = cpus > 0 ? (cpus > 64 ? 64 : (int)cpus) : 1;
	r->progress = cs_cli_progress_default();
	while ((id = cs_args_next(a, goodput_opts, &val)) != CS_ARGS_END) {
		switch (id) {
		case CS_ARGS_ERROR: return 2;
		case CS_ARGS_POSITIONAL:
		case O_SET:
			if (cs_args_scenario(a, &r->sc, id == O_SET, val))
				return 2;
			break;
		case O_DAYS:
			if (positive(a, "days", val, 36500, &r->o.days))
				return 2;
			break;
		case O_TOKENS:
			if (positive(a, "tokens", val, 1e30, &r->o.token_budget))
				return 2;
			break;
		case O_RUNS:
			/* a million runs take seconds even without a failure
			 * to count (some 9 us each); more buy no precision */
			if (cs_args_parse_int(val, 1, 1000000, &v))
				return cs_args_fail(a,
						    "'--runs' needs a whole number from 1 to 1000000 "
						    "(got '%s')",
						    val);
			r->o.runs = v;
			break;
		case O_JOBS:
			if (cs_args_jobs(a, "jobs", val, 256, &r->o.jobs))
				return 2;
			break;
		case O_FORMAT:
			if (strcmp(val, "text") && strcmp(val, "json"))
				return cs_args_fail(a, "unknown format '%s' (text or json)", val);
			r->json = strcmp(val, "json") == 0;
			break;
		case O_OUT: r->out = val; break;
		case O_PLOT: r->plot = val; break;
		case O_PROGRESS: r->progress = cs_cli_progress_default(); break;
		case O_NO_PROGRESS: r->progress = CS_PROGRESS_NONE; break;
		case O_HELP: fputs(goodput_help, stdout); return CS_ARGS_HELP_SHOWN;
		}
	}
	if (!r->sc.file)
		return cs_args_fail(a, "no scenario file given");
	return 0;
}

/* Write through cs_out: 0, or 1 after printing the
 * problem (the output cannot be written, or no memory for the timeline). */
static int write_out(const char *path, const cs_scenario *sc, const cs_goodput_report *g, int json,
		     const cs_goodput_timeline *tl, const cs_rel_run *run)
{
	cs_diag diag = { { 0 } };
	cs_out *o = cs_out_open(path ? path : "-", &diag);
	if (o) {
		FILE *f = cs_out_file(o);
		if (!tl) {
			(json ? cs_goodput_write_json : cs_goodput_write_text)(f, sc->name, g);
		} else if (cs_goodput_write_svg(f, sc->name, g, tl, run) != 0) {
			cs_out_abort(o);
			fprintf(stderr, "clustersim goodput: out of memory for the timeline\n");
			return 1;
		}
		if (cs_out_commit(o, &diag) == 0)
			return 0;
	}
	fprintf(stderr, "clustersim goodput: %s\n", CS_CLEAN(diag));
	return 1;
}

int cs_cmd_goodput(int argc, char **argv)
{
	cs_args a;
	goodput_args r;
	cs_diag diag = { { 0 } };
	cs_scenario *sc = NULL;
	cs_args_init(&a, "goodput", argc, argv);
	int rc = parse(&a, &r);
	if (rc)
		return rc == CS_ARGS_HELP_SHOWN ? 0 : 2;
	cs_status st = cs_scenario_load(r.sc.file, r.sc.sets, r.sc.nsets, &sc, &diag);
	if (st != CS_OK) {
		fprintf(stderr, "%s\n", CS_CLEAN(diag));
		return 2;
	}
	const char *outs[] = { r.out, r.plot }, *ins[] = { r.sc.file };
	if (cs_cli_check_outputs("goodput", outs, 2, ins, 1, sc) != 0) {
		cs_scenario_free(sc);
		return 2;
	}
	cs_cli_progress pr;
	cs_cli_progress_init(&pr, r.progress, "runs");
	r.o.pool.progress = r.progress ? cs_cli_progress_pool : NULL;
	r.o.pool.progress_ud = &pr;
	cs_goodput_report g;
	st = cs_study_goodput(sc, &r.o, &g, &diag);
	cs_cli_progress_end(&pr);
	if (st != CS_OK) {
		fprintf(stderr, "clustersim goodput: %s\n", CS_CLEAN(diag));
		cs_scenario_free(sc);
		return st == CS_ERR_INPUT ? 2 : 1;
	}
	if ((rc = write_out(r.out, sc, &g, r.json, NULL, NULL)) == 0)
		cs_cli_wrote(r.progress, r.out);
	if (rc == 0 && r.plot) {
		cs_goodput_timeline *tl = cs_goodput_timeline_new();
		cs_rel_run run;
		if (!tl || cs_study_goodput_sample(&g, 0, cs_goodput_timeline_span, tl, &run) != CS_OK) {
			fprintf(stderr, "clustersim goodput: out of memory for the timeline\n");
			rc = 1;
		} else {
			if ((rc = write_out(r.plot, sc, &g, 0, tl, &run)) == 0)
				cs_cli_wrote(r.progress, r.plot);
		}
		cs_goodput_timeline_free(tl);
	}
	cs_scenario_free(sc);
	return rc;
}
