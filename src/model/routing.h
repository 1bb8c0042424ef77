/*
 * routing.h - how an MoE layer's tokens spread over its expert-parallel
 * ranks, and what the busiest rank receives.
 */
#ifndef CS_MODEL_ROUTING_H
#define CS_MODEL_ROUTING_H

#include <stdint.h>

#include "config/scenario.h"

/*
 * The busiest expert-parallel rank's token copies over the mean, as the
 * expected maximum over `ep` ranks of `experts` experts placed in order
 * (experts / ep a rank, Megatron-Core's layout), when `copies` token copies
 * a micro-batch and layer are routed under `routing`: balanced returns 1;
 * uniform, each copy to an expert at random; zipf, expert i's share
 * proportional to 1 / rank_i^skew with the ranks a random permutation
 * (the popular experts anywhere). The expectation is the mean of 256
 * multinomial draws from a generator seeded with `seed`, so a scenario
 * always gives the same figure. Returns 1 when ep <= 1 and a value >= 1
 * otherwise, or -1 when out of memory.
 */
double cs_moe_busiest_rank(cs_moe_routing routing, double skew, int64_t experts, int64_t ep, double copies,
			   uint64_t seed);

/* The scenario's busiest expert rank's load over the mean: expert_imbalance
 * as given under balanced routing, else drawn over the copies one EP group
 * routes a micro-batch (each rank its tokens, its sequence-parallel share
 * when the experts fold), seeded from simulate.seed. */
double cs_moe_imbalance(const cs_scenario *sc);

#endif
