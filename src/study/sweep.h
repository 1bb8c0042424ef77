/*
 * sweep.h - many variants of one scenario: the cartesian product of varied
 * keys, run on the job pool; report/sweep_out.h writes its CSV and chart.
 *
 *   cs_sweep *sw = NULL;
 *   if (cs_sweep_new("llama.yaml", sets, nsets, &sw, &diag) != CS_OK ||
 *       cs_sweep_vary(sw, "cluster.nodes=2,4,8", &diag) != CS_OK ||
 *       cs_sweep_check(sw, &diag) != CS_OK)
 *           ... report diag.msg, exit 2 ...
 *   cs_sweep_run(sw, &(cs_sweep_run_opts){ .jobs = 4 });
 *   cs_sweep_write_csv(sw, f);               (report/sweep_out.h)
 *   cs_sweep_free(sw);
 *
 * Points are numbered in the order of nested loops with the first varied
 * key outermost (slowest) and the last innermost (fastest). A point's
 * scenario is cs_scenario_load(path, sets + the point's assignments), so its
 * values have exactly the syntax and checks of --set. A point that fails to
 * load or simulate (an impossible plan, a deadlock) keeps its message and
 * does not stop the others.
 *
 * Ownership: cs_sweep_new allocates *out (which copies every string it is
 * given); cs_sweep_free releases it and every result. Results are written by
 * cs_sweep_run or cs_sweep_unpack only; nothing here keeps global state.
 */
#ifndef CS_STUDY_SWEEP_H
#define CS_STUDY_SWEEP_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "clustersim/clustersim.h"
#include "study/pool.h"

#define CS_SWEEP_MAX_POINTS 100000
#define CS_SWEEP_MAX_KEYS 16
#define CS_SWEEP_MAX_SETS 256

typedef struct cs_sweep cs_sweep;

/* State of one point. */
typedef enum cs_sweep_state {
	CS_SWEEP_PENDING = 0, /* not run (or interrupted before it started) */
	CS_SWEEP_OK = 1,
	CS_SWEEP_FAILED = 2
} cs_sweep_state;

cs_status cs_sweep_new(const char *path, const char *const *sets, size_t nsets, cs_sweep **out,
		       cs_diag *diag);
void cs_sweep_free(cs_sweep *sw);

/* Add a varied key from "key.path=v1,v2,...": values are split at commas,
 * spaces around each are dropped; empty values and repeated keys are
 * refused. Values are checked by cs_sweep_check. */
cs_status cs_sweep_vary(cs_sweep *sw, const char *spec, cs_diag *diag);

/* Load the scenario with the --set assignments and apply every varied
 * value to it once, so that a bad file, key or value is reported before
 * anything runs; refuses more than CS_SWEEP_MAX_POINTS points. */
cs_status cs_sweep_check(cs_sweep *sw, cs_diag *diag);

/* Also sample each point's goodput over `runs` runs of `days` days
 * (study/goodput.h), in more columns after the run's; before
 * cs_sweep_check. */
cs_status cs_sweep_goodput(cs_sweep *sw, double days, int64_t runs, cs_diag *diag);

size_t cs_sweep_points(const cs_sweep *sw);
size_t cs_sweep_nkeys(const cs_sweep *sw);
const char *cs_sweep_key(const cs_sweep *sw, size_t k);
size_t cs_sweep_nvalues(const cs_sweep *sw, size_t k);
/* Value number v of key k, as given. */
const char *cs_sweep_value(const cs_sweep *sw, size_t k, size_t v);
/* Index (into key k's values) that point p takes. */
size_t cs_sweep_point_index(const cs_sweep *sw, size_t p, size_t k);

/* The "key=value" assignments of point p (n = cs_sweep_nkeys), written
 * into buf; returns CS_ERR_INPUT when buf is too small. */
cs_status cs_sweep_point_sets(const cs_sweep *sw, size_t p, char *buf, size_t len);

typedef struct cs_sweep_run_opts {
	int jobs;                          /* threads; < 1 means 1 */
	int rank, nranks;                  /* run points p with p % nranks == rank; 0, 0 = all */
	const volatile sig_atomic_t *stop; /* when it becomes non-zero, start no more points */
	cs_pool_progress_fn progress;      /* called about 5 times a second, and at the end */
	void *progress_ud;
} cs_sweep_run_opts;

/* Run this rank's pending points on the job pool (pool.h) with
 * opts->jobs threads. Returns CS_OK when every point of the share ran
 * (failed points included), CS_ERR_SIM when stopped early, CS_ERR_NOMEM
 * without memory for the list of points, CS_ERR_INPUT before
 * cs_sweep_check. */
cs_status cs_sweep_run(cs_sweep *sw, const cs_sweep_run_opts *opts);

cs_sweep_state cs_sweep_point_state(const cs_sweep *sw, size_t p);
/* The error message of a failed point ("" otherwise). */
const char *cs_sweep_point_error(const cs_sweep *sw, size_t p);
/* The metrics of an ok point, in cs_study_columns order (n of them), or
 * NULL. */
const double *cs_sweep_point_values(const cs_sweep *sw, size_t p);
size_t cs_sweep_ncolumns(const cs_sweep *sw);
const char *cs_sweep_column(const cs_sweep *sw, size_t c);
/* The column index of a metric name, or -1. */
int cs_sweep_column_find(const cs_sweep *sw, const char *name);

/* Finished points of this process in an exact text form (hexadecimal
 * floats), for moving results between processes; pack allocates *buf
 * (free()). Unpack stores the points it reads into sw. */
cs_status cs_sweep_pack(const cs_sweep *sw, char **buf, size_t *len);
cs_status cs_sweep_unpack(cs_sweep *sw, const char *buf, size_t len, cs_diag *diag);

#endif
