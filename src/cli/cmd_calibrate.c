/*
 * cmd_calibrate.c - `clustersim calibrate`: run the comparison of
 * `clustersim compare` (src/study/compare.c), fit one factor per compute
 * class (trace time / simulated time per step), write them as a
 * calibration file (hw/calib.h) through cs_out, then simulate the scenario
 * again with that file as cluster.gpu.calibration and print the fit.
 *
 * A scenario that already has a calibration is fitted on top of it: the
 * file written holds the product, so it replaces the old one. Everything
 * allocated here is freed here.
 */
#include "cli/commands.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/calibrate_int.h"
#include "cli/progress.h"
#include "clustersim/clustersim.h"
#include "config/config.h"
#include "coll/coll.h"
#include "config/scenario.h"
#include "hw/calib.h"
#include "hw/files.h"
#include "report/compare_out.h"
#include "report/out.h"
#include "study/compare.h"

static const char calibrate_help[] =
	"usage: clustersim calibrate TRACE.json[.gz]|FOLDER SCENARIO.yaml --out FILE [options]\n"
	"   or: clustersim calibrate --nccl-tests OUTPUT.txt SCENARIO.yaml --out FILE\n"
	"                            [--op OP] [--set KEY=VALUE] [--force] [--plot FILE.svg]\n"
	"\n"
	"Fit SCENARIO's kernel-profile op times to a PyTorch profiler (Kineto)\n"
	"trace of one GPU's training steps (or a FOLDER of one per GPU of the\n"
	"job, taken as their mean, as 'compare' reads it). For each compute class\n"
	"that both the trace and the simulation have time for (gemm, attention,\n"
	"memory_bound, optimizer), the factor is the trace's kernel time per step\n"
	"over the simulated one (the comparison of 'clustersim compare'); also\n"
	"the kernels the trace launches per kernel modelled, per class, the GPU's\n"
	"idle gap after each kernel, and, where the trace records shapes (record_shapes),\n"
	"a factor per GEMM shape against the kernel profile. The factors go to\n"
	"FILE as YAML; a scenario uses them with cluster.gpu.calibration: FILE\n"
	"(relative to the scenario), which multiplies each op's profile time by its\n"
	"class's factor. Then SCENARIO is simulated again with FILE, and per class\n"
	"the trace's time, the simulated time before and after calibration, and\n"
	"the step before and after are printed. A scenario that already has a\n"
	"calibration is fitted on top of it (FILE holds the product). The flat\n"
	"efficiencies (cluster.gpu.profile: none) are not calibrated. A trace of\n"
	"another GPU (its deviceProperties, its kernels' sm80/sm90 tags) or of\n"
	"another job (its kernels a step, its GEMM time) is warned of; a factor\n"
	"outside 0.2 to 5 is not written without --force; a refit that does not\n"
	"converge says so; the rms error over the classes is printed before and\n"
	"after.\n"
	"\n"
	"With --nccl-tests, fit the collective tuner to nccl-tests' output (the\n"
	"text of all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
	"alltoall_perf, broadcast_perf or sendrecv_perf, or of their _mpi builds,\n"
	"as printed, behind mpirun's, srun's or torchrun's prefixes, several runs\n"
	"in one file; or the JSON of -J FILE.json): its '# Rank' lines place the\n"
	"group on SCENARIO's cluster (hosts as nodes), and two factors are fitted\n"
	"to its times, least squares in ln(time): one on the bandwidth of the link\n"
	"that carries the group (NVLink on one node, the NIC across nodes) and one\n"
	"on every latency. FILE gets them under 'network:', with the rest of the\n"
	"scenario's calibration; every size is printed with its error before and\n"
	"after, and each test's rms error before and after. One pair of factors is\n"
	"fitted to every test of the file. A device other than the scenario's GPU\n"
	"and ranks per host other than its GPUs per node are warned of; a factor\n"
	"outside 0.2 to 5 (the test cannot be of this network) is refused without\n"
	"--force.\n"
	"\n";

