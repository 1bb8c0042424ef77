/*
 * cmd_sweep.c - `clustersim sweep`: run a scenario over the cartesian
 * product of varied keys on threads (and, built with MPI and started by
 * mpirun, over ranks), then write one CSV row per point and an optional
 * SVG chart. The points and their runs live in study/sweep.h, the CSV and
 * chart in report/sweep_out.h.
 *
 * Ctrl-C stops handing out points: running points finish, the rows done so
 * far are written (in point order) and the exit status is 130.
 */
#include "cli/commands.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/progress.h"
#include "clustersim/clustersim.h"
#include "report/out.h"
#include "report/sweep_out.h"

#ifdef CS_HAVE_MPI
#include <mpi.h>
#endif

static const char sweep_help[] =
	"usage: clustersim sweep SCENARIO.yaml --vary KEY=V1,V2,... [--vary KEY2=...]\n"
	"                        --out FILE.csv [options]\n"
	"\n"
	"Simulate SCENARIO once per point of the cartesian product of the varied\n"
	"keys and write one CSV row per point: the varied values, status (ok or\n"
	"error), error (the message of a failed point), then every metric of\n"
	"'clustersim run'. Rows follow nested loops, the first --vary outermost.\n"
	"\n"
	"options:\n"
	"  --vary KEY=V1,V2,...  values of one key (repeatable, at most 16 keys and\n"
	"                        100000 points); values have the syntax of --set\n"
	"  --set KEY=VALUE       override a scalar for every point (repeatable)\n"
	"  --out FILE.csv        the CSV to write ('-' for standard output)\n"
	"  --jobs N              points run at once (default: the number of CPUs)\n"
	"  --plot FILE.svg       chart the metric against the first varied key, one\n"
	"                        line per value of the second; the y axis starts at 0\n"
	"                        unless the points lie in its upper half (it says so)\n"
	"  --metric NAME         the charted column (default step_time_s)\n"
	"  --goodput DAYS        also sample each point's runs of DAYS days under its\n"
	"                        'reliability' section (as 'clustersim goodput'): columns\n"
	"                        effective_training, its 99 % interval, interruptions_per_day,\n"
	"                        lost_* by cause and young_daly_interval_s\n"
	"  --goodput-runs N      runs per point (default 1000)\n"
	"  --progress            show progress on stderr (the default: a rewritten line\n"
	"                        on a terminal, elsewhere a line every 10 s), and a\n"
	"                        'wrote FILE' line for each file written\n"
	"  --no-progress         show neither\n"
	"  -h, --help            this help\n"
	"\n"
	"examples:\n"
	"  clustersim sweep scenarios/llama3-405b-16k.yaml --out bw.csv --plot bw.svg \\\n"
	"      --vary cluster.scale_out.bandwidth=100Gb/s,200Gb/s,400Gb/s,800Gb/s\n"
	"  clustersim sweep scenarios/ddp-gpt-small.yaml --out dp.csv \\\n"
	"      --vary parallelism.data_parallel.bucket=1MiB,25MiB,100MiB --vary "
	"parallelism.data_parallel.overlap=true,false\n"
	"  clustersim sweep scenarios/ddp-gpt-small.yaml --out ckpt.csv --goodput 30 \\\n"
	"      --set reliability.preset=llama3 --vary reliability.checkpoint.interval=2min,10min,30min\n"
	"\n"
	"Started by mpirun (when built with MPI), point i runs on rank i mod R and\n"
	"rank 0 writes the same CSV as one process would.\n"
	"\n"
	"exit status: 0 success (failed points are rows, not failures), 2 bad input,\n"
	"130 interrupted (the finished rows are written)\n";

enum {
	O_VARY = 1,
	O_SET,
	O_OUT,
	O_JOBS,
	O_PLOT,
	O_METRIC,
	O_PROGRESS,
	O_NO_PROGRESS,
	O_GOODPUT,
	O_GOODPUT_RUNS,
	O_HELP
};

