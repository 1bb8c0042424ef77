/*
 * runner_coll.c - the runner's work per collective: the comm tables, the
 * rendezvous of a group's members, the group's shape on the topology, the
 * tuner's answers kept per group, degraded links, and a pipeline message's
 * time. On the flow network a collective continues in runner_flow.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/schedule.h"
#include "run/runner_int.h"

/* ---- groups ----------------------------------------------------------- */

static int table_alloc(cs_runner *r, cs__comm_table *t, int kind)
{
	t->ngroups = cs_mesh_group_count(r->shared.env.mesh, (cs_group_kind)kind, r->shared.gpn);
	size_t n = (size_t)t->ngroups;
	t->slots = calloc(n, sizeof(cs__slot));
	t->shapes = calloc(n, sizeof(cs_group_shape));
	t->shape_ok = calloc(n, 1);
	if (!t->slots || !t->shapes || !t->shape_ok)
		return -1;
	if (r->shared.paths) { /* two generations per instance */
		t->paths = calloc(2 * n, sizeof(cs_path));
		t->xfers = calloc(2 * n, sizeof(cs_time));
		if (!t->paths || !t->xfers)
			return -1;
	}
	if (r->shared.env.links && !r->net) {
		t->keep = malloc(n * sizeof(float));
		t->lat = malloc(n * sizeof(cs_time));
		if (!t->keep || !t->lat)
			return -1;
		for (size_t i = 0; i < n; i++)
			t->keep[i] = -1;
	}
	return 0;
}

/* Allocated up front, not at first use, so that the parts of a
 * partitioned run, copies of this runner, share them. */
int cs__run_tables(cs_runner *r)
{
	int64_t ntmpl = r->shared.env.tmpl_of ? r->shared.env.ntmpl : r->shared.env.mesh->deg[CS_AXIS_PP];
	for (int64_t p = 0; p < ntmpl; p++)
		for (int s = 0; s < CS_STREAMS; s++)
			for (int32_t i = 0; i < r->shared.env.progs[p].nops[s]; i++) {
				const cs_op *op = &r->shared.env.progs[p].ops[s][i];
				cs__comm_table *t = &r->shared.comm[op->group][s];
				if (op->kind == CS_OP_COLL && !t->slots && table_alloc(r, t, op->group))
					return -1;
			}
	return 0;
}

/* Shape of a group of up to three regular axes: the innermost progression
 * from the topology, repeated along the outer axes. Outer axes that stay
 * inside one node add members per node; otherwise they add nodes. */
static cs_group_shape group_shape(const cs_runner *r, const cs_group *g)
{
	if (cs_topo_is_torus(r->shared.env.topo))
		return cs_topo_torus_group(r->shared.env.topo, g->base, g->n, g->stride);
	cs_group_shape s =
		cs_topo_group(r->shared.env.topo, g->base, g->stride[0] ? g->stride[0] : 1, g->n[0]);
	int64_t outer = g->n[1] * g->n[2];
	if (outer == 1)
		return s;
	cs_group_shape far =
		cs_topo_group(r->shared.env.topo, g->base, g->stride[1] ? g->stride[1] : 1, g->n[1]);
	if (g->n[2] > 1) {
		cs_group_shape far2 = cs_topo_group(r->shared.env.topo, g->base, g->stride[2], g->n[2]);
		far.nnodes *= far2.nnodes;
		far.ndomains *= far2.ndomains;
		far.ranks_per_node *= far2.ranks_per_node;
		far.nleaves *= far2.nleaves;
		far.npods *= far2.npods;
		if (far2.tier > far.tier)
			far.tier = far2.tier;
	}
	s.nranks *= outer;
	s.nnodes *= far.nnodes;
	s.ranks_per_node *= far.ranks_per_node;
	s.ndomains *= far.ndomains;
	s.nleaves *= far.nleaves;
	s.npods *= far.npods;
	int64_t pods = r->shared.env.sc->cluster.pod_gpus > 0
			       ? (cs_scenario_gpus(r->shared.env.sc) + r->shared.env.sc->cluster.pod_gpus -
				  1) / r->shared.env.sc->cluster.pod_gpus
			       : 1;
	if (s.npods > pods)
		s.npods = pods;
	if (far.tier > s.tier)
		s.tier = far.tier;
	return s;
}

