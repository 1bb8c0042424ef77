/*
 * fault.c - compute factors per rank and step, fixed and random (GSL).
 */
#include "fault/fault.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cs_fault {
	const cs_scenario *sc;
	int64_t ranks;
	int any;
	int gpu_links; /* a GPU's NIC or NVLink port degraded: per-GPU arrays */
	int any_links; /* that, or a whole tier */
	cs_link_faults lf;
	int64_t last_step;
	gsl_rng *rng;
	const float *fleet; /* persistent per-GPU factors, NULL for none */
	double fastest;     /* the least factor a straggler entry drew, 1 for none below */
};

static double draw(gsl_rng *r, const cs_perturbation *p)
{
	switch (p->dist) {
	case CS_DIST_NORMAL: return p->p1 + gsl_ran_gaussian(r, p->p2);
	case CS_DIST_LOGNORMAL: return gsl_ran_lognormal(r, p->p1, p->p2);
	case CS_DIST_GAMMA: return gsl_ran_gamma(r, p->p1, p->p2);
	case CS_DIST_UNIFORM: return gsl_ran_flat(r, p->p1, p->p2);
	case CS_DIST_EXPONENTIAL: return gsl_ran_exponential(r, p->p1);
	case CS_DIST_NONE: break;
	}
	return 1.0;
}

cs_status cs_fault_new(const cs_scenario *sc, int64_t ranks, cs_fault **out, cs_diag *diag)
{
	*out = NULL;
	cs_fault *f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(diag->msg, sizeof(diag->msg), "out of memory");
		return CS_ERR_NOMEM;
	}
	f->sc = sc;
	f->ranks = ranks;
	f->last_step = -1;
	f->fastest = 1.0;
	for (int i = 0; i < sc->n_perturbations; i++) {
		const cs_perturbation *p = &sc->perturbations[i];
		if ((p->target == CS_PERT_LINK || p->target == CS_PERT_GPU) && p->first >= ranks) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "%s:%d:%d: straggler gpu %lld is outside 0..%lld", sc->path, p->line, p->col,
				 (long long)p->first, (long long)(ranks - 1));
			free(f);
			return CS_ERR_INPUT;
		}
		f->gpu_links |= p->target == CS_PERT_LINK;
		f->any_links |= p->target == CS_PERT_LINK || p->target == CS_PERT_TIER;
		f->any = 1;
	}
	if (sc->cluster.gpu_variation > 0)
		f->any = 1;
	f->rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (f->gpu_links) {
		f->lf.nic_keep = malloc((size_t)ranks * sizeof(float));
		f->lf.nvl_keep = malloc((size_t)ranks * sizeof(float));
		f->lf.nic_lat = malloc((size_t)ranks * sizeof(int64_t));
		f->lf.nvl_lat = malloc((size_t)ranks * sizeof(int64_t));
	}
	if (!f->rng ||
	    (f->gpu_links && (!f->lf.nic_keep || !f->lf.nvl_keep || !f->lf.nic_lat || !f->lf.nvl_lat))) {
		cs_fault_free(f);
		snprintf(diag->msg, sizeof(diag->msg), "out of memory");
		return CS_ERR_NOMEM;
	}
	*out = f;
	return CS_OK;
}

void cs_fault_free(cs_fault *f)
{
	if (!f)
		return;
	if (f->rng)
		gsl_rng_free(f->rng);
	free(f->lf.nic_keep);
	free(f->lf.nvl_keep);
	free(f->lf.nic_lat);
	free(f->lf.nvl_lat);
	free(f);
}

int cs_fault_any_links(const cs_fault *f) { return f->any_links; }

