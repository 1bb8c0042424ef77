/*
 * flow_plan.c - the flows of a collective: rings, trees, all-to-all and
 * send/recv as point-to-point flows with routes (see flow_plan.h).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/flow_plan.h"
#include "coll/schedule.h"

void cs__flow_plan_free(cs__flow_plan *p)
{
	free(p->f);
	free(p->link);
	free(p->weight);
	free(p->at);
	free(p->stamp);
	*p = (cs__flow_plan){ 0 };
}

/* ---- plans already built ------------------------------------------------ */

struct cs__plan_ent {
	uint64_t h;
	double bytes;
	int64_t n;
	int op, algo;
	int64_t *m;
	cs__flow_plan p; /* f, link and weight only */
};

enum { CACHE_MAX_PLANS = 1 << 16, CACHE_MAX_LINKS = 1 << 22 };

static uint64_t plan_key(const int64_t *m, int64_t n, cs_coll_op op, double bytes, cs_coll_algo algo)
{
	uint64_t b;
	memcpy(&b, &bytes, sizeof b);
	uint64_t h = 0x9e3779b97f4a7c15u ^ ((uint64_t)op << 8) ^ (uint64_t)algo ^ ((uint64_t)n << 16);
	h = (h ^ b) * 0xff51afd7ed558ccdu;
	for (int64_t i = 0; i < n; i++)
		h = (h ^ (uint64_t)m[i]) * 0xc4ceb9fe1a85ec53u;
	return h ^ (h >> 33);
}

static int ent_is(const cs__plan_ent *e, uint64_t h, const int64_t *m, int64_t n, cs_coll_op op, double bytes,
		  cs_coll_algo algo)
{
	return e->h == h && e->n == n && e->op == (int)op && e->algo == (int)algo && e->bytes == bytes &&
	       memcmp(e->m, m, (size_t)n * sizeof(*m)) == 0;
}

void cs__plan_cache_free(cs__plan_cache *c)
{
	for (size_t i = 0; i < c->ne; i++) {
		free(c->e[i].m);
		cs__flow_plan_free(&c->e[i].p);
	}
	free(c->e);
	free(c->slot);
	*c = (cs__plan_cache){ 0 };
}

int32_t cs__plan_cache_find(const cs__plan_cache *c, const int64_t *m, int64_t n, cs_coll_op op, double bytes,
			    cs_coll_algo algo)
{
	if (c->scap == 0)
		return -1;
	uint64_t h = plan_key(m, n, op, bytes, algo);
	for (size_t j = (size_t)h & (c->scap - 1);; j = (j + 1) & (c->scap - 1)) {
		if (c->slot[j] < 0)
			return -1;
		if (ent_is(&c->e[c->slot[j]], h, m, n, op, bytes, algo))
			return c->slot[j];
	}
}

const cs__flow_plan *cs__plan_cache_at(const cs__plan_cache *c, int32_t i) { return &c->e[i].p; }