static const cs_opt sweep_opts[] = {
	{ "vary", 1, O_VARY },         { "set", 1, O_SET },
	{ "out", 1, O_OUT },           { "jobs", 1, O_JOBS },
	{ "plot", 1, O_PLOT },         { "metric", 1, O_METRIC },
	{ "progress", 0, O_PROGRESS }, { "no-progress", 0, O_NO_PROGRESS },
	{ "goodput", 1, O_GOODPUT },   { "goodput-runs", 1, O_GOODPUT_RUNS },
	{ "help", 0, O_HELP },         { 0, 0, 0 },
};

typedef struct sweep_args {
	const char *vary[CS_SWEEP_MAX_KEYS];
	size_t nvary;
	cs_scenario_args sc;
	const char *out, *plot, *metric;
	int jobs;
	int progress;
	double goodput_days;
	int64_t goodput_runs;
} sweep_args;

static int parse(cs_args *a, sweep_args *r)
{
	const char *val;
	int id;
	long n;
	memset(r, 0, sizeof(*r));
	r->progress = cs_cli_progress_default();
	r->metric = "step_time_s";
	n = sysconf(_SC_NPROCESSORS_ONLN);
	r->jobs = n > 0 && n < 1024 ? (int)n : 1;
	while ((id = cs_args_next(a, sweep_opts, &val)) != CS_ARGS_END) {
		switch (id) {
		case CS_ARGS_ERROR: return 2;
		case CS_ARGS_POSITIONAL:
			if (cs_args_scenario(a, &r->sc, 0, val))
				return 2;
			break;
		case O_VARY:
			if (r->nvary == CS_SWEEP_MAX_KEYS)
				return cs_args_fail(a, "more than %d '--vary' options", CS_SWEEP_MAX_KEYS);
			r->vary[r->nvary++] = val;
			break;
		case O_SET:
			if (cs_args_scenario(a, &r->sc, 1, val))
				return 2;
			break;
		case O_JOBS:
			if (cs_args_jobs(a, "jobs", val, 1024, &r->jobs))
				return 2;
			break;
		case O_OUT: r->out = val; break;
		case O_PLOT: r->plot = val; break;
		case O_METRIC: r->metric = val; break;
		case O_GOODPUT: {
			char *end;
			r->goodput_days = strtod(val, &end);
			if (end == val || *end || !(r->goodput_days > 0 && r->goodput_days <= 36500))
				return cs_args_fail(a,
						    "'--goodput' needs a number of days in (0, 36500] "
						    "(got '%s')",
						    val);
			break;
		}
		case O_GOODPUT_RUNS:
			if (cs_args_parse_int(val, 1, 10000000, &r->goodput_runs))
				return cs_args_fail(a,
						    "'--goodput-runs' needs a whole number from 1 to "
						    "10000000 (got '%s')",
						    val);
			break;
		case O_PROGRESS: r->progress = cs_cli_progress_default(); break;
		case O_NO_PROGRESS: r->progress = 0; break;
		case O_HELP: fputs(sweep_help, stdout); return CS_ARGS_HELP_SHOWN;
		}
	}
	if (!r->sc.file)
		return cs_args_fail(a, "no scenario file given");
	if (!r->nvary)
		return cs_args_fail(a, "no '--vary KEY=V1,V2,...' given");
	if (!r->out)
		return cs_args_fail(a, "no '--out FILE.csv' given");
	if (r->goodput_runs && !r->goodput_days)
		return cs_args_fail(a, "'--goodput-runs' needs '--goodput DAYS'");
	return 0;
}

/* ---- Ctrl-C -------------------------------------------------------------- */

/* The signal that interrupted the sweep, 0 while none. The one piece of
 * process state here: a signal handler can reach nothing else. It is
 * cleared when a sweep starts and only ever written by the handler. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig) { interrupted = sig; }

/* ---- MPI ----------------------------------------------------------------- */

