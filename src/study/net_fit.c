/*
 * net_fit.c - the tuner's network factors fitted to measured collective
 * times (net_fit.h), of one collective or of several at once. The model
 * is the tuner itself (coll/coll_model.c): each trial pair of factors
 * builds a tuner and times every measured size, so the fit sees the same
 * algorithm and protocol switches as a simulation.
 * The objective, sum of ln(model / measured)^2, weighs a 15 us small
 * message as much as a 20 ms large one; it is piecewise smooth, so a grid
 * finds the basin and GSL's Nelder-Mead simplex refines it.
 */
#include "study/net_fit.h"

#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdio.h>

typedef struct problem {
	const cs_cluster_spec *c;
	cs_coll_spec spec;      /* the start: factors of the link not fitted stay */
	const cs_net_series *s; /* the measured collectives */
	size_t ns;
	size_t n;               /* sizes over all of them */
	bool nic;               /* the bandwidth factor is the NIC's */
	bool free_bw, free_lat; /* which of (ln bandwidth, ln latency) vary */
	double lb0, ll0;        /* their values when fixed */
	double lb_ref, ll_ref;  /* the starting factors, which flat stretches lean to */
	bool nomem;
} problem;

static double start(double f) { return f > 0 ? f : 1.0; }

static cs_coll_spec with(const problem *p, double lb, double ll)
{
	cs_coll_spec s = p->spec;
	if (p->nic)
		s.scale_out_bw = exp(lb);
	else
		s.scale_up_bw = exp(lb);
	s.latency = exp(ll);
	return s;
}

static double cost(problem *p, double lb, double ll)
{
	cs_coll_spec s = with(p, lb, ll);
	cs_coll *co = cs_coll_new(p->c, &s);
	if (!co) {
		p->nomem = true;
		return HUGE_VAL;
	}
	double sum = 0;
	for (size_t k = 0; k < p->ns; k++) {
		const cs_net_series *m = &p->s[k];
		for (size_t i = 0; i < m->n; i++) {
			int64_t t = cs_coll_time(co, m->op, m->g, m->bytes[i], NULL);
			double d = log((double)(t > 0 ? t : 1) / m->time_ns[i]);
			sum += d * d;
		}
	}
	cs_coll_free(co);
	return sum;
}

/* (ln bandwidth, ln latency) from the free coordinates x. */
static void unpack(const problem *p, const gsl_vector *x, double *lb, double *ll)
{
	size_t i = 0;
	*lb = p->free_bw ? gsl_vector_get(x, i++) : p->lb0;
	*ll = p->free_lat ? gsl_vector_get(x, i) : p->ll0;
}

/* The cost plus a pull, far smaller than any misfit, toward the starting
 * factors: where a factor stops mattering (a link that no longer binds)
 * the cost is flat, and the pull walks the simplex back to where it
 * matters instead of leaving it anywhere on the flat. */
static double leaning(problem *p, double lb, double ll)
{
	double db = lb - p->lb_ref, dl = ll - p->ll_ref;
	return cost(p, lb, ll) + 1e-9 * (db * db + dl * dl);
}

static double objective(const gsl_vector *x, void *arg)
{
	problem *p = arg;
	double lb, ll;
	unpack(p, x, &lb, &ll);
	return leaning(p, lb, ll);
}

/* Minimise over the free coordinates: a grid over 1/16..16 each, then the
 * simplex from its best point. Leaves the result in p->lb0, p->ll0. */
static void minimise(problem *p)
{
	enum { GRID = 33 };
	const double lo = log(1.0 / 16), step = 2 * log(16.0) / (GRID - 1);
	double best = HUGE_VAL, blb = p->lb0, bll = p->ll0;
	for (int i = 0; i < (p->free_bw ? GRID : 1); i++)
		for (int j = 0; j < (p->free_lat ? GRID : 1); j++) {
			double lb = p->free_bw ? lo + step * i : p->lb0;
			double ll = p->free_lat ? lo + step * j : p->ll0;
			double f = leaning(p, lb, ll);
			if (f < best) {
				best = f;
				blb = lb;
				bll = ll;
			}
		}
	size_t dim = (size_t)p->free_bw + (size_t)p->free_lat;
	if (dim == 0 || p->nomem) {
		p->lb0 = blb;
		p->ll0 = bll;
		return;
	}
	gsl_vector *x = gsl_vector_alloc(dim), *ss = gsl_vector_alloc(dim);
	gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, dim);
	if (!x || !ss || !m) {
		p->nomem = true;
	} else {
		size_t i = 0;
		if (p->free_bw)
			gsl_vector_set(x, i++, blb);
		if (p->free_lat)
			gsl_vector_set(x, i, bll);
		gsl_vector_set_all(ss, step / 2);
		gsl_multimin_function fn = { .f = objective, .n = dim, .params = p };
		gsl_multimin_fminimizer_set(m, &fn, x, ss);
		for (int it = 0; it < 1000; it++) {
			if (gsl_multimin_fminimizer_iterate(m))
				break;
			if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), 1e-9) == GSL_SUCCESS)
				break;
		}
		if (gsl_multimin_fminimizer_minimum(m) <= best) {
			p->lb0 = p->free_bw ? gsl_vector_get(m->x, 0) : p->lb0;
			p->ll0 = p->free_lat ? gsl_vector_get(m->x, dim - 1) : p->ll0;
		} else {
			p->lb0 = blb;
			p->ll0 = bll;
		}
	}
	gsl_multimin_fminimizer_free(m);
	gsl_vector_free(x);
	gsl_vector_free(ss);
}

/* Is the fit's coordinate `bw` (else latency) determined: does the
 * objective move when it moves 5 % either way? (A factor of a link that
 * does not bind moves it one way only: down, until the link binds.) */
