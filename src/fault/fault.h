/*
 * fault.h - stragglers: per-rank compute factors for each simulated step.
 *
 * Fixed perturbations slow a GPU, a node or a range of ranks by a factor.
 * Random ones pick a fraction of the GPUs (a Bernoulli draw per GPU) and
 * draw each picked GPU's factor from a distribution (GSL's generators,
 * seeded from the scenario, so a seed gives the same factors on every
 * machine); once for the run, or again every step (per_step). A
 * perturbation applies from its start_step on. With cluster.gpu_variation,
 * every GPU also has a persistent factor of its own (lognormal, median 1),
 * and the fleet's (cs_fault_set_fleet), on which the perturbations multiply.
 *
 * Ownership: cs_fault_new allocates *out; free it with cs_fault_free.
 */
#ifndef CS_FAULT_FAULT_H
#define CS_FAULT_FAULT_H

#include <stdint.h>

#include "clustersim/clustersim.h"
#include "config/scenario.h"

typedef struct cs_fault cs_fault;

/* CS_ERR_INPUT for a perturbation that cannot be applied to this scenario. */
cs_status cs_fault_new(const cs_scenario *sc, int64_t ranks, cs_fault **out, cs_diag *diag);
void cs_fault_free(cs_fault *f);

/* Whether any perturbation exists at all (compute or links). */
int cs_fault_any(const cs_fault *f);

/* The fleet's persistent factors, fleet[0 .. ranks) (owned by the caller,
 * kept until cs_fault_free), on which every other factor multiplies; NULL
 * for none. Set before the first draw. */
void cs_fault_set_fleet(cs_fault *f, const float *fleet);

/* Fill factor[0 .. ranks) for `step`. Returns 1 when the factors may differ
 * from the previous step's, 0 when they are the same. */
int cs_fault_draw(cs_fault *f, int64_t step, float *factor);
/* The least compute factor the stragglers' random entries have drawn so
 * far (a GPU made faster than the profile), 1 when none drew below 1; the
 * fleet's and cluster.gpu_variation's spread around 1 are not counted. */
double cs_fault_fastest(const cs_fault *f);

/* Degraded links for one step: per GPU, the fraction of its NIC's and of its
 * NVLink port's bandwidth kept and the latency added; per fabric tier
 * (cs_tier), the same for every link of the tier. */
typedef struct cs_link_faults {
	float *nic_keep, *nvl_keep; /* [ranks] */
	int64_t *nic_lat, *nvl_lat; /* [ranks], ns */
	double tier_keep[CS_TIERS]; /* by cs_tier */
	int64_t tier_lat[CS_TIERS];
} cs_link_faults;

/* Whether any link or tier perturbation exists. */
int cs_fault_any_links(const cs_fault *f);
/* Fill *lf (arrays owned by the fault, valid until the next call or
 * cs_fault_free) for `step`. */
void cs_fault_links(cs_fault *f, int64_t step, cs_link_faults *lf);

/* Smallest factor a draw may produce (a draw below it is clamped). */
#define CS_FAULT_MIN_FACTOR 0.05

#endif
