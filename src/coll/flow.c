/*
 * flow.c - the flow net: its flows and collectives, their events and the
 * calls of flow.h; flow_rate.c gives the draining flows their rates.
 *
 * Flows live in a slot array (freed slots are reused last in, first out,
 * so the iteration order depends only on the calls made);
 * collectives likewise.
 *
 * A draining flow keeps its end time, absolute, computed when its rate was
 * last set (flow_rate.c). A flow ends at that time exactly, with nothing
 * left, so rounding never accumulates into an extra event. Flow events (a
 * latency phase's end, a drain's end) wait in a min-heap of (time, slot,
 * version); an entry whose version the flow has moved past is dropped when
 * it surfaces.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/flow_int.h"

enum { FREE, WAITING, DRAINING };

static int32_t slot_get(cs__slots *s, size_t size)
{
	if (s->nfree > 0)
		return s->free[--s->nfree];
	if (s->n == s->cap) {
		int32_t cap = s->cap ? 2 * s->cap : 64;
		void *v = realloc(s->v, (size_t)cap * size);
		if (v == NULL)
			return -1;
		s->v = v;
		int32_t *f = realloc(s->free, (size_t)cap * sizeof(*f));
		if (f == NULL)
			return -1;
		s->free = f;
		s->cap = cap;
	}
	/* a new slot starts zeroed */
	memset((char *)s->v + (size_t)s->n * size, 0, size);
	return s->n++;
}

/* Push a freed slot: the last freed is reused first. */
static void slot_put(cs__slots *s, int32_t i) { s->free[s->nfree++] = i; }

cs_net *cs_net_new(const cs_topo *topo, const cs_cluster_spec *c)
{
	if (topo == NULL || c == NULL)
		return NULL;
	cs_net *n = calloc(1, sizeof(*n));
	if (n == NULL)
		return NULL;
	n->topo = topo;
	/* a ring's blocks: NVLink domains, or on a torus whole pods */
	n->domain = c->topology == CS_TOPO_TORUS ? cs_cluster_shard_unit(c)
		    : c->scale_up_domain > 0     ? c->scale_up_domain
						 : c->gpus_per_node;
	if (n->domain < 1)
		n->domain = 1;
	n->nlinks = cs_topo_nlinks(topo);
	n->next = CS_TIME_MAX;
	size_t nl = (size_t)n->nlinks + 1;
	n->res = malloc(nl * sizeof(*n->res));
	n->wsum = malloc(nl * sizeof(*n->wsum));
	n->cnt = malloc(nl * sizeof(*n->cnt));
	n->pos = malloc(nl * sizeof(*n->pos));
	n->hot = calloc(nl, sizeof(*n->hot));
	n->on = calloc(nl, sizeof(*n->on));
	n->dirty = calloc(nl, 1);
	if (n->res == NULL || n->wsum == NULL || n->cnt == NULL || n->pos == NULL || n->hot == NULL ||
	    n->on == NULL || n->dirty == NULL) {
		cs_net_free(n);
		return NULL;
	}
	for (int32_t l = 0; l < n->nlinks; l++) {
		n->hot[l].bw = cs_topo_link_bandwidth(topo, l);
		n->pos[l] = -1;
	}
	return n;
}

void cs_net_free(cs_net *n)
{
	if (n == NULL)
		return;
	free(n->res);
	free(n->wsum);
	free(n->cnt);
	free(n->pos);
	if (n->on)
		for (int32_t l = 0; l < n->nlinks; l++)
			free(n->on[l].more);
	free(n->on);
	free(n->hot);
	free(n->dirty);
	free(n->dirtyl);
	free(n->heap);
	free(n->ver);
	free(n->due);
	free(n->seen);
	for (int32_t i = 0; i < n->flows.n; i++)
		free(CS__FLOWS(n)[i].lk);
	free(n->flows.v);
	free(n->flows.free);
	free(n->colls.v);
	free(n->colls.free);
	free(n->done);
	free(n->act);
	free(n->touched);
	free(n->off);
	free(n->adj);
	free(n->frozen);
	cs__flow_plan_free(&n->plan);
	cs__plan_cache_free(&n->plans);
	free(n);
}

int cs__net_grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (q == NULL)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static int push_done(cs_net *n, uint64_t tag)
{
	if (n->dn == n->dcap) {
		size_t cap = n->dcap ? 2 * n->dcap : 16;
		uint64_t *d = malloc(cap * sizeof(*d));
		if (d == NULL)
			return -1;
		for (size_t i = 0; i < n->dn; i++)
			d[i] = n->done[(n->dhead + i) % n->dcap];
		free(n->done);
		n->done = d;
		n->dhead = 0;
		n->dcap = cap;
	}
	n->done[(n->dhead + n->dn) % n->dcap] = tag;
	n->dn++;
	return 0;
}

