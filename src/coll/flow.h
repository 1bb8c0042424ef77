/*
 * flow.h - the flow fidelity of the network: collectives as flows on links,
 * sharing every link max-min fairly.
 *
 * A collective started on the net becomes a set of flows along
 * cs_topo_route's routes: point-to-point flows, and for each ring channel
 * one flow over the routes of all its edges, which move in lockstep
 * (flow_plan.h says which flows each algorithm makes).
 * A flow first waits out its latency without using bandwidth (as SimGrid's
 * latency phase), then drains its bytes at the rate progressive filling
 * gives it; rates are recomputed whenever a flow leaves its latency phase
 * or ends, and only then. A collective completes when its last flow ends.
 *
 * The runner drives it with one pending engine event:
 *
 *	at a rendezvous:  cs_net_start(net, now, ..., latency, tag); reschedule();
 *	reschedule():     gen++; t = cs_net_next_completion(net);
 *	                  if (t != CS_TIME_MAX) cs_sim_at(sim, t, on_net, ctx, gen);
 *	on_net(arg):      if (arg != gen) return;   (a stale event)
 *	                  k = cs_net_advance(net, now, tags, cap);
 *	                  complete tags[0..k); reschedule();
 *
 * cs_net_next_completion is the next time the net's state changes, which is
 * not always a collective's completion (a flow of a larger collective may end
 * there, changing the others' rates), so cs_net_advance may return 0 there.
 *
 * Times are integer nanoseconds; rates are bytes per second; deterministic:
 * the same calls give the same times, bit for bit. No global state.
 */
#ifndef CS_COLL_FLOW_H
#define CS_COLL_FLOW_H

#include <stdint.h>

#include "coll/coll_op.h"
#include "config/scenario.h"
#include "core/sim.h"
#include "hw/topo.h"

/* Most links one flow crosses: an NVLink hop (PXN) plus the longest route
 * on a fat tree; a torus's routes across its pod (validated). */
#define CS_NET_MAX_ROUTE CS_MAX_ROUTE_LINKS

typedef struct cs_net cs_net;

/* A net over `topo` (not owned; it must outlive the net) and the cluster the
 * topology was built from (read, not kept). NULL on out-of-memory or a NULL
 * argument. The caller frees the net with cs_net_free, which releases every
 * flow still running. */
cs_net *cs_net_new(const cs_topo *topo, const cs_cluster_spec *c);
void cs_net_free(cs_net *n);

/* Route the net's flows by ECMP from now on: over the topology's single
 * uplinks (a topology built for ECMP routing, cs_cluster_ecmp), each
 * network connection's `qps` queue pairs hashed with `seed` onto one path
 * each (flow_plan.h). Without it, or on a topology without single uplinks,
 * flows cross each tier's aggregate (adaptive routing's ideal spread).
 * Before the first start or plan: 0, or -1 then or for qps < 1. */
int cs_net_route_ecmp(cs_net *n, int qps, uint64_t seed);

/* Start a collective at `now` (>= the net's time, i.e. the last `now` or `t`
 * given) over members[0..nmembers) (copied; their order is the ring order),
 * with op and bytes as nccl-tests count them. `algo`: CS_ALGO_TREE is a
 * double binary tree for all-reduce over equal per-domain blocks; every other
 * case, and every other algorithm, is a ring (NVLS and hierarchical have no
 * flow model). Send/recv goes from members[0] to members[1]; all-to-all is
 * one flow per ordered pair; broadcast is a ring from members[0]. One member
 * or no bytes: the collective completes at `now`. `latency`: how long every
 * flow of it waits before draining, or CS_NET_ROUTE_LATENCY for the plan's
 * own (flow_plan.h: from the routes' link latencies). `tag` is returned by
 * cs_net_advance when it completes. Returns an id (>= 0, increasing), or -1
 * on out-of-memory, a time in the past or a GPU out of the topology. */
#define CS_NET_ROUTE_LATENCY ((cs_time)-1)
int64_t cs_net_start(cs_net *n, cs_time now, const int64_t *members, int64_t nmembers, cs_coll_op op,
		     double bytes, cs_coll_algo algo, cs_time latency, uint64_t tag);

/* A collective that repeats: its flows planned once and kept. Returns the
 * plan's index for cs_net_start_plan (valid while the net lives), or -1
 * when the net keeps no more plans or the arguments are wrong (then start
 * it with cs_net_start). */
int32_t cs_net_plan(cs_net *n, const int64_t *members, int64_t nmembers, cs_coll_op op, double bytes,
		    cs_coll_algo algo);
/* Start the collective of cs_net_plan's `plan` now: what cs_net_start of
 * its arguments does, without looking the plan up. */
int64_t cs_net_start_plan(cs_net *n, cs_time now, int32_t plan, cs_time latency, uint64_t tag);

/* The next time the net changes state (a flow ends or leaves its latency
 * phase, or completed collectives wait to be popped: then the net's time).
 * CS_TIME_MAX when nothing runs, or what runs never ends (a zero-bandwidth
 * link). */
cs_time cs_net_next_completion(const cs_net *n);

/* Advance to time t (>= the net's time), processing every state change up
 * to and including t in time order, then pop the collectives completed by t
 * in completion order: up to cap tags into out_tags. Returns how many were
 * written (more may wait: then cs_net_next_completion is t), or -1 when t is
 * in the past. */
int cs_net_advance(cs_net *n, cs_time t, uint64_t *out_tags, int cap);

/* Flows started and not yet ended (in their latency phase or draining). */
int64_t cs_net_active_flows(const cs_net *n);
/* Collectives started and not yet popped. */
int64_t cs_net_active_colls(const cs_net *n);
cs_time cs_net_now(const cs_net *n);

/* Keep only `keep` (0, 1] of link `link`'s bandwidth from `now` on (a
 * degraded cable or NIC); rates are recomputed at once. 0, or -1 for a bad
 * link, factor or time. */
int cs_net_scale_link(cs_net *n, cs_time now, int32_t link, double keep);
/* The capacity the net gives a link (B/s), after any scaling. */
double cs_net_link_capacity(const cs_net *n, int32_t link);

/* A snapshot of one flow, for reports and checks. */
typedef struct cs_net_flow {
	uint64_t tag;     /* its collective's tag */
	int64_t coll;     /* its collective's id */
	int draining;     /* 0: in its latency phase */
	double rate;      /* B/s; 0 while in the latency phase */
	double remaining; /* bytes */
	int nlinks;
	const int32_t *links;   /* nlinks links, valid until the net next changes */
	const int32_t *weights; /* how many of the flow's edges cross each: it
	                         * uses weight x rate of that link */
} cs_net_flow;

/* The active flows in a stable order into out[0..cap); returns how many
 * there are (which may exceed cap). */
int64_t cs_net_flows(const cs_net *n, cs_net_flow *out, int64_t cap);

#endif