/* apart: one string of both is longer than C17 promises to compile */
static const char calibrate_options[] =
	"options:\n"
	"  --out FILE          the calibration file to write (required; atomically)\n"
	"  --set KEY=VALUE     override a scalar of the scenario (repeatable)\n"
	"  --steps N           the trace holds N steps (default: its ProfilerStep\n"
	"                      annotations, or 1)\n"
	"  --kernel-classes FILE   classify kernels by FILE's rules first: a class\n"
	"                      (gemm, attention, memory_bound, optimizer,\n"
	"                      communication) and a name pattern a line\n"
	"  --nccl-tests FILE   calibrate the network from nccl-tests output instead\n"
	"  --op OP             the collective FILE measured, when its header does not\n"
	"                      say (all_reduce, reduce_scatter, all_gather, all_to_all,\n"
	"                      broadcast, send_recv)\n"
	"  --plot FILE.svg     chart the fit: per class, the trace's time beside the\n"
	"                      simulated one before and after; with --nccl-tests, each\n"
	"                      size's measured bus bandwidth beside the model's\n"
	"  --force             write factors outside the plausible 0.2 to 5 (never\n"
	"                      outside 0.05 to 20): class, kernel and shape factors\n"
	"                      (refused without it: the trace is not of this\n"
	"                      scenario's job) and network ones\n"
	"  --progress          show progress on stderr (the default: a rewritten line\n"
	"                      on a terminal, elsewhere a line every 10 s), and a\n"
	"                      'wrote FILE' line for the file written\n"
	"  --no-progress       show neither\n"
	"  -h, --help          this help\n"
	"\n"
	"examples:\n"
	"  clustersim calibrate tests/data/trace_llama8l-h4096-s8192.json.gz \\\n"
	"      scenarios/h200-llama8l-h4096-s8192.yaml --out calib.yaml\n"
	"  clustersim calibrate --nccl-tests tests/data/nccl-tests/h100-nvls-all_reduce.txt \\\n"
	"      scenarios/3d-llama3-70b-64gpu.yaml --out calib.yaml\n"
	"\n"
	"exit status: 0 success, 1 simulation failure, 2 bad input\n";

enum {
	O_SET = 1,
	O_STEPS,
	O_CLASSES,
	O_OUT,
	O_NCCL,
	O_OP,
	O_FORCE,
	O_PLOT,
	O_PROGRESS,
	O_NO_PROGRESS,
	O_HELP
};

static const cs_opt calibrate_opts[] = {
	{ "set", 1, O_SET },
	{ "steps", 1, O_STEPS },
	{ "kernel-classes", 1, O_CLASSES },
	{ "out", 1, O_OUT },
	{ "nccl-tests", 1, O_NCCL },
	{ "op", 1, O_OP },
	{ "force", 0, O_FORCE },
	{ "plot", 1, O_PLOT },
	{ "progress", 0, O_PROGRESS },
	{ "no-progress", 0, O_NO_PROGRESS },
	{ "help", 0, O_HELP },
	{ 0, 0, 0 },
};

typedef struct calibrate_args {
	cs_trace_args in;
	const char *out;
	const char *plot; /* --plot FILE.svg */
	const char *nccl; /* --nccl-tests FILE: calibrate the network */
	int op;           /* --op, -1: the file's */
	bool force;       /* write factors outside the plausible range */
	int progress;     /* CS_PROGRESS_* */
} calibrate_args;

