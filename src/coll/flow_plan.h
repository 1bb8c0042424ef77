/*
 * flow_plan.h - how a collective becomes flows (internal to the flow net).
 *
 * Ring (all-reduce, reduce-scatter, all-gather, broadcast, and every case
 * the tree does not take): NCCL pipelines a ring, so in steady state every
 * ring edge carries data at once, and its chunks move in lockstep: no edge
 * gets ahead of the slowest by more than the pipeline's depth. Instead of
 * 2(n-1) steps of n transfers of bytes/n (O(n^2) flows), a ring channel is
 * one flow over the routes of all its edges, each edge carrying the whole
 * volume it carries over the collective (cs_coll_ring_bytes_on_wire:
 * 2(n-1)/n S for all-reduce, (n-1)/n S for reduce-scatter and all-gather;
 * S per edge for broadcast) at one rate, the ring's; a link that w edges
 * cross carries w times that rate (the link's weight in the flow). Alone
 * on a fabric it ends when n separate edge flows would (the slowest edge
 * sets both); beside other traffic, a fast edge no longer finishes early
 * and hands its bandwidth on. The flow waits steps x the largest route
 * latency of its edges first (the alpha term of the alpha-beta ring: each
 * step waits for the slowest hop). A group spanning several scale-up
 * domains with r > 1 members in a domain runs min(r, CS__FLOW_MAX_CHANNELS)
 * channels, as NCCL does, each a ring carrying 1/channels of the volume,
 * channel c entering each domain at a different member (local index
 * c*r/channels) so that the channels use different NICs; the edge leaving a
 * domain first crosses NVLink to the member on the entry rail (NCCL's PXN),
 * so it stays on one rail.
 *
 * Tree (all-reduce with CS_ALGO_TREE, members in equal contiguous blocks per
 * domain): the double binary tree of cs_coll_tree_schedule, a chain inside a
 * domain and an in-order binary tree over domains with its mirror; every
 * edge carries S/2 per tree, child to parent (reduce) and parent to child
 * (broadcast), all concurrent (pipelined), behind 2 x depth x the largest
 * route latency. Channels as for the ring, rotating each domain's head.
 *
 * All-to-all: one flow per ordered pair of distinct members, bytes/n each,
 * behind its own route latency. Send/recv: one flow members[0] -> [1].
 *
 * ECMP (a cs__flow_route with qps > 0, on a topology with single uplinks):
 * every network connection (a ring channel's edge, a tree edge, a
 * point-to-point flow) has qps queue pairs, each carrying 1/qps of the
 * connection's bytes (NCCL splits each request over its QPs, or sends
 * requests round-robin over them: either way equal shares, and the
 * connection moves at qps x its slowest QP's rate). QP q of the connection
 * from src to dst on channel c takes the path cs_topo_route_path numbers
 * hash(seed, communicator, kind, c, src, dst, q), the communicator being
 * the member list and the kind ring, tree or point-to-point (separate
 * connections in NCCL). A flow with an edge that climbs a tier is then
 * counted in QPs: its bytes are 1/qps of the connection's, every link an
 * edge crosses whole weighs qps, and a single uplink weighs the number of
 * the edge's QPs hashed onto it; a flow that climbs no tier is as under
 * ideal routing, bit for bit.
 */
#ifndef CS_COLL_FLOW_PLAN_H
#define CS_COLL_FLOW_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "coll/flow.h"

#define CS__FLOW_MAX_CHANNELS 16

/* One flow: its links are the plan's link[off .. off + nlinks), each
 * crossed weight[...] times (a ring's edges sharing a link). */
typedef struct cs__flow_spec {
	double bytes;
	int64_t latency_ns;
	size_t off;
	int32_t nlinks;
} cs__flow_spec;

/* Growable lists; zero-initialise, free with cs__flow_plan_free. */
typedef struct cs__flow_plan {
	cs__flow_spec *f;
	size_t n, cap;
	int32_t *link, *weight;
	size_t nl, lcap;
	/* per topology link: where the open flow lists it, valid while
	 * stamp[l] == the flow's stamp (merge_links; no sort, no clearing) */
	int32_t *at;
	uint32_t *stamp, cur;
	int32_t nat;
} cs__flow_plan;

void cs__flow_plan_free(cs__flow_plan *p);

/* Plans already built, by their arguments: a group's collectives repeat
 * (every layer, every micro-batch) over routes that do not change, so a
 * plan is built once and copied from here after. Bounded; a plan that does
 * not fit is simply built again next time. Zero-initialise, free with
 * cs__plan_cache_free. */
typedef struct cs__plan_ent cs__plan_ent;
typedef struct cs__plan_cache {
	cs__plan_ent *e;
	size_t ne, ecap;
	int32_t *slot; /* open addressing over e, -1 empty */
	size_t scap;
	size_t links; /* links held, for the bound */
} cs__plan_cache;

void cs__plan_cache_free(cs__plan_cache *c);
/* The index of the plan of these arguments if cached, else -1. */
int32_t cs__plan_cache_find(const cs__plan_cache *c, const int64_t *m, int64_t n, cs_coll_op op, double bytes,
			    cs_coll_algo algo);
/* Keep a copy of p as the plan of these arguments: its index, or -1 (not
 * kept) when full or out of memory. */
int32_t cs__plan_cache_put(cs__plan_cache *c, const int64_t *m, int64_t n, cs_coll_op op, double bytes,
			   cs_coll_algo algo, const cs__flow_plan *p);
/* The plan kept at index i (which stays valid while the cache lives). */
const cs__flow_plan *cs__plan_cache_at(const cs__plan_cache *c, int32_t i);

/* How a plan routes over equal-cost uplinks: qps 0, over each tier's
 * aggregate (adaptive routing's ideal spread); else ECMP, qps queue pairs
 * per connection hashed with seed. */
typedef struct cs__flow_route {
	int qps;
	uint64_t seed;
} cs__flow_route;

/* Append the flows of one collective to *p (nothing for one member or no
 * bytes). `domain` is the scale-up domain size in GPUs. 0, or -1 on
 * out-of-memory or a GPU out of the topology. */
int cs__flow_plan_build(const cs_topo *t, int64_t domain, const cs__flow_route *route, const int64_t *m,
			int64_t n, cs_coll_op op, double bytes, cs_coll_algo algo, cs__flow_plan *p);

#endif
