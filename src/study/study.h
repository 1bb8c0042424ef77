/*
 * study.h - simulate a scenario and measure it: what the command line and
 * the sweeps, searches and comparisons above it read beyond the public
 * metrics.
 *
 * Nothing here writes a file. The spans of traced ranks go to a sink the
 * caller supplies (a writer of report/trace.h, say), so the study never
 * depends on the writers that show its results.
 */
#ifndef CS_STUDY_STUDY_H
#define CS_STUDY_STUDY_H

#include <stdbool.h>

#include "clustersim/clustersim.h"
#include "hw/kprof.h"
#include "run/runner.h"

typedef struct cs_rank_row {
	int64_t rank;
	double end_s, busy_s, idle_s;
	double kind_s[CS_COMPUTE_KINDS]; /* busy_s by compute class */
	double exposed_s[CS_COMM_KINDS];
	double act_peak;
	float compute_factor;
} cs_rank_row;

/* Where the spans of the traced ranks go: the ranks in the run options'
 * trace_ranks (none: the first rank of each pipeline stage), and the first
 * rank of every stage as well with stage_heads (a timeline draws them).
 * Only the reported step is traced: the unperturbed one, or the first
 * perturbed one. The caller owns ctx. */
typedef struct cs_span_sink {
	cs_span_fn on_span;
	void *ctx;
	bool stage_heads;
	/* Called once the programs are built and before anything runs, with the
	 * number of traced ranks and of spans they will make: a status other
	 * than CS_OK (with a message) refuses the run. NULL admits any. */
	cs_status (*admit)(void *ctx, int64_t ranks, double spans, cs_diag *diag);
} cs_span_sink;

/* Programs given instead of built from the scenario (imported traces):
 * rank r runs progs[tmpl_of[r]], of n; the caller keeps them alive. */
typedef struct cs__programs {
	const cs_program *progs;
	int64_t n;
	const uint16_t *tmpl_of;
} cs__programs;

/* What the study's callers may ask of a simulation beyond cs_simulate:
 * every field may be left zero. */
typedef struct cs__sim_request {
	const cs_run_opts *opts;  /* NULL: the defaults */
	const cs_span_sink *sink; /* NULL: nothing traced */
	bool want_rows;           /* one row per rank (of the worst perturbed step),
	                               * read with cs__result_rows (owned by the result) */
	bool have_prof;           /* prof is the kernel profile, loaded by the caller, who
	                               * keeps it (NULL: the flat efficiencies), for callers
	                               * that simulate many variants on one GPU; else the
	                               * scenario's is loaded here */
	const cs_kprof *prof;
	const cs__programs *given; /* programs in place of the scenario's own; the
	                               * scenario gives the cluster, the process groups and
	                               * the run's settings */
} cs__sim_request;

/* cs_simulate as the request asks. */
cs_status cs__simulate(const cs_scenario *sc, const cs__sim_request *rq, cs_result **out, cs_diag *diag);
const cs_rank_row *cs__result_rows(const cs_result *res, int64_t *n);
/* What `run` checks before it simulates, without simulating: the kernel
 * profile and calibration load, and the programs build within their
 * limits (then they are freed). */
cs_status cs__simulate_check(const cs_scenario *sc, cs_diag *diag);

/* One scalar metric of a result: its name (the JSON key and the CSV
 * column), where it is written (CS_METRIC_JSON: the JSON report's leading
 * flat keys; CS_METRIC_CSV: a column), and where it lies in cs_metrics. */
enum { CS_METRIC_F64, CS_METRIC_I64, CS_METRIC_INT };
enum { CS_METRIC_JSON = 1, CS_METRIC_CSV = 2 };
typedef struct cs_metric_def {
	const char *name;
	int in;
	size_t offset;
	int type;
} cs_metric_def;
/* The table, static, in its fixed order; *n its length. */
const cs_metric_def *cs_metric_table(int *n);
/* The metric's value in m, as a double. */
double cs_metric_value(const cs_metric_def *d, const cs_metrics *m);

/* Every scalar metric as a flat list of (column name, value), in a fixed
 * order: the columns of a sweep and of `run --format csv`. Returns the
 * number of columns (at most cap are written). */
int cs_study_columns(const cs_metrics *m, const char **names, double *values, int cap);

#endif