static int parse(cs_args *a, calibrate_args *r)
{
	const char *val;
	int id;
	memset(r, 0, sizeof *r);
	r->op = -1;
	r->progress = cs_cli_progress_default();
	while ((id = cs_args_next(a, calibrate_opts, &val)) != CS_ARGS_END) {
		int taken = cs_trace_args_take(a, id, val, O_SET, O_STEPS, O_CLASSES, &r->in);
		if (taken == 2)
			return 2;
		if (taken)
			continue;
		switch (id) {
		case CS_ARGS_ERROR: return 2;
		case O_OUT:
			if (!val[0] || strcmp(val, "-") == 0)
				return cs_args_fail(a, "'--out' needs a file name (got '%s')", val);
			r->out = val;
			break;
		case O_NCCL: r->nccl = val; break;
		case O_PLOT:
			if (!val[0] || strcmp(val, "-") == 0)
				return cs_args_fail(a, "'--plot' needs a file name (got '%s')", val);
			r->plot = val;
			break;
		case O_FORCE: r->force = true; break;
		case O_PROGRESS: r->progress = cs_cli_progress_default(); break;
		case O_NO_PROGRESS: r->progress = CS_PROGRESS_NONE; break;
		case O_OP:
			for (r->op = 0; r->op < CS_COLL_OPS; r->op++)
				if (strcmp(val, cs_coll_op_name((cs_coll_op)r->op)) == 0)
					break;
			if (r->op == CS_COLL_OPS)
				return cs_args_fail(a,
						    "unknown collective '%s' (all_reduce, reduce_scatter, "
						    "all_gather, all_to_all, broadcast, send_recv, reduce, "
						    "gather or scatter)",
						    val);
			break;
		case O_HELP:
			fputs(calibrate_help, stdout);
			fputs(calibrate_options, stdout);
			return CS_ARGS_HELP_SHOWN;
		}
	}
	if (r->nccl) {
		/* the one positional argument is the scenario */
		if (r->in.sc.file)
			return cs_args_fail(a,
					    "with '--nccl-tests' give only the scenario (got '%s' "
					    "and '%s')",
					    r->in.trace, r->in.sc.file);
		if (r->in.steps)
			return cs_args_fail(a, "'--steps' is for a profiler trace, not '--nccl-tests'");
		if (r->in.classes)
			return cs_args_fail(a,
					    "'--kernel-classes' is for a profiler trace, not '--nccl-tests'");
		if (!r->in.trace)
			return cs_args_fail(a, "no scenario file given");
		r->in.sc.file = cs_cli_scenario_find(a, r->in.trace, r->in.sc.found, sizeof r->in.sc.found);
		r->in.trace = NULL;
		if (!r->in.sc.file)
			return 2;
	} else if (r->op >= 0) {
		return cs_args_fail(a, "'--op' is for '--nccl-tests'");

	} else if (cs_trace_args_check(a, &r->in)) {
		return 2;
	}
	if (!r->out)
		return cs_args_fail(a, "no '--out' file given");
	return 0;
}

/* Refits after the first, at most; each moves the error by the clock's
 * response to the class factors, a few per cent of the last. */
#define CALIB_PASSES 8
/* the file keeps four digits of each factor */
#define CALIB_TOLERANCE 1e-3

int cs__calibrate_write(const char *path, const char *scenario, const char *source, const cs_calib *cal)
{
	cs_diag diag = { { 0 } };
	cs_out *o = cs_out_open(path, &diag);
	if (!o) {
		fprintf(stderr, "clustersim calibrate: %s\n", CS_CLEAN(diag));
		return 1;
	}
	if (cs_calib_write(cs_out_file(o), scenario, source, cal) != 0) {
		cs_out_abort(o);
		fprintf(stderr, "clustersim calibrate: cannot write '%s'\n", path);
		return 1;
	}
	if (cs_out_commit(o, &diag) != 0) {
		fprintf(stderr, "clustersim calibrate: %s\n", CS_CLEAN(diag));
		return 1;
	}
	return 0;
}

/* The fit the refits read, written to *fit (opened at the first call): an
 * output in TMPDIR never committed, so that '--out' is written once, after
 * the last refit, and a failure or a signal leaves it as it was (a signal
 * removes the fit's file too). 0, or 1 after saying why. */
static int fit_write(cs_out **fit, const char *scenario, const char *source, const cs_calib *cal)
{
	cs_diag diag = { { 0 } };
	if (!*fit) {
		const char *dir = getenv("TMPDIR");
		char path[PATH_MAX], cwd[PATH_MAX] = "";
		dir = dir && dir[0] ? dir : "/tmp";
		if (dir[0] != '/' && !getcwd(cwd, sizeof cwd)) {
			fprintf(stderr, "clustersim calibrate: cannot resolve '%s'\n", dir);
			return 1;
		}
		if (snprintf(path, sizeof path, "%s%s%s/clustersim-calibrate-%ld.yaml", cwd,
			     cwd[0] ? "/" : "", dir, (long)getpid()) >= (int)sizeof path) {
			fprintf(stderr, "clustersim calibrate: TMPDIR '%s' is too long a path\n", dir);
			return 1;
		}
		if (!(*fit = cs_out_open(path, &diag)) || !cs_out_staged(*fit)) {
			fprintf(stderr, "clustersim calibrate: %s\n",
				*fit ? "the fit's file in TMPDIR is no regular file" : CS_CLEAN(diag));
			return 1;
		}
	}
	FILE *f = cs_out_file(*fit);
	rewind(f);
	if (ftruncate(fileno(f), 0) != 0 || cs_calib_write(f, scenario, source, cal) != 0 || fflush(f) != 0) {
		fprintf(stderr, "clustersim calibrate: cannot write '%s'\n", cs_out_staged(*fit));
		return 1;
	}
	return 0;
}

