/*
 * flow_rate.c - the flow net's rates: max-min fair by progressive filling,
 * recomputed at every change of the set of draining flows, for the flows
 * that change can reach and no others.
 *
 * Per-link state for progressive filling is dense over the topology's link
 * ids (a few MB at 16,384 GPUs), and each link lists the draining flows on
 * it.
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
 * A draining flow's end time is now + ceil(remaining / rate) in ns (float
 * noise below 1e-13 relative is ignored, so a flow of exactly 20 ms takes
 * 20,000,000 ns).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/flow_int.h"

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

/* ---- links and their flows -------------------------------------------------- */

int cs__net_mark(cs_net *n, int32_t l)
{
	if (n->dirty[l])
		return 0;
	if (cs__net_grow((void **)&n->dirtyl, &n->dirtycap, n->ndirty + 1, sizeof(*n->dirtyl)))
		return -1;
	n->dirty[l] = 1;
	n->dirtyl[n->ndirty++] = l;
	return 0;
}

/* Flow i starts draining: onto its links' lists, each marked changed
 * unless `quiet` (a flow alone on all of them, rated by start_draining). */
static int links_add(cs_net *n, int32_t i, bool quiet)
{
	cs__flow *f = &CS__FLOWS(n)[i];
	int32_t *links = CS__LINKS(f), *lpos = CS__LPOS(f);
	for (int k = 0; k < f->nlinks; k++) {
		int32_t l = links[k], j = n->hot[l].n;
		if (j == 0) {
			n->hot[l].first = i;
		} else {
			cs__lflows *L = &n->on[l];
			if (j > L->cap) {
				int32_t cap = L->cap < 4 ? 4 : 2 * L->cap;
				cs__lentry *v = realloc(L->more, (size_t)cap * sizeof(*v));
				if (v == NULL)
					return -1;
				L->more = v;
				L->cap = cap;
			}
			L->more[j - 1] = (cs__lentry){ i, k };
		}
		lpos[k] = j;
		n->hot[l].n = j + 1;
		if (!quiet && cs__net_mark(n, l))
			return -1;
	}
	return 0;
}

/* Flow i stops draining: off its links' lists (the last entry of each list
 * takes its place). A link left with no flow has none to re-rate, so only
 * the others are marked changed; nor is its list read. */
int cs__net_links_remove(cs_net *n, int32_t i)
{
	cs__flow *f = CS__FLOWS(n);
	for (int k = 0; k < f[i].nlinks; k++) {
		int32_t l = CS__LINKS(&f[i])[k];
		int32_t p = CS__LPOS(&f[i])[k], m = --n->hot[l].n;
		if (p != m) { /* m > 0: the last entry is in more[] */
			cs__lentry last = n->on[l].more[m - 1];
			if (p == 0)
				n->hot[l].first = last.flow;
			else
				n->on[l].more[p - 1] = last;
			CS__LPOS(&f[last.flow])[last.k] = p;
		}
		if (m > 0 && cs__net_mark(n, l))
			return -1;
	}
	return 0;
}

/* ---- max-min fair rates ------------------------------------------------------ */

/* Draining flow i's rate was just set, its remaining bytes as of now: its
 * end, and the event for it. */
static int set_end(cs_net *n, int32_t i)
{
	cs__flow *g = &CS__FLOWS(n)[i];
	cs_time d = drain_ns(g->rem, g->rate);
	g->end = d >= CS_TIME_MAX - n->now ? CS_TIME_MAX : n->now + d;
	if (g->end == CS_TIME_MAX) {
		n->ver[i]++; /* never ends: no event */
		return 0;
	}
	return cs__net_heap_push(n, i, g->end);
}

/* Flow i starts draining. When no other draining flow uses any of its
 * links (most flows: a TP ring on its NVLink, a send on its NIC), it is a
 * component of its own, and filling it gives it the least capacity per
 * weight over its links, the same value fill() computes: it goes onto its
 * links unmarked, with its rate and end set here. Otherwise onto its links,
 * marked, for cs__net_refill(). */
