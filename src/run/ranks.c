/*
 * ranks.c - the runner's rank set: which ranks a run simulates, and their
 * local indices. Every rank in a plain run; in a folded run one rank per
 * pipeline stage, or, around perturbations and traced ranks, whole
 * data-parallel replicas (the perturbed or traced ones and one
 * representative), the others being copies.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "run/runner_int.h"

/* The index of data-parallel coordinate d among the replicas simulated
 * whole, or -1. */
static int64_t whole_replica(const cs_runner *r, int64_t d)
{
	int64_t i = cs__lower_bound(r->shared.xdp, r->shared.nx, d);
	return i < r->shared.nx && r->shared.xdp[i] == d ? i : -1;
}

/* Folded locals: one rank per pipeline stage (the representatives) or,
 * with perturbations, whole replicas, each in the mesh's order of its
 * non-DP axes. */
int64_t cs__run_local_of_folded(const cs_runner *r, int64_t rank)
{
	const cs_mesh *m = r->shared.env.mesh;
	int64_t x = r->shared.nx ? whole_replica(r, cs_mesh_coord(m, rank, CS_AXIS_DP)) : 0;
	int skip = r->shared.nx ? 1 << CS_AXIS_DP : r->shared.fold_mask;
	int64_t idx = 0, mult = 1;
	for (int a = 0; a < CS_AXIS_COUNT; a++) {
		if (skip & (1 << a))
			continue;
		idx += cs_mesh_coord(m, rank, (cs_axis)a) * mult;
		mult *= m->deg[a];
	}
	return x * r->shared.per_replica + idx;
}

/* The rank at coordinate 0 on the axes in `skip` whose other coordinates,
 * in the mesh's order, make up `local`. */
static int64_t rank_of_coords(const cs_mesh *m, int skip, int64_t local)
{
	int64_t rank = 0;
	for (int a = 0; a < CS_AXIS_COUNT; a++) {
		if (skip & (1 << a))
			continue;
		rank += (local % m->deg[a]) * m->stride[a];
		local /= m->deg[a];
	}
	return rank;
}

int64_t cs__run_rank_of_folded(const cs_runner *r, int64_t local)
{
	const cs_mesh *m = r->shared.env.mesh;
	if (r->shared.nx)
		return r->shared.xdp[local / r->shared.per_replica] * m->stride[CS_AXIS_DP] +
		       rank_of_coords(m, 1 << CS_AXIS_DP, local % r->shared.per_replica);
	return rank_of_coords(m, r->shared.fold_mask, local);
}

int cs__run_simulated_folded_plain(const cs_runner *r, int64_t rank)
{
	const cs_mesh *m = r->shared.env.mesh;
	for (int a = 0; a < CS_AXIS_COUNT; a++)
		if ((r->shared.fold_mask & (1 << a)) && cs_mesh_coord(m, rank, (cs_axis)a) != 0)
			return 0;
	return 1;
}

int cs__run_simulated_folded(const cs_runner *r, int64_t rank)
{
	const cs_mesh *m = r->shared.env.mesh;
	if (r->shared.nx)
		return whole_replica(r, cs_mesh_coord(m, rank, CS_AXIS_DP)) >= 0;
	return cs__run_simulated_folded_plain(r, rank);
}

/* ---- where a replica sits in the fabric -------------------------------- */

/* The fabric's levels a replica's ranks split over: nodes, scale-up
 * domains, leaves (scalable units) and pods, in GPUs; 0 when one spans
 * the cluster. Rank g is GPU g. */
static void levels(const cs_cluster_spec *c, int64_t out[4])
{
	out[0] = c->gpus_per_node;
	out[1] = c->scale_up_domain > 0 ? c->scale_up_domain : 0;
	out[2] = c->leaf_gpus > 0 ? c->leaf_gpus : 0;
	out[3] = c->pod_gpus > 0 ? c->pod_gpus : 0;
}

/* The k-th value of replica d's placement: for each level, each rank's
 * block counted from the replica's first rank's, and the first rank's
 * place in its node. Two replicas with the same values split over nodes,
 * domains, leaves and pods alike (a torus is alike from every chip), so
 * their groups have the same shapes and their messages cross the same
 * tiers. */
