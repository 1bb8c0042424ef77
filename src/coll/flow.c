/*
 * flow.c - the flow net: flows on links, max-min fair rates by progressive
 * filling, recomputed at every change of the set of draining flows, for the
 * flows that change can reach and no others.
 *
 * Flows live in a slot array (freed slots are reused last in, first out,
 * so the iteration order depends only on the calls made);
 * collectives likewise. Per-link state for progressive filling is dense
 * over the topology's link ids (a few MB at 16,384 GPUs), and each link
 * lists the draining flows on it.
 *
 * Max-min fair rates split over the connected components of the graph of
 * draining flows and the links they share: a flow that starts or ends, or a
 * link whose capacity changes, can move only the rates of its component.
 * So a change marks its links, and the recomputation fills the component
 * those links reach (in slot order, as a whole-net filling would order it)
 * and leaves every other flow's rate, end time and pending event as they
 * were. A flow's remaining bytes are kept as of the time its rate was set
 * and brought forward only when it is refilled or read.
 *
 * A draining flow keeps its end time, absolute, computed when its rate was
 * last set: now + ceil(remaining / rate) in ns (float noise below 1e-13
 * relative is ignored, so a flow of exactly 20 ms takes 20,000,000 ns). A
 * flow ends at that time exactly, with nothing left, so rounding never
 * accumulates into an extra event. Flow events (a latency phase's end, a
 * drain's end) wait in a min-heap of (time, slot, version); an entry whose
 * version the flow has moved past is dropped when it surfaces.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/flow.h"
#include "coll/flow_plan.h"

enum { FREE, WAITING, DRAINING };

/* What every event touches, in one cache line. A flow's links are
 * lk[0 .. nlinks), their weights (how many of its edges cross each: a ring
 * channel's) lk[lcap ..] and its index in each link's list lk[2 lcap ..];
 * a freed slot keeps its array for the next flow. */
typedef struct flow {
	int32_t coll;   /* slot of its collective */
	int32_t state;
	int32_t nlinks, lcap;
	double rem, rate;
	cs_time set;    /* rem is as of this time */
	cs_time at;     /* end of the latency phase */
	cs_time end;    /* while draining */
	int32_t *lk;
} flow;

#define LINKS(f) ((f)->lk)
#define WEIGHTS(f) ((f)->lk + (f)->lcap)
#define LPOS(f) ((f)->lk + 2 * (f)->lcap)

/* A pending flow event. */
typedef struct fev {
	cs_time t;
	int32_t flow;
	uint32_t ver;
} fev;

/* A draining flow on a link, and which of the flow's links it is: moving
 * the entry in the list updates the flow's position for it at once, where a
 * ring's flow has hundreds of links to search. */
typedef struct lentry {
	int32_t flow, k;
} lentry;

/* A link: its capacity, how many draining flows it carries and the first
 * of them, in 16 bytes. Most links carry one flow at most (a TP ring on its
 * NVLink, a send on its NIC), and a flow alone on its links starts and ends
 * reading nothing else of them. */
typedef struct lhot {
	double bw;      /* capacity, bytes/s */
	int32_t n;      /* draining flows on it */
	int32_t first;  /* the first of them (its link index is never read) */
} lhot;
_Static_assert(sizeof(lhot) == 16, "four links per cache line");

/* The draining flows on a link after its first: more[0 .. n - 1). */
typedef struct lflows {
	lentry *more;
	int32_t cap;
} lflows;

typedef struct coll {
	uint64_t tag;
	int64_t id;
	int64_t left;   /* flows not ended; -1: free slot */
} coll;

/* A growable array of slots with a free stack. */
typedef struct slots {
	void *v;
	int32_t n, cap;
	int32_t *free;
	int32_t nfree;
} slots;

struct cs_net {
	const cs_topo *topo;
	int64_t domain;
	int32_t nlinks;
	cs_time now;
	cs_time next;       /* next flow event */
	int64_t nactive, ncoll, next_id;
	/* progressive filling, per link: residual, unfrozen weight, flows, index */
	double *res, *wsum;
	int32_t *cnt, *pos;
	lhot *hot;          /* per link: its capacity and flow count */
	lflows *on;         /* per link: its draining flows */
	char *dirty;        /* per link: changed since the last filling */
	int32_t *dirtyl;
	size_t ndirty, dirtycap;
	fev *heap;          /* pending flow events, earliest first */
	size_t nheap, heapcap;
	int32_t *due;       /* scratch: the flows of one event time */
	size_t duecap;
	char *seen;         /* scratch, per flow slot: in the component */
	size_t seencap;
	slots flows, colls;
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
};

