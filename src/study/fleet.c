/*
 * fleet.c - the fleet's effects: persistent per-GPU factors (spread, slow
 * machines, diurnal clocks) for the runner, and the expectation over slow
 * machines and garbage collections on the step it measures.
 */
#include "study/fleet.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

double cs__fleet_gc_cost(double pause_s, int64_t interval, int64_t ranks, int sync)
{
	if (pause_s <= 0 || interval < 1)
		return 0;
	if (sync || ranks <= 1)
		return pause_s / (double)interval;
	/* each rank collects at one step in every interval, at its own phase:
	 * the chance that some rank collects in a given step */
	return pause_s * -expm1((double)ranks * log1p(-1.0 / (double)interval));
}

void cs__fleet_plan(const cs_scenario *sc, cs__fleet *fl)
{
	const cs_fleet_spec *s = &fl->spec;
	cs_fleet_effects *fx = &fl->fx;
	int64_t gpus = cs_scenario_gpus(sc);

	memset(fl, 0, sizeof *fl);
	cs_fleet_resolve(&sc->fleet, &fl->spec);
	fx->machines = sc->cluster.nodes;
	fx->p_none = 1;
	fx->diurnal_factor = 1;
	fx->slow_factor = s->slow_factor;
	bool per_gpu = s->spread > 0 || (s->slow_machines > 0 && s->slow_factor > 1);
	fx->folded = per_gpu && sc->sim.fold == CS_FOLD_ON;
	if (per_gpu && !fx->folded) {
		fx->spread = s->spread > 0;
		fx->spread_sigma = s->spread;
		if (s->slow_machines > 0 && s->slow_factor > 1) {
			double p = s->slow_machines, m = (double)fx->machines;
			fx->slow_machines = 1;
			fx->p_none = p >= 1 ? 0 : exp(m * log1p(-p));
			double given = p * m / (1 - fx->p_none); /* E[K | K >= 1] */
			fx->slow = (int64_t)floor(given + 0.5);
			if (fx->slow < 1)
				fx->slow = 1;
			if (fx->slow > fx->machines)
				fx->slow = fx->machines;
			fl->run_none = fx->p_none >= CS_FLEET_MIN_P_NONE;
		}
	}
	if (s->diurnal > 0) {
		fx->diurnal = 1;
		fx->diurnal_factor = 1 + 0.5 * s->diurnal;
	}
	fl->factors = fx->spread || fx->slow_machines || fx->diurnal;
	if (s->gc_pause_ns > 0) {
		fx->gc = 1;
		fx->gc_pause_s = 1e-9 * (double)s->gc_pause_ns;
		fx->gc_interval = s->gc_interval;
		fx->gc_sync = s->gc_sync > 0;
		fx->gc_cost_s = cs__fleet_gc_cost(fx->gc_pause_s, s->gc_interval, gpus, fx->gc_sync);
	}
}

static gsl_rng *stream(const cs_scenario *sc, uint64_t salt)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	uint64_t seed = sc->sim.seed * 0x9E3779B97F4A7C15ull + salt;
	if (r)
		gsl_rng_set(r, (unsigned long)(seed ^ (seed >> 32)));
	return r;
}

/* The lognormal's quantiles at (k + 1/2) / n, in an order drawn from the seed. */
static cs_status spread(const cs_scenario *sc, double sigma, int64_t n, float *out)
{
	int64_t *at = malloc((size_t)n * sizeof *at);
	gsl_rng *r = stream(sc, 0x2545F4914F6CDD1Dull);
	if (!at || !r) {
		free(at);
		gsl_rng_free(r);
		return CS_ERR_NOMEM;
	}
	for (int64_t k = 0; k < n; k++)
		at[k] = k;
	gsl_ran_shuffle(r, at, (size_t)n, sizeof *at);
	for (int64_t k = 0; k < n; k++)
		out[at[k]] *= (float)exp(sigma * gsl_cdf_ugaussian_Pinv(((double)k + 0.5) / (double)n));
	free(at);
	gsl_rng_free(r);
	return CS_OK;
}

/* `slow` machines out of the job's, drawn from the seed. */
static cs_status slow_machines(const cs_scenario *sc, double factor, int64_t slow, float *out)
{
	int64_t m = sc->cluster.nodes, gpn = sc->cluster.gpus_per_node;
	int64_t *all = malloc((size_t)m * sizeof *all), *pick = malloc((size_t)slow * sizeof *pick);
	gsl_rng *r = stream(sc, 0x61C8864680B583EBull);
	if (!all || !pick || !r) {
		free(all);
		free(pick);
		gsl_rng_free(r);
		return CS_ERR_NOMEM;
	}
	for (int64_t i = 0; i < m; i++)
		all[i] = i;
	gsl_ran_choose(r, pick, (size_t)slow, all, (size_t)m, sizeof *all);
	for (int64_t i = 0; i < slow; i++)
		for (int64_t g = pick[i] * gpn; g < (pick[i] + 1) * gpn; g++)
			out[g] *= (float)factor;
	free(all);
	free(pick);
	gsl_rng_free(r);
	return CS_OK;
}

cs_status cs__fleet_factors(const cs_scenario *sc, const cs__fleet *fl, const cs_mesh *mesh, int64_t slow,
			    float *out)
{
	int64_t world = mesh->world;
	cs_status st = CS_OK;

	for (int64_t g = 0; g < world; g++)
		out[g] = (float)fl->fx.diurnal_factor;
	if (fl->fx.spread)
		st = spread(sc, fl->spec.spread, world, out);
	if (st == CS_OK && slow > 0)
		st = slow_machines(sc, fl->spec.slow_factor, slow, out);
	if (st != CS_OK || fl->spec.exact || mesh->deg[CS_AXIS_TP] < 2)
		return st;
	/* a tensor-parallel group meets at every layer: all at its slowest's pace */
	int64_t tp = mesh->deg[CS_AXIS_TP], stride = mesh->stride[CS_AXIS_TP];
	for (int64_t g = 0; g < world; g++) {
		if (cs_mesh_coord(mesh, g, CS_AXIS_TP) != 0)
			continue;
		float top = out[g];
		for (int64_t i = 1; i < tp; i++)
			top = fmaxf(top, out[g + i * stride]);
		for (int64_t i = 0; i < tp; i++)
			out[g + i * stride] = top;
	}
	return CS_OK;
}

void cs__fleet_finish(cs_metrics *m, const cs__fleet *fl, double none_s, double slow_s)
{
	double sim = m->step_time_s, mean = sim;

	m->fleet = fl->fx;
	if (fl->run_none)
		mean = fl->fx.p_none * none_s + (1 - fl->fx.p_none) * slow_s;
	mean += fl->fx.gc_cost_s;
	if (mean == sim || sim <= 0)
		return;
	double r = mean / sim;
	m->step_time_s = mean;
	m->step_time_p50_s *= r;
	m->step_time_p99_s *= r;
	m->step_time_max_s *= r;
	m->slowdown = m->step_time_s / m->baseline_step_time_s;
	m->tokens_per_s /= r;
	m->tflops_per_gpu /= r;
	m->mfu /= r;
	m->tflops_per_gpu_megatron /= r;
	m->mfu_megatron /= r;
	m->hfu /= r;
	m->tflops_per_gpu_hardware /= r;
}
