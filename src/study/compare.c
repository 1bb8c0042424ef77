/*
 * compare.c - the trace and the simulation that `clustersim compare` sets
 * side by side and `clustersim calibrate` fits (compare.h). The trace is
 * summarised by kineto.c; the scenario is loaded and simulated as
 * `clustersim run` does. cs_compare_close frees what cs_compare_open made.
 */
#include "study/compare.h"

#include <math.h>
#include <string.h>

#include "config/scenario.h"
#include "hw/calib.h"
#include "model/compute.h"

cs_status cs_compare_open(const char *trace, const char *scenario, const char *const *sets,
			  size_t nsets, int64_t steps, cs_compare *c, cs_diag *diag)
{
	memset(c, 0, sizeof *c);
	cs_status st = cs_kineto_load(trace, &c->trace, diag);
	if (st == CS_OK)
		st = cs_scenario_load(scenario, sets, nsets, &c->sc, diag);
	if (st == CS_OK) {
		/* a trace is one GPU's kernels and gaps: set beside identical, ideal
		 * machines, so that a calibration holds none of the fleet's effects */
		cs_fleet_spec *fl = &c->sc->fleet;
		fl->preset = CS_FLEET_IDEAL;
		fl->spread = fl->slow_machines = fl->diurnal = -1;
		fl->gc_pause_ns = -1;
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

double cs_compare_trace_idle_s(const cs_compare *c)
{
	return 1e-9 * (double)(cs_kineto_span_ns(c->trace) - cs_kineto_busy_ns(c->trace)) /
	       (double)c->steps;
}

double cs_compare_sim_idle_s(const cs_compare *c)
{
	return c->m->bubble_s + c->m->compute_kind_s[CS_COMPUTE_HOST];
}

double cs_compare_refine(const cs_compare *after, cs_calib *cal, double factor[CS_COMPUTE_KINDS])
{
	double worst = 0.0;
	for (int k = 0; k < CS_COMPUTE_HOST; k++) {
		double t = cs_compare_trace_s(after, (cs_kineto_class)k), s = after->m->compute_kind_s[k];
		if (!cal->has_factor[k] || !(t > 0.0) || !(s > 0.0))
			continue;
		worst = fmax(worst, fabs(s - t) / t);
		cal->factor[k] *= t / s;
		factor[k] *= t / s;
	}
	return worst;
}

void cs_compare_fit_host(const cs_compare *c, cs_calib *cal)
{
	double kernels = 0;
	for (int k = 0; k < CS_COMPUTE_HOST; k++) {
		double t = (double)cs_kineto_class_count(c->trace, (cs_kineto_class)k) / (double)c->steps;
		double s = (double)c->m->compute_kind_kernels[k];
		kernels += t;
		if (t > 0 && s > 0) {
			cal->kernels[k] *= t / s;
			cal->has_kernels[k] = true;
		}
	}
	if (kernels > 0) {
		double extra_us = 1e6 * (cs_compare_trace_idle_s(c) - cs_compare_sim_idle_s(c)) / kernels;
		cal->kernel_gap_us = fmax(0.0, cal->kernel_gap_us + extra_us);
		cal->has_gap = true;
	}
}

int cs_compare_fit_shapes(const cs_compare *c, const cs_kprof *prof, cs_calib *cal)
{
	size_t n;
	const cs_kineto_shape *sh = cs_kineto_gemm_shapes(c->trace, &n);
	cs_compute cm = { .gpu = &c->sc->cluster.gpu, .prec = c->sc->training.precision,
			  .prof = prof, .attn = CS_ATTN_CUDNN };
	int set = 0;
	for (size_t i = 0; i < n && prof; i++) {
		cs_layer_op op = { .name = "gemm", .cls = CS_OPC_GEMM, .m = sh[i].m, .n = sh[i].n,
				   .k = sh[i].k, .batch = sh[i].batch, .kernels = 1,
				   .flops = 2.0 * (double)sh[i].m * (double)sh[i].n * (double)sh[i].k *
					    (double)sh[i].batch };
		int64_t profiled = cs_compute_op_ns(&cm, &op);
		if (profiled <= 0 || sh[i].kernels <= 0)
			continue;
		double measured = (double)sh[i].ns / (double)sh[i].kernels;
		cs_calib_shape s = { sh[i].m, sh[i].n, sh[i].k, sh[i].batch, measured / (double)profiled };
		if (cs_calib_set_shape(cal, &s) != 0)
			return -1;
		set++;
	}
	return set;
}