/* ---- pending flow events ------------------------------------------------- */

static int fev_before(const cs__fev *a, const cs__fev *b)
{
	return (a->t < b->t) | ((a->t == b->t) & (a->flow < b->flow));
}

/* The heap keeps a sentinel after its last entry, later than any event,
 * so that a pop compares two children with no test of the bounds and no
 * branch: which child is less cannot be predicted. */
static const cs__fev HEAP_END = { CS_TIME_MAX, INT32_MAX, 0 };

/* Flow i's event at t replaces any it had. */
int cs__net_heap_push(cs_net *n, int32_t i, cs_time t)
{
	if (cs__net_grow((void **)&n->heap, &n->heapcap, n->nheap + 2, sizeof(*n->heap)))
		return -1;
	cs__fev e = { t, i, ++n->ver[i] };
	size_t k = n->nheap++;
	n->heap[n->nheap] = HEAP_END;
	while (k > 0) {
		size_t up = (k - 1) / 2;
		if (!fev_before(&e, &n->heap[up]))
			break;
		n->heap[k] = n->heap[up];
		k = up;
	}
	n->heap[k] = e;
	return 0;
}

/* Pop the least entry, bottom-up: the hole left at the root moves down
 * along the lesser children to a leaf, one comparison a level, and the
 * last entry rises into it from there (it belongs near the bottom). */
static void heap_pop(cs_net *n)
{
	cs__fev *h = n->heap, e = h[--n->nheap];
	h[n->nheap] = HEAP_END;
	size_t k = 0;
	for (size_t c; (c = 2 * k + 1) < n->nheap; k = c) {
		c += (size_t)fev_before(&h[c + 1], &h[c]);
		h[k] = h[c];
	}
	while (k > 0) {
		size_t up = (k - 1) / 2;
		if (!fev_before(&e, &h[up]))
			break;
		h[k] = h[up];
		k = up;
	}
	if (n->nheap > 0)
		h[k] = e;
}

static int fev_live(const cs_net *n, const cs__fev *e) { return n->ver[e->flow] == e->ver; }

/* The earliest live event's time into n->next, dropping stale ones. */
static void set_next(cs_net *n)
{
	while (n->nheap > 0 && !fev_live(n, &n->heap[0]))
		heap_pop(n);
	n->next = n->nheap > 0 ? n->heap[0].t : CS_TIME_MAX;
}

static int end_flow(cs_net *n, int32_t i)
{
	cs__flow *f = &CS__FLOWS(n)[i];
	cs__netcoll *c = &CS__COLLS(n)[f->coll];
	f->state = FREE;
	f->rem = 0;
	n->ver[i]++;
	slot_put(&n->flows, i);
	n->nactive--;
	if (--c->left == 0) {
		c->left = -1;
		slot_put(&n->colls, f->coll);
		return push_done(n, c->tag);
	}
	return 0;
}

/* The flows of one time lie far apart in memory (some hundred of them on
 * average): fetch the flow due[k + 8], the link arrays of due[k + 4] and
 * the links of due[k + 2] while due[k] is processed. Inlined always: GCC
 * takes a function of prefetches alone for one without effects, and drops
 * the call. */
__attribute__((always_inline)) static inline void prefetch_due(const cs_net *n, size_t k, size_t nd)
{
	const cs__flow *f = CS__FLOWS(n);
	if (k + 8 < nd)
		__builtin_prefetch(&f[n->due[k + 8]]);
	if (k + 4 < nd) {
		const cs__flow *g = &f[n->due[k + 4]];
		__builtin_prefetch(CS__LINKS(g));
		__builtin_prefetch(CS__LPOS(g));
	}
	if (k + 2 < nd) {
		const cs__flow *g = &f[n->due[k + 2]];
		for (int j = 0; j < g->nlinks && j < 16; j++)
			__builtin_prefetch(&n->hot[CS__LINKS(g)[j]]);
	}
}

/* Process every flow event up to and including t, then move to t. Events
 * of one time are taken together, in slot order, then the changed
 * components refilled. */