static int32_t slot_get(slots *s, size_t size)
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
static void slot_put(slots *s, int32_t i)
{
	s->free[s->nfree++] = i;
}

#define FLOWS(n) ((flow *)(n)->flows.v)
#define COLLS(n) ((coll *)(n)->colls.v)

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
		    : c->scale_up_domain > 0 ? c->scale_up_domain : c->gpus_per_node;
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
		free(FLOWS(n)[i].lk);
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

static int grow(void **p, size_t *cap, size_t need, size_t size)
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

/* Nanoseconds to drain `rem` bytes at `rate`, rounded up. */
static cs_time drain_ns(double rem, double rate)
{
	if (!(rem > 0))
		return 0;
	if (!(rate > 0))
		return CS_TIME_MAX;
	double d = rem * 1e9 / rate;
	if (d >= 4e18)
		return CS_TIME_MAX;
	double slack = d * 1e-13 > 1e-6 ? d * 1e-13 : 1e-6;
	d = ceil(d - slack);
	return d > 0 ? (cs_time)d : 0;
}

/* ---- pending flow events ------------------------------------------------- */

static int fev_before(const fev *a, const fev *b)
{
	return (a->t < b->t) | ((a->t == b->t) & (a->flow < b->flow));
}

/* The heap keeps a sentinel after its last entry, later than any event,
 * so that a pop compares two children with no test of the bounds and no
 * branch: which child is less cannot be predicted. */
static const fev HEAP_END = { CS_TIME_MAX, INT32_MAX, 0 };

