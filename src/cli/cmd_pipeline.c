/*
 * cmd_pipeline.c - `clustersim pipeline`: one pipeline schedule with per-op
 * times, its makespan, bubble and in-flight peaks.
 *
 * Times. --tf, --tb and --tw are per micro-batch per stage (all of a
 * stage's layers), in any unit (the output uses the same one), decimals
 * allowed. --tb is the input-gradient part of the backward, --tw the
 * weight-gradient part; schedules without the split run one full backward
 * of tb + tw. The defaults, 1, 1, 1, are the zero-bubble paper's
 * t_f = t_b = t_w and, for GPipe and 1F1B, the seed's t_b = 2 t_f.
 * A stage with v chunks runs each chunk op in 1/v of those times. Times
 * become integers for the engine: one tick is 1/(1e6 * v) of the input
 * unit, so a chunk op of x units lasts round(x * 1e6) ticks and
 * everything down to 1e-6 of the unit is exact.
 */
#include "cli/commands.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "program/pipesim.h"
#include "report/out.h"
#include "report/pipe_out.h"
#include "report/svg.h"

#define TICKS_PER_UNIT 1e6

static const char usage[] =
	"usage: clustersim pipeline --schedule NAME --stages P --micro-batches M\n"
	"                           [--virtual-stages V] [--tf X] [--tb Y] [--tw Z]\n"
	"                           [--format text|json] [--timeline FILE.svg]\n"
	"\n"
	"Runs one pipeline schedule on P stages with M micro-batches, computation\n"
	"only, and prints its makespan, bubble fraction (1 - busy / (P * makespan))\n"
	"and the peak number of micro-batches in flight on each stage.\n"
	"\n"
	"  --schedule NAME        gpipe, 1f1b, interleaved, zb-h1 or zb-v\n"
	"  --stages P             pipeline stages, >= 1\n"
	"  --micro-batches M      micro-batches per step, >= 1\n"
	"  --virtual-stages V     chunks per stage: >= 2 for interleaved (M a multiple\n"
	"                         of P), 2 for zb-v (the default there), else 1\n"
	"  --tf X --tb Y --tw Z   forward, input-gradient and weight-gradient time per\n"
	"                         micro-batch per stage (default 1 each); schedules\n"
	"                         without the B/W split run a full backward of Y + Z;\n"
	"                         a chunk op takes 1/V of these\n"
	"  --format text|json     output format (default text)\n"
	"  --timeline FILE.svg    also draw the schedule as an SVG timeline\n"
	"  --help                 this text\n"
	"\n"
	"examples:\n"
	"  clustersim pipeline --schedule 1f1b --stages 4 --micro-batches 8\n"
	"  clustersim pipeline --schedule gpipe --stages 8 --micro-batches 32 --tb 2 --tw 1\n"
	"  clustersim pipeline --schedule interleaved --stages 4 --micro-batches 8 \\\n"
	"      --virtual-stages 2 --format json\n"
	"  clustersim pipeline --schedule zb-v --stages 4 --micro-batches 16 --timeline zbv.svg\n";

#define CS_SVG_MAX_BYTES 256e6

enum { O_SCHEDULE = 1, O_STAGES, O_MICRO, O_VSTAGES, O_TF, O_TB, O_TW, O_FORMAT, O_TIMELINE, O_HELP };

static const cs_opt pipe_opts[] = {
	{ "schedule", 1, O_SCHEDULE },
	{ "stages", 1, O_STAGES },
	{ "micro-batches", 1, O_MICRO },
	{ "virtual-stages", 1, O_VSTAGES },
	{ "tf", 1, O_TF },
	{ "tb", 1, O_TB },
	{ "tw", 1, O_TW },
	{ "format", 1, O_FORMAT },
	{ "timeline", 1, O_TIMELINE },
	{ "help", 0, O_HELP },
	{ 0, 0, 0 },
};

typedef struct pipe_args {
	cs_schedule sched;
	int have_sched;
	int64_t p, m, v;
	double t[3];
	int json;
	const char *timeline;
} pipe_args;

static int parse_int(const cs_args *args, const char *name, const char *s, int64_t lo, int64_t hi,
		     int64_t *out)
{
	if (cs_args_parse_int(s, lo, hi, out))
		return cs_args_fail(args, "bad value for '--%s': '%s' (an integer from %lld to %lld)", name,
				    s, (long long)lo, (long long)hi);
	return 0;
}

static int parse_time(const cs_args *args, const char *name, const char *s, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(x) || x < 0 || x > 1e6)
		return cs_args_fail(args, "bad value for '--%s': '%s' (a number from 0 to 1e6)", name, s);
	*out = x;
	return 0;
}