const cs_group_shape *cs__run_shape_of(cs_runner *r, cs__comm_table *t, int64_t gi, int kind, int64_t local)
{
	cs_group g = cs_mesh_group(r->shared.env.mesh, (cs_group_kind)kind, cs__run_rank_of(r, local),
				   r->shared.gpn);
	t->shapes[gi] = group_shape(r, &g);
	t->shape_ok[gi] = 1;
	return &t->shapes[gi];
}

/* What degraded links leave of a group's collective: the least bandwidth
 * kept on a link kind the group uses, and the largest latency added. */
static void link_fault(const cs_runner *r, const cs_group *g, const cs_group_shape *sh, float *keep,
		       cs_time *lat)
{
	const cs_link_faults *lf = r->shared.env.links;
	double k = 1.0;
	cs_time l = 0;
	int inter = sh->nnodes > 1, intra = sh->ranks_per_node > 1;
	if (lf->nic_keep) {
		int64_t n = cs_group_size(g);
		for (int64_t i = 0; i < n; i++) {
			int64_t m = cs_group_member(g, i);
			if (inter) {
				k = fmin(k, lf->nic_keep[m]);
				l = lf->nic_lat[m] > l ? lf->nic_lat[m] : l;
			}
			if (intra) {
				k = fmin(k, lf->nvl_keep[m]);
				l = lf->nvl_lat[m] > l ? lf->nvl_lat[m] : l;
			}
		}
	}
	/* tiers: NVLink for members inside a domain, and every tier up to the
	 * highest the group crosses (as the flow model) */
	for (int t = 0; t < CS_TIERS; t++)
		if (t == CS_TIER_NVLINK ? intra : (int)sh->tier >= t) {
			k = fmin(k, lf->tier_keep[t]);
			l += lf->tier_lat[t];
		}
	*keep = (float)k;
	*lat = l;
}

static cs_time degrade(cs_time d, const cs_coll_choice *ch, float keep, cs_time lat)
{
	cs_time fixed = ch->latency_ns < d ? ch->latency_ns : d;
	return cs_time_add(cs_time_add(fixed, cs_time_of((double)(d - fixed) / (double)keep)), lat);
}

cs__tuned *cs__run_retune(cs_runner *r, cs__tunes *tc, const cs_group_shape *sh, const cs_op *op)
{
	cs__tuned *tu = &tc->e[tc->next];
	tc->next ^= 1;
	if (op->ub) {
		/* a userbuffers kernel: the builder timed it; it holds the SMs
		 * it was launched on (none beside a GEMM given a margin) */
		tu->d = op->ns;
		tu->choice = (cs_coll_choice){ .algo = CS_ALGO_RING,
					       .proto = CS_PROTO_SIMPLE,
					       .channels = op->sms };
	} else {
		tu->d = cs_coll_time(r->coll, (cs_coll_op)op->coll, sh, op->bytes, &tu->choice);
	}
	tu->coll = op->coll + 1;
	tu->bytes = op->bytes;
	tu->ub = op->ub ? (uint8_t)(op->sms + 1) : 0;
	tu->plan = 0;
	return tu;
}

void cs__run_arrive(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op)
{
	cs__comm_table *t = &r->shared.comm[op->group][s];
	int64_t gi = rs->gidx[op->group];
	if (gi < 0) {
		gi = cs_mesh_group_index(r->shared.env.mesh, (cs_group_kind)op->group,
					 cs__run_rank_of(r, local), r->shared.gpn);
		rs->gidx[op->group] = (int32_t)gi;
	}
	if (r->shared.cross[op->group] && r->shared.cross[op->group][gi]) {
		cs__run_cross_arrive(r, local, rs, s, op, t, gi);
		return;
	}
	cs__slot *sl = &t->slots[gi];
	if (sl->expected == 0) {
		cs_group g = cs_mesh_group(r->shared.env.mesh, (cs_group_kind)op->group,
					   cs__run_rank_of(r, local), r->shared.gpn);
		int64_t n = cs_group_size(&g), e = 0;
		for (int64_t i = 0; i < n; i++)
			e += cs__run_simulated(r, cs_group_member(&g, i));
		sl->expected = (int32_t)e;
		/* list them once: later passes are O(e), with no arithmetic per member */
		if (!(sl->locals = malloc((size_t)e * sizeof *sl->locals))) {
			r->failed = CS_ERR_NOMEM;
			return;
		}
		for (int64_t i = 0, k = 0; i < n; i++) {
			int64_t m = cs_group_member(&g, i);
			if (cs__run_simulated(r, m))
				sl->locals[k++] = cs__run_local_of(r, m);
		}
	}
	cs__run_hold(r, local, rs, s, op, t, gi, &sl->tuned);
	if (++sl->arrived < sl->expected)
		return;
	sl->arrived = 0;
	cs_time now = cs_sim_now(r->sim), d = cs__run_coll_begin(r, t, gi, s, op, local, now);
	uint64_t tag = cs__coll_ev_pack((cs__coll_ev){ .slot = gi, .kind = op->group, .stream = s });
	if (!r->net || op->ub) /* userbuffers copies stay off the flow network */
		cs__run_schedule(r, now + d, cs__run_on_coll_done, tag);
	else
		cs__run_flow_coll(r, t, gi, op, local, d, tag);
}

