/*
 * flow_int.h - the flow net's state, shared by its files (internal to the
 * net): flow.c keeps the flows, the collectives and their events, and
 * answers flow.h's calls; flow_rate.c gives the draining flows their
 * max-min fair rates.
 */
#ifndef CS_COLL_FLOW_INT_H
#define CS_COLL_FLOW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/flow.h"
#include "coll/flow_plan.h"

/* What every event touches, in one cache line. A flow's links are
 * lk[0 .. nlinks), their weights (how many of its edges cross each: a ring
 * channel's) lk[lcap ..] and its index in each link's list lk[2 lcap ..];
 * a freed slot keeps its array for the next flow. */
typedef struct cs__flow {
	int32_t coll; /* slot of its collective */
	int32_t state;
	int32_t nlinks, lcap;
	double rem, rate;
	cs_time set; /* rem is as of this time */
	cs_time at;  /* end of the latency phase */
	cs_time end; /* while draining */
	int32_t *lk;
} cs__flow;

#define CS__LINKS(f) ((f)->lk)
#define CS__WEIGHTS(f) ((f)->lk + (f)->lcap)
#define CS__LPOS(f) ((f)->lk + 2 * (f)->lcap)

/* A pending flow event. */
typedef struct cs__fev {
	cs_time t;
	int32_t flow;
	uint32_t ver;
} cs__fev;

/* A draining flow on a link, and which of the flow's links it is: moving
 * the entry in the list updates the flow's position for it at once, where a
 * ring's flow has hundreds of links to search. */
typedef struct cs__lentry {
	int32_t flow, k;
} cs__lentry;

/* A link: its capacity, how many draining flows it carries and the first
 * of them, in 16 bytes. Most links carry one flow at most (a TP ring on its
 * NVLink, a send on its NIC), and a flow alone on its links starts and ends
 * reading nothing else of them. */
typedef struct cs__lhot {
	double bw;     /* capacity, bytes/s */
	int32_t n;     /* draining flows on it */
	int32_t first; /* the first of them (its link index is never read) */
} cs__lhot;
_Static_assert(sizeof(cs__lhot) == 16, "four links per cache line");

/* The draining flows on a link after its first: more[0 .. n - 1). */
typedef struct cs__lflows {
	cs__lentry *more;
	int32_t cap;
} cs__lflows;

typedef struct cs__netcoll {
	uint64_t tag;
	int64_t id;
	int64_t left; /* flows not ended; -1: free slot */
} cs__netcoll;

/* A growable array of slots with a free stack. */
typedef struct cs__slots {
	void *v;
	int32_t n, cap;
	int32_t *free;
	int32_t nfree;
} cs__slots;

struct cs_net {
	const cs_topo *topo;
	int64_t domain;
	int32_t nlinks;
	cs_time now;
	cs_time next; /* next flow event */
	int64_t nactive, ncoll, next_id;
	/* progressive filling, per link: residual, unfrozen weight, flows, index */
	double *res, *wsum;
	int32_t *cnt, *pos;
	cs__lhot *hot;  /* per link: its capacity and flow count */
	cs__lflows *on; /* per link: its draining flows */
	char *dirty;    /* per link: changed since the last filling */
	int32_t *dirtyl;
	size_t ndirty, dirtycap;
	cs__fev *heap; /* pending flow events, earliest first */
	size_t nheap, heapcap;
	int32_t *due; /* scratch: the flows of one event time */
	size_t duecap;
	char *seen; /* scratch, per flow slot: in the component */
	size_t seencap;
	cs__slots flows, colls;
	/* per flow slot, apart from the flows so that a stale event is told
	 * from a live one without touching the flow: bumped at every change
	 * of the slot's pending event and when the flow ends */
	uint32_t *ver;
	int32_t vercap;
	/* completed tags, FIFO */
	uint64_t *done;
	size_t dhead, dn, dcap;
	/* scratch */
	int32_t *act, *touched, *off, *adj;
	char *frozen;
	size_t actcap, frozencap, adjcap, tcap, offcap;
	cs__flow_plan plan;
	cs__plan_cache plans;
	cs__flow_route route; /* ideal unless cs_net_route_ecmp */
};

#define CS__FLOWS(n) ((cs__flow *)(n)->flows.v)
#define CS__COLLS(n) ((cs__netcoll *)(n)->colls.v)

/* Grow *p (of *cap elements of `size` bytes) to hold `need`: 0, or -1 on
 * out-of-memory (then *p is as it was). */
int cs__net_grow(void **p, size_t *cap, size_t need, size_t size);
/* Flow i's event at t replaces any it had. */
int cs__net_heap_push(cs_net *n, int32_t i, cs_time t);

/* Link l changed since the last filling. */
int cs__net_mark(cs_net *n, int32_t l);
/* Flow i starts draining: onto its links, rated at once when alone on
 * them, else marked for cs__net_refill. */
int cs__net_start_draining(cs_net *n, int32_t i);
/* Flow i stops draining: off its links, the others on them marked. */
int cs__net_links_remove(cs_net *n, int32_t i);
/* Refill the component of every link marked since the last filling. */
int cs__net_refill(cs_net *n);

#endif