void cs_fault_links(cs_fault *f, int64_t step, cs_link_faults *lf)
{
	const cs_scenario *sc = f->sc;
	for (int t = 0; t < CS_TIERS; t++) {
		f->lf.tier_keep[t] = 1.0;
		f->lf.tier_lat[t] = 0;
	}
	if (f->gpu_links)
		for (int64_t r = 0; r < f->ranks; r++) {
			f->lf.nic_keep[r] = f->lf.nvl_keep[r] = 1.0f;
			f->lf.nic_lat[r] = f->lf.nvl_lat[r] = 0;
		}
	for (int i = 0; i < sc->n_perturbations; i++) {
		const cs_perturbation *p = &sc->perturbations[i];
		if (step < p->start_step)
			continue;
		if (p->target == CS_PERT_TIER) {
			f->lf.tier_keep[p->tier] *= p->bandwidth;
			f->lf.tier_lat[p->tier] += p->extra_latency_ns;
		} else if (p->target == CS_PERT_LINK) {
			int nic = p->tier == CS_TIER_NIC;
			(nic ? f->lf.nic_keep : f->lf.nvl_keep)[p->first] *= (float)p->bandwidth;
			(nic ? f->lf.nic_lat : f->lf.nvl_lat)[p->first] += p->extra_latency_ns;
		}
	}
	*lf = f->lf; /* without GPU link faults its arrays are NULL */
}

void cs_fault_set_fleet(cs_fault *f, const float *fleet)
{
	f->fleet = fleet;
	if (fleet)
		f->any = 1;
}

int cs_fault_any(const cs_fault *f) { return f->any; }

static void range(const cs_scenario *sc, const cs_perturbation *p, int64_t *lo, int64_t *hi)
{
	int64_t gpn = sc->cluster.gpus_per_node;
	if (p->target == CS_PERT_NODE) {
		*lo = p->first * gpn;
		*hi = p->last * gpn + gpn - 1;
	} else {
		*lo = p->first;
		*hi = p->last;
	}
}

double cs_fault_fastest(const cs_fault *f) { return f->fastest; }

int cs_fault_draw(cs_fault *f, int64_t step, float *factor)
{
	const cs_scenario *sc = f->sc;
	int changed = f->last_step < 0;
	for (int i = 0; i < sc->n_perturbations; i++) {
		const cs_perturbation *p = &sc->perturbations[i];
		if (p->start_step == step && step > 0)
			changed = 1;
		if (p->target == CS_PERT_RANDOM && p->per_step)
			changed = 1;
	}
	f->last_step = step;
	if (!changed)
		return 0;
	for (int64_t r = 0; r < f->ranks; r++)
		factor[r] = f->fleet ? f->fleet[r] : 1.0f;
	if (sc->cluster.gpu_variation > 0) {
		/* every GPU's own speed, the same every step: a stream of its own */
		uint64_t seed = sc->sim.seed * 0x9E3779B97F4A7C15ull + 0xD1B54A32D192ED03ull;
		gsl_rng_set(f->rng, (unsigned long)(seed ^ (seed >> 32)));
		for (int64_t r = 0; r < f->ranks; r++)
			factor[r] *= (float)gsl_ran_lognormal(f->rng, 0.0, sc->cluster.gpu_variation);
	}
	for (int i = 0; i < sc->n_perturbations; i++) {
		const cs_perturbation *p = &sc->perturbations[i];
		if (step < p->start_step)
			continue;
		if (p->target == CS_PERT_LINK || p->target == CS_PERT_TIER)
			continue;
		if (p->target != CS_PERT_RANDOM) {
			int64_t lo, hi;
			range(sc, p, &lo, &hi);
			for (int64_t r = lo; r <= hi && r < f->ranks; r++)
				factor[r] *= (float)p->compute;
			continue;
		}
		/* one stream per perturbation (and per step when redrawn) */
		uint64_t base = p->seed ? p->seed : sc->sim.seed;
		uint64_t seed = base * 0x9E3779B97F4A7C15ull + (uint64_t)i;
		if (p->per_step)
			seed ^= (uint64_t)(step + 1) * 0xBF58476D1CE4E5B9ull;
		gsl_rng_set(f->rng, (unsigned long)(seed ^ (seed >> 32)));
		for (int64_t r = 0; r < f->ranks; r++) {
			if (p->fraction < 1.0 && gsl_rng_uniform(f->rng) >= p->fraction)
				continue;
			double x = draw(f->rng, p);
			if (!(x >= CS_FAULT_MIN_FACTOR))
				x = CS_FAULT_MIN_FACTOR;
			factor[r] *= (float)x;
			f->fastest = x < f->fastest ? x : f->fastest;
		}
	}
	return 1;
}