static int step_to(cs_net *n, cs_time t)
{
	while (n->next <= t) {
		cs_time te = n->next;
		size_t nd = 0;
		n->now = te;
		while (n->nheap > 0 && n->heap[0].t == te) {
			cs__fev e = n->heap[0];
			heap_pop(n);
			if (!fev_live(n, &e))
				continue;
			if (cs__net_grow((void **)&n->due, &n->duecap, nd + 1, sizeof(*n->due)))
				return -1;
			n->due[nd++] = e.flow;
		}
		/* due is in slot order: the heap orders equal times by slot */
		for (size_t k = 0; k < nd; k++) {
			int32_t i = n->due[k];
			cs__flow *g = &CS__FLOWS(n)[i];
			prefetch_due(n, k, nd);
			if (g->state == WAITING) {
				g->state = DRAINING;
				g->set = te;
				n->ver[i]++;
				if (g->nlinks == 0 ? end_flow(n, i) : cs__net_start_draining(n, i))
					return -1;
			} else if (cs__net_links_remove(n, i) || end_flow(n, i)) {
				return -1;
			}
		}
		if (cs__net_refill(n))
			return -1;
		set_next(n);
	}
	if (t > n->now)
		n->now = t;
	return 0;
}

/* A free flow slot with room for nlinks links and a version, or -1. */
static int32_t new_flow(cs_net *n, int32_t nlinks)
{
	int32_t fi = slot_get(&n->flows, sizeof(cs__flow));
	if (fi < 0)
		return -1;
	if (n->flows.cap > n->vercap) {
		uint32_t *v = realloc(n->ver, (size_t)n->flows.cap * sizeof(*v));
		if (v == NULL) {
			slot_put(&n->flows, fi);
			return -1;
		}
		/* a new slot's events count from 0 */
		memset(v + n->vercap, 0, (size_t)(n->flows.cap - n->vercap) * sizeof(*v));
		n->ver = v;
		n->vercap = n->flows.cap;
	}
	cs__flow *g = &CS__FLOWS(n)[fi];
	if (nlinks > g->lcap) {
		int32_t cap = g->lcap ? g->lcap : 8;
		while (cap < nlinks)
			cap *= 2;
		int32_t *lk = realloc(g->lk, 3 * (size_t)cap * sizeof(*lk));
		if (lk == NULL) {
			slot_put(&n->flows, fi);
			return -1;
		}
		g->lk = lk;
		g->lcap = cap;
	}
	return fi;
}

/* The plan of a collective: kept (*kept its index) when `keep` and there
 * is room, else built into n->plan (*kept -1); NULL on error. */
static const cs__flow_plan *plan_of(cs_net *n, const int64_t *members, int64_t nmembers, cs_coll_op op,
				    double bytes, cs_coll_algo algo, bool keep, int32_t *kept)
{
	*kept = keep ? cs__plan_cache_find(&n->plans, members, nmembers, op, bytes, algo) : -1;
	if (*kept >= 0)
		return cs__plan_cache_at(&n->plans, *kept);
	n->plan.n = n->plan.nl = 0;
	if (cs__flow_plan_build(n->topo, n->domain, &n->route, members, nmembers, op, bytes, algo, &n->plan))
		return NULL;
	if (keep &&
	    (*kept = cs__plan_cache_put(&n->plans, members, nmembers, op, bytes, algo, &n->plan)) >= 0)
		return cs__plan_cache_at(&n->plans, *kept);
	return &n->plan;
}

static int64_t start(cs_net *n, cs_time now, const cs__flow_plan *plan, cs_time latency, uint64_t tag);

int cs_net_route_ecmp(cs_net *n, int qps, uint64_t seed)
{
	if (qps < 1 || n->next_id > 0 || n->plans.ne > 0)
		return -1;
	n->route = (cs__flow_route){ qps, seed };
	return 0;
}

int64_t cs_net_start(cs_net *n, cs_time now, const int64_t *members, int64_t nmembers, cs_coll_op op,
		     double bytes, cs_coll_algo algo, cs_time latency, uint64_t tag)
{
	if (now < n->now || nmembers < 0 || (nmembers > 0 && members == NULL) ||
	    (latency < 0 && latency != CS_NET_ROUTE_LATENCY))
		return -1;
	if (step_to(n, now))
		return -1;
	/* a collective of more than two repeats: its plan is kept */
	int32_t kept;
	const cs__flow_plan *plan = plan_of(n, members, nmembers, op, bytes, algo, nmembers > 2, &kept);
	return plan ? start(n, now, plan, latency, tag) : -1;
}

int32_t cs_net_plan(cs_net *n, const int64_t *members, int64_t nmembers, cs_coll_op op, double bytes,
		    cs_coll_algo algo)
{
	if (nmembers < 0 || (nmembers > 0 && members == NULL))
		return -1;
	int32_t kept;
	return plan_of(n, members, nmembers, op, bytes, algo, true, &kept) ? kept : -1;
}

int64_t cs_net_start_plan(cs_net *n, cs_time now, int32_t plan, cs_time latency, uint64_t tag)
{
	if (now < n->now || plan < 0 || (size_t)plan >= n->plans.ne ||
	    (latency < 0 && latency != CS_NET_ROUTE_LATENCY))
		return -1;
	if (step_to(n, now))
		return -1;
	return start(n, now, cs__plan_cache_at(&n->plans, plan), latency, tag);
}

