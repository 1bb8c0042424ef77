/*
 * compare.c - the trace and the simulation that `clustersim compare` sets
 * side by side and `clustersim calibrate` fits (compare.h). The trace is
 * summarised by kineto.c; the scenario is loaded and simulated as
 * `clustersim run` does. cs_compare_close frees what cs_compare_open made.
 */
#include "study/compare.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/scenario.h"
#include "ingest/kernel_rules.h"
#include "hw/calib.h"
#include "model/compute.h"

cs_status cs_compare_open(const char *trace, const char *classes, const char *scenario,
			  const char *const *sets, size_t nsets, int64_t steps, cs_compare *c, cs_diag *diag)
{
	memset(c, 0, sizeof *c);
	cs_kernel_rules *rules = NULL;
	cs_status st = classes ? cs_kernel_rules_load(classes, &rules, diag) : CS_OK;
	if (st == CS_OK)
		st = cs_kineto_load_ruled(trace, rules, &c->trace, diag);
	cs_kernel_rules_free(rules);
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
	c->ranks = (int64_t)cs_kineto_ranks(c->trace);
	c->per = 1.0 / ((double)c->steps * (double)c->ranks);
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
	return 1e-9 * (double)cs_kineto_class_ns(c->trace, k) * c->per;
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
	return 1e-9 * (double)(cs_kineto_span_ns(c->trace) - cs_kineto_busy_ns(c->trace)) * c->per;
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
		double t = (double)cs_kineto_class_count(c->trace, (cs_kineto_class)k) * c->per;
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
	cs_compute cm = { .gpu = &c->sc->cluster.gpu,
			  .prec = c->sc->training.precision,
			  .prof = prof,
			  .attn = CS_ATTN_CUDNN };
	int set = 0;
	for (size_t i = 0; i < n && prof; i++) {
		cs_layer_op op = { .name = "gemm",
				   .cls = CS_OPC_GEMM,
				   .m = sh[i].m,
				   .n = sh[i].n,
				   .k = sh[i].k,
				   .batch = sh[i].batch,
				   .kernels = 1,
				   .flops = 2.0 * (double)sh[i].m * (double)sh[i].n * (double)sh[i].k *
					    (double)sh[i].batch };
		/* a shape the calibration cannot hold (a trace's dims go to 1e15) is no fit */
		if ((double)sh[i].m > CS_CALIB_MAX_DIM || (double)sh[i].n > CS_CALIB_MAX_DIM ||
		    (double)sh[i].k > CS_CALIB_MAX_DIM || (double)sh[i].batch > CS_CALIB_MAX_DIM)
			continue;
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

/* ---- guardrails ---------------------------------------------------------- */

/* Append a sentence to msg[n] (used so far: *len). */
static void say(char *msg, size_t n, size_t *len, const char *fmt, ...)
{
	va_list ap;
	if (*len >= n)
		return;
	if (*len > 0 && *len + 2 < n) {
		memcpy(msg + *len, "; ", 3);
		*len += 2;
	}
	va_start(ap, fmt);
	int w = vsnprintf(msg + *len, n - *len, fmt, ap);
	va_end(ap);
	*len = w < 0 ? *len : *len + (size_t)w >= n ? n - 1 : *len + (size_t)w;
}

int cs_compare_outside(const cs_compare *c, const cs_calib *cal, double lo, double hi, char *msg, size_t n)
{
	size_t len = 0;
	int bad = 0;
	msg[0] = '\0';
	for (int k = 0; k < CS_COMPUTE_HOST; k++) {
		const char *key = cs_calib_key((cs_compute_kind)k);
		if (cal->has_factor[k] && !(cal->factor[k] >= lo && cal->factor[k] <= hi)) {
			say(msg, n, &len,
			    "the %s factor %.4g (trace %.2f ms a step, simulated %.2f ms "
			    "before calibration) is outside %g to %g",
			    key, cal->factor[k], 1e3 * cs_compare_trace_s(c, (cs_kineto_class)k),
			    1e3 * c->m->compute_kind_s[k], lo, hi);
			bad++;
		}
		if (cal->has_kernels[k] && !(cal->kernels[k] >= lo && cal->kernels[k] <= hi)) {
			say(msg, n, &len,
			    "the %s_kernels factor %.4g (%.0f kernels a step in the trace, "
			    "%lld simulated) is outside %g to %g",
			    key, cal->kernels[k],
			    (double)cs_kineto_class_count(c->trace, (cs_kineto_class)k) * c->per,
			    (long long)c->m->compute_kind_kernels[k], lo, hi);
			bad++;
		}
	}
	for (size_t i = 0; i < cal->nshapes; i++) {
		const cs_calib_shape *s = &cal->shape[i];
		if (s->factor >= lo && s->factor <= hi)
			continue;
		say(msg, n, &len,
		    "the factor %.4g of GEMM shape [%lld, %lld, %lld, %lld] is outside "
		    "%g to %g",
		    s->factor, (long long)s->m, (long long)s->n, (long long)s->k, (long long)s->batch, lo,
		    hi);
		bad++;
	}
	return bad;
}

int cs_compare_implausible(const cs_compare *c, const cs_calib *cal, char *msg, size_t n)
{
	return cs_compare_outside(c, cal, CS_COMPARE_FACTOR_MIN, CS_COMPARE_FACTOR_MAX, msg, n);
}

/* The architecture of a GPU named `name` ("NVIDIA A100-SXM4-80GB", "AMD
 * Instinct MI250X"), by its product, whose token (as "a100") goes to
 * prod[np]; 0 when unknown. */
static int named_arch(const char *name, char *prod, size_t np)
{
	static const struct {
		const char *prod;
		int arch;
	} gpus[] = {
		{ "gb200", 100 }, { "gh200", 90 }, { "b200", 100 }, { "b100", 100 }, { "h200", 90 },
		{ "h100", 90 },   { "h800", 90 },  { "h20", 90 },   { "a100", 80 },  { "a800", 80 },
		{ "a30", 80 },    { "a40", 86 },   { "a10", 86 },   { "l40", 89 },   { "l4", 89 },
		{ "v100", 70 },   { "t4", 75 },
	};
	char low[128];
	size_t i = 0;
	for (; name[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = '\0';
	prod[0] = '\0';
	if (strstr(low, "amd") || strstr(low, "instinct") || strstr(low, "radeon"))
		return CS_KINETO_ARCH_ROCM;
	for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
		size_t l = strlen(gpus[g].prod);
		for (const char *p = strstr(low, gpus[g].prod); p; p = strstr(p + 1, gpus[g].prod)) {
			/* the product alone: no letter before it, no digit after */
			if ((p > low && isalpha((unsigned char)p[-1])) || isdigit((unsigned char)p[l]))
				continue;
			snprintf(prod, np, "%s", gpus[g].prod);
			return gpus[g].arch;
		}
	}
	return 0;
}

static const char *arch_name(int arch)
{
	switch (arch) {
	case 70: return "sm70 (Volta)";
	case 75: return "sm75 (Turing)";
	case 80: return "sm80 (Ampere)";
	case 86: return "sm86 (Ampere)";
	case 89: return "sm89 (Ada)";
	case 90: return "sm90 (Hopper)";
	case 100: return "sm100 (Blackwell)";
	case 120: return "sm120 (Blackwell)";
	case CS_KINETO_ARCH_ROCM: return "ROCm (AMD)";
	default: return "unknown";
	}
}

int cs_compare_device(const cs_compare *c, char *msg, size_t n)
{
	const cs_gpu_spec *g = &c->sc->cluster.gpu;
	const char *dev = cs_kineto_device(c->trace);
	char prod[16];
	int want = g->arch;
	msg[0] = '\0';
	if (dev[0]) {
		int arch = named_arch(dev, prod, sizeof prod);
		if (arch && want && arch != want) {
			snprintf(msg, n,
				 "the trace was measured on '%s', %s, and the scenario's GPU '%s' "
				 "is %s",
				 dev, arch_name(arch), g->name, arch_name(want));
			return 1;
		}
		if (arch && prod[0] && !strstr(g->name, prod)) {
			snprintf(msg, n, "the trace was measured on '%s', not the scenario's GPU '%s'", dev,
				 g->name);
			return 1;
		}
		if (arch)
			return 0;
	}
	/* by the kernels' names: the newest architecture they name, with cuBLASLt's
	 * nvjet kernels standing for Hopper or later */
	int64_t named = 0, newest_n = 0;
	int newest = 0;
	for (int a = 60; a < CS_KINETO_ARCH_CODES; a++) {
		int64_t k = cs_kineto_arch_kernels(c->trace, a);
		named += k;
		if (k > 0) {
			newest = a;
			newest_n = k;
		}
	}
	int64_t rocm = cs_kineto_arch_kernels(c->trace, CS_KINETO_ARCH_ROCM);
	int64_t nvjet = cs_kineto_arch_kernels(c->trace, CS_KINETO_ARCH_NVJET);
	if (rocm > 0 && named == 0 && nvjet == 0) {
		snprintf(msg, n,
			 "the trace's kernels are %s builds (%lld ROCm GEMMs), and the scenario's GPU "
			 "'%s' is %s",
			 arch_name(CS_KINETO_ARCH_ROCM), (long long)rocm, g->name, arch_name(want));
		return 1;
	}
	if (!want)
		return 0;
	if (newest > want) {
		snprintf(msg, n,
			 "%lld of the trace's kernels are built for %s, which the scenario's GPU "
			 "'%s', %s, cannot run",
			 (long long)newest_n, arch_name(newest), g->name, arch_name(want));
		return 1;
	}
	if (nvjet > 0 && want < 90) {
		snprintf(msg, n,
			 "%lld of the trace's kernels are cuBLASLt's nvjet kernels, of Hopper "
			 "and later, and the scenario's GPU '%s' is %s",
			 (long long)nvjet, g->name, arch_name(want));
		return 1;
	}
	if (newest && newest < want && !(nvjet > 0 && want >= 90)) {
		snprintf(msg, n,
			 "the trace's kernels name no architecture newer than %s (%lld of its "
			 "kernels name one), and the scenario's GPU '%s' is %s",
			 arch_name(newest), (long long)named, g->name, arch_name(want));
		return 1;
	}
	return 0;
}

int cs_compare_workload(const cs_compare *c, char *msg, size_t n)
{
	double tk = 0, sk = 0;
	for (int k = 0; k < CS_COMPUTE_HOST; k++) {
		tk += (double)cs_kineto_class_count(c->trace, (cs_kineto_class)k) * c->per;
		sk += (double)c->m->compute_kind_kernels[k];
	}
	double tg = cs_compare_trace_s(c, CS_KINETO_GEMM), sg = c->m->compute_kind_s[CS_COMPUTE_GEMM];
	double rk = sk > 0 ? tk / sk : 0, rg = sg > 0 ? tg / sg : 0;
	bool kernels_off =
		sk > 0 && tk > 0 && (rk > CS_COMPARE_KERNELS_RATIO || rk < 1.0 / CS_COMPARE_KERNELS_RATIO);
	bool gemm_off = sg > 0 && tg > 0 && !(rg >= CS_COMPARE_FACTOR_MIN && rg <= CS_COMPARE_FACTOR_MAX);
	msg[0] = '\0';
	if (!kernels_off && !gemm_off)
		return 0;
	snprintf(msg, n,
		 "the trace and the scenario cannot be the same job: %.0f compute kernels a "
		 "step against %.0f simulated (x%.3g), GEMM time %.2f ms a step against %.2f ms "
		 "simulated (x%.3g)",
		 tk, sk, rk, 1e3 * tg, 1e3 * sg, rg);
	return 1;
}
