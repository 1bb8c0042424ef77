/*
 * mesh.c - rank coordinates and process groups, derived on demand.
 */
#include "program/mesh.h"

#include <string.h>

void cs_mesh_init(cs_mesh *m, const cs_parallel_spec *p)
{
	memset(m, 0, sizeof(*m));
	m->deg[CS_AXIS_TP] = p->tp;
	m->deg[CS_AXIS_CP] = p->cp;
	m->deg[CS_AXIS_EP] = cs_parallel_ep_dp(p);
	m->deg[CS_AXIS_PP] = p->pp;
	m->deg[CS_AXIS_DP] = p->dp / m->deg[CS_AXIS_EP];
	m->etp = cs_parallel_folded(p) ? p->etp : 0;
	int64_t s = 1;
	for (int i = 0; i < CS_AXIS_COUNT; i++) {
		cs_axis a = (cs_axis)p->order[i];
		m->stride[a] = s;
		s *= m->deg[a];
	}
	m->world = s;
}

/* The axes (innermost first as listed) a group kind spans. */
static int group_axes(cs_group_kind kind, cs_axis axes[4])
{
	switch (kind) {
	case CS_GROUP_TP:
	case CS_GROUP_ETP: axes[0] = CS_AXIS_TP; return 1;
	case CS_GROUP_CP: axes[0] = CS_AXIS_CP; return 1;
	case CS_GROUP_EP: axes[0] = CS_AXIS_EP; return 1;
	case CS_GROUP_PP: axes[0] = CS_AXIS_PP; return 1;
	case CS_GROUP_DP:
	case CS_GROUP_DP_INTRA:
	case CS_GROUP_DP_INTER:
		axes[0] = CS_AXIS_EP;
		axes[1] = CS_AXIS_DP;
		axes[2] = CS_AXIS_CP;
		return 3;
	case CS_GROUP_EDP:
		axes[0] = CS_AXIS_DP;
		axes[1] = CS_AXIS_CP;
		return 2; /* folded: the dp axis alone (fold_group) */
	case CS_GROUP_MP:
		axes[0] = CS_AXIS_TP;
		axes[1] = CS_AXIS_PP;
		return 2;
	case CS_GROUP_STAGE:
		axes[0] = CS_AXIS_TP;
		axes[1] = CS_AXIS_CP;
		axes[2] = CS_AXIS_EP;
		axes[3] = CS_AXIS_DP;
		return 4;
	case CS_GROUP_WORLD: /* every axis: one group of consecutive ranks (full_group) */
	case CS_GROUP_KINDS: break;
	}
	return 0;
}

/* Sort the group's axes by stride so member 0..n-1 ascend in rank. Past
 * three axes (the stage group), an axis whose stride continues the run
 * before it joins that run: the axes outside the group are then only pp,
 * so at most two runs remain. */
static cs_group full_group(const cs_mesh *m, cs_group_kind kind, int64_t rank)
{
	cs_axis axes[4];
	int na = group_axes(kind, axes);
	cs_group g = { .base = rank, .n = { 1, 1, 1 }, .stride = { 0, 0, 0 } };
	if (kind == CS_GROUP_WORLD) {
		g.base = 0;
		if (m->world > 1) {
			g.n[0] = m->world;
			g.stride[0] = 1;
		}
		return g;
	}
	int64_t st[4], n[4];
	int k = 0;
	for (int i = 0; i < na; i++) {
		g.base -= cs_mesh_coord(m, rank, axes[i]) * m->stride[axes[i]];
		if (m->deg[axes[i]] <= 1)
			continue; /* axes of degree 1 drop out */
		int j = k++;
		while (j > 0 && st[j - 1] > m->stride[axes[i]]) { /* insertion sort by stride */
			st[j] = st[j - 1];
			n[j] = n[j - 1];
			j--;
		}
		st[j] = m->stride[axes[i]];
		n[j] = m->deg[axes[i]];
	}
	int runs = 0;
	for (int i = 0; i < k; i++) {
		if (k > 3 && runs > 0 && g.stride[runs - 1] * g.n[runs - 1] == st[i]) {
			g.n[runs - 1] *= n[i];
			continue;
		}
		g.stride[runs] = st[i];
		g.n[runs++] = n[i];
	}
	return g;
}

/* Folded experts: the tp x cp x ep axes, innermost (validated), make a
 * block of etp x ep ranks, expert TP its innermost etp and EP every
 * etp-th; expert DP is the dp axis. Returns 0 for groups that do not
 * fold. */
static int fold_group(const cs_mesh *m, cs_group_kind kind, int64_t rank, cs_group *g)
{
	if (m->etp <= 0 || (kind != CS_GROUP_EP && kind != CS_GROUP_ETP && kind != CS_GROUP_EDP))
		return 0;
	int64_t block = m->deg[CS_AXIS_TP] * m->deg[CS_AXIS_CP] * m->deg[CS_AXIS_EP];
	int64_t f = rank % block, etp = m->etp;
	*g = (cs_group){ .base = rank, .n = { 1, 1, 1 }, .stride = { 0, 0, 0 } };
	if (kind == CS_GROUP_EDP) {
		g->base = rank - cs_mesh_coord(m, rank, CS_AXIS_DP) * m->stride[CS_AXIS_DP];
		if (m->deg[CS_AXIS_DP] > 1) {
			g->n[0] = m->deg[CS_AXIS_DP];
			g->stride[0] = m->stride[CS_AXIS_DP];
		}
	} else if (kind == CS_GROUP_ETP) {
		g->base = rank - f % etp;
		if (etp > 1) {
			g->n[0] = etp;
			g->stride[0] = 1;
		}
	} else {
		g->base = rank - f + f % etp;
		if (block / etp > 1) {
			g->n[0] = block / etp;
			g->stride[0] = etp;
		}
	}
	return 1;
}

