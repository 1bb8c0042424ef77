/*
 * runner_flow.c - the runner's bridge to the flow network (flow fidelity):
 * a collective's or a send's flows start there and its end comes back as
 * the engine's event; each collective is first timed alone on an idle
 * network, so that its bytes drain in the tuner's time; degraded links
 * lose capacity in the network itself.
 */
#include <stdlib.h>

#include "run/runner_int.h"

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

double cs__run_p2p_net_bytes(cs_runner *r, int64_t src, int64_t dst, double bytes)
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

void cs__run_flow_coll(cs_runner *r, cs__comm_table *t, int64_t gi, const cs_op *op, int64_t local, cs_time d,
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
