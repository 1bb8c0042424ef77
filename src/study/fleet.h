/*
 * fleet.h - the fleet a job runs on: what its GPUs and hosts add to the step
 * of identical, ideal machines (docs/scenarios.md, "fleet").
 *
 * The step reported is the expected step on such a fleet, not one draw's:
 * - spread: each GPU's persistent compute factor is one of the quantiles of
 *   a lognormal (median 1) at (k + 1/2) / N, k = 0 .. N-1, N the GPUs; the
 *   seed only decides which GPU gets which;
 * - slow machines: the number K of slow machines among M is binomial; the
 *   step is P(K = 0) x the step without + (1 - P(K = 0)) x the step with
 *   max(1, round(E[K | K >= 1])) of them, placed by the seed (the run
 *   without is left out when P(K = 0) < 1e-4; the likelier of the two is
 *   the one reported in detail);
 * - diurnal clocks: every GPU at the day's mean factor, 1 + swing / 2;
 * - garbage collection: the expected pause per step, P / N synchronised,
 *   P (1 - (1 - 1/N)^R) with R ranks each collecting at its own step (a
 *   step is as slow as its slowest rank; pauses in one step overlap).
 * A persistent factor is shared by a tensor-parallel group at the value of
 * its slowest member (the group meets at every layer's collective), unless
 * fleet.exact is set. A folded run leaves the per-GPU effects out.
 */
#ifndef CS_STUDY_FLEET_H
#define CS_STUDY_FLEET_H

#include "clustersim/clustersim.h"
#include "config/scenario.h"
#include "program/mesh.h"

/* Below this probability of no slow machine, the run without is left out. */
#define CS_FLEET_MIN_P_NONE 1e-4

typedef struct cs__fleet {
	cs_fleet_spec spec;  /* resolved */
	cs_fleet_effects fx; /* what runs, for the metrics */
	int factors;         /* some GPU's compute factor is not 1 */
	int run_none;        /* also simulate the fleet without slow machines */
} cs__fleet;

/* The effects that apply to sc, and what they cost that needs no run. */
void cs__fleet_plan(const cs_scenario *sc, cs__fleet *fl);

/* Per-rank factors of the fleet with `slow` slow machines into
 * out[0 .. world). CS_ERR_NOMEM when scratch cannot be had. */
cs_status cs__fleet_factors(const cs_scenario *sc, const cs__fleet *fl, const cs_mesh *mesh, int64_t slow,
			    float *out);

/* The expectation into m, the run reported in detail: with none_s and
 * slow_s the mean steps without and with the slow machines (read when
 * run_none), and the collections' expected cost; every step-time figure
 * and rate is scaled to the expected step. */
void cs__fleet_finish(cs_metrics *m, const cs__fleet *fl, double none_s, double slow_s);

/* The expected collection cost per step, in seconds: pause every interval
 * steps on each of ranks ranks, synchronised or not. */
double cs__fleet_gc_cost(double pause_s, int64_t interval, int64_t ranks, int sync);

#endif
