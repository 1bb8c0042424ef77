/*
 * routing.c - the busiest expert-parallel rank's load under a routing
 * distribution (GSL's multinomial draws).
 */
#include "model/routing.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

enum { DRAWS = 256 };

double cs_moe_busiest_rank(cs_moe_routing routing, double skew, int64_t experts, int64_t ep, double copies,
			   uint64_t seed)
{
	if (routing == CS_ROUTE_BALANCED || ep <= 1 || experts < ep || !(copies >= 1.0))
		return 1.0;
	double *p = malloc((size_t)experts * sizeof *p);
	unsigned int *n = malloc((size_t)experts * sizeof *n);
	size_t *order = malloc((size_t)experts * sizeof *order);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double got = -1.0;
	if (!p || !n || !order || !rng)
		goto out;
	gsl_rng_set(rng, (unsigned long)seed);
	for (int64_t e = 0; e < experts; e++)
		order[e] = (size_t)e;
	gsl_ran_shuffle(rng, order, (size_t)experts, sizeof *order);
	for (int64_t e = 0; e < experts; e++) /* expert e's popularity rank is order[e] + 1 */
		p[e] = routing == CS_ROUTE_ZIPF ? pow((double)order[e] + 1.0, -skew) : 1.0;
	/* GSL draws counts as unsigned ints: beyond that many copies the
	 * shares are the same at a scale GSL can count */
	double total = copies < 4e9 ? floor(copies) : 4e9;
	int64_t local = experts / ep;
	double sum = 0.0;
	for (int d = 0; d < DRAWS; d++) {
		gsl_ran_multinomial(rng, (size_t)experts, (unsigned int)total, p, n);
		double most = 0.0;
		for (int64_t r = 0; r < ep; r++) {
			double load = 0.0;
			for (int64_t e = r * local; e < (r + 1) * local; e++)
				load += (double)n[e];
			if (load > most)
				most = load;
		}
		sum += most;
	}
	got = sum / DRAWS / (total / (double)ep);
	if (got < 1.0)
		got = 1.0;
out:
	gsl_rng_free(rng);
	free(order);
	free(n);
	free(p);
	return got;
}

double cs_moe_imbalance(const cs_scenario *sc)
{
	const cs_parallel_spec *p = &sc->parallel;
	if (p->moe_routing == CS_ROUTE_BALANCED)
		return p->expert_imbalance;
	double tokens = (double)sc->training.seq_len / (double)p->cp * (double)sc->training.micro_batch;
	if (cs_parallel_folded(p) && p->sequence_parallel)
		tokens /= (double)p->tp;
	double copies = tokens * (double)sc->model.top_k * (double)p->ep;
	return cs_moe_busiest_rank(p->moe_routing, p->moe_routing_skew, sc->model.experts, p->ep, copies,
				   sc->sim.seed);
}