static bool matters(problem *p, bool bw)
{
	double f0 = cost(p, p->lb0, p->ll0), d = log(1.05);
	for (int s = -1; s <= 1; s += 2) {
		double f = bw ? cost(p, p->lb0 + s * d, p->ll0) : cost(p, p->lb0, p->ll0 + s * d);
		if (fabs(f - f0) <= 1e-12 * (1 + f0))
			return false;
	}
	return true;
}

/* Do the measured sizes depend on coordinate `bw` (else latency) at the
 * start: does halving or doubling it move some size's time by 5 %? (Large
 * sizes alone say next to nothing of the latency: fitting it to them would
 * absorb their noise into an absurd factor.) */
static bool sensitive(problem *p, bool bw)
{
	double lb = p->lb_ref, ll = p->ll_ref;
	cs_coll_spec s0 = with(p, lb, ll);
	cs_coll *c0 = cs_coll_new(p->c, &s0);
	bool yes = false;
	for (int k = -1; k <= 1 && c0 && !yes; k += 2) {
		cs_coll_spec s1 = with(p, bw ? lb + k * log(2.0) : lb, bw ? ll : ll + k * log(2.0));
		cs_coll *c1 = cs_coll_new(p->c, &s1);
		if (!c1)
			break;
		for (size_t j = 0; j < p->ns && !yes; j++) {
			const cs_net_series *m = &p->s[j];
			for (size_t i = 0; i < m->n && !yes; i++) {
				double t0 = (double)cs_coll_time(c0, m->op, m->g, m->bytes[i], NULL);
				double t1 = (double)cs_coll_time(c1, m->op, m->g, m->bytes[i], NULL);
				yes = t0 > 0 && t1 > 0 && fabs(log(t1 / t0)) > log(1.05);
			}
		}
		cs_coll_free(c1);
	}
	if (!c0)
		p->nomem = true;
	cs_coll_free(c0);
	return yes;
}

/* Fit (bandwidth of the link p->nic names, latency); which were determined. */
static void fit(problem *p, bool *bw_fit, bool *lat_fit)
{
	double lb_start = log(start(p->nic ? p->spec.scale_out_bw : p->spec.scale_up_bw));
	double ll_start = log(start(p->spec.latency));
	p->lb0 = p->lb_ref = lb_start;
	p->ll0 = p->ll_ref = ll_start;
	p->free_bw = sensitive(p, true);
	p->free_lat = sensitive(p, false);
	bool free_bw = p->free_bw, free_lat = p->free_lat;
	minimise(p);
	*bw_fit = free_bw && matters(p, true);
	*lat_fit = free_lat && matters(p, false);
	if (*bw_fit == free_bw && *lat_fit == free_lat)
		return;
	/* a factor the times do not depend on stays as given; fit the other alone */
	p->free_bw = *bw_fit;
	p->free_lat = *lat_fit;
	if (!*bw_fit)
		p->lb0 = lb_start;
	if (!*lat_fit)
		p->ll0 = ll_start;
	minimise(p);
}

cs_status cs_net_fit_series(const cs_cluster_spec *c, const cs_coll_spec *spec, const cs_net_series *s,
			    size_t ns, cs_net_fit *out, cs_diag *diag)
{
	size_t n = 0;
	bool nic = false;
	for (size_t k = 0; k < ns; k++) {
		if (s[k].g->nranks < 2) {
			snprintf(diag->msg, sizeof diag->msg,
				 "nothing to fit: a group of one rank does not communicate");
			return CS_ERR_INPUT;
		}
		n += s[k].n;
		nic |= s[k].g->ndomains > 1;
	}
	if (n == 0) {
		snprintf(diag->msg, sizeof diag->msg, "nothing to fit: no measured sizes");
		return CS_ERR_INPUT;
	}
	problem p = { .c = c, .spec = *spec, .s = s, .ns = ns, .n = n, .nic = nic };
	double before =
		cost(&p, log(start(nic ? spec->scale_out_bw : spec->scale_up_bw)), log(start(spec->latency)));
	bool bw_fit, lat_fit;
	fit(&p, &bw_fit, &lat_fit);
	if (!bw_fit && p.nic) {
		/* NVLink, not the NIC, carries this group's bandwidth */
		p.nic = false;
		fit(&p, &bw_fit, &lat_fit);
	}
	if (p.nomem) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		return CS_ERR_NOMEM;
	}
	*out = (cs_net_fit){ .bandwidth = exp(p.lb0),
			     .nic = p.nic,
			     .latency = exp(p.ll0),
			     .bandwidth_fit = bw_fit,
			     .latency_fit = lat_fit,
			     .rms = sqrt(cost(&p, p.lb0, p.ll0) / (double)n),
			     .rms_before = sqrt(before / (double)n) };
	return CS_OK;
}

cs_status cs_net_fit_times(const cs_cluster_spec *c, const cs_coll_spec *spec, cs_coll_op op,
			   const cs_group_shape *g, const double *bytes, const double *time_ns, size_t n,
			   cs_net_fit *out, cs_diag *diag)
{
	cs_net_series s = { .op = op, .g = g, .bytes = bytes, .time_ns = time_ns, .n = n };
	return cs_net_fit_series(c, spec, &s, 1, out, diag);
}

cs_coll_spec cs_net_fit_apply(const cs_coll_spec *spec, const cs_net_fit *fit)
{
	cs_coll_spec s = *spec;
	if (fit->nic)
		s.scale_out_bw = fit->bandwidth;
	else
		s.scale_up_bw = fit->bandwidth;
	s.latency = fit->latency;
	return s;
}