static void print_fit(const calibrate_args *r, const cs_compare *before, const cs_compare *after,
		      const double *factor, const bool *have, const cs_calib *cal)
{
	printf("calibration  %s: %s from %s, %lld step%s\n", r->out, before->sc->name, r->in.trace,
	       (long long)before->steps, before->steps == 1 ? "" : "s");
	printf("\n%-14s %10s %13s %9s %13s %10s\n", "per step", "trace ms", "simulated ms", "factor",
	       "calibrated ms", "error");
	double sq0 = 0, sq1 = 0;
	int nrms = 0;
	for (int k = 0; k < CS_COMPUTE_HOST; k++) {
		double t = cs_compare_trace_s(before, (cs_kineto_class)k);
		double s0 = before->m->compute_kind_s[k], s1 = after->m->compute_kind_s[k];
		if (t > 0.0 && s0 > 0.0) {
			sq0 += (s0 - t) * (s0 - t) / (t * t);
			sq1 += (s1 - t) * (s1 - t) / (t * t);
			nrms++;
		}
		char fs[32] = "-", es[32] = "-";
		if (have[k])
			snprintf(fs, sizeof fs, "%.4g", factor[k]);
		if (t > 0.0)
			snprintf(es, sizeof es, "%+.2f %%", 100.0 * (s1 - t) / t);
		printf("%-14s %10.2f %13.2f %9s %13.2f %10s\n", cs_calib_key((cs_compute_kind)k), 1e3 * t,
		       1e3 * s0, fs, 1e3 * s1, es);
	}
	double ti = cs_compare_trace_idle_s(before), si0 = cs_compare_sim_idle_s(before);
	double si1 = cs_compare_sim_idle_s(after);
	char gap[32];
	snprintf(gap, sizeof gap, "%.3g us", cal->kernel_gap_us);
	printf("%-14s %10.2f %13.2f %9s %13.2f %10s\n", "gpu_idle", 1e3 * ti, 1e3 * si0, gap, 1e3 * si1, "");
	double span = 1e-9 * (double)cs_kineto_span_ns(before->trace) * before->per;
	printf("%-14s %10.2f %13.2f %9s %13.2f %10s\n", "step", 1e3 * span, 1e3 * before->m->step_time_s, "",
	       1e3 * after->m->step_time_s, "");
	if (nrms > 0)
		printf("%-14s %.2f %% before, %.2f %% after (root mean square of the %d classes' "
		       "errors)\n",
		       "rms error", 100 * sqrt(sq0 / nrms), 100 * sqrt(sq1 / nrms), nrms);
	printf("\n%-14s %10s %13s %9s %13s\n", "kernels", "trace", "simulated", "factor", "calibrated");
	for (int k = 0; k < CS_COMPUTE_HOST; k++) {
		double t = (double)cs_kineto_class_count(before->trace, (cs_kineto_class)k) * before->per;
		char fs[32] = "-";
		if (cal->has_kernels[k])
			snprintf(fs, sizeof fs, "%.4g", cal->kernels[k]);
		printf("%-14s %10.0f %13lld %9s %13lld\n", cs_calib_key((cs_compute_kind)k), t,
		       (long long)before->m->compute_kind_kernels[k], fs,
		       (long long)after->m->compute_kind_kernels[k]);
	}
	size_t n;
	const cs_kineto_shape *sh = cs_kineto_gemm_shapes(before->trace, &n);
	if (n == 0) {
		printf("\nno GEMM shapes in the trace (record them with torch.profiler's "
		       "record_shapes=True)\n");
		return;
	}
	printf("\n%-34s %8s %12s %12s %9s\n", "GEMM shape [M, N, K, batch]", "kernels", "trace us",
	       "profile us", "factor");
	for (size_t i = 0; i < n; i++) {
		char name[80];
		snprintf(name, sizeof name, "[%lld, %lld, %lld, %lld]", (long long)sh[i].m,
			 (long long)sh[i].n, (long long)sh[i].k, (long long)sh[i].batch);
		double f = cs_calib_gemm_factor(cal, sh[i].m, sh[i].n, sh[i].k, sh[i].batch);
		double us = 1e-3 * (double)sh[i].ns / (double)sh[i].kernels;
		printf("%-34s %8.0f %12.2f %12.2f %9.4g\n", name, (double)sh[i].kernels * before->per, us,
		       us / f, f);
	}
}