typedef struct placement {
	const cs_mesh *m;
	int64_t lv[4];
	const int64_t *off; /* per rank of replica 0, in local order */
	int64_t per;
} placement;

static uint64_t place_hash(const placement *p, int64_t d, int64_t *first_diff_with, int64_t e)
{
	int64_t bd = d * p->m->stride[CS_AXIS_DP], be = e * p->m->stride[CS_AXIS_DP];
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(bd % p->lv[0]);
	*first_diff_with = bd % p->lv[0] != be % p->lv[0];
	for (int l = 0; l < 4; l++) {
		int64_t P = p->lv[l];
		if (P <= 0)
			continue;
		for (int64_t o = 0; o < p->per; o++) {
			int64_t v = (bd + p->off[o]) / P - bd / P;
			h = (h ^ (uint64_t)v) * 0x100000001b3ull;
			if (e >= 0 && !*first_diff_with && v != (be + p->off[o]) / P - be / P)
				*first_diff_with = 1;
		}
	}
	return h;
}

typedef struct hashed {
	uint64_t h;
	int64_t d;
} hashed;

static int by_hash(const void *a, const void *b)
{
	const hashed *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return (x->d > y->d) - (x->d < y->d);
}

/* Each replica's placement class into cls[d]: the first replica placed
 * alike. 0, or -1 when out of memory. */
static int placement_classes(const cs_runner *r, int64_t *cls)
{
	const cs_mesh *m = r->shared.env.mesh;
	int64_t dp = m->deg[CS_AXIS_DP], per = m->world / dp;
	placement p = { .m = m, .per = per };
	levels(&r->shared.env.sc->cluster, p.lv);
	if (cs_topo_is_torus(r->shared.env.topo) || dp == 1) {
		for (int64_t d = 0; d < dp; d++)
			cls[d] = 0;
		return 0;
	}
	int64_t *off = malloc((size_t)per * sizeof *off);
	hashed *hs = malloc((size_t)dp * sizeof *hs);
	if (!off || !hs) {
		free(off);
		free(hs);
		return -1;
	}
	for (int64_t o = 0; o < per; o++) /* replica 0's ranks */
		off[o] = rank_of_coords(m, 1 << CS_AXIS_DP, o);
	p.off = off;
	int64_t unused;
	for (int64_t d = 0; d < dp; d++)
		hs[d] = (hashed){ place_hash(&p, d, &unused, -1), d };
	qsort(hs, (size_t)dp, sizeof *hs, by_hash);
	for (int64_t i = 0, first = 0; i < dp; i++) {
		if (i == 0 || hs[i].h != hs[i - 1].h)
			first = i;
		int64_t d = hs[i].d, c = hs[first].d, diff = 0;
		if (d != c)
			place_hash(&p, d, &diff, c);
		cls[d] = diff ? d : c; /* a hash shared by chance: a class of its own */
	}
	free(off);
	free(hs);
	return 0;
}

/* Folded runs: which data-parallel replicas differ, to be simulated whole,
 * and which replica each other one copies. Replicas meet only in
 * collectives, which end at one time for all their members, so replicas
 * alike stay copies of one another. A perturbation (a compute factor, a
 * degraded port) makes its replica differ; so does a traced rank (its
 * spans are wanted); and replicas placed otherwise in the fabric (across
 * a pod's edge, say) have a representative of their own. */
