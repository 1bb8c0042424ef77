/*
 * coll.c - the tuner: picks the (algorithm, protocol) of least predicted
 * time, honours forced choices, and caches the options per (group shape,
 * op, log2 size class) in an open-addressing hash table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

#include "core/sim.h"
#include "coll/coll_model.h"
#include "coll/schedule.h"

typedef struct entry {
	cs_group_shape g;
	int op, cls, used, ncand;
	cs__coll_cand cand[CS__COLL_MAX_CANDS];
} entry;

struct cs_coll {
	cs_cluster_spec cluster;
	cs_coll_spec spec;
	entry *tab;
	size_t cap, n;
};

cs_coll *cs_coll_new(const cs_cluster_spec *cluster, const cs_coll_spec *spec)
{
	cs_coll *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->cluster = *cluster;
	if (spec)
		c->spec = *spec;
	c->cap = 64;
	c->tab = calloc(c->cap, sizeof(*c->tab));
	if (c->tab == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

cs_coll *cs_coll_clone(const cs_coll *c) { return cs_coll_new(&c->cluster, &c->spec); }

void cs_coll_free(cs_coll *c)
{
	if (c == NULL)
		return;
	free(c->tab);
	free(c);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t key_hash(const cs_group_shape *g, int op, int cls)
{
	uint64_t h = 1469598103934665603ULL;
	h = mix(h, (uint64_t)g->nranks);
	h = mix(h, (uint64_t)g->nnodes);
	h = mix(h, (uint64_t)g->ranks_per_node);
	h = mix(h, (uint64_t)g->ndomains);
	h = mix(h, (uint64_t)g->nleaves);
	h = mix(h, (uint64_t)g->npods);
	h = mix(h, (uint64_t)g->tier);
	h = mix(h, (uint64_t)(int64_t)g->torus.dims);
	for (int d = 0; d < CS_TORUS_MAX_DIMS; d++)
		h = mix(h,
			(uint64_t)g->torus.ext[d] << 33 ^ (uint64_t)g->torus.hop[d] << 1 ^ g->torus.ring[d]);
	h = mix(h, (uint64_t)op);
	h = mix(h, (uint64_t)cls);
	return h;
}

static int same(const entry *e, const cs_group_shape *g, int op, int cls)
{
	return e->op == op && e->cls == cls && e->g.nranks == g->nranks && e->g.nnodes == g->nnodes &&
	       e->g.ranks_per_node == g->ranks_per_node && e->g.ndomains == g->ndomains &&
	       e->g.nleaves == g->nleaves && e->g.npods == g->npods && e->g.tier == g->tier &&
	       cs__torus_same(&e->g.torus, &g->torus);
}

static int grow(cs_coll *c)
{
	size_t cap = c->cap * 2;
	entry *tab = calloc(cap, sizeof(*tab));
	if (tab == NULL)
		return -1;
	for (size_t i = 0; i < c->cap; i++) {
		entry *e = &c->tab[i];
		if (!e->used)
			continue;
		size_t j = key_hash(&e->g, e->op, e->cls) & (cap - 1);
		while (tab[j].used)
			j = (j + 1) & (cap - 1);
		tab[j] = *e;
	}
	free(c->tab);
	c->tab = tab;
	c->cap = cap;
	return 0;
}

/* The cached options; on out-of-memory a scratch entry (uncached). */
static const entry *lookup(cs_coll *c, cs_coll_op op, const cs_group_shape *g, int cls, entry *scratch)
{
	size_t j = key_hash(g, (int)op, cls) & (c->cap - 1);
	while (c->tab[j].used) {
		if (same(&c->tab[j], g, (int)op, cls))
			return &c->tab[j];
		j = (j + 1) & (c->cap - 1);
	}
	entry *e = scratch;
	if (2 * (c->n + 1) <= c->cap || grow(c) == 0) {
		j = key_hash(g, (int)op, cls) & (c->cap - 1);
		while (c->tab[j].used)
			j = (j + 1) & (c->cap - 1);
		e = &c->tab[j];
		c->n++;
	}
	memset(e, 0, sizeof(*e));
	e->g = *g;
	e->op = (int)op;
	e->cls = cls;
	e->used = 1;
	e->ncand = cs__coll_candidates(&c->cluster, &c->spec, op, g, cls, e->cand);
	return e;
}

