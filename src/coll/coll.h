/*
 * coll.h - the cost of collectives: NCCL's algorithms, protocols and tuner.
 *
 * Analytic fidelity: for each applicable (algorithm, protocol) pair a latency
 * and an algorithm bandwidth after NCCL's tuning model (src/graph/tuning.cc,
 * constants of docs/references.md, Collectives and NCCL); time = latency + bytes / algorithm
 * bandwidth, and the tuner takes the least time. See docs/validation.md.
 */
#ifndef CS_COLL_COLL_H
#define CS_COLL_COLL_H

#include <stdbool.h>
#include <stdint.h>

#include "coll/coll_op.h"
#include "config/config.h" /* cs_coll_algo_name, cs_coll_proto_name */
#include "config/scenario.h"
#include "hw/topo.h"

typedef struct cs_coll_choice {
	cs_coll_algo algo;
	cs_coll_proto proto;
	int channels;
	double bus_bw;      /* B/s, nccl-tests convention, at the asked size */
	int64_t latency_ns; /* the fixed part of the time */
} cs_coll_choice;

typedef struct cs_coll cs_coll;

/* A tuner for one cluster and collective settings; it copies both specs.
 * The caller frees it with cs_coll_free. NULL on out-of-memory. Not safe to
 * share between threads (its decision cache is written on lookup). */
cs_coll *cs_coll_new(const cs_cluster_spec *cluster, const cs_coll_spec *spec);
void cs_coll_free(cs_coll *c);
/* A new tuner with c's specs, for another thread; the caller frees it. */
cs_coll *cs_coll_clone(const cs_coll *c);

/* Time (ns) of `op` on a group of shape *g, `bytes` per rank as nccl-tests
 * counts them (all-reduce/broadcast: the buffer; reduce-scatter: the input;
 * all-gather: the output; all-to-all: the send buffer; send/recv: the
 * message). A forced algorithm or protocol is honoured where it applies and
 * otherwise replaced as NCCL does; CS_ALGO_HIER (intra-node reduce-scatter,
 * inter-node all-reduce, intra-node all-gather) is used only when forced.
 * Fills *choice when non-NULL. One rank, or no bytes: 0 ns. Deterministic. */
int64_t cs_coll_time(cs_coll *c, cs_coll_op op, const cs_group_shape *g, double bytes,
		     cs_coll_choice *choice);

const char *cs_coll_op_name(cs_coll_op op);
/* Why a forced algorithm (collectives.algorithm) cannot run any collective
 * on the cluster, so that every one falls back to NCCL's own choice: NVLS
 * on a GPU without NVLink SHARP, the torus algorithm off a torus; NULL
 * when it applies to some. */
const char *cs_coll_algo_unavailable(const cs_cluster_spec *c, cs_coll_algo a);
/* Whether a forced algorithm `a` can run `op` at all (the tuner takes
 * NCCL's choice for an op it cannot): ring every op, torus all-reduce,
 * reduce-scatter and all-gather, the others all-reduce alone. */
bool cs_coll_algo_applies(cs_coll_algo a, cs_coll_op op);
/* NCCL's NVLink speeds on c's GPU, GB/s (= B/ns): one channel over one
 * link (20.6 on Hopper), and the GPU's bus bandwidth, that times its
 * links, scaled by the calibration's scale_up_bw (coll_model.c). */
double cs_coll_nvlink_channel_bw(const cs_cluster_spec *c);
double cs_coll_nvlink_bw(const cs_cluster_spec *c, const cs_coll_spec *spec);
/* The algorithm as a report names it: all-to-all is "pairwise", send/recv "p2p". */
const char *cs_coll_choice_name(cs_coll_op op, const cs_coll_choice *choice);

/* DeepEP's dispatch or combine (dispatch.c) over an expert-parallel group
 * of `per_node` ranks on each of `nodes` nodes (NVLink domains): `buffer`
 * the bytes a plain all-to-all would send (tokens x top_k x hidden x
 * bytes per element), a token's experts on at most `node_limit` nodes (0:
 * any). The expected remote nodes a token crosses the network to, and the
 * time (ns): the slower of the network and NVLink legs, plus their
 * latencies. */
double cs_coll_dispatch_remote_nodes(int64_t top_k, int64_t node_limit, int64_t nodes);
int64_t cs_coll_dispatch_ns(const cs_cluster_spec *c, const cs_coll_spec *spec, double buffer, int64_t top_k,
			    int64_t node_limit, int64_t per_node, int64_t nodes);

/* nccl-tests: busBw = algBw * factor. */
double cs_coll_bus_factor(cs_coll_op op, int64_t n);

/* The seed's alpha-beta ring: steps * alpha + bytes_on_wire / beta, seconds. */
double cs_coll_ring_alpha_beta_s(cs_coll_op op, double bytes, int64_t n, double alpha_s, double beta_Bps);

#endif