static int set_option(const cs_args *args, pipe_args *a, int id, const char *name, const char *val)
{
	switch (id) {
	case O_SCHEDULE:
		if (cs_sched_parse(val, &a->sched) != 0)
			return cs_args_fail(args,
					    "unknown schedule '%s'; expected gpipe, 1f1b, "
					    "interleaved, zb-h1 or zb-v",
					    val);
		a->have_sched = 1;
		return 0;
	case O_STAGES: return parse_int(args, name, val, 1, 65536, &a->p);
	case O_MICRO: return parse_int(args, name, val, 1, 1 << 24, &a->m);
	case O_VSTAGES: return parse_int(args, name, val, 1, 1024, &a->v);
	case O_TF: return parse_time(args, name, val, &a->t[0]);
	case O_TB: return parse_time(args, name, val, &a->t[1]);
	case O_TW: return parse_time(args, name, val, &a->t[2]);
	case O_FORMAT:
		if (strcmp(val, "text") != 0 && strcmp(val, "json") != 0)
			return cs_args_fail(args, "bad value for '--format': '%s' (text or json)", val);
		a->json = strcmp(val, "json") == 0;
		return 0;
	default:
		a->timeline = val; /* O_TIMELINE */
		return 0;
	}
}

/* 0 to run, 1 after --help, 2 on bad input. */
static int parse(pipe_args *a, int argc, char **argv)
{
	cs_args args;
	const char *val;
	int id;

	cs_args_init(&args, "pipeline", argc, argv);
	while ((id = cs_args_next(&args, pipe_opts, &val)) != CS_ARGS_END) {
		if (id == CS_ARGS_ERROR)
			return 2;
		if (id == CS_ARGS_POSITIONAL)
			return cs_args_fail(&args, "unexpected argument '%s'", val);
		if (id == O_HELP) {
			fputs(usage, stdout);
			return 1;
		}
		if (set_option(&args, a, id, pipe_opts[id - 1].name, val) != 0)
			return 2;
	}
	if (!a->have_sched)
		return cs_args_fail(&args, "missing '--schedule'");
	if (a->p == 0)
		return cs_args_fail(&args, "missing '--stages'");
	if (a->m == 0)
		return cs_args_fail(&args, "missing '--micro-batches'");
	if (a->v == 0)
		a->v = a->sched == CS_SCHED_ZB_V ? 2 : 1;
	return 0;
}

static int write_timeline(const char *path, const cs_pipe_result *r, double tpu)
{
	cs_diag diag = { "" };
	cs_out *o = cs_out_open(path, &diag);

	if (!o) {
		fprintf(stderr, "clustersim pipeline: %s\n", CS_CLEAN(diag));
		return 1;
	}
	if (cs_svg_pipeline(cs_out_file(o), r, tpu, "input units") != 0) {
		fprintf(stderr, "clustersim pipeline: cannot write '%s'\n", path);
		cs_out_abort(o);
		return 1;
	}
	if (cs_out_commit(o, &diag) != 0) {
		fprintf(stderr, "clustersim pipeline: %s\n", CS_CLEAN(diag));
		return 1;
	}
	return 0;
}

int cs_cmd_pipeline(int argc, char **argv)
{
	pipe_args a = { .t = { 1.0, 1.0, 1.0 } };
	int rc = parse(&a, argc, argv);
	cs_diag diag = { "" };
	cs_pipe_result res;

	if (rc != 0)
		return rc == 1 ? 0 : rc;
	const char *outs[] = { a.timeline };
	if (cs_cli_check_outputs("pipeline", outs, 1, NULL, 0, NULL) != 0)
		return 2;
	/* an SVG no viewer opens is refused before it is drawn: up to three
	 * boxes (F, B, W) per stage, micro-batch and chunk, ~240 bytes each */
	double boxes = 3.0 * (double)a.p * (double)a.m * (double)a.v;
	if (a.timeline && boxes * 240.0 > CS_SVG_MAX_BYTES) {
		fprintf(stderr,
			"clustersim pipeline: --timeline: %.3g boxes (about %.0f MB of SVG), more "
			"than the limit of %.0f MB: draw fewer stages or micro-batches\n",
			boxes, boxes * 240.0 / 1e6, CS_SVG_MAX_BYTES / 1e6);
		return 2;
	}
	cs_pipe_times t = {
		(cs_time)llround(a.t[0] * TICKS_PER_UNIT),
		(cs_time)llround(a.t[1] * TICKS_PER_UNIT),
		(cs_time)llround(a.t[2] * TICKS_PER_UNIT),
	};
	double tpu = TICKS_PER_UNIT * (double)a.v; /* ticks per input unit */
	cs_status st = cs_pipe_run(a.sched, a.p, a.m, a.v, &t, &res, &diag);
	if (st != CS_OK) {
		fprintf(stderr, "clustersim pipeline: %s\n", CS_CLEAN(diag));
		return (int)st;
	}
	if (a.timeline)
		rc = write_timeline(a.timeline, &res, tpu);
	if (rc == 0 && a.json)
		rc = cs_pipe_write_json(stdout, &res, tpu) != 0 ? 1 : 0;
	else if (rc == 0)
		cs_pipe_write_text(stdout, &res, tpu);
	cs_pipe_result_release(&res);
	return rc; /* main reports a standard output that cannot take the report */
}