#ifdef CS_HAVE_MPI
/* Whether a launcher started this process as one of several ranks. */
static int mpi_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

/* Bring every rank's finished points to rank 0; agree on whether any rank
 * was interrupted (*stopped) or failed to send (returns -1). */
static int mpi_gather(cs_sweep *sw, int rank, int nranks, int *stopped, cs_diag *diag)
{
	char *buf = NULL, *all = NULL;
	size_t len = 0;
	int *lens = NULL, *displs = NULL, flags[2] = { *stopped, 0 }, out[2];
	if (cs_sweep_pack(sw, &buf, &len) != CS_OK || len > INT_MAX) {
		flags[1] = 1;
		len = 0;
	}
	int mylen = (int)len;
	if (rank == 0) {
		lens = calloc((size_t)nranks, sizeof *lens);
		displs = calloc((size_t)nranks, sizeof *displs);
		if (!lens || !displs)
			flags[1] = 1;
	}
	MPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
	long long total = 0;
	if (rank == 0 && lens && displs) {
		for (int i = 0; i < nranks; i++) {
			displs[i] = (int)total;
			total += lens[i];
			if (total > INT_MAX)
				flags[1] = 1;
		}
		if (!flags[1] && !(all = malloc(total ? (size_t)total : 1)))
			flags[1] = 1;
		if (flags[1])
			memset(lens, 0, (size_t)nranks * sizeof *lens), total = 0;
		if (!all)
			all = malloc(1);
	}
	MPI_Gatherv(buf, mylen, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (rank == 0 && !flags[1] && lens && cs_sweep_unpack(sw, all, (size_t)total, diag) != CS_OK)
		flags[1] = 1;
	else if (flags[1])
		snprintf(diag->msg, sizeof diag->msg, "out of memory gathering the results");
	MPI_Allreduce(flags, out, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	*stopped = out[0];
	if (out[1] && !flags[1])
		snprintf(diag->msg, sizeof diag->msg, "a rank could not send its results");
	free(buf);
	free(all);
	free(lens);
	free(displs);
	return out[1] ? -1 : 0;
}
#endif

/* ---- output -------------------------------------------------------------- */

static int write_outputs(const cs_sweep *sw, const sweep_args *r)
{
	cs_diag diag = { { 0 } };
	cs_out *o = cs_out_open(r->out, &diag);
	if (!o) {
		fprintf(stderr, "clustersim sweep: %s\n", CS_CLEAN(diag));
		return 1;
	}
	cs_sweep_write_csv(sw, cs_out_file(o));
	if (cs_out_commit(o, &diag) != 0) {
		fprintf(stderr, "clustersim sweep: %s\n", CS_CLEAN(diag));
		return 1;
	}
	cs_cli_wrote(r->progress, r->out);
	if (!r->plot)
		return 0;
	if (!(o = cs_out_open(r->plot, &diag))) {
		fprintf(stderr, "clustersim sweep: %s\n", CS_CLEAN(diag));
		return 1;
	}
	if (cs_sweep_plot(sw, r->metric, cs_out_file(o), &diag) != 0) {
		cs_out_abort(o);
		fprintf(stderr, "clustersim sweep: '%s': %s\n", r->plot, CS_CLEAN(diag));
		return 2;
	}
	if (cs_out_commit(o, &diag) != 0) {
		fprintf(stderr, "clustersim sweep: %s\n", CS_CLEAN(diag));
		return 1;
	}
	cs_cli_wrote(r->progress, r->plot);
	return 0;
}

static int sweep(const sweep_args *r, int rank, int nranks)
{
	cs_diag diag = { { 0 } };
	cs_sweep *sw = NULL;
	int rc = 0;
	cs_status st = cs_sweep_new(r->sc.file, r->sc.sets, r->sc.nsets, &sw, &diag);
	for (size_t i = 0; st == CS_OK && i < r->nvary; i++)
		st = cs_sweep_vary(sw, r->vary[i], &diag);
	if (st == CS_OK && r->goodput_days > 0)
		st = cs_sweep_goodput(sw, r->goodput_days, r->goodput_runs, &diag);
	if (st == CS_OK)
		st = cs_sweep_check(sw, &diag);
	if (st == CS_OK && cs_sweep_column_find(sw, r->metric) < 0) {
		snprintf(diag.msg, sizeof diag.msg,
			 "--metric: unknown metric '%.100s' (a column of "
			 "the CSV, e.g. step_time_s or mfu)",
			 r->metric);
		st = CS_ERR_INPUT;
	}
	if (st != CS_OK) {
		/* every rank checks the same input, so all stop here together */
		if (rank == 0)
			fprintf(stderr, "clustersim sweep: %s\n", CS_CLEAN(diag));
		cs_sweep_free(sw);
		return st == CS_ERR_NOMEM ? 3 : 2;
	}
	const char *outs[] = { r->out, r->plot }, *ins[] = { r->sc.file };
	if ((rc = cs_cli_check_outputs("sweep", outs, 2, ins, 1, NULL)) != 0) {
		cs_sweep_free(sw);
		return rc; /* before any point runs; every MPI rank checks, so all stop */
	}

	struct sigaction sa, old_int;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);

	cs_cli_progress pr;
	cs_cli_progress_init(&pr, rank == 0 ? r->progress : CS_PROGRESS_NONE, "points");
	cs_sweep_run_opts opts = {
		.jobs = r->jobs,
		.rank = rank,
		.nranks = nranks,
		.stop = &interrupted,
		.progress = pr.mode ? cs_cli_progress_pool : NULL,
		.progress_ud = &pr,
	};
	st = cs_sweep_run(sw, &opts);
	cs_cli_progress_end(&pr);
	sigaction(SIGINT, &old_int, NULL);
	int stopped = interrupted != 0;
	if (st == CS_ERR_NOMEM) {
		fprintf(stderr, "clustersim sweep: cannot start threads\n");
		rc = 3;
	}
#ifdef CS_HAVE_MPI
	if (nranks > 1 && mpi_gather(sw, rank, nranks, &stopped, &diag) != 0) {
		if (rank == 0)
			fprintf(stderr, "clustersim sweep: %s\n", CS_CLEAN(diag));
		rc = 3;
	}
#endif
	if (rank == 0 && rc == 0) {
		rc = write_outputs(sw, r);
		size_t failed = 0, done = 0, n = cs_sweep_points(sw);
		for (size_t p = 0; p < n; p++) {
			cs_sweep_state s = cs_sweep_point_state(sw, p);
			done += s != CS_SWEEP_PENDING;
			failed += s == CS_SWEEP_FAILED;
		}
		if (failed)
			fprintf(stderr,
				"clustersim sweep: %zu of %zu points failed (see the 'error' "
				"column of '%s')\n",
				failed, n, r->out);
		if (stopped)
			fprintf(stderr,
				"clustersim sweep: interrupted; wrote the %zu of %zu points that "
				"finished\n",
				done, n);
	}
	cs_sweep_free(sw);
	if (rc == 0 && stopped)
		rc = 130;
	return rc;
}

int cs_cmd_sweep(int argc, char **argv)
{
	cs_args a;
	sweep_args r;
	cs_args_init(&a, "sweep", argc, argv);
	int prc = parse(&a, &r);
	if (prc)
		return prc == CS_ARGS_HELP_SHOWN ? 0 : 2;
	int rank = 0, nranks = 1;
#ifdef CS_HAVE_MPI
	int mpi = mpi_launched();
	if (mpi) {
		int provided;
		if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
			fprintf(stderr, "clustersim sweep: cannot start MPI\n");
			return 1;
		}
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	}
#endif
	int rc = sweep(&r, rank, nranks);
#ifdef CS_HAVE_MPI
	if (mpi)
		MPI_Finalize();
#endif
	return rc;
}
