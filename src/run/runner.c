/*
 * runner.c - per-rank streams, dependencies, rendezvous and mailboxes.
 *
 * Per-rank state is a program counter and a completion counter per stream,
 * two mailbox counters and a few accumulators; per group instance a
 * rendezvous slot. Nothing grows with the number of ops a rank runs.
 */
#include "run/runner.h"

#include "coll/flow.h"
#include "run/path.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NO_BLOCK 0xff

typedef struct rank_state {
	int32_t pc[CS_STREAMS];
	int32_t cnt[CS_COUNTERS];
	cs_time lastdur[CS_COUNTERS]; /* transfer time of the op that last bumped the counter */
	cs_time blocked_at;
	cs_time started[CS_STREAMS];  /* when the op at the head began */
	cs_time done_at[CS_COUNTERS]; /* when each counter last moved */
	cs_time wait_xfer;            /* transfer time seen while the compute stream waits */
	double mem;
	float factor;
	int32_t gidx[CS_GROUP_KINDS]; /* group instance per kind, -1 until needed */
	uint16_t tmpl;
	uint8_t busy;                 /* bit per stream */
	uint8_t blockc;               /* counter the compute stream waits on, or NO_BLOCK */
	cs_rank_stats st;
} rank_state;

typedef struct slot {
	int32_t arrived;
	int32_t expected;             /* 0 until first use */
	int64_t rank;                 /* a member, to enumerate the group */
	cs_time dur;                  /* transfer time of the collective in flight */
	cs_time start;                /* when it started (flow fidelity) */
	cs_coll_choice choice;
} slot;

typedef struct comm_table {
	slot *slots;                  /* one per group instance, lazily allocated */
	cs_path *paths;               /* critical path: the last arriver's, per instance */
	cs_group_shape *shapes;
	uint8_t *shape_ok;
	float *keep;                  /* degraded links: bandwidth kept by the group */
	cs_time *lat;                 /* and latency added */
	int64_t ngroups;
} comm_table;

/* Completions of the same stream at the same time, scheduled one after the
 * other by one callback (a collective's members starting their next
 * kernel), share one engine event. They would have popped consecutively
 * anyway, so the order of everything is unchanged. */
typedef struct batch {
	int64_t *locals;
	int32_t n, cap;
	int32_t next_free;
} batch;

struct cs_runner {
	cs_run_env env;
	uint8_t *stream_mask;         /* per template: streams that have ops */
	batch *batches;
	int32_t nbatches, batch_free;
	/* the batch being gathered by the current callback */
	int32_t open;                 /* batch index, or -1 */
	cs_time open_time;
	int open_stream;
	int64_t open_first;           /* the first local, before it becomes a batch */
	cs_sim *sim;
	rank_state *ranks;
	int64_t nlocal;
	int fold_mask;                /* bit per axis not simulated beyond coordinate 0 */
	int64_t gpn;
	comm_table comm[CS_GROUP_KINDS][CS_STREAMS];
	cs_coll_choice last_choice[CS_COMM_KINDS];
	cs_time makespan;
	const cs_coll_choice *cur_choice; /* of the collective completing now */
	cs_path *paths;               /* per rank: CS_COUNTERS paths, then CS_STREAMS in flight */
	const cs_path *cur_path;      /* of the collective completing now */
	int cur_tier;
	cs_net *net;                  /* flow fidelity: the shared network, else NULL */
	uint64_t net_gen;             /* only the newest net event is live */
	int64_t *members;             /* scratch: a group's GPUs */
	int failed;
	uint64_t next_progress_events;
	uint64_t ops_done, ops_total;
	struct timespec t0;
};

/* ---- rank set --------------------------------------------------------- */

static int64_t local_of(const cs_runner *r, int64_t rank)
{
	if (!r->fold_mask)
		return rank - r->env.first_rank;
	const cs_mesh *m = r->env.mesh;
	int64_t idx = 0, mult = 1;
	for (int a = 0; a < CS_AXIS_COUNT; a++) {
		if (r->fold_mask & (1 << a))
			continue;
		idx += cs_mesh_coord(m, rank, (cs_axis)a) * mult;
		mult *= m->deg[a];
	}
	return idx;
}

static int64_t rank_of(const cs_runner *r, int64_t local)
{
	if (!r->fold_mask)
		return local + r->env.first_rank;
	const cs_mesh *m = r->env.mesh;
	int64_t rank = 0;
	for (int a = 0; a < CS_AXIS_COUNT; a++) {
		if (r->fold_mask & (1 << a))
			continue;
		rank += (local % m->deg[a]) * m->stride[a];
		local /= m->deg[a];
	}
	return rank;
}