cs_time cs__run_coll_begin(cs_runner *r, cs__comm_table *t, int64_t gi, int s, const cs_op *op,
			   int64_t last_local, cs_time now)
{
	cs__slot *sl = &t->slots[gi];
	sl->gen++;
	if (r->shared.paths) {
		/* no member's counter reads the generation before the last one
		 * (cs__comm_table.paths): the last arriver's path may be worked out
		 * right into its buffer */
		cs_path *dst = &t->paths[2 * gi + (sl->gen & 1)];
		const cs_path *src = cs__run_flying_path(r, last_local, s, dst);
		if (src != dst)
			*dst = *src;
	}
	const cs__tuned *tu = cs__run_tune(r, &sl->tuned, t, gi, last_local, op);
	cs_time d = tu->d;
	if (r->shared.env.links && !r->net) {
		if (t->keep[gi] < 0) {
			cs_group g = cs_mesh_group(r->shared.env.mesh, (cs_group_kind)op->group,
						   cs__run_rank_of(r, last_local), r->shared.gpn);
			link_fault(r, &g, &t->shapes[gi], &t->keep[gi], &t->lat[gi]);
		}
		d = degrade(d, &tu->choice, t->keep[gi], t->lat[gi]);
	}
	r->last_choice[op->comm] = tu->choice;
	r->last_at[op->comm] = now;
	sl->choice = tu->choice;
	sl->dur = d;
	sl->start = now;
	if (r->shared.paths)
		t->xfers[2 * gi + (sl->gen & 1)] = d;
	return d;
}

/* A pipeline message's time; *channels: the tuner's, *tier: the highest
 * tier it crosses. */
static cs_time p2p_time(cs_runner *r, int64_t src, int64_t dst, double bytes, int *channels, int *tier)
{
	int64_t lo = src < dst ? src : dst, hi = src < dst ? dst : src;
	cs_group_shape s = cs_topo_group(r->shared.env.topo, lo, hi - lo, 2);
	cs_coll_choice ch;
	cs_time d = cs_coll_time(r->coll, CS_COLL_SEND_RECV, &s, bytes, &ch);
	*channels = ch.channels;
	*tier = (int)s.tier;
	if (r->shared.env.links) {
		cs_group g = { .base = lo, .n = { 2, 1, 1 }, .stride = { hi - lo, 0, 0 } };
		float keep;
		cs_time lat;
		link_fault(r, &g, &s, &keep, &lat);
		d = degrade(d, &ch, keep, lat);
	}
	return d;
}

void cs__run_p2p_route(cs_runner *r, cs__rank *rs, int up, int64_t rank, double bytes)
{
	int64_t peer = rs->p2p_peer[up];
	int ch = 0, tier = 0;
	rs->p2p_bytes[up] = bytes;
	rs->p2p_ns[up] = p2p_time(r, rank, peer, bytes, &ch, &tier);
	rs->p2p_ch[up] = (uint8_t)(ch < 0 ? 0 : ch > 255 ? 255 : ch);
	rs->p2p_tier[up] = (uint8_t)tier;
	rs->p2p_plan[up] = 0;
	if (r->net)
		rs->p2p_net[up] = cs__run_p2p_net_bytes(r, rank, peer, bytes);
}
