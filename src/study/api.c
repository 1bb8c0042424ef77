/*
 * api.c - the public header's functions, all of them: load a scenario
 * (the configuration, then the files it names for its GPU checked, so that
 * a bad profile or calibration is reported when the scenario is loaded,
 * not when it first runs), simulate it, read and free the result, and the
 * names of the kinds the metrics are broken down by.
 */
#include <stdio.h>
#include <stdlib.h>

#include "clustersim/clustersim.h"
#include "config/config.h"
#include "hw/files.h"
#include "study/study.h"
#include "study/study_int.h"

cs_status cs_scenario_load(const char *path, const char *const *overrides, size_t n_overrides,
			   cs_scenario **out, cs_diag *diag)
{
	cs_diag scratch;
	if (!diag)
		diag = &scratch;
	cs_status st = cs_config_load(path, overrides, n_overrides, out, diag);
	if (st != CS_OK || (st = cs_hw_check_files(*out, diag)) == CS_OK)
		return st;
	cs_config_free(*out);
	*out = NULL;
	return st;
}

void cs_scenario_free(cs_scenario *sc) { cs_config_free(sc); }

cs_status cs_simulate(const cs_scenario *sc, const cs_run_opts *opts, cs_result **out, cs_diag *diag)
{
	cs_diag scratch;
	if (!diag)
		diag = &scratch; /* the message is dropped, the status still says */
	if (!out) {
		snprintf(diag->msg, sizeof(diag->msg), "no place for the result");
		return CS_ERR_INPUT;
	}
	*out = NULL;
	if (!sc) {
		snprintf(diag->msg, sizeof(diag->msg), "no scenario to simulate");
		return CS_ERR_INPUT;
	}
	return cs__simulate(sc, &(cs__sim_request){ .opts = opts }, out, diag);
}

const cs_metrics *cs_result_metrics(const cs_result *res) { return &res->m; }

void cs_result_free(cs_result *res)
{
	if (!res)
		return;
	free(res->rows);
	free(res);
}

const cs_rank_row *cs__result_rows(const cs_result *res, int64_t *n)
{
	*n = res->nrows;
	return res->rows;
}

const char *cs_compute_kind_name(cs_compute_kind kind)
{
	static const char *const names[CS_COMPUTE_KINDS] = { "gemm", "attention", "memory_bound", "optimizer",
							     "host_idle" };
	return (unsigned)kind < CS_COMPUTE_KINDS ? names[kind] : "?";
}

const char *cs_comm_kind_name(cs_comm_kind kind)
{
	static const char *const names[CS_COMM_KINDS] = { "tp", "dp", "pp", "cp", "ep" };
	return (unsigned)kind < CS_COMM_KINDS ? names[kind] : "?";
}