static double cand_time(const cs__coll_cand *k, double bytes) { return k->lat_ns + bytes / k->algbw; }

/* Least-time option among those matching algo/proto (AUTO matches all). */
static const cs__coll_cand *best(const entry *e, double bytes, cs_coll_algo a, cs_coll_proto p)
{
	const cs__coll_cand *b = NULL;
	for (int i = 0; i < e->ncand; i++) {
		const cs__coll_cand *k = &e->cand[i];
		if ((a != CS_ALGO_AUTO && k->algo != a) || (p != CS_PROTO_AUTO && k->proto != p))
			continue;
		if (b == NULL || cand_time(k, bytes) < cand_time(b, bytes))
			b = k;
	}
	return b;
}

static int size_class(double bytes)
{
	if (bytes < 2)
		return 0;
	int cls = ilogb(bytes);
	return cls > 62 ? 62 : cls;
}

static int64_t fill(cs_coll_op op, const cs_group_shape *g, double bytes, double t_ns, cs_coll_algo a,
		    cs_coll_proto p, int channels, double lat_ns, cs_coll_choice *choice)
{
	int64_t t = cs_time_of(t_ns); /* a link of next to no bandwidth: the horizon */
	if (choice) {
		choice->algo = a;
		choice->proto = p;
		choice->channels = channels;
		choice->latency_ns = cs_time_of(lat_ns);
		choice->bus_bw = t > 0 ? bytes / (t * 1e-9) * cs_coll_bus_factor(op, g->nranks) : 0;
	}
	return t;
}

/* Intra-domain reduce-scatter, all-reduce across domains (one per local
 * rank, in parallel on separate NICs), intra-domain all-gather. */
static int64_t hierarchical(cs_coll *c, const cs_group_shape *g, double bytes, cs_coll_choice *choice)
{
	int64_t ppd = (g->nranks + g->ndomains - 1) / g->ndomains;
	cs_group_shape intra = { .nranks = ppd,
				 .nnodes = 1,
				 .ranks_per_node = ppd,
				 .ndomains = 1,
				 .nleaves = 1,
				 .npods = 1,
				 .tier = CS_TIER_NVLINK };
	if (g->ndomains == 1 || ppd == 1 || g->torus.dims != 0)
		return -1;
	cs_group_shape inter = { .nranks = g->ndomains,
				 .nnodes = g->ndomains,
				 .ranks_per_node = 1,
				 .ndomains = g->ndomains,
				 .nleaves = g->nleaves / (ppd < g->nleaves ? ppd : 1),
				 .npods = g->npods,
				 .tier = g->tier };
	intra.nnodes = g->nnodes / g->ndomains > 0 ? g->nnodes / g->ndomains : 1;
	intra.ranks_per_node = g->ranks_per_node;
	cs_coll_spec saved = c->spec;
	c->spec.algorithm = CS_ALGO_AUTO;
	cs_coll_choice ch;
	int64_t t = cs_coll_time(c, CS_COLL_REDUCE_SCATTER, &intra, bytes, &ch);
	int64_t lat = ch.latency_ns;
	t += cs_coll_time(c, CS_COLL_ALL_REDUCE, &inter, bytes / (double)ppd, &ch);
	lat += ch.latency_ns;
	int channels = ch.channels;
	t += cs_coll_time(c, CS_COLL_ALL_GATHER, &intra, bytes, &ch);
	lat += ch.latency_ns;
	c->spec = saved;
	return fill(CS_COLL_ALL_REDUCE, g, bytes, (double)t, CS_ALGO_HIER, ch.proto, channels, (double)lat,
		    choice);
}