int32_t cs__plan_cache_put(cs__plan_cache *c, const int64_t *m, int64_t n, cs_coll_op op, double bytes,
			   cs_coll_algo algo, const cs__flow_plan *p)
{
	if (c->ne >= CACHE_MAX_PLANS || c->links + p->nl > CACHE_MAX_LINKS)
		return -1;
	if (c->ne == c->ecap) {
		size_t cap = c->ecap ? 2 * c->ecap : 256;
		cs__plan_ent *e = realloc(c->e, cap * sizeof(*e));
		if (e == NULL)
			return -1;
		c->e = e;
		c->ecap = cap;
	}
	if (2 * (c->ne + 1) > c->scap) { /* rehash at half full */
		size_t cap = c->scap ? 2 * c->scap : 512;
		int32_t *s = malloc(cap * sizeof(*s));
		if (s == NULL)
			return -1;
		for (size_t j = 0; j < cap; j++)
			s[j] = -1;
		for (size_t i = 0; i < c->ne; i++) {
			size_t j = (size_t)c->e[i].h & (cap - 1);
			while (s[j] >= 0)
				j = (j + 1) & (cap - 1);
			s[j] = (int32_t)i;
		}
		free(c->slot);
		c->slot = s;
		c->scap = cap;
	}
	cs__plan_ent *e = &c->e[c->ne];
	*e = (cs__plan_ent){
		.h = plan_key(m, n, op, bytes, algo), .bytes = bytes, .n = n, .op = (int)op, .algo = (int)algo
	};
	e->m = malloc((size_t)n * sizeof(*m));
	e->p.f = malloc((p->n ? p->n : 1) * sizeof(*p->f));
	e->p.link = malloc((p->nl ? p->nl : 1) * sizeof(*p->link));
	e->p.weight = malloc((p->nl ? p->nl : 1) * sizeof(*p->weight));
	if (e->m == NULL || e->p.f == NULL || e->p.link == NULL || e->p.weight == NULL) {
		free(e->m);
		cs__flow_plan_free(&e->p);
		return -1;
	}
	memcpy(e->m, m, (size_t)n * sizeof(*m));
	if (p->n > 0)
		memcpy(e->p.f, p->f, p->n * sizeof(*p->f));
	if (p->nl > 0) {
		memcpy(e->p.link, p->link, p->nl * sizeof(*p->link));
		memcpy(e->p.weight, p->weight, p->nl * sizeof(*p->weight));
	}
	e->p.n = e->p.cap = p->n;
	e->p.nl = e->p.lcap = p->nl;
	size_t j = (size_t)e->h & (c->scap - 1);
	while (c->slot[j] >= 0)
		j = (j + 1) & (c->scap - 1);
	c->slot[j] = (int32_t)c->ne;
	c->links += p->nl;
	return (int32_t)c->ne++;
}

/* ---- building ------------------------------------------------------------- */

/* Room for `more` links in the pool. */
static int reserve_links(cs__flow_plan *p, size_t more)
{
	if (p->nl + more <= p->lcap)
		return 0;
	size_t cap = p->lcap ? 2 * p->lcap : 256;
	while (cap < p->nl + more)
		cap *= 2;
	int32_t *l = realloc(p->link, cap * sizeof(*l));
	if (l == NULL)
		return -1;
	p->link = l;
	int32_t *w = realloc(p->weight, cap * sizeof(*w));
	if (w == NULL)
		return -1;
	p->weight = w;
	p->lcap = cap;
	return 0;
}

/* Open a flow of `bytes` whose links are appended next. */
static int open_flow(cs__flow_plan *p, double bytes)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		cs__flow_spec *f = realloc(p->f, cap * sizeof(*f));
		if (f == NULL)
			return -1;
		p->f = f;
		p->cap = cap;
	}
	p->f[p->n++] = (cs__flow_spec){ .bytes = bytes, .off = p->nl };
	return 0;
}

/* Append the route src -> dst, through `via` first when via >= 0 (an
 * NVLink hop inside the source's domain), to the open flow, each link of
 * weight 1; over path *path of the single uplinks when path is not NULL
 * (cs_topo_route_path), else over the tiers' aggregates. Returns the
 * route's latency, or -1. */
static int64_t append_route(cs__flow_plan *p, const cs_topo *t, int64_t src, int64_t via, int64_t dst,
			    const uint64_t *path)
{
	cs__flow_spec *s = &p->f[p->n - 1];
	if (reserve_links(p, 2 * CS_NET_MAX_ROUTE))
		return -1;
	size_t at = p->nl;
	int k = 0;
	if (via >= 0 && via != src && via != dst) {
		k = cs_topo_route(t, src, via, p->link + at, CS_NET_MAX_ROUTE);
		if (k < 0)
			return -1;
		src = via;
	}
	int r = path ? cs_topo_route_path(t, src, dst, *path, p->link + at + k, CS_NET_MAX_ROUTE - k)
		     : cs_topo_route(t, src, dst, p->link + at + k, CS_NET_MAX_ROUTE - k);
	if (r < 0 || k + r > CS_NET_MAX_ROUTE)
		return -1;
	int64_t lat = 0;
	for (int i = 0; i < k + r; i++) {
		p->weight[at + (size_t)i] = 1;
		lat += cs_topo_link_latency(t, p->link[at + (size_t)i]);
	}
	p->nl += (size_t)(k + r);
	s->nlinks += k + r;
	return lat;
}

/* ---- connections and their queue pairs ------------------------------------- */