static int simulated(const cs_runner *r, int64_t rank)
{
	if (!r->fold_mask)
		return rank >= r->env.first_rank && rank < r->env.first_rank + r->env.nranks;
	for (int a = 0; a < CS_AXIS_COUNT; a++)
		if ((r->fold_mask & (1 << a)) && cs_mesh_coord(r->env.mesh, rank, (cs_axis)a) != 0)
			return 0;
	return 1;
}

/* ---- critical path ---------------------------------------------------- */

#define NPATHS (CS_COUNTERS + CS_STREAMS)

static cs_path *path_of(cs_runner *r, int64_t local, int counter)
{
	return &r->paths[local * NPATHS + counter];
}

static cs_path *fly_of(cs_runner *r, int64_t local, int stream)
{
	return &r->paths[local * NPATHS + CS_COUNTERS + stream];
}

/* The op at the head of stream s starts now: its path is its last
 * predecessor's (the stream's previous op, or the latest dependency). */
static void path_begin(cs_runner *r, int64_t local, const rank_state *rs, int s, const cs_op *op)
{
	int pred = s;
	cs_time best = rs->done_at[s];
	const cs_dep *d = &r->env.progs[rs->tmpl].deps[op->dep];
	for (int i = 0; i < op->ndeps; i++)
		if (rs->done_at[d[i].counter] > best) {
			best = rs->done_at[d[i].counter];
			pred = d[i].counter;
		}
	*fly_of(r, local, s) = *path_of(r, local, pred);
}

/* ---- groups ----------------------------------------------------------- */

static comm_table *table(cs_runner *r, int kind, int stream)
{
	comm_table *t = &r->comm[kind][stream];
	if (!t->slots) {
		t->ngroups = cs_mesh_group_count(r->env.mesh, (cs_group_kind)kind, r->gpn);
		t->slots = calloc((size_t)t->ngroups, sizeof(slot));
		t->shapes = calloc((size_t)t->ngroups, sizeof(cs_group_shape));
		t->shape_ok = calloc((size_t)t->ngroups, 1);
		if (!t->slots || !t->shapes || !t->shape_ok)
			return NULL;
	}
	return t;
}

/* Shape of a group of up to three regular axes: the innermost progression
 * from the topology, repeated along the outer axes. Outer axes that stay
 * inside one node add members per node; otherwise they add nodes. */
