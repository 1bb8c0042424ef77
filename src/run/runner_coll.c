/*
 * runner_coll.c - the runner's work per collective, in the comm tables:
 * the rendezvous of a group's members, the group's shape on the topology,
 * the tuner's answers kept per group, degraded links, and a pipeline
 * message's time; and the bridge to the flow network (flow fidelity), where
 * a collective's or a send's flows drain and whence its end comes back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/schedule.h"
#include "run/runner_int.h"

/* ---- groups ----------------------------------------------------------- */

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

/* ---- the flow network -------------------------------------------------- */

/* Flow fidelity: a collective's or a send's flows start on the network and
 * its end comes back as the engine's event; each collective is first timed
 * alone on an idle network, so that its bytes drain in the tuner's time;
 * degraded links lose capacity in the network itself. */

static void on_net(cs_sim *sim, void *ctx, uint64_t arg);

/* Keep exactly one live engine event at the net's next change. */
static void net_reschedule(cs_runner *r)
{
	cs_time t = cs_net_next_completion(r->net);
	r->net_gen++;
	/* flows that never end (no bandwidth left them) fail at the horizon */
	if (t != CS_TIME_MAX || cs_net_active_colls(r->net) > 0)
		cs__run_schedule(r, t < cs_sim_now(r->sim) ? cs_sim_now(r->sim) : t, on_net, r->net_gen);
}

void cs__run_net_start(cs_runner *r, const int64_t *members, int64_t n, cs_coll_op op, double bytes,
		       cs_coll_algo algo, cs_time latency, uint64_t tag, int32_t *plan)
{
	if (*plan == 0) {
		int32_t p = cs_net_plan(r->net, members, n, op, bytes, algo);
		*plan = p >= 0 ? p + 1 : -1;
	}
	cs_time now = cs_sim_now(r->sim);
	if ((*plan > 0 ? cs_net_start_plan(r->net, now, *plan - 1, latency, tag)
		       : cs_net_start(r->net, now, members, n, op, bytes, algo, latency, tag)) < 0) {
		r->failed = CS_ERR_NOMEM;
		return;
	}
	net_reschedule(r);
}

/* The tuner's fixed part of a collective of d ns: its latency, at most d. */
static cs_time tuned_latency(cs_time d, const cs_coll_choice *ch)
{
	return ch->latency_ns < d ? ch->latency_ns : d;
}

/* The flow network moves bytes at the links' line rate; NCCL reaches only
 * part of it (protocol overheads, channel speeds: the tuner's model). Scale
 * the bytes a collective puts on the network so that, alone on the fabric,
 * it drains in the tuner's bandwidth time; contention then comes on top.
 * `line_s` is the time the network needs for `bytes` of it alone,
 * bandwidth part only. */
static double protocol_bytes(double bytes, double line_s, cs_time d, cs_time latency)
{
	double t_line = line_s * 1e9;
	double t_model = (double)(d - latency);
	if (t_line <= 0 || t_model <= 0)
		return bytes;
	return bytes * (t_model / t_line);
}

/* Run one collective on the idle network, its flows draining at once (no
 * latency phase), and return how long it took. */
static cs_time run_idle(cs_runner *r, const int64_t *members, int64_t n, cs_coll_op op, double bytes,
			cs_coll_algo algo)
{
	cs_time t0 = cs_net_now(r->idle);
	if (cs_net_start(r->idle, t0, members, n, op, bytes, algo, 0, 1) < 0)
		return -1;
	uint64_t tag;
	for (;;) {
		cs_time t = cs_net_next_completion(r->idle);
		if (t == CS_TIME_MAX)
			return -1;
		int k = cs_net_advance(r->idle, t, &tag, 1);
		if (k < 0)
			return -1;
		if (k > 0)
			return t - t0;
	}
}