enum { KIND_RING, KIND_TREE, KIND_P2P };

/* The connections of the flow being built: how the plan routes, their
 * identity for ECMP's hash, and how many QPs the open flow is counted in
 * (1, or the route's qps when an edge of it is hashed). */
typedef struct conn {
	const cs_topo *t;
	const cs__flow_route *r;
	uint64_t comm; /* the communicator: its member list, hashed */
	int kind;
	int64_t channel;
	int32_t scale;
} conn;

/* splitmix64's finaliser: every bit of x moves every bit of the result. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9u;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

static uint64_t comm_hash(const int64_t *m, int64_t n)
{
	uint64_t h = mix64((uint64_t)n);
	for (int64_t i = 0; i < n; i++)
		h = mix64(h ^ (uint64_t)m[i]);
	return h;
}

/* The path of QP q of the connection src -> dst. */
static uint64_t qp_path(const conn *c, int64_t src, int64_t dst, int32_t q)
{
	uint64_t h = mix64(c->r->seed ^ 0x243f6a8885a308d3u);
	h = mix64(h ^ c->comm);
	h = mix64(h ^ ((uint64_t)c->kind << 56) ^ (uint64_t)c->channel);
	h = mix64(h ^ (uint64_t)src);
	h = mix64(h ^ (uint64_t)dst);
	return mix64(h ^ (uint64_t)q);
}

/* Where the edge src -> dst (through via) enters the network. */
static int64_t net_src(int64_t src, int64_t via, int64_t dst)
{
	return via >= 0 && via != src && via != dst ? via : src;
}

/* Whether ECMP hashes the edge src -> dst (through via): its network part
 * has more than one path. */
static bool hashed(const conn *c, int64_t src, int64_t via, int64_t dst)
{
	return c->r->qps > 0 && cs_topo_paths(c->t, net_src(src, via, dst), dst) > 1;
}

/* The edge src -> dst (through via) onto the open flow: once, each link at
 * weight c->scale; or, hashed, once per QP over that QP's path at weight 1
 * (the links but the uplinks are every QP's: merge_links adds them up to
 * c->scale). The route's latency, or -1. */
static int64_t append_edge(cs__flow_plan *p, const conn *c, int64_t src, int64_t via, int64_t dst)
{
	if (!hashed(c, src, via, dst)) {
		size_t at = p->nl;
		int64_t lat = append_route(p, c->t, src, via, dst, NULL);
		for (size_t i = at; lat >= 0 && c->scale > 1 && i < p->nl; i++)
			p->weight[i] = c->scale;
		return lat;
	}
	int64_t lat = -1;
	for (int32_t q = 0; q < c->scale; q++) {
		uint64_t path = qp_path(c, net_src(src, via, dst), dst, q);
		if ((lat = append_route(p, c->t, src, via, dst, &path)) < 0)
			return -1;
	}
	return lat;
}

/* The open flow's links each once, in the order they first appear, each
 * weighing the sum of its weights (how many of the flow's edges, or QPs,
 * cross it). */
static int merge_links(cs__flow_plan *p, const cs_topo *t)
{
	int32_t nl = cs_topo_nlinks(t);
	if (p->nat < nl) {
		free(p->at);
		free(p->stamp);
		p->at = malloc((size_t)nl * sizeof(*p->at));
		p->stamp = calloc((size_t)nl, sizeof(*p->stamp));
		if (p->at == NULL || p->stamp == NULL) {
			p->nat = 0;
			return -1;
		}
		p->nat = nl;
		p->cur = 0;
	}
	if (++p->cur == 0) { /* the stamps wrapped: start them afresh */
		memset(p->stamp, 0, (size_t)p->nat * sizeof(*p->stamp));
		p->cur = 1;
	}
	cs__flow_spec *s = &p->f[p->n - 1];
	int32_t *l = p->link + s->off, *w = p->weight + s->off;
	int32_t k = 0;
	for (int32_t i = 0; i < s->nlinks; i++) {
		int32_t u = l[i], wi = w[i];
		if (p->stamp[u] == p->cur) {
			w[p->at[u]] += wi;
			continue;
		}
		p->stamp[u] = p->cur;
		p->at[u] = k;
		l[k] = u;
		w[k++] = wi;
	}
	s->nlinks = k;
	p->nl = s->off + (size_t)k;
	return 0;
}