typedef struct plot {
	const cs_compare *before, *after;
	const char *trace;
} plot;

/* --plot of a trace: the comparison before and after the fit. */
static int write_plot(FILE *f, const void *ctx)
{
	const plot *p = ctx;
	return cs_compare_write_svg(f, p->before, p->trace, p->after);
}

int cs_cmd_calibrate(int argc, char **argv)
{
	cs_args a;
	calibrate_args r;
	cs_args_init(&a, "calibrate", argc, argv);
	int prc = parse(&a, &r);
	if (prc)
		return prc == CS_ARGS_HELP_SHOWN ? 0 : 2;
	const char *outs[] = { r.out, r.plot }, *ins[] = { r.in.trace, r.in.sc.file, r.nccl, r.in.classes };
	if (cs_cli_check_outputs("calibrate", outs, 2, ins, 4, NULL) != 0)
		return 2;
	if (r.nccl)
		return cs__calibrate_nccl(r.nccl, &r.in.sc, r.op, r.out, r.plot, r.force, r.progress);
	cs_diag diag = { { 0 } };
	cs_compare before, after;
	cs_cli_progress pr;
	cs_cli_progress_init(&pr, r.progress, "calibrate");
	cs_cli_progress_phase(&pr, "reading the trace, simulating the scenario");
	cs_status st = cs_compare_open(r.in.trace, r.in.classes, r.in.sc.file, r.in.sc.sets, r.in.sc.nsets,
				       r.in.steps, &before, &diag);
	cs_cli_progress_end(&pr);
	if (st != CS_OK) {
		fprintf(stderr, before.sim_failed ? "clustersim calibrate: %s\n" : "%s\n", CS_CLEAN(diag));
		return before.sim_failed && st != CS_ERR_INPUT ? 1 : 2;
	}
	/* the scenario's own kernel profile and calibration are inputs too */
	if (cs_cli_check_outputs("calibrate", outs, 2, NULL, 0, before.sc) != 0) {
		cs_compare_close(&before);
		return 2;
	}
	char why[2048];
	if (cs_compare_device(&before, why, sizeof why))
		fprintf(stderr, "clustersim calibrate: warning: %s: %s\n", r.in.trace, why);
	if (cs_compare_workload(&before, why, sizeof why))
		fprintf(stderr, "clustersim calibrate: warning: %s: %s\n", r.in.trace, why);
	double factor[CS_COMPUTE_KINDS];
	bool have[CS_COMPUTE_KINDS];
	cs_calib cal;
	if (cs_compare_fit(&before, factor, have) == 0 || !before.m->profile[0]) {
		fprintf(stderr, "clustersim calibrate: nothing to calibrate: %s\n",
			before.m->profile[0] ? "no compute class has time in both the trace and the "
					       "simulation"
					     : "the scenario has no kernel profile (cluster.gpu.profile)");
		cs_compare_close(&before);
		return 2;
	}
	if (cs_hw_load_calibration(before.sc, &cal, &diag) != CS_OK) {
		fprintf(stderr, "%s\n", CS_CLEAN(diag));
		cs_compare_close(&before);
		return 2;
	}
	for (int k = 0; k < CS_COMPUTE_HOST; k++)
		if (have[k]) {
			cal.factor[k] *= factor[k];
			cal.has_factor[k] = true;
		}
	cs_compare_fit_host(&before, &cal);
	cs_kprof *prof = NULL;
	int shapes = cs_hw_load_profile(before.sc, &prof, &diag) == CS_OK
			     ? cs_compare_fit_shapes(&before, prof, &cal)
			     : -2;
	cs_kprof_free(prof);
	if (shapes < 0) {
		if (shapes == -1)
			fprintf(stderr, "clustersim calibrate: the trace has more than %d GEMM shapes\n",
				CS_CALIB_MAX_SHAPES);
		else
			fprintf(stderr, "%s\n", CS_CLEAN(diag));
		cs_compare_close(&before);
		return 2;
	}
	if (cs_compare_outside(&before, &cal, CS_COMPARE_SANE_MIN, CS_COMPARE_SANE_MAX, why, sizeof why) >
	    0) {
		fprintf(stderr,
			"%s: %s: no calibration is that far from its profile (outside %g to %g); '%s' "
			"not written, '--force' or not\n",
			r.in.trace, why, CS_COMPARE_SANE_MIN, CS_COMPARE_SANE_MAX, r.out);
		cs_compare_close(&before);
		return 2;
	}
	int bad = cs_compare_implausible(&before, &cal, why, sizeof why);
	if (bad && !r.force) {
		fprintf(stderr,
			"%s: %s: the trace is not of this scenario's job, or the profile is "
			"wrong; '%s' not written ('--force' writes it)\n",
			r.in.trace, why, r.out);
		cs_compare_close(&before);
		return 2;
	}
	if (bad)
		fprintf(stderr, "clustersim calibrate: warning: %s: %s; written for '--force'\n", r.in.trace,
			why);
	cs_out *fit = NULL;
	int rc = fit_write(&fit, before.sc->name, r.in.trace, &cal);
	/* the fit: the scenario again, with the fit's file */
	char set[PATH_MAX + 64];
	const char *sets[CS_ARGS_MAX_SETS + 1];
	if (rc == 0) {
		snprintf(set, sizeof set, "cluster.gpu.calibration=%s", cs_out_staged(fit));
		memcpy(sets, r.in.sc.sets, r.in.sc.nsets * sizeof *sets);
		sets[r.in.sc.nsets] = set;
	}
	/* refit until the classes hold: the mix moves the GEMM clock */
	for (int pass = 0; rc == 0; pass++) {
		char phase[64];
		snprintf(phase, sizeof phase, "simulating with the fit, pass %d", pass + 1);
		cs_cli_progress_phase(&pr, phase);
		st = cs_compare_open(r.in.trace, r.in.classes, r.in.sc.file, sets, r.in.sc.nsets + 1,
				     r.in.steps, &after, &diag);
		cs_cli_progress_end(&pr);
		if (st != CS_OK) {
			fprintf(stderr, "clustersim calibrate: %s%s; '%s' not written\n",
				st == CS_ERR_INPUT ? "the fit does not read back: " : "", CS_CLEAN(diag),
				r.out);
			rc = after.sim_failed && st != CS_ERR_INPUT ? 1 : 2;
			break;
		}
		cs_calib next = cal;
		double f[CS_COMPUTE_KINDS];
		memcpy(f, factor, sizeof f);
		double worst = cs_compare_refine(&after, &next, f);
		if (cs_compare_outside(&before, &next, CS_COMPARE_SANE_MIN, CS_COMPARE_SANE_MAX, why,
				       sizeof why) > 0) {
			/* the refit diverges: nothing it wrote is a calibration */
			fprintf(stderr,
				"clustersim calibrate: the refit diverges: its pass %d would write %s; "
				"'%s' not written\n",
				pass + 1, why, r.out);
			cs_compare_close(&after);
			rc = 1;
			break;
		}
		bool drifts = !r.force && cs_compare_implausible(&before, &next, why, sizeof why) > 0;
		if (worst <= CALIB_TOLERANCE || pass == CALIB_PASSES || drifts) {
			print_fit(&r, &before, &after, factor, have, &cal);
			if (r.plot)
				rc = cs_cli_write("calibrate", r.plot, write_plot,
						  &(plot){ &before, &after, r.in.trace });
			if (drifts)
				fprintf(stderr,
					"clustersim calibrate: warning: the refit did not converge: "
					"its next pass would write %s; '%s' keeps the last fit, whose "
					"largest "
					"class error is %.2f %%\n",
					why, r.out, 100 * worst);
			else if (worst > CALIB_TOLERANCE)
				fprintf(stderr,
					"clustersim calibrate: warning: the refit did not converge: "
					"after %d passes the largest class error is %.2f %% (it stops at "
					"%.2f %%)\n",
					CALIB_PASSES + 1, 100 * worst, 100 * CALIB_TOLERANCE);
			cs_compare_close(&after);
			break;
		}
		cs_compare_close(&after);
		cal = next;
		memcpy(factor, f, sizeof f);
		rc = fit_write(&fit, before.sc->name, r.in.trace, &cal);
	}
	if (fit)
		cs_out_abort(fit);
	if (rc == 0)
		rc = cs__calibrate_write(r.out, before.sc->name, r.in.trace, &cal);
	cs_compare_close(&before);
	if (rc == 0)
		cs_cli_wrote(r.progress, r.out);
	if (rc == 0 && r.plot)
		cs_cli_wrote(r.progress, r.plot);
	return rc;
}