static cs_group_shape group_shape(const cs_runner *r, const cs_group *g)
{
	cs_group_shape s = cs_topo_group(r->env.topo, g->base, g->stride[0] ? g->stride[0] : 1, g->n[0]);
	int64_t outer = g->n[1] * g->n[2];
	if (outer == 1)
		return s;
	cs_group_shape far = cs_topo_group(r->env.topo, g->base, g->stride[1] ? g->stride[1] : 1, g->n[1]);
	if (g->n[2] > 1) {
		cs_group_shape far2 = cs_topo_group(r->env.topo, g->base, g->stride[2], g->n[2]);
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
	int64_t pods = r->env.sc->cluster.pod_gpus > 0
		? (cs_scenario_gpus(r->env.sc) + r->env.sc->cluster.pod_gpus - 1) / r->env.sc->cluster.pod_gpus
		: 1;
	if (s.npods > pods)
		s.npods = pods;
	if (far.tier > s.tier)
		s.tier = far.tier;
	return s;
}

/* ---- execution -------------------------------------------------------- */

static void try_rank(cs_runner *r, int64_t local);
static void on_op_done(cs_sim *sim, void *ctx, uint64_t arg);
static void on_coll_done(cs_sim *sim, void *ctx, uint64_t arg);
static void on_send_done(cs_sim *sim, void *ctx, uint64_t arg);

static void on_batch_done(cs_sim *sim, void *ctx, uint64_t arg);

static void push(cs_runner *r, cs_time at, cs_event_fn fn, uint64_t arg)
{
	if (cs_sim_at(r->sim, at, fn, r, arg) != 0 && !r->failed)
		r->failed = CS_ERR_NOMEM;
}

static int32_t batch_new(cs_runner *r)
{
	if (r->batch_free < 0) {
		int32_t n = r->nbatches ? r->nbatches * 2 : 64;
		batch *nb = realloc(r->batches, (size_t)n * sizeof(batch));
		if (!nb)
			return -1;
		for (int32_t i = r->nbatches; i < n; i++)
			nb[i] = (batch){ .next_free = i + 1 < n ? i + 1 : -1 };
		r->batches = nb;
		r->batch_free = r->nbatches;
		r->nbatches = n;
	}
	int32_t id = r->batch_free;
	r->batch_free = r->batches[id].next_free;
	r->batches[id].n = 0;
	return id;
}

static int batch_add(cs_runner *r, int32_t id, int64_t local)
{
	batch *b = &r->batches[id];
	if (b->n == b->cap) {
		int32_t nc = b->cap ? b->cap * 2 : 8;
		int64_t *nl = realloc(b->locals, (size_t)nc * sizeof(int64_t));
		if (!nl)
			return -1;
		b->locals = nl;
		b->cap = nc;
	}
	b->locals[b->n++] = local;
	return 0;
}

/* Push what the current callback gathered: one op completion, or a batch. */
static void flush(cs_runner *r)
{
	if (r->open_first < 0)
		return;
	if (r->open < 0)
		push(r, r->open_time, on_op_done, ((uint64_t)r->open_first << 4) | (uint64_t)r->open_stream);
	else
		push(r, r->open_time, on_batch_done, ((uint64_t)r->open << 4) | (uint64_t)r->open_stream);
	r->open = -1;
	r->open_first = -1;
}

static void schedule(cs_runner *r, cs_time at, cs_event_fn fn, uint64_t arg)
{
	flush(r);
	push(r, at, fn, arg);
}

static void schedule_op_done(cs_runner *r, cs_time at, int64_t local, int s)
{
	if (r->open_first >= 0 && at == r->open_time && s == r->open_stream) {
		if (r->open < 0) {
			r->open = batch_new(r);
			if (r->open < 0 || batch_add(r, r->open, r->open_first)) {
				r->failed = CS_ERR_NOMEM;
				return;
			}
		}
		if (batch_add(r, r->open, local))
			r->failed = CS_ERR_NOMEM;
		return;
	}
	flush(r);
	r->open_first = local;
	r->open_time = at;
	r->open_stream = s;
}

static const cs_op *head(const cs_runner *r, const rank_state *rs, int s)
{
	const cs_program *p = &r->env.progs[rs->tmpl];
	return rs->pc[s] < p->nops[s] ? &p->ops[s][rs->pc[s]] : NULL;
}

static int unmet_dep(const cs_runner *r, const rank_state *rs, const cs_op *op)
{
	const cs_dep *d = &r->env.progs[rs->tmpl].deps[op->dep];
	for (int i = 0; i < op->ndeps; i++)
		if (rs->cnt[d[i].counter] < d[i].value)
			return d[i].counter;
	return -1;
}

static cs_comm_kind counter_kind(int c)
{
	switch (c) {
	case CS_STREAM_TP: return CS_COMM_TP;
	case CS_STREAM_CP: return CS_COMM_CP;
	case CS_STREAM_EP: return CS_COMM_EP;
	case CS_STREAM_DP:
	case CS_STREAM_DP_AG: return CS_COMM_DP;
	default: return CS_COMM_PP;
	}
}

/* The compute stream waited from blocked_at to now: the part during which
 * the awaited transfer was in flight is exposed communication; the rest is
 * idle time accounted as bubble when the step ends. */
static void account_wait(cs_runner *r, rank_state *rs)
{
	if (rs->blockc == NO_BLOCK)
		return;
	cs_time wait = cs_sim_now(r->sim) - rs->blocked_at;
	if (rs->blockc != CS_STREAM_COMPUTE)
		rs->st.exposed[counter_kind(rs->blockc)] += rs->wait_xfer < wait ? rs->wait_xfer : wait;
	rs->wait_xfer = 0;
	rs->blockc = NO_BLOCK;
}

/* A transfer of `xfer` ns ended now on counter c: the part of it inside the
 * compute stream's current wait on c is exposed. Transfers on one counter do
 * not overlap, so the parts add up. */
static void note_transfer(cs_runner *r, rank_state *rs, int c, cs_time xfer)
{
	if (rs->blockc != (uint8_t)c || xfer <= 0)
		return;
	cs_time in_wait = cs_sim_now(r->sim) - rs->blocked_at;
	rs->wait_xfer += xfer < in_wait ? xfer : in_wait;
}

/* What degraded links leave of a group's collective: the least bandwidth
 * kept on a link kind the group uses, and the largest latency added. */
static void link_fault(const cs_runner *r, const cs_group *g, const cs_group_shape *sh, float *keep,
		       cs_time *lat)
{
	const cs_link_faults *lf = r->env.links;
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
	/* tiers: NVLink inside a domain, the leaves' uplinks for groups beyond
	 * one leaf, the pods' uplinks for groups across pods (as the flow model) */
	int uses[3] = { intra, sh->tier >= 2, sh->tier >= 3 };
	for (int t = 0; t < 3; t++)
		if (uses[t]) {
			k = fmin(k, lf->tier_keep[t]);
			l += lf->tier_lat[t];
		}
	*keep = (float)k;
	*lat = l;
}

static cs_time degrade(cs_time d, const cs_coll_choice *ch, float keep, cs_time lat)
{
	cs_time fixed = ch->latency_ns < d ? ch->latency_ns : d;
	return fixed + (cs_time)((double)(d - fixed) / (double)keep + 0.5) + lat;
}

#define SEND_TAG (1ull << 63)

static void on_net(cs_sim *sim, void *ctx, uint64_t arg);

/* Keep exactly one live engine event at the net's next change. */
static void net_reschedule(cs_runner *r)
{
	cs_time t = cs_net_next_completion(r->net);
	r->net_gen++;
	if (t != CS_TIME_MAX)
		schedule(r, t < cs_sim_now(r->sim) ? cs_sim_now(r->sim) : t, on_net, r->net_gen);
}

static void net_start(cs_runner *r, const int64_t *members, int64_t n, cs_coll_op op, double bytes,
		      cs_coll_algo algo, uint64_t tag)
{
	if (cs_net_start(r->net, cs_sim_now(r->sim), members, n, op, bytes, algo, tag) < 0) {
		r->failed = CS_ERR_NOMEM;
		return;
	}
	net_reschedule(r);
}

static void start_coll(cs_runner *r, int64_t local, rank_state *rs, int s, const cs_op *op)
{
	int64_t rank = rank_of(r, local);
	comm_table *t = table(r, op->group, s);
	if (!t) {
		r->failed = CS_ERR_NOMEM;
		return;
	}
	int64_t gi = rs->gidx[op->group];
	if (gi < 0) {
		gi = cs_mesh_group_index(r->env.mesh, (cs_group_kind)op->group, rank, r->gpn);
		rs->gidx[op->group] = (int32_t)gi;
	}
	slot *sl = &t->slots[gi];
	if (sl->expected == 0) {
		cs_group g = cs_mesh_group(r->env.mesh, (cs_group_kind)op->group, rank, r->gpn);
		int64_t n = cs_group_size(&g), e = 0;
		for (int64_t i = 0; i < n; i++)
			e += simulated(r, cs_group_member(&g, i));
		sl->expected = (int32_t)e;
		sl->rank = rank;
	}
	if (++sl->arrived < sl->expected)
		return;
	sl->arrived = 0;
	if (r->paths) {
		if (!t->paths && !(t->paths = calloc((size_t)t->ngroups, sizeof(cs_path)))) {
			r->failed = CS_ERR_NOMEM;
			return;
		}
		t->paths[gi] = *fly_of(r, local, s);
	}
	if (!t->shape_ok[gi]) {
		cs_group g = cs_mesh_group(r->env.mesh, (cs_group_kind)op->group, rank, r->gpn);
		t->shapes[gi] = group_shape(r, &g);
		t->shape_ok[gi] = 1;
	}
	cs_coll_choice ch;
	cs_time d = cs_coll_time(r->env.coll, (cs_coll_op)op->coll, &t->shapes[gi], op->bytes, &ch);
	if (r->env.links && !r->net) {
		if (!t->keep) {
			t->keep = malloc((size_t)t->ngroups * sizeof(float));
			t->lat = malloc((size_t)t->ngroups * sizeof(cs_time));
			if (!t->keep || !t->lat) {
				r->failed = CS_ERR_NOMEM;
				return;
			}
			for (int64_t i = 0; i < t->ngroups; i++)
				t->keep[i] = -1;
		}
		if (t->keep[gi] < 0) {
			cs_group g = cs_mesh_group(r->env.mesh, (cs_group_kind)op->group, rank, r->gpn);
			link_fault(r, &g, &t->shapes[gi], &t->keep[gi], &t->lat[gi]);
		}
		d = degrade(d, &ch, t->keep[gi], t->lat[gi]);
	}
	r->last_choice[op->comm] = ch;
	sl->choice = ch;
	sl->dur = d;
	sl->rank = rank;
	sl->start = cs_sim_now(r->sim);
	uint64_t tag = ((uint64_t)gi << 16) | ((uint64_t)op->group << 8) | (uint64_t)s;
	if (!r->net) {
		schedule(r, cs_sim_now(r->sim) + d, on_coll_done, tag);
		return;
	}
	cs_group g = cs_mesh_group(r->env.mesh, (cs_group_kind)op->group, rank, r->gpn);
	int64_t n = cs_group_size(&g);
	for (int64_t i = 0; i < n; i++)
		r->members[i] = cs_group_member(&g, i);
	net_start(r, r->members, n, (cs_coll_op)op->coll, op->bytes, ch.algo, tag);
}

static cs_time p2p_time(cs_runner *r, int64_t src, int64_t dst, double bytes)
{
	int64_t lo = src < dst ? src : dst, hi = src < dst ? dst : src;
	cs_group_shape s = cs_topo_group(r->env.topo, lo, hi - lo, 2);
	cs_coll_choice ch;
	cs_time d = cs_coll_time(r->env.coll, CS_COLL_SEND_RECV, &s, bytes, &ch);
	if (r->env.links) {
		cs_group g = { .base = lo, .n = { 2, 1, 1 }, .stride = { hi - lo, 0, 0 } };
		float keep;
		cs_time lat;
		link_fault(r, &g, &s, &keep, &lat);
		d = degrade(d, &ch, keep, lat);
	}
	return d;
}

static void try_stream(cs_runner *r, int64_t local, rank_state *rs, int s)
{
	if (rs->busy & (1u << s))
		return;
	const cs_op *op = head(r, rs, s);
	if (!op)
		return;
	int c = unmet_dep(r, rs, op);
	if (c >= 0) {
		if (s == CS_STREAM_COMPUTE) {
			if (rs->blockc == NO_BLOCK) {
				rs->blocked_at = cs_sim_now(r->sim);
				rs->wait_xfer = 0;
			}
			rs->blockc = (uint8_t)c;
		}
		return;
	}
	rs->busy |= (uint8_t)(1u << s);
	rs->started[s] = cs_sim_now(r->sim);
	if (r->paths)
		path_begin(r, local, rs, s, op);
	if (op->mem > 0) {
		rs->mem += op->mem;
		if (rs->mem > rs->st.mem_peak)
			rs->st.mem_peak = rs->mem;
	}
	cs_time now = cs_sim_now(r->sim);
	switch (op->kind) {
	case CS_OP_COMPUTE: {
		if (s == CS_STREAM_COMPUTE)
			account_wait(r, rs);
		double f = rs->factor;
		if ((rs->busy & ~1u) && r->env.sc->coll.sm_slowdown > 1.0)
			f *= r->env.sc->coll.sm_slowdown;
		cs_time d = f == 1.0 ? op->ns : (cs_time)((double)op->ns * f + 0.5);
		rs->st.busy += d;
		schedule_op_done(r, now + d, local, s);
		break;
	}
	case CS_OP_COLL:
		start_coll(r, local, rs, s, op);
		break;
	case CS_OP_SEND: {
		int64_t rank = rank_of(r, local);
		int64_t p = r->env.mesh->deg[CS_AXIS_PP];
		int64_t st = cs_mesh_coord(r->env.mesh, rank, CS_AXIS_PP);
		int64_t peer = cs_mesh_pp_peer(r->env.mesh, rank, (st + op->to + p) % p);
		if (r->net) {
			int64_t pair[2] = { rank, peer };
			rs->started[s] = now;
			net_start(r, pair, 2, CS_COLL_SEND_RECV, op->bytes, CS_ALGO_RING,
				  SEND_TAG | ((uint64_t)local << 4) | (uint64_t)s);
			break;
		}
		cs_time d = p2p_time(r, rank, peer, op->bytes);
		rs->lastdur[s] = d;
		schedule(r, now + d, on_send_done, ((uint64_t)local << 4) | (uint64_t)s);
		break;
	}
	}
}

static void try_rank(cs_runner *r, int64_t local)
{
	rank_state *rs = &r->ranks[local];
	unsigned mask = r->stream_mask[rs->tmpl] & ~(unsigned)rs->busy;
	for (int s = 0; mask; s++, mask >>= 1)
		if (mask & 1)
			try_stream(r, local, rs, s);
}

static void complete(cs_runner *r, int64_t local, int s, cs_time xfer)
{
	rank_state *rs = &r->ranks[local];
	const cs_op *op = head(r, rs, s);
	if (op && op->mem < 0)
		rs->mem += op->mem;
	if (r->env.traced && op) {
		int64_t rank = rank_of(r, local);
		if (r->env.traced[rank])
			r->env.on_span(r->env.span_ctx, rank, s, rs->started[s], cs_sim_now(r->sim), op,
				       xfer, op->kind == CS_OP_COLL ? r->cur_choice : NULL);
	}
	if (r->paths && op) {
		cs_path *p = path_of(r, local, s);
		cs_time now = cs_sim_now(r->sim);
		if (op->kind == CS_OP_COMPUTE) {
			*p = *fly_of(r, local, s);
			cs_path_compute(p, now - rs->started[s]);
		} else if (op->kind == CS_OP_COLL) {
			*p = *r->cur_path;
			cs_path_transfer(p, xfer, op->comm, op->coll, r->cur_tier, rank_of(r, local), now);
		} else {
			*p = *fly_of(r, local, s);
			cs_path_transfer(p, xfer, CS_COMM_PP, CS_COLL_SEND_RECV, r->cur_tier, p->rank, now);
		}
	}
	rs->busy &= (uint8_t)~(1u << s);
	rs->pc[s]++;
	rs->cnt[s]++;
	r->ops_done++;
	rs->done_at[s] = cs_sim_now(r->sim);
	if (xfer >= 0) {
		rs->lastdur[s] = xfer;
		note_transfer(r, rs, s, xfer);
	}
	cs_time now = cs_sim_now(r->sim);
	rs->st.end = now;
	if (now > r->makespan)
		r->makespan = now;
}

static void progress(cs_runner *r)
{
	uint64_t ev = cs_sim_events(r->sim);
	if (ev < r->next_progress_events)
		return;
	r->next_progress_events = ev + (1u << 20);
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	double el = (double)(t.tv_sec - r->t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - r->t0.tv_nsec);
	fprintf(stderr, "\r  simulating: %5.1f %% of %llu ops, %.3f s simulated, %.1f s elapsed",
		r->ops_total ? 100.0 * (double)r->ops_done / (double)r->ops_total : 0.0,
		(unsigned long long)r->ops_total, 1e-9 * (double)cs_sim_now(r->sim), el);
}

static void on_op_done(cs_sim *sim, void *ctx, uint64_t arg)
{
	cs_runner *r = ctx;
	int64_t local = (int64_t)(arg >> 4);
	int s = (int)(arg & 15);
	(void)sim;
	complete(r, local, s, -1);
	if (r->env.progress)
		progress(r);
	try_rank(r, local);
	flush(r);
}

static void on_batch_done(cs_sim *sim, void *ctx, uint64_t arg)
{
	cs_runner *r = ctx;
	int32_t id = (int32_t)(arg >> 4);
	int s = (int)(arg & 15);
	(void)sim;
	/* as if each completion were its own event, in order; try_rank may grow
	 * the batch table, so index it afresh every time */
	for (int32_t i = 0; i < r->batches[id].n; i++) {
		int64_t l = r->batches[id].locals[i];
		complete(r, l, s, -1);
		try_rank(r, l);
	}
	flush(r);
	if (r->env.progress)
		progress(r);
	batch *b = &r->batches[id];
	b->next_free = r->batch_free;
	r->batch_free = id;
}

static void on_send_done(cs_sim *sim, void *ctx, uint64_t arg)
{
	cs_runner *r = ctx;
	int64_t local = (int64_t)(arg >> 4);
	int s = (int)(arg & 15);
	(void)sim;
	rank_state *rs = &r->ranks[local];
	const cs_op *op = head(r, rs, s);
	int64_t rank = rank_of(r, local);
	int64_t p = r->env.mesh->deg[CS_AXIS_PP];
	int64_t st = cs_mesh_coord(r->env.mesh, rank, CS_AXIS_PP);
	int64_t peer = cs_mesh_pp_peer(r->env.mesh, rank, (st + op->to + p) % p);
	int mbox = op->to > 0 ? CS_MBOX_UP : CS_MBOX_DOWN;
	cs_time xfer = rs->lastdur[s];
	if (r->paths) {
		int64_t lo = rank < peer ? rank : peer, hi = rank < peer ? peer : rank;
		r->cur_tier = cs_topo_group(r->env.topo, lo, hi - lo, 2).tier;
	}
	complete(r, local, s, xfer);
	if (simulated(r, peer)) {
		int64_t pl = local_of(r, peer);
		if (r->paths) {
			cs_path *rp = path_of(r, pl, mbox);
			*rp = *fly_of(r, local, s);
			cs_path_transfer(rp, xfer, CS_COMM_PP, CS_COLL_SEND_RECV, r->cur_tier, peer,
					 cs_sim_now(r->sim));
		}
		r->ranks[pl].done_at[mbox] = cs_sim_now(r->sim);
		r->ranks[pl].cnt[mbox]++;
		r->ranks[pl].lastdur[mbox] = xfer;
		note_transfer(r, &r->ranks[pl], mbox, xfer);
		try_rank(r, pl);
	}
	try_rank(r, local);
	flush(r);
}

static void on_coll_done(cs_sim *sim, void *ctx, uint64_t arg)
{
	cs_runner *r = ctx;
	int s = (int)(arg & 0xff);
	int kind = (int)((arg >> 8) & 0xff);
	int64_t gi = (int64_t)(arg >> 16);
	comm_table *t = &r->comm[kind][s];
	cs_group g = cs_mesh_group(r->env.mesh, (cs_group_kind)kind, t->slots[gi].rank, r->gpn);
	int64_t n = cs_group_size(&g);
	(void)sim;
	cs_time xfer = t->slots[gi].dur;
	r->cur_choice = &t->slots[gi].choice;
	if (r->paths) {
		r->cur_path = &t->paths[gi];
		r->cur_tier = t->shapes[gi].tier;
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t m = cs_group_member(&g, i);
		if (simulated(r, m))
			complete(r, local_of(r, m), s, xfer);
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t m = cs_group_member(&g, i);
		if (simulated(r, m))
			try_rank(r, local_of(r, m));
	}
	flush(r);
}

static void on_net(cs_sim *sim, void *ctx, uint64_t arg)
{
	cs_runner *r = ctx;
	if (arg != r->net_gen)
		return;
	uint64_t tags[64];
	int k = cs_net_advance(r->net, cs_sim_now(sim), tags, 64);
	for (int i = 0; i < k; i++) {
		if (tags[i] & SEND_TAG) {
			uint64_t a = tags[i] & ~SEND_TAG;
			rank_state *rs = &r->ranks[(int64_t)(a >> 4)];
			int st = (int)(a & 15);
			rs->lastdur[st] = cs_sim_now(sim) - rs->started[st];
			on_send_done(sim, ctx, a);
			continue;
		}
		comm_table *t = &r->comm[(tags[i] >> 8) & 0xff][tags[i] & 0xff];
		slot *sl = &t->slots[tags[i] >> 16];
		sl->dur = cs_sim_now(sim) - sl->start;
		on_coll_done(sim, ctx, tags[i]);
	}
	net_reschedule(r);
	flush(r);
}

/* ---- lifecycle -------------------------------------------------------- */

/* Flow fidelity: degraded links lose capacity in the network itself. */
static void scale_kinds(cs_runner *r, int32_t *links, int n, cs_link_kind a, cs_link_kind b, double keep)
{
	for (int i = 0; i < n; i++) {
		cs_link_kind k = cs_topo_link_kind(r->env.topo, links[i]);
		if (k == a || k == b)
			cs_net_scale_link(r->net, 0, links[i], keep);
	}
}

static void degrade_net(cs_runner *r)
{
	const cs_link_faults *lf = r->env.links;
	const cs_topo *topo = r->env.topo;
	int64_t world = r->env.mesh->world, gpn = r->gpn;
	int32_t links[32];
	for (int64_t g = 0; lf->nic_keep && g < world; g++) {
		if (lf->nic_keep[g] < 1.0f && world > gpn) {
			int64_t other = (g + gpn) % world;
			int n = cs_topo_route(topo, g, other, links, 32);
			scale_kinds(r, links, n < 32 ? n : 32, CS_LINK_NIC_UP, CS_LINK_PCIE_UP, lf->nic_keep[g]);
			n = cs_topo_route(topo, other, g, links, 32);
			scale_kinds(r, links, n < 32 ? n : 32, CS_LINK_NIC_DOWN, CS_LINK_PCIE_DOWN, lf->nic_keep[g]);
		}
		if (lf->nvl_keep[g] < 1.0f && gpn > 1) {
			int64_t other = g % gpn ? g - 1 : g + 1;
			int n = cs_topo_route(topo, g, other, links, 32);
			scale_kinds(r, links, n < 32 ? n : 32, CS_LINK_NVL_UP, CS_LINK_NVL_UP, lf->nvl_keep[g]);
			n = cs_topo_route(topo, other, g, links, 32);
			scale_kinds(r, links, n < 32 ? n : 32, CS_LINK_NVL_DOWN, CS_LINK_NVL_DOWN, lf->nvl_keep[g]);
		}
	}
	static const cs_link_kind tier_kinds[3][2] = {
		{ CS_LINK_NVL_UP, CS_LINK_NVL_DOWN }, { CS_LINK_LEAF_UP, CS_LINK_LEAF_DOWN },
		{ CS_LINK_POD_UP, CS_LINK_POD_DOWN },
	};
	for (int t = 0; t < 3; t++) {
		if (lf->tier_keep[t] >= 1.0)
			continue;
		for (int32_t l = 0; l < cs_topo_nlinks(topo); l++) {
			cs_link_kind k = cs_topo_link_kind(topo, l);
			if (k == tier_kinds[t][0] || k == tier_kinds[t][1])
				cs_net_scale_link(r->net, 0, l, lf->tier_keep[t]);
		}
	}
}

cs_runner *cs_runner_new(const cs_run_env *env)
{
	cs_runner *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->env = *env;
	r->gpn = env->sc->cluster.gpus_per_node;
	const cs_mesh *m = env->mesh;
	if (env->sc->sim.fold) {
		r->fold_mask = (1 << CS_AXIS_TP) | (1 << CS_AXIS_CP) | (1 << CS_AXIS_EP) | (1 << CS_AXIS_DP);
		r->nlocal = m->deg[CS_AXIS_PP];
	} else {
		r->nlocal = env->nranks;
	}
	r->sim = cs_sim_new();
	r->ranks = calloc((size_t)r->nlocal, sizeof(rank_state));
	r->stream_mask = calloc((size_t)m->deg[CS_AXIS_PP], 1);
	if (env->critical_path) {
		r->paths = malloc((size_t)r->nlocal * NPATHS * sizeof(cs_path));
		if (!r->paths) {
			cs_runner_free(r);
			return NULL;
		}
		for (int64_t l = 0; l < r->nlocal; l++)
			for (int c = 0; c < NPATHS; c++)
				cs_path_start(&r->paths[l * NPATHS + c], rank_of(r, l));
	}
	if (env->sc->coll.fidelity == CS_FIDELITY_FLOW) {
		r->net = cs_net_new(env->topo, &env->sc->cluster);
		r->members = malloc((size_t)m->world * sizeof(int64_t));
		if (!r->net || !r->members) {
			cs_runner_free(r);
			return NULL;
		}
		if (env->links)
			degrade_net(r);
	}
	r->open = -1;
	r->open_first = -1;
	r->batch_free = -1;
	if (!r->sim || !r->ranks || !r->stream_mask) {
		cs_runner_free(r);
		return NULL;
	}
	for (int64_t l = 0; l < r->nlocal; l++) {
		int64_t rank = rank_of(r, l);
		rank_state *rs = &r->ranks[l];
		rs->tmpl = (uint16_t)cs_mesh_coord(m, rank, CS_AXIS_PP);
		rs->factor = env->compute_factor ? env->compute_factor[rank] : 1.0f;
		rs->blockc = NO_BLOCK;
		for (int k = 0; k < CS_GROUP_KINDS; k++)
			rs->gidx[k] = -1;
		for (int st = 0; st < CS_STREAMS; st++)
			r->ops_total += (uint64_t)env->progs[rs->tmpl].nops[st];
	}
	for (int64_t t = 0; t < m->deg[CS_AXIS_PP]; t++)
		for (int s = 0; s < CS_STREAMS; s++)
			if (env->progs[t].nops[s] > 0)
				r->stream_mask[t] |= (uint8_t)(1u << s);
	return r;
}

void cs_runner_free(cs_runner *r)
{
	if (!r)
		return;
	for (int k = 0; k < CS_GROUP_KINDS; k++)
		for (int s = 0; s < CS_STREAMS; s++) {
			free(r->comm[k][s].slots);
			free(r->comm[k][s].shapes);
			free(r->comm[k][s].shape_ok);
			free(r->comm[k][s].paths);
			free(r->comm[k][s].keep);
			free(r->comm[k][s].lat);
		}
	for (int32_t i = 0; i < r->nbatches; i++)
		free(r->batches[i].locals);
	free(r->batches);
	free(r->stream_mask);
	cs_net_free(r->net);
	free(r->members);
	free(r->paths);
	free(r->ranks);
	cs_sim_free(r->sim);
	free(r);
}

static void describe_stuck(const cs_runner *r, cs_diag *diag)
{
	for (int64_t l = 0; l < r->nlocal; l++) {
		const rank_state *rs = &r->ranks[l];
		for (int s = 0; s < CS_STREAMS; s++) {
			const cs_op *op = head(r, rs, s);
			if (!op)
				continue;
			int c = unmet_dep(r, rs, op);
			snprintf(diag->msg, sizeof(diag->msg),
				 "simulation deadlocked: rank %lld stream '%s' stopped at op %d of %d "
				 "(micro-batch %d, %s)",
				 (long long)rank_of(r, l), cs_stream_name((cs_stream)s), rs->pc[s],
				 r->env.progs[rs->tmpl].nops[s], op->micro,
				 c >= 0 ? "waiting on a dependency" : "waiting for its group's other members");
			return;
		}
	}
	snprintf(diag->msg, sizeof(diag->msg), "simulation deadlocked");
}

cs_status cs_runner_run(cs_runner *r, cs_diag *diag)
{
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	r->next_progress_events = 1u << 20;
	for (int64_t l = 0; l < r->nlocal; l++)
		try_rank(r, l);
	flush(r);
	cs_sim_run(r->sim, 0);
	if (r->env.progress)
		fputs("\r\033[K", stderr);
	if (r->failed) {
		snprintf(diag->msg, sizeof(diag->msg), "out of memory while simulating");
		return CS_ERR_NOMEM;
	}
	for (int64_t l = 0; l < r->nlocal; l++)
		for (int s = 0; s < CS_STREAMS; s++)
			if (head(r, &r->ranks[l], s)) {
				describe_stuck(r, diag);
				return CS_ERR_SIM;
			}
	return CS_OK;
}

const cs_rank_stats *cs_runner_stats(const cs_runner *r, int64_t rank)
{
	if (!simulated(r, rank))
		return NULL;
	return &r->ranks[local_of(r, rank)].st;
}

cs_time cs_runner_makespan(const cs_runner *r)
{
	return r->makespan;
}

uint64_t cs_runner_events(const cs_runner *r)
{
	return cs_sim_events(r->sim);
}

const cs_coll_choice *cs_runner_last_choice(const cs_runner *r, cs_comm_kind kind)
{
	return &r->last_choice[kind];
}

int cs_runner_critical_path(const cs_runner *r, cs_path *out)
{
	if (!r->paths)
		return -1;
	int64_t best_l = -1;
	int best_c = 0;
	cs_time best = -1;
	for (int64_t l = 0; l < r->nlocal; l++)
		for (int c = 0; c < CS_COUNTERS; c++)
			if (r->ranks[l].done_at[c] > best) {
				best = r->ranks[l].done_at[c];
				best_l = l;
				best_c = c;
			}
	if (best_l < 0)
		return -1;
	*out = r->paths[best_l * NPATHS + best_c];
	cs_path_finish(out);
	return 0;
}