/* A flow src -> dst behind its route's latency, a connection of its own
 * (kind and channel in *c), counted in QPs when hashed. */
static int add(cs__flow_plan *p, conn *c, int64_t src, int64_t dst, double bytes)
{
	c->scale = hashed(c, src, -1, dst) ? c->r->qps : 1;
	if (open_flow(p, bytes / (double)c->scale))
		return -1;
	int64_t lat = append_edge(p, c, src, -1, dst);
	if (lat < 0 || (c->scale > 1 && merge_links(p, c->t)))
		return -1;
	p->f[p->n - 1].latency_ns = lat;
	return 0;
}

/* Give flows [from, p->n) `steps` times the largest route latency among them. */
static void set_latency(cs__flow_plan *p, size_t from, int64_t steps)
{
	int64_t lat = 0;
	for (size_t i = from; i < p->n; i++)
		if (p->f[i].latency_ns > lat)
			lat = p->f[i].latency_ns;
	for (size_t i = from; i < p->n; i++)
		p->f[i].latency_ns = steps * lat;
}

/* Members in blocks: maximal runs of consecutive members in one domain. */
typedef struct blocks {
	const int64_t *m;
	int64_t n, domain;
	int64_t nb, maxb;
	int64_t *start; /* nb + 1 offsets into m */
	int uniform;    /* every block has maxb members */
	int64_t nch;    /* channels */
} blocks;

static int blocks_init(blocks *b, const int64_t *m, int64_t n, int64_t domain)
{
	b->m = m;
	b->n = n;
	b->domain = domain;
	b->start = malloc((size_t)(n + 1) * sizeof(*b->start));
	if (b->start == NULL)
		return -1;
	b->nb = 0;
	for (int64_t i = 0; i < n; i++)
		if (i == 0 || m[i] / domain != m[i - 1] / domain)
			b->start[b->nb++] = i;
	b->start[b->nb] = n;
	b->maxb = 0;
	b->uniform = 1;
	for (int64_t k = 0; k < b->nb; k++) {
		int64_t sz = b->start[k + 1] - b->start[k];
		if (k > 0 && sz != b->maxb)
			b->uniform = 0;
		if (sz > b->maxb)
			b->maxb = sz;
	}
	b->nch = 1;
	if (b->nb > 1 && b->maxb > 1)
		b->nch = b->maxb < CS__FLOW_MAX_CHANNELS ? b->maxb : CS__FLOW_MAX_CHANNELS;
	return 0;
}

/* Member at position j of block k in channel c: blocks rotate by c*size/nch. */
static int64_t member(const blocks *b, int64_t c, int64_t k, int64_t j)
{
	int64_t sz = b->start[k + 1] - b->start[k];
	return b->m[b->start[k] + (j + c * sz / b->nch) % sz];
}

/* Edge i of a channel's ring order (i in block k): order[i] to the next
 * member, through the block's entry member when it leaves the domain (PXN);
 * false when a chain (broadcast, reduce) has no such edge. */
static bool ring_edge(const blocks *b, const int64_t *order, bool chain, int64_t k, int64_t i, int64_t *src,
		      int64_t *via, int64_t *dst)
{
	*src = order[i];
	*dst = order[(i + 1) % b->n];
	*via = *src / b->domain != *dst / b->domain ? order[b->start[k]] : -1;
	return !(chain && *dst == b->m[0]);
}