int cs__run_fold_exceptions(cs_runner *r)
{
	const cs_mesh *m = r->shared.env.mesh;
	const cs_link_faults *lf = r->shared.env.links;
	int64_t dp = m->deg[CS_AXIS_DP];
	uint8_t *mark = calloc((size_t)dp, 1);
	int64_t *cls = malloc((size_t)dp * sizeof *cls), *rep = malloc((size_t)dp * sizeof *rep);
	if (!mark || !cls || !rep || placement_classes(r, cls)) {
		free(mark);
		free(cls);
		free(rep);
		return -1;
	}
	bool hybrid = r->shared.env.sc->parallel.sharding == CS_SHARD_HYBRID;
	int64_t nclass = 0;
	for (int64_t d = 0; d < dp; d++)
		nclass += cls[d] == d;
	/* the factor most ranks share (a fleet's diurnal clock slows them all) */
	const float *cf = r->shared.env.compute_factor;
	float common = 1.0f;
	if (cf) {
		int64_t same = 0;
		for (int64_t g = 0; g < m->world; g++)
			same += cf[g] == cf[0];
		if (2 * same >= m->world)
			common = cf[0];
	}
	for (int64_t g = 0; g < m->world; g++) {
		bool odd = cf && cf[g] != common;
		if (lf)
			odd = odd || (lf->nic_keep && lf->nic_keep[g] < 1.0f) ||
			      (lf->nvl_keep && lf->nvl_keep[g] < 1.0f) ||
			      (lf->nic_lat && lf->nic_lat[g] > 0) || (lf->nvl_lat && lf->nvl_lat[g] > 0);
		if (odd)
			mark[cs_mesh_coord(m, g, CS_AXIS_DP)] = 1;
	}
	/* hybrid sharding's node-local groups join a few replicas, whose
	 * shapes a replica placed otherwise changes: such replicas go whole
	 * as perturbed ones do, the first class keeping its copies */
	for (int64_t d = 0; hybrid && nclass > 1 && d < dp; d++)
		if (cls[d] != cls[0])
			mark[d] = 1;
	/* hybrid sharding's node-local groups join a few replicas: a late one
	 * holds its neighbours back, so they go whole with it */
	if (hybrid) {
		for (int64_t d = 0; d < dp; d++) {
			if (mark[d] != 1)
				continue;
			cs_group grp =
				cs_mesh_group(m, CS_GROUP_DP_INTRA, d * m->stride[CS_AXIS_DP], r->shared.gpn);
			for (int64_t i = 0; i < cs_group_size(&grp); i++) {
				int64_t e = cs_mesh_coord(m, cs_group_member(&grp, i), CS_AXIS_DP);
				if (!mark[e])
					mark[e] = 2;
			}
		}
	}
	/* a traced rank that one rank per stage would fold away is simulated
	 * in its replica, whole (the replica is a copy: it holds no one back) */
	const uint8_t *traced = r->shared.env.traced;
	for (int64_t g = 0; traced && g < m->world; g++) {
		int64_t d = cs_mesh_coord(m, g, CS_AXIS_DP);
		if (traced[g] && !mark[d] && !cs__run_simulated_folded_plain(r, g))
			mark[d] = 2;
	}
	/* each class's representative: its first unmarked replica */
	int64_t nmarked = 0, copies = 0;
	for (int64_t d = 0; d < dp; d++)
		rep[d] = -1;
	for (int64_t d = 0; d < dp; d++) {
		nmarked += mark[d] != 0;
		if (mark[d])
			continue;
		if (rep[cls[d]] < 0)
			rep[cls[d]] = d;
		else
			copies++;
	}
	r->shared.per_replica = m->world / dp;
	/* 0 with every replica alike: one rank per stage; 1 with no replica a
	 * copy: nothing to fold */
	int plain = nmarked == 0 && nclass == 1, rc = !plain && copies == 0;
	if (plain || rc) {
		free(mark);
		free(cls);
		free(rep);
		r->shared.nx = 0;
		return rc;
	}
	/* the representatives go whole too: TP peers need not be alike once a
	 * perturbation reaches some of their data-parallel groups and not others */
	for (int64_t d = 0; d < dp; d++)
		if (!mark[d] && rep[cls[d]] == d)
			mark[d] = 1;
	for (int64_t d = 0; d < dp; d++)
		r->shared.nx += mark[d] != 0;
	r->shared.xdp = malloc((size_t)r->shared.nx * sizeof(*r->shared.xdp));
	r->shared.rep_of = malloc((size_t)dp * sizeof(*r->shared.rep_of));
	if (!r->shared.xdp || !r->shared.rep_of) {
		free(mark);
		free(cls);
		free(rep);
		return -1;
	}
	for (int64_t d = 0, k = 0; d < dp; d++) {
		if (mark[d])
			r->shared.xdp[k++] = d;
		r->shared.rep_of[d] = mark[d] ? d : rep[cls[d]];
	}
	free(mark);
	free(cls);
	free(rep);
	return 0;
}