/* Hybrid sharding splits the DP group's innermost axis at the node boundary. */
static int64_t intra_size(const cs_group *g, int64_t gpus_per_node)
{
	if (g->n[0] <= 1 || g->stride[0] >= gpus_per_node)
		return 1;
	int64_t k = gpus_per_node / g->stride[0];
	while (k > 1 && g->n[0] % k != 0)
		k--;
	return k < g->n[0] ? k : g->n[0];
}

cs_group cs_mesh_group(const cs_mesh *m, cs_group_kind kind, int64_t rank, int64_t gpus_per_node)
{
	cs_group g;
	if (fold_group(m, kind, rank, &g))
		return g;
	g = full_group(m, kind, rank);
	if (kind != CS_GROUP_DP_INTRA && kind != CS_GROUP_DP_INTER)
		return g;
	int64_t k = intra_size(&g, gpus_per_node);
	int64_t i0 = (rank - g.base) / (g.stride[0] ? g.stride[0] : 1) % g.n[0];
	if (kind == CS_GROUP_DP_INTRA) {
		cs_group h = { .base = rank - (i0 % k) * g.stride[0],
			       .n = { k, 1, 1 },
			       .stride = { g.stride[0], 0, 0 } };
		return h;
	}
	/* inter: same position inside the node, every node of the DP group */
	cs_group h = { .base = g.base + (i0 % k) * g.stride[0],
		       .n = { g.n[0] / k, g.n[1], g.n[2] },
		       .stride = { g.stride[0] * k, g.stride[1], g.stride[2] } };
	return h;
}

int64_t cs_mesh_group_count(const cs_mesh *m, cs_group_kind kind, int64_t gpus_per_node)
{
	cs_group g = cs_mesh_group(m, kind, 0, gpus_per_node);
	return m->world / cs_group_size(&g);
}

int64_t cs_mesh_group_index(const cs_mesh *m, cs_group_kind kind, int64_t rank, int64_t gpus_per_node)
{
	cs_axis axes[4];
	int na = group_axes(kind, axes);
	int64_t idx = 0, mult = 1;
	if (kind == CS_GROUP_WORLD)
		return 0;
	if (m->etp > 0 && (kind == CS_GROUP_EP || kind == CS_GROUP_ETP)) {
		int64_t block = m->deg[CS_AXIS_TP] * m->deg[CS_AXIS_CP] * m->deg[CS_AXIS_EP];
		int64_t f = rank % block, outer = rank / block;
		return kind == CS_GROUP_EP ? f % m->etp + m->etp * outer
					   : f / m->etp + block / m->etp * outer;
	}
	if (m->etp > 0 && kind == CS_GROUP_EDP)
		na = 1; /* the dp axis alone */
	for (int a = 0; a < CS_AXIS_COUNT; a++) {
		int in_group = 0;
		for (int i = 0; i < na; i++)
			in_group |= axes[i] == (cs_axis)a;
		if (in_group)
			continue;
		idx += cs_mesh_coord(m, rank, (cs_axis)a) * mult;
		mult *= m->deg[a];
	}
	if (kind == CS_GROUP_DP_INTRA || kind == CS_GROUP_DP_INTER) {
		cs_group g = full_group(m, CS_GROUP_DP, rank);
		int64_t k = intra_size(&g, gpus_per_node);
		int64_t i0 = (rank - g.base) / (g.stride[0] ? g.stride[0] : 1) % g.n[0];
		int64_t rel = rank - g.base - i0 * (g.stride[0] ? g.stride[0] : 1);
		int64_t i1 = g.n[1] > 1 ? rel / g.stride[1] % g.n[1] : 0;
		int64_t i2 = g.n[2] > 1 ? rel / g.stride[2] % g.n[2] : 0;
		/* intra groups differ along every DP axis but the node-local part */
		int64_t sub = kind == CS_GROUP_DP_INTRA ? i0 / k + g.n[0] / k * (i1 + g.n[1] * i2) : i0 % k;
		int64_t nsub = kind == CS_GROUP_DP_INTRA ? g.n[0] / k * g.n[1] * g.n[2] : k;
		idx = idx * nsub + sub;
	}
	return idx;
}

const char *cs_group_kind_name(cs_group_kind kind)
{
	static const char *const names[CS_GROUP_KINDS] = { "tp",    "cp",       "ep",       "pp",
							   "dp",    "dp-intra", "dp-inter", "mp",
							   "world", "stage",    "edp",      "etp" };
	return (unsigned)kind < CS_GROUP_KINDS ? names[kind] : "?";
}

int cs_mesh_tp_crosses_domain(const cs_mesh *m, int64_t domain)
{
	if (m->deg[CS_AXIS_TP] <= 1)
		return 0;
	for (int64_t r = 0; r < m->world; r += m->stride[CS_AXIS_TP] * m->deg[CS_AXIS_TP]) {
		cs_group g = cs_mesh_group(m, CS_GROUP_TP, r, domain);
		int64_t last = cs_group_member(&g, cs_group_size(&g) - 1);
		if (g.base / domain != last / domain)
			return 1;
		if (m->stride[CS_AXIS_TP] > 1)
			break; /* strided groups repeat the same pattern */
	}
	return 0;
}