/* Flow i's event at t replaces any it had. */
static int heap_push(cs_net *n, int32_t i, cs_time t)
{
	if (grow((void **)&n->heap, &n->heapcap, n->nheap + 2, sizeof(*n->heap)))
		return -1;
	fev e = { t, i, ++n->ver[i] };
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
	fev *h = n->heap, e = h[--n->nheap];
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

static int fev_live(const cs_net *n, const fev *e)
{
	return n->ver[e->flow] == e->ver;
}

/* The earliest live event's time into n->next, dropping stale ones. */
static void set_next(cs_net *n)
{
	while (n->nheap > 0 && !fev_live(n, &n->heap[0]))
		heap_pop(n);
	n->next = n->nheap > 0 ? n->heap[0].t : CS_TIME_MAX;
}

/* ---- links and their flows -------------------------------------------------- */

static int mark(cs_net *n, int32_t l)
{
	if (n->dirty[l])
		return 0;
	if (grow((void **)&n->dirtyl, &n->dirtycap, n->ndirty + 1, sizeof(*n->dirtyl)))
		return -1;
	n->dirty[l] = 1;
	n->dirtyl[n->ndirty++] = l;
	return 0;
}

/* Flow i starts draining: onto its links' lists, each marked changed
 * unless `quiet` (a flow alone on all of them, rated by start_draining). */
static int links_add(cs_net *n, int32_t i, bool quiet)
{
	flow *f = &FLOWS(n)[i];
	int32_t *links = LINKS(f), *lpos = LPOS(f);
	for (int k = 0; k < f->nlinks; k++) {
		int32_t l = links[k], j = n->hot[l].n;
		if (j == 0) {
			n->hot[l].first = i;
		} else {
			lflows *L = &n->on[l];
			if (j > L->cap) {
				int32_t cap = L->cap < 4 ? 4 : 2 * L->cap;
				lentry *v = realloc(L->more, (size_t)cap * sizeof(*v));
				if (v == NULL)
					return -1;
				L->more = v;
				L->cap = cap;
			}
			L->more[j - 1] = (lentry){ i, k };
		}
		lpos[k] = j;
		n->hot[l].n = j + 1;
		if (!quiet && mark(n, l))
			return -1;
	}
	return 0;
}

/* Flow i stops draining: off its links' lists (the last entry of each list
 * takes its place). A link left with no flow has none to re-rate, so only
 * the others are marked changed; nor is its list read. */
static int links_remove(cs_net *n, int32_t i)
{
	flow *f = FLOWS(n);
	for (int k = 0; k < f[i].nlinks; k++) {
		int32_t l = LINKS(&f[i])[k];
		int32_t p = LPOS(&f[i])[k], m = --n->hot[l].n;
		if (p != m) { /* m > 0: the last entry is in more[] */
			lentry last = n->on[l].more[m - 1];
			if (p == 0)
				n->hot[l].first = last.flow;
			else
				n->on[l].more[p - 1] = last;
			LPOS(&f[last.flow])[last.k] = p;
		}
		if (m > 0 && mark(n, l))
			return -1;
	}
	return 0;
}

/* ---- max-min fair rates ------------------------------------------------------ */

/* Draining flow i's rate was just set, its remaining bytes as of now: its
 * end, and the event for it. */
static int set_end(cs_net *n, int32_t i)
{
	flow *g = &FLOWS(n)[i];
	cs_time d = drain_ns(g->rem, g->rate);
	g->end = d >= CS_TIME_MAX - n->now ? CS_TIME_MAX : n->now + d;
	if (g->end == CS_TIME_MAX) {
		n->ver[i]++; /* never ends: no event */
		return 0;
	}
	return heap_push(n, i, g->end);
}

/* Flow i starts draining. When no other draining flow uses any of its
 * links (most flows: a TP ring on its NVLink, a send on its NIC), it is a
 * component of its own, and filling it gives it the least capacity per
 * weight over its links, the same value fill() computes: it goes onto its
 * links unmarked, with its rate and end set here. Otherwise onto its links,
 * marked, for refill(). */
static int start_draining(cs_net *n, int32_t i)
{
	flow *g = &FLOWS(n)[i];
	const int32_t *links = LINKS(g), *w = WEIGHTS(g);
	for (int k = 0; k < g->nlinks; k++)
		if (n->hot[links[k]].n > 0)
			return links_add(n, i, false);
	if (links_add(n, i, true))
		return -1;
	double share = INFINITY;
	for (int k = 0; k < g->nlinks; k++) {
		if (n->hot[links[k]].n > 1) { /* a route crossing a link twice: fill() weighs it */
			for (int j = 0; j < g->nlinks; j++)
				if (mark(n, links[j]))
					return -1;
			return 0;
		}
		double cap = n->hot[links[k]].bw;
		double sh = cap > 0 ? cap / w[k] : 0;
		if (sh < share)
			share = sh;
	}
	g->rate = share;
	return set_end(n, i);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Max-min fair rates of the draining flows act[0..na) (in slot order) by
 * progressive filling: the link with the least residual capacity per
 * unfrozen unit of weight (a flow of weight w on a link uses w times its
 * rate there) fixes the rate of its flows; every link at that same share is
 * settled in the same round. Ties and orders follow slot and first-touch
 * order, so the result is deterministic. Each flow's remaining bytes are
 * brought to the net's time first, its end time and event set after. */
static int fill(cs_net *n, size_t na)
{
	flow *f = FLOWS(n);
	size_t nt = 0, nadj = 0;
	for (size_t a = 0; a < na; a++) {
		flow *g = &f[n->act[a]];
		if (n->now > g->set) {
			g->rem -= g->rate * (double)(n->now - g->set) * 1e-9;
			if (g->rem < 0)
				g->rem = 0;
		}
		g->set = n->now;
		n->frozen[a] = 0;
		const int32_t *links = LINKS(g), *w = WEIGHTS(g);
		for (int k = 0; k < g->nlinks; k++) {
			int32_t l = links[k];
			if (n->pos[l] < 0) {
				if (grow((void **)&n->touched, &n->tcap, nt + 2, sizeof(*n->touched)) ||
				    grow((void **)&n->off, &n->offcap, nt + 2, sizeof(*n->off)))
					return -1;
				n->pos[l] = (int32_t)nt;
				n->touched[nt] = l;
				n->res[nt] = n->hot[l].bw;
				n->wsum[nt] = 0;
				n->cnt[nt] = 0;
				nt++;
			}
			n->cnt[n->pos[l]]++;
			n->wsum[n->pos[l]] += w[k];
			nadj++;
		}
	}
	if (grow((void **)&n->adj, &n->adjcap, nadj + 1, sizeof(*n->adj)) ||
	    grow((void **)&n->off, &n->offcap, nt + 1, sizeof(*n->off)))
		return -1;
	/* link -> flows (positions in act), CSR */
	size_t sum = 0;
	for (size_t t = 0; t < nt; t++) {
		n->off[t] = (int32_t)sum;
		sum += (size_t)n->cnt[t];
	}
	n->off[nt] = (int32_t)sum;
	for (size_t a = 0; a < na; a++) {
		const flow *g = &f[n->act[a]];
		for (int k = 0; k < g->nlinks; k++) {
			int32_t t = n->pos[LINKS(g)[k]];
			n->adj[n->off[t] + (n->off[t + 1] - n->off[t]) - n->cnt[t]] = (int32_t)a;
			n->cnt[t]--;
		}
	}

	size_t left = na;
	while (left > 0) {
		double share = INFINITY;
		for (size_t t = 0; t < nt; t++)
			if (n->wsum[t] > 0) {
				double sh = n->res[t] > 0 ? n->res[t] / n->wsum[t] : 0;
				if (sh < share)
					share = sh;
			}
		double limit = share * (1 + 1e-12);
		for (size_t t = 0; t < nt; t++) {
			if (n->wsum[t] <= 0)
				continue;
			double sh = n->res[t] > 0 ? n->res[t] / n->wsum[t] : 0;
			if (sh > limit)
				continue;
			for (int32_t e = n->off[t]; e < n->off[t + 1]; e++) {
				int32_t a = n->adj[e];
				if (n->frozen[a])
					continue;
				n->frozen[a] = 1;
				left--;
				flow *g = &f[n->act[a]];
				g->rate = share;
				const int32_t *links = LINKS(g), *w = WEIGHTS(g);
				for (int k = 0; k < g->nlinks; k++) {
					int32_t u = n->pos[links[k]];
					n->res[u] -= w[k] == 1 ? share : share * w[k];
					n->wsum[u] -= w[k];
				}
			}
		}
	}
	for (size_t t = 0; t < nt; t++)
		n->pos[n->touched[t]] = -1;
	for (size_t a = 0; a < na; a++) {
		if (set_end(n, n->act[a]))
			return -1;
	}
	return 0;
}

/* Refill the component of every link changed since the last filling: the
 * draining flows those links reach through shared links, and only them. */
static int refill(cs_net *n)
{
	if (n->ndirty == 0)
		return 0;
	flow *f = FLOWS(n);
	size_t seen0 = n->seencap;
	if (grow((void **)&n->act, &n->actcap, (size_t)n->flows.n + 1, sizeof(*n->act)) ||
	    grow((void **)&n->frozen, &n->frozencap, (size_t)n->flows.n + 1, 1) ||
	    grow((void **)&n->seen, &n->seencap, (size_t)n->flows.n + 1, 1) ||
	    grow((void **)&n->touched, &n->tcap, (size_t)n->ndirty + 1, sizeof(*n->touched)))
		return -1;
	if (n->seencap > seen0)
		memset(n->seen + seen0, 0, n->seencap - seen0);
	/* breadth first over links: touched[] is the queue, pos[] marks */
	size_t nt = 0, na = 0;
	for (size_t d = 0; d < n->ndirty; d++) {
		int32_t l = n->dirtyl[d];
		n->dirty[l] = 0;
		n->pos[l] = (int32_t)nt;
		n->touched[nt++] = l;
	}
	n->ndirty = 0;
	for (size_t q = 0; q < nt; q++) {
		const lhot *H = &n->hot[n->touched[q]];
		const lflows *L = &n->on[n->touched[q]];
		for (int32_t j = 0; j < H->n; j++) {
			int32_t i = j ? L->more[j - 1].flow : H->first;
			if (n->seen[i])
				continue;
			n->seen[i] = 1;
			n->act[na++] = i;
			for (int k = 0; k < f[i].nlinks; k++) {
				int32_t u = LINKS(&f[i])[k];
				if (n->pos[u] >= 0)
					continue;
				if (grow((void **)&n->touched, &n->tcap, nt + 2, sizeof(*n->touched)))
					return -1;
				n->pos[u] = (int32_t)nt;
				n->touched[nt++] = u;
			}
		}
	}
	for (size_t t = 0; t < nt; t++)
		n->pos[n->touched[t]] = -1;
	for (size_t a = 0; a < na; a++)
		n->seen[n->act[a]] = 0;
	qsort(n->act, na, sizeof(*n->act), cmp_i32);
	return fill(n, na);
}

static int end_flow(cs_net *n, int32_t i)
{
	flow *f = &FLOWS(n)[i];
	coll *c = &COLLS(n)[f->coll];
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
	const flow *f = FLOWS(n);
	if (k + 8 < nd)
		__builtin_prefetch(&f[n->due[k + 8]]);
	if (k + 4 < nd) {
		const flow *g = &f[n->due[k + 4]];
		__builtin_prefetch(LINKS(g));
		__builtin_prefetch(LPOS(g));
	}
	if (k + 2 < nd) {
		const flow *g = &f[n->due[k + 2]];
		for (int j = 0; j < g->nlinks && j < 16; j++)
			__builtin_prefetch(&n->hot[LINKS(g)[j]]);
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
			fev e = n->heap[0];
			heap_pop(n);
			if (!fev_live(n, &e))
				continue;
			if (grow((void **)&n->due, &n->duecap, nd + 1, sizeof(*n->due)))
				return -1;
			n->due[nd++] = e.flow;
		}
		/* due is in slot order: the heap orders equal times by slot */
		for (size_t k = 0; k < nd; k++) {
			int32_t i = n->due[k];
			flow *g = &FLOWS(n)[i];
			prefetch_due(n, k, nd);
			if (g->state == WAITING) {
				g->state = DRAINING;
				g->set = te;
				n->ver[i]++;
				if (g->nlinks == 0 ? end_flow(n, i) : start_draining(n, i))
					return -1;
			} else if (links_remove(n, i) || end_flow(n, i)) {
				return -1;
			}
		}
		if (refill(n))
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
	int32_t fi = slot_get(&n->flows, sizeof(flow));
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
	flow *g = &FLOWS(n)[fi];
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
	if (cs__flow_plan_build(n->topo, n->domain, members, nmembers, op, bytes, algo, &n->plan))
		return NULL;
	if (keep && (*kept = cs__plan_cache_put(&n->plans, members, nmembers, op, bytes, algo, &n->plan)) >= 0)
		return cs__plan_cache_at(&n->plans, *kept);
	return &n->plan;
}

static int64_t start(cs_net *n, cs_time now, const cs__flow_plan *plan, cs_time latency, uint64_t tag);

int64_t cs_net_start(cs_net *n, cs_time now, const int64_t *members, int64_t nmembers,
		     cs_coll_op op, double bytes, cs_coll_algo algo, cs_time latency, uint64_t tag)
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
	int32_t ci = slot_get(&n->colls, sizeof(coll));
	if (ci < 0)
		return -1;
	COLLS(n)[ci] = (coll){tag, id, (int64_t)plan->n};
	for (size_t k = 0; k < plan->n; k++) {
		const cs__flow_spec *s = &plan->f[k];
		int32_t fi = new_flow(n, s->nlinks);
		if (fi < 0) {
			/* keep the flows added; the collective ends with them */
			COLLS(n)[ci].left = (int64_t)k;
			if (k == 0) {
				COLLS(n)[ci].left = -1;
				slot_put(&n->colls, ci);
			} else {
				n->ncoll++;
			}
			return -1;
		}
		flow *g = &FLOWS(n)[fi];
		g->coll = ci;
		g->state = WAITING;
		g->nlinks = s->nlinks;
		if (s->nlinks > 0) { /* a flow inside one GPU has no links, nor an array */
			memcpy(LINKS(g), plan->link + s->off, (size_t)s->nlinks * sizeof(int32_t));
			memcpy(WEIGHTS(g), plan->weight + s->off, (size_t)s->nlinks * sizeof(int32_t));
		}
		g->rem = s->bytes;
		g->rate = 0;
		g->set = now;
		g->at = cs_time_add(now, latency == CS_NET_ROUTE_LATENCY ? s->latency_ns : latency);
		g->end = CS_TIME_MAX;
		n->nactive++;
		if (heap_push(n, fi, g->at))
			return -1;
	}
	n->ncoll++;
	set_next(n);
	/* flows without latency start draining now */
	if (step_to(n, now))
		return -1;
	return id;
}

cs_time cs_net_next_completion(const cs_net *n)
{
	return n->dn > 0 ? n->now : n->next;
}

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

int64_t cs_net_active_flows(const cs_net *n)
{
	return n->nactive;
}

int64_t cs_net_active_colls(const cs_net *n)
{
	return n->ncoll;
}

cs_time cs_net_now(const cs_net *n)
{
	return n->now;
}

int cs_net_scale_link(cs_net *n, cs_time now, int32_t link, double keep)
{
	if (link < 0 || link >= n->nlinks || !(keep > 0) || keep > 1 || now < n->now)
		return -1;
	if (step_to(n, now))
		return -1;
	n->hot[link].bw = cs_topo_link_bandwidth(n->topo, link) * keep;
	if (mark(n, link) || refill(n))
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
	const flow *f = FLOWS(n);
	const coll *c = COLLS(n);
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
			o->links = LINKS(&f[i]);
			o->weights = WEIGHTS(&f[i]);
		}
		k++;
	}
	return k;
}
