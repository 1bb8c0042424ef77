/*
 * compare.h - a profiler (Kineto) trace of one GPU's training steps (or a
 * folder of the traces of a job's GPUs, taken as their mean) beside the
 * simulation of a scenario: what `clustersim compare` prints and
 * `clustersim calibrate` fits.
 *
 * Ownership: cs_compare_open fills *c with a trace, a scenario and a result
 * it owns; cs_compare_close frees them (and is safe on a zeroed or failed
 * one).
 */
#ifndef CS_STUDY_COMPARE_H
#define CS_STUDY_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clustersim/clustersim.h"
#include "hw/calib.h"
#include "hw/kprof.h"
#include "ingest/kineto.h"

typedef struct cs_compare {
	cs_kineto *trace;
	cs_scenario *sc;
	cs_result *res;
	const cs_metrics *m; /* the result's */
	int64_t steps;       /* the trace's steps (the caller's, or its annotations) */
	int64_t ranks;       /* the GPUs it holds (a folder's traces; 1 for a file) */
	double per;          /* 1 / (steps x ranks): the trace's totals to one GPU's step */
	bool sim_failed;     /* on failure: the simulation, not the input, failed */
} cs_compare;

/* Load `trace` (its kernels classified first by the rules file `classes`,
 * ingest/kernel_rules.h, when not NULL), load `scenario` with the --set
 * assignments sets[nsets] and simulate it; `steps` > 0 overrides the
 * trace's step count. On failure the message is in diag (a simulation's
 * without a prefix; sim_failed says which) and *c holds nothing to free. */
cs_status cs_compare_open(const char *trace, const char *classes, const char *scenario,
			  const char *const *sets, size_t nsets, int64_t steps, cs_compare *c, cs_diag *diag);
void cs_compare_close(cs_compare *c);

/* The trace's kernel time of class k per step, seconds. */
double cs_compare_trace_s(const cs_compare *c, cs_kineto_class k);

/* Per compute class k (gemm, attention, memory_bound, optimizer): have[k]
 * when both the trace and the simulation have time for it, and then
 * factor[k] = trace time / simulated time per step; else factor[k] = 1.
 * Returns how many classes have a factor. */
int cs_compare_fit(const cs_compare *c, double factor[CS_COMPUTE_KINDS], bool have[CS_COMPUTE_KINDS]);

/* The GPU idle per step in the trace (its kernel span less their busy
 * union) and in the simulation (launch waits and bubble), seconds. */
double cs_compare_trace_idle_s(const cs_compare *c);
double cs_compare_sim_idle_s(const cs_compare *c);

/* Into *cal, on top of what it holds (the scenario's calibration): per
 * compute class with kernels on both sides, the kernels launched per
 * kernel modelled (trace count / simulated count per step, times the old
 * factor); and the GPU's gap after each kernel, the old gap plus the
 * trace's idle the simulation lacks spread over the trace's kernels (never
 * below 0). */
void cs_compare_fit_host(const cs_compare *c, cs_calib *cal);
/* The class factors of *cal, with which `after` ran, one step closer to the
 * trace: each class fitted in cal times trace / simulated (and factor[k],
 * the total since the first fit, with it). The step's mix moves the GEMM
 * clock (the power-cap model), so a fit is repeated until it holds; returns
 * the largest relative error of `after` over the fitted classes. */
double cs_compare_refine(const cs_compare *after, cs_calib *cal, double factor[CS_COMPUTE_KINDS]);

/* Into *cal: for each GEMM shape the trace records (record_shapes), the
 * factor of its mean kernel time over the kernel profile's time for that
 * shape (layout NN, the scenario's precision; shapes the profile cannot
 * time are left out). Returns the shapes set, or -1 when the table is
 * full. */
int cs_compare_fit_shapes(const cs_compare *c, const cs_kprof *prof, cs_calib *cal);
/* What a calibration may hold: a factor outside [CS_COMPARE_FACTOR_MIN,
 * CS_COMPARE_FACTOR_MAX] says that the trace and the scenario are not the
 * same job (or that the profile is broken), not how fast the GPU runs it. */
#define CS_COMPARE_FACTOR_MIN 0.2
#define CS_COMPARE_FACTOR_MAX 5.0

/* What no calibration holds, even one written with --force: a factor
 * outside [CS_COMPARE_SANE_MIN, CS_COMPARE_SANE_MAX] is a fit gone wrong
 * (a refit that diverges, a trace of nothing like the scenario). */
#define CS_COMPARE_SANE_MIN 0.05
#define CS_COMPARE_SANE_MAX 20.0

/* The factors of *cal (class times, kernels per kernel modelled, GEMM
 * shapes) outside [lo, hi], each with what it came from, as sentences
 * into msg[n] ("" when none); returns how many. */
int cs_compare_outside(const cs_compare *c, const cs_calib *cal, double lo, double hi, char *msg, size_t n);
/* cs_compare_outside of the plausible range, CS_COMPARE_FACTOR_MIN to
 * CS_COMPARE_FACTOR_MAX. */
int cs_compare_implausible(const cs_compare *c, const cs_calib *cal, char *msg, size_t n);

/* Whether the trace was measured on the scenario's GPU: by the name in
 * its deviceProperties (its architecture, then its product), else by the
 * architectures its kernels' names say (ingest/kineto.h). 1 with a
 * sentence in msg[n] when they differ; 0 (msg "") when they agree or the
 * trace says nothing. */
int cs_compare_device(const cs_compare *c, char *msg, size_t n);

/* Whether the trace and the scenario can be one job: compute kernels a
 * step within a factor of CS_COMPARE_KERNELS_RATIO of the simulated, and
 * GEMM time a step within the plausible factors above. 1 with a sentence
 * in msg[n] when they cannot; else 0 (msg ""). */
#define CS_COMPARE_KERNELS_RATIO 3.0
int cs_compare_workload(const cs_compare *c, char *msg, size_t n);

#endif