/* Start the collective of `plan` now (the net stepped to now), its flows
 * behind `latency` or their own. */
static int64_t start(cs_net *n, cs_time now, const cs__flow_plan *plan, cs_time latency, uint64_t tag)
{
	int64_t id = n->next_id++;
	if (plan->n == 0) {
		if (push_done(n, tag))
			return -1;
		n->ncoll++;
		return id;
	}
	int32_t ci = slot_get(&n->colls, sizeof(cs__netcoll));
	if (ci < 0)
		return -1;
	CS__COLLS(n)[ci] = (cs__netcoll){ tag, id, (int64_t)plan->n };
	for (size_t k = 0; k < plan->n; k++) {
		const cs__flow_spec *s = &plan->f[k];
		int32_t fi = new_flow(n, s->nlinks);
		if (fi < 0) {
			/* keep the flows added; the collective ends with them */
			CS__COLLS(n)[ci].left = (int64_t)k;
			if (k == 0) {
				CS__COLLS(n)[ci].left = -1;
				slot_put(&n->colls, ci);
			} else {
				n->ncoll++;
			}
			return -1;
		}
		cs__flow *g = &CS__FLOWS(n)[fi];
		g->coll = ci;
		g->state = WAITING;
		g->nlinks = s->nlinks;
		if (s->nlinks > 0) { /* a flow inside one GPU has no links, nor an array */
			memcpy(CS__LINKS(g), plan->link + s->off, (size_t)s->nlinks * sizeof(int32_t));
			memcpy(CS__WEIGHTS(g), plan->weight + s->off, (size_t)s->nlinks * sizeof(int32_t));
		}
		g->rem = s->bytes;
		g->rate = 0;
		g->set = now;
		g->at = cs_time_add(now, latency == CS_NET_ROUTE_LATENCY ? s->latency_ns : latency);
		g->end = CS_TIME_MAX;
		n->nactive++;
		if (cs__net_heap_push(n, fi, g->at))
			return -1;
	}
	n->ncoll++;
	set_next(n);
	/* flows without latency start draining now */
	if (step_to(n, now))
		return -1;
	return id;
}

cs_time cs_net_next_completion(const cs_net *n) { return n->dn > 0 ? n->now : n->next; }

int cs_net_advance(cs_net *n, cs_time t, uint64_t *out_tags, int cap)
{
	if (t < n->now)
		return -1;
	if (step_to(n, t))
		return -1;
	int k = 0;
	while (k < cap && n->dn > 0) {
		out_tags[k++] = n->done[n->dhead];
		n->dhead = (n->dhead + 1) % n->dcap;
		n->dn--;
		n->ncoll--;
	}
	return k;
}

int64_t cs_net_active_flows(const cs_net *n) { return n->nactive; }

int64_t cs_net_active_colls(const cs_net *n) { return n->ncoll; }

cs_time cs_net_now(const cs_net *n) { return n->now; }

int cs_net_scale_link(cs_net *n, cs_time now, int32_t link, double keep)
{
	if (link < 0 || link >= n->nlinks || !(keep > 0) || keep > 1 || now < n->now)
		return -1;
	if (step_to(n, now))
		return -1;
	n->hot[link].bw = cs_topo_link_bandwidth(n->topo, link) * keep;
	if (cs__net_mark(n, link) || cs__net_refill(n))
		return -1;
	set_next(n);
	return 0;
}

double cs_net_link_capacity(const cs_net *n, int32_t link)
{
	return link >= 0 && link < n->nlinks ? n->hot[link].bw : 0;
}

int64_t cs_net_flows(const cs_net *n, cs_net_flow *out, int64_t cap)
{
	const cs__flow *f = CS__FLOWS(n);
	const cs__netcoll *c = CS__COLLS(n);
	int64_t k = 0;
	for (int32_t i = 0; i < n->flows.n; i++) {
		if (f[i].state == FREE)
			continue;
		if (k < cap) {
			cs_net_flow *o = &out[k];
			o->tag = c[f[i].coll].tag;
			o->coll = c[f[i].coll].id;
			o->draining = f[i].state == DRAINING;
			o->rate = f[i].state == DRAINING ? f[i].rate : 0;
			o->remaining = f[i].rem;
			if (f[i].state == DRAINING && n->now > f[i].set) {
				o->remaining -= f[i].rate * (double)(n->now - f[i].set) * 1e-9;
				if (o->remaining < 0)
					o->remaining = 0;
			}
			o->nlinks = f[i].nlinks;
			o->links = CS__LINKS(&f[i]);
			o->weights = CS__WEIGHTS(&f[i]);
		}
		k++;
	}
	return k;
}
