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

int64_t cs__run_rank_of_folded(const cs_runner *r, int64_t local)
{
	const cs_mesh *m = r->shared.env.mesh;
	int skip = r->shared.fold_mask;
	int64_t rank = 0;
	if (r->shared.nx) {
		rank = r->shared.xdp[local / r->shared.per_replica] * m->stride[CS_AXIS_DP];
		local %= r->shared.per_replica;
		skip = 1 << CS_AXIS_DP;
	}
	for (int a = 0; a < CS_AXIS_COUNT; a++) {
		if (skip & (1 << a))
			continue;
		rank += (local % m->deg[a]) * m->stride[a];
		local /= m->deg[a];
	}
	return rank;
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

/* Folded runs: which data-parallel replicas a perturbation (a compute
 * factor, a degraded port) makes differ, to be simulated whole. Replicas
 * meet only in collectives, which end at one time for all their members,
 * so the unperturbed replicas stay copies of one another. */
int cs__run_fold_exceptions(cs_runner *r)
{
	const cs_mesh *m = r->shared.env.mesh;
	const cs_link_faults *lf = r->shared.env.links;
	int64_t dp = m->deg[CS_AXIS_DP];
	uint8_t *mark = calloc((size_t)dp, 1);
	if (!mark)
		return -1;
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
	/* hybrid sharding's node-local groups join a few replicas: a late one
	 * holds its neighbours back, so they go whole with it */
	if (r->shared.env.sc->parallel.sharding == CS_SHARD_HYBRID) {
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
	r->shared.rep_dp = -1;
	for (int64_t d = 0; d < dp; d++) {
		r->shared.nx += mark[d] != 0;
		if (!mark[d] && r->shared.rep_dp < 0)
			r->shared.rep_dp = d;
	}
	if (r->shared.rep_dp < 0) { /* every replica differs: nothing to fold */
		free(mark);
		r->shared.nx = 0;
		return 1;
	}
	r->shared.per_replica = m->world / dp;
	if (r->shared.nx == 0) {
		free(mark);
		return 0;
	}
	/* the representative goes whole too: TP peers need not be alike once a
	 * perturbation reaches some of their data-parallel groups and not others */
	mark[r->shared.rep_dp] = 1;
	r->shared.nx++;
	if (!(r->shared.xdp = malloc((size_t)r->shared.nx * sizeof(*r->shared.xdp)))) {
		free(mark);
		return -1;
	}
	for (int64_t d = 0, k = 0; d < dp; d++)
		if (mark[d])
			r->shared.xdp[k++] = d;
	free(mark);
	return 0;
}