/*
 * Seconds per byte the flow network needs for this collective alone on an
 * idle fabric: one run of 1 GiB there with no latency phase. Its flows all
 * start draining together, so every rate and every end time scales with
 * the bytes: the drain of any size is this times its bytes. A ring over
 * several domains runs one channel per member of a domain on its own NIC,
 * so a formula of one link's line rate would be off by that many; the
 * network itself is the measure. Cached per group and op (ring and tree
 * apart); 0 when it cannot be timed.
 */
static double alone_spb(cs_runner *r, cs__comm_table *t, int64_t gi, const int64_t *members, int64_t n,
			cs_coll_op op, cs_coll_algo algo)
{
	int tree = algo == CS_ALGO_TREE && op == CS_COLL_ALL_REDUCE;
	size_t per = 2 * (size_t)CS_COLL_OPS, at = (size_t)gi * per + (size_t)op * 2 + (size_t)tree;
	if (!t->alone && !(t->alone = calloc((size_t)t->ngroups * per, sizeof(double)))) {
		r->failed = CS_ERR_NOMEM;
		return 0;
	}
	if (t->alone[at] > 0)
		return t->alone[at];
	const double gib = 1073741824.0;
	cs_time one = run_idle(r, members, n, op, gib, algo);
	if (one <= 0)
		return 0;
	t->alone[at] = 1e-9 * (double)one / gib;
	return t->alone[at];
}

static double p2p_net_bytes(cs_runner *r, int64_t src, int64_t dst, double bytes)
{
	int64_t lo = src < dst ? src : dst, hi = src < dst ? dst : src;
	cs_group_shape sh = cs_topo_group(r->shared.env.topo, lo, hi - lo, 2);
	cs_coll_choice ch;
	cs_time d = cs_coll_time(r->coll, CS_COLL_SEND_RECV, &sh, bytes, &ch);
	/* one flow on one route: the line rate of its narrowest hop */
	const cs_cluster_spec *c = &r->shared.env.sc->cluster;
	double line = sh.nnodes > 1 ? c->scale_out.bandwidth : c->scale_up.bandwidth;
	return protocol_bytes(bytes, line > 0 ? bytes / line : 0, d, tuned_latency(d, &ch));
}

static void flow_coll(cs_runner *r, cs__comm_table *t, int64_t gi, const cs_op *op, int64_t local, cs_time d,
		      uint64_t tag)
{
	cs__slot *sl = &t->slots[gi];
	/* the tuner's answer coll_begin read: its plan, once asked, names the
	 * flows of this collective (same members, bytes and algorithm) */
	cs__tuned *tu = cs__run_tune(r, &sl->tuned, t, gi, local, op);
	/* alone on the fabric it takes the tuner's time: the tuner's latency,
	 * then its bandwidth time (protocol_bytes) */
	cs_time lat = tuned_latency(d, &sl->choice);
	if (tu->plan > 0) {
		cs__run_net_start(r, NULL, 0, (cs_coll_op)op->coll, 0, sl->choice.algo, lat, tag, &tu->plan);
		return;
	}
	/* the members' ranks: from the slot's list when every member is
	 * simulated here (in the group's order), else from the mesh */
	cs_group g = cs_mesh_group(r->shared.env.mesh, (cs_group_kind)op->group, cs__run_rank_of(r, local),
				   r->shared.gpn);
	int64_t n = cs_group_size(&g);
	if (sl->expected == n) {
		for (int64_t i = 0; i < n; i++)
			r->members[i] = cs__run_rank_of(r, sl->locals[i]);
	} else {
		for (int64_t i = 0; i < n; i++)
			r->members[i] = cs_group_member(&g, i);
	}
	double spb = alone_spb(r, t, gi, r->members, n, (cs_coll_op)op->coll, sl->choice.algo);
	cs__run_net_start(r, r->members, n, (cs_coll_op)op->coll,
			  protocol_bytes(op->bytes, spb * op->bytes, d, lat), sl->choice.algo, lat, tag,
			  &tu->plan);
}