int cs__net_start_draining(cs_net *n, int32_t i)
{
	cs__flow *g = &CS__FLOWS(n)[i];
	const int32_t *links = CS__LINKS(g), *w = CS__WEIGHTS(g);
	for (int k = 0; k < g->nlinks; k++)
		if (n->hot[links[k]].n > 0)
			return links_add(n, i, false);
	if (links_add(n, i, true))
		return -1;
	double share = INFINITY;
	for (int k = 0; k < g->nlinks; k++) {
		if (n->hot[links[k]].n > 1) { /* a route crossing a link twice: fill() weighs it */
			for (int j = 0; j < g->nlinks; j++)
				if (cs__net_mark(n, links[j]))
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
	cs__flow *f = CS__FLOWS(n);
	size_t nt = 0, nadj = 0;
	for (size_t a = 0; a < na; a++) {
		cs__flow *g = &f[n->act[a]];
		if (n->now > g->set) {
			g->rem -= g->rate * (double)(n->now - g->set) * 1e-9;
			if (g->rem < 0)
				g->rem = 0;
		}
		g->set = n->now;
		n->frozen[a] = 0;
		const int32_t *links = CS__LINKS(g), *w = CS__WEIGHTS(g);
		for (int k = 0; k < g->nlinks; k++) {
			int32_t l = links[k];
			if (n->pos[l] < 0) {
				if (cs__net_grow((void **)&n->touched, &n->tcap, nt + 2,
						 sizeof(*n->touched)) ||
				    cs__net_grow((void **)&n->off, &n->offcap, nt + 2, sizeof(*n->off)))
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
	if (cs__net_grow((void **)&n->adj, &n->adjcap, nadj + 1, sizeof(*n->adj)) ||
	    cs__net_grow((void **)&n->off, &n->offcap, nt + 1, sizeof(*n->off)))
		return -1;
	/* link -> flows (positions in act), CSR */
	size_t sum = 0;
	for (size_t t = 0; t < nt; t++) {
		n->off[t] = (int32_t)sum;
		sum += (size_t)n->cnt[t];
	}
	n->off[nt] = (int32_t)sum;
	for (size_t a = 0; a < na; a++) {
		const cs__flow *g = &f[n->act[a]];
		for (int k = 0; k < g->nlinks; k++) {
			int32_t t = n->pos[CS__LINKS(g)[k]];
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
				cs__flow *g = &f[n->act[a]];
				g->rate = share;
				const int32_t *links = CS__LINKS(g), *w = CS__WEIGHTS(g);
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
int cs__net_refill(cs_net *n)
{
	if (n->ndirty == 0)
		return 0;
	cs__flow *f = CS__FLOWS(n);
	size_t seen0 = n->seencap;
	if (cs__net_grow((void **)&n->act, &n->actcap, (size_t)n->flows.n + 1, sizeof(*n->act)) ||
	    cs__net_grow((void **)&n->frozen, &n->frozencap, (size_t)n->flows.n + 1, 1) ||
	    cs__net_grow((void **)&n->seen, &n->seencap, (size_t)n->flows.n + 1, 1) ||
	    cs__net_grow((void **)&n->touched, &n->tcap, (size_t)n->ndirty + 1, sizeof(*n->touched)))
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
		const cs__lhot *H = &n->hot[n->touched[q]];
		const cs__lflows *L = &n->on[n->touched[q]];
		for (int32_t j = 0; j < H->n; j++) {
			int32_t i = j ? L->more[j - 1].flow : H->first;
			if (n->seen[i])
				continue;
			n->seen[i] = 1;
			n->act[na++] = i;
			for (int k = 0; k < f[i].nlinks; k++) {
				int32_t u = CS__LINKS(&f[i])[k];
				if (n->pos[u] >= 0)
					continue;
				if (cs__net_grow((void **)&n->touched, &n->tcap, nt + 2, sizeof(*n->touched)))
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
