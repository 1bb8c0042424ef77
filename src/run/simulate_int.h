/*
 * simulate_int.h - what the command line reads beyond the public metrics.
 */
#ifndef CS_RUN_SIMULATE_INT_H
#define CS_RUN_SIMULATE_INT_H

#include "clustersim/clustersim.h"
#include "hw/kprof.h"


typedef struct cs_rank_row {
	int64_t rank;
	double end_s, busy_s, idle_s;
	double kind_s[CS_COMPUTE_KINDS]; /* busy_s by compute class */
	double exposed_s[CS_COMM_KINDS];
	double act_peak;
	float compute_factor;
} cs_rank_row;

/* cs_simulate, keeping one row per rank (of the worst perturbed step) when
 * want_rows; read them with cs__result_rows (owned by the result). */
cs_status cs__simulate(const cs_scenario *sc, const cs_run_opts *opts, int want_rows, cs_result **out,
		       cs_diag *diag);
const cs_rank_row *cs__result_rows(const cs_result *res, int64_t *n);
/* What `run` checks before it simulates, without simulating: the kernel
 * profile and calibration load, and the programs build within their
 * limits (then they are freed). */
cs_status cs__simulate_check(const cs_scenario *sc, cs_diag *diag);
/* The same with the kernel profile loaded by the caller (who keeps it; NULL
 * for the flat efficiencies), for callers that simulate many variants of
 * one scenario on the same GPU. */
cs_status cs__simulate_prof(const cs_scenario *sc, const cs_run_opts *opts, int want_rows,
			    const cs_kprof *prof, cs_result **out, cs_diag *diag);

#endif