int64_t cs_coll_time(cs_coll *c, cs_coll_op op, const cs_group_shape *g, double bytes, cs_coll_choice *choice)
{
	if (choice)
		memset(choice, 0, sizeof(*choice));
	if (g == NULL || g->nranks < 2 || !(bytes > 0) || op < 0 || op >= CS_COLL_OPS)
		return 0;
	cs_coll_algo fa = c->spec.algorithm;
	cs_coll_proto fp = c->spec.protocol;
	if (fa == CS_ALGO_HIER) {
		if (op == CS_COLL_ALL_REDUCE) {
			int64_t t = hierarchical(c, g, bytes, choice);
			if (t >= 0)
				return t;
		}
		fa = CS_ALGO_AUTO;
	}
	entry scratch;
	const entry *e = lookup(c, op, g, size_class(bytes), &scratch);
	/* a forced pair that does not apply falls back: keep what applies */
	const cs__coll_cand *k = best(e, bytes, fa, fp);
	if (k == NULL)
		k = best(e, bytes, fa, CS_PROTO_AUTO);
	if (k == NULL)
		k = best(e, bytes, CS_ALGO_AUTO, fp);
	if (k == NULL)
		k = best(e, bytes, CS_ALGO_AUTO, CS_PROTO_AUTO);
	if (k == NULL)
		return 0;
	return fill(op, g, bytes, cand_time(k, bytes), k->algo, k->proto, k->channels, k->lat_ns, choice);
}

const char *cs_coll_op_name(cs_coll_op op)
{
	static const char *const names[CS_COLL_OPS] = {
		"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast",
		"send_recv",  "reduce",         "gather",     "scatter",
	};
	return op >= 0 && op < CS_COLL_OPS ? names[op] : "unknown";
}

const char *cs_coll_algo_unavailable(const cs_cluster_spec *c, cs_coll_algo a)
{
	if ((a == CS_ALGO_NVLS || a == CS_ALGO_NVLS_TREE) && c->topology == CS_TOPO_FAT_TREE && !c->gpu.nvls)
		return "the GPU has no NVLink SHARP";
	if (a == CS_ALGO_TORUS && c->topology != CS_TOPO_TORUS)
		return "the cluster is no torus";
	return NULL;
}

bool cs_coll_algo_applies(cs_coll_algo a, cs_coll_op op)
{
	switch (a) {
	case CS_ALGO_AUTO:
	case CS_ALGO_RING: return true; /* (point-to-point ones are pairwise, ring's place) */
	case CS_ALGO_TORUS:
		return op == CS_COLL_ALL_REDUCE || op == CS_COLL_REDUCE_SCATTER || op == CS_COLL_ALL_GATHER;
	default: return op == CS_COLL_ALL_REDUCE; /* tree, NVLS, NVLS tree, hierarchical */
	}
}

const char *cs_coll_choice_name(cs_coll_op op, const cs_coll_choice *choice)
{
	if (op == CS_COLL_ALL_TO_ALL || op == CS_COLL_GATHER || op == CS_COLL_SCATTER)
		return "pairwise";
	if (op == CS_COLL_SEND_RECV)
		return "p2p";
	return cs_coll_algo_name(choice->algo);
}

double cs_coll_bus_factor(cs_coll_op op, int64_t n)
{
	if (n < 2)
		return op == CS_COLL_BROADCAST || op == CS_COLL_SEND_RECV || op == CS_COLL_REDUCE ? 1 : 0;
	switch (op) {
	case CS_COLL_ALL_REDUCE: return 2.0 * (double)(n - 1) / (double)n;
	case CS_COLL_REDUCE_SCATTER:
	case CS_COLL_ALL_GATHER:
	case CS_COLL_ALL_TO_ALL:
	case CS_COLL_GATHER:
	case CS_COLL_SCATTER: return (double)(n - 1) / (double)n;
	default: return 1;
	}
}

double cs_coll_ring_alpha_beta_s(cs_coll_op op, double bytes, int64_t n, double alpha_s, double beta_Bps)
{
	return (double)cs_coll_ring_steps(op, n) * alpha_s +
	       cs_coll_ring_bytes_on_wire(op, bytes, n) / beta_Bps;
}
