/*
 * compare.c - the trace and the simulation that `clustersim compare` sets
 * side by side and `clustersim calibrate` fits (compare.h). The trace is
 * summarised by kineto.c; the scenario is loaded and simulated as
 * `clustersim run` does. cs_compare_close frees what cs_compare_open made.
 */
#include "report/compare.h"

#include <string.h>

cs_status cs_compare_open(const char *trace, const char *scenario, const char *const *sets,
			  size_t nsets, int64_t steps, cs_compare *c, cs_diag *diag)
{
	memset(c, 0, sizeof *c);
	cs_status st = cs_kineto_load(trace, &c->trace, diag);
	if (st == CS_OK)
		st = cs_scenario_load(scenario, sets, nsets, &c->sc, diag);
	if (st == CS_OK) {
		st = cs_simulate(c->sc, NULL, &c->res, diag);
		if (st != CS_OK) {
			cs_compare_close(c);
			c->sim_failed = true;
			return st;
		}
	}
	if (st != CS_OK) {
		cs_compare_close(c);
		return st;
	}
	c->m = cs_result_metrics(c->res);
	c->steps = steps > 0 ? steps : cs_kineto_steps(c->trace);
	return CS_OK;
}

void cs_compare_close(cs_compare *c)
{
	cs_result_free(c->res);
	cs_scenario_free(c->sc);
	cs_kineto_free(c->trace);
	memset(c, 0, sizeof *c);
}

double cs_compare_trace_s(const cs_compare *c, cs_kineto_class k)
{
	return 1e-9 * (double)cs_kineto_class_ns(c->trace, k) / (double)c->steps;
}

int cs_compare_fit(const cs_compare *c, double factor[CS_COMPUTE_KINDS], bool have[CS_COMPUTE_KINDS])
{
	int n = 0;
	for (int k = 0; k < CS_COMPUTE_KINDS; k++) {
		factor[k] = 1.0;
		have[k] = false;
		if (k == CS_COMPUTE_HOST)
			continue;
		double t = cs_compare_trace_s(c, (cs_kineto_class)k), s = c->m->compute_kind_s[k];
		if (t > 0.0 && s > 0.0) {
			factor[k] = t / s;
			have[k] = true;
			n++;
		}
	}
	return n;
}