static void on_net(cs_sim *sim, void *ctx, uint64_t arg)
{
	cs_runner *r = ctx;
	if (arg != r->net_gen)
		return;
	uint64_t tags[64];
	int k = cs_net_advance(r->net, cs_sim_now(sim), tags, 64);
	for (int i = 0; i < k; i++) {
		if (cs__tag_is_send(tags[i])) {
			cs__send e = cs__send_of(tags[i]);
			cs__rank *rs = &r->shared.ranks[e.local];
			cs__run_send_done(r, e.local, e.stream, cs__run_head(r, rs, e.stream));
			continue;
		}
		cs__coll_ev e = cs__coll_ev_unpack(tags[i]);
		cs__slot *sl = &r->shared.comm[e.kind][e.stream].slots[e.slot];
		sl->dur = cs_sim_now(sim) - sl->start;
		if (r->shared.paths)
			r->shared.comm[e.kind][e.stream].xfers[2 * e.slot + (sl->gen & 1)] = sl->dur;
		cs__run_on_coll_done(sim, ctx, tags[i]);
	}
	net_reschedule(r);
}

/* Flow fidelity: degraded links lose capacity in the network itself. */
static void scale_gpu_links(cs_runner *r, int64_t gpu, cs_link_kind a, cs_link_kind b, double keep)
{
	int32_t la = cs_topo_gpu_link(r->shared.env.topo, gpu, a),
		lb = cs_topo_gpu_link(r->shared.env.topo, gpu, b);
	if (la >= 0)
		cs_net_scale_link(r->net, 0, la, keep);
	if (lb >= 0)
		cs_net_scale_link(r->net, 0, lb, keep);
}

static void degrade_net(cs_runner *r)
{
	const cs_link_faults *lf = r->shared.env.links;
	const cs_topo *topo = r->shared.env.topo;
	int64_t world = r->shared.env.mesh->world;
	for (int64_t g = 0; lf->nic_keep && g < world; g++) {
		if (lf->nic_keep[g] < 1.0f) {
			/* the NIC's network ports and its PCIe path, both ways */
			scale_gpu_links(r, g, CS_LINK_NIC_UP, CS_LINK_NIC_DOWN, lf->nic_keep[g]);
			scale_gpu_links(r, g, CS_LINK_PCIE_UP, CS_LINK_PCIE_DOWN, lf->nic_keep[g]);
		}
		if (lf->nvl_keep[g] < 1.0f)
			scale_gpu_links(r, g, CS_LINK_NVL_UP, CS_LINK_NVL_DOWN, lf->nvl_keep[g]);
	}
	for (int t = 0; t < CS_TIERS; t++) {
		if (lf->tier_keep[t] >= 1.0)
			continue;
		for (int32_t l = 0; l < cs_topo_nlinks(topo); l++)
			if (cs_topo_link_tier(topo, l) == t)
				cs_net_scale_link(r->net, 0, l, lf->tier_keep[t]);
	}
}
/* Flow fidelity: the network collectives share, and one to time each
 * alone. 0, or -1 when out of memory. */
int cs__run_flow_init(cs_runner *r)
{
	const cs_run_env *env = &r->shared.env;
	r->net = cs_net_new(env->topo, &env->sc->cluster);
	r->idle = cs_net_new(env->topo, &env->sc->cluster);
	r->members = malloc((size_t)env->mesh->world * sizeof(int64_t));
	/* the idle net, the measure of a collective alone, routes ideally */
	if (!r->net || !r->idle || !r->members ||
	    (cs_cluster_ecmp(&env->sc->cluster) &&
	     cs_net_route_ecmp(r->net, env->sc->coll.qps, env->sc->sim.seed)))
		return -1;
	if (env->links)
		degrade_net(r);
	return 0;
}

/* ---- rendezvous and pipeline messages --------------------------------- */

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
		flow_coll(r, t, gi, op, local, d, tag);
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
		rs->p2p_net[up] = p2p_net_bytes(r, rank, peer, bytes);
}