static int ring(cs__flow_plan *p, conn *cn, const blocks *b, cs_coll_op op, double bytes, int64_t *order)
{
	int64_t n = b->n, src, via, dst;
	bool chain = op == CS_COLL_BROADCAST || op == CS_COLL_REDUCE; /* root to all, all to root */
	double vol = chain ? bytes : cs_coll_ring_bytes_on_wire(op, bytes, n);
	int64_t steps = chain ? n - 1 : cs_coll_ring_steps(op, n);
	for (int64_t c = 0; c < b->nch; c++) {
		for (int64_t k = 0, i = 0; k < b->nb; k++)
			for (int64_t j = 0; j < b->start[k + 1] - b->start[k]; j++)
				order[i++] = member(b, c, k, j);
		/* counted in QPs when an edge of the channel is hashed */
		cn->channel = c;
		cn->scale = 1;
		for (int64_t k = 0; k < b->nb && cn->scale == 1; k++)
			for (int64_t i = b->start[k]; i < b->start[k + 1]; i++)
				if (ring_edge(b, order, chain, k, i, &src, &via, &dst) &&
				    hashed(cn, src, via, dst)) {
					cn->scale = cn->r->qps;
					break;
				}
		if (open_flow(p, vol / (double)b->nch / (double)cn->scale))
			return -1;
		int64_t lat = 0;
		for (int64_t k = 0; k < b->nb; k++) {
			for (int64_t i = b->start[k]; i < b->start[k + 1]; i++) {
				if (!ring_edge(b, order, chain, k, i, &src, &via, &dst))
					continue;
				int64_t l = append_edge(p, cn, src, via, dst);
				if (l < 0)
					return -1;
				if (l > lat)
					lat = l;
			}
		}
		if (merge_links(p, cn->t))
			return -1;
		p->f[p->n - 1].latency_ns = steps * lat;
	}
	return 0;
}

static int tree(cs__flow_plan *p, conn *cn, const blocks *b, double bytes)
{
	cs_coll_sched s = { 0 };
	size_t from = p->n;
	int64_t ppn = b->maxb;
	if (cs_coll_tree_schedule(b->nb, ppn, 2, &s))
		return -1;
	for (int64_t c = 0; c < b->nch; c++) {
		cn->channel = c;
		for (size_t i = 0; i < s.n; i++) {
			const cs_coll_xfer *x = &s.x[i];
			int64_t src = member(b, c, x->src / ppn, x->src % ppn);
			int64_t dst = member(b, c, x->dst / ppn, x->dst % ppn);
			double part = bytes * (double)x->len / 2.0 / (double)b->nch;
			if (add(p, cn, src, dst, part)) {
				cs_coll_sched_free(&s);
				return -1;
			}
		}
	}
	cs_coll_sched_free(&s);
	set_latency(p, from, 2 * cs_coll_tree_depth(b->nb, ppn));
	return 0;
}

int cs__flow_plan_build(const cs_topo *t, int64_t domain, const cs__flow_route *route, const int64_t *m,
			int64_t n, cs_coll_op op, double bytes, cs_coll_algo algo, cs__flow_plan *p)
{
	int64_t gpus = cs_topo_gpus(t);
	for (int64_t i = 0; i < n; i++)
		if (m[i] < 0 || m[i] >= gpus)
			return -1;
	if (n < 2 || !(bytes > 0))
		return 0;
	static const cs__flow_route ideal = { 0 };
	conn cn = { .t = t, .r = route ? route : &ideal, .kind = KIND_P2P };
	if (cn.r->qps > 0)
		cn.comm = comm_hash(m, n);
	if (op == CS_COLL_SEND_RECV)
		return add(p, &cn, m[0], m[1], bytes);
	if (op == CS_COLL_GATHER || op == CS_COLL_SCATTER) {
		for (int64_t i = 1; i < n; i++)
			if (add(p, &cn, op == CS_COLL_GATHER ? m[i] : m[0],
				op == CS_COLL_GATHER ? m[0] : m[i], bytes / (double)n))
				return -1;
		return 0;
	}
	if (op == CS_COLL_ALL_TO_ALL) {
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < n; j++)
				if (j != i && add(p, &cn, m[i], m[j], bytes / (double)n))
					return -1;
		return 0;
	}
	blocks b;
	if (blocks_init(&b, m, n, domain > 0 ? domain : 1))
		return -1;
	int rc;
	if (op == CS_COLL_ALL_REDUCE && algo == CS_ALGO_TREE && b.uniform) {
		cn.kind = KIND_TREE;
		rc = tree(p, &cn, &b, bytes);
	} else {
		int64_t *order = malloc((size_t)n * sizeof(*order));
		cn.kind = KIND_RING;
		rc = order == NULL ? -1 : ring(p, &cn, &b, op, bytes, order);
		free(order);
	}
	free(b.start);
	return rc;
}
