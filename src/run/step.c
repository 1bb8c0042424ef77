/*
 * step.c - the runner's per-op and per-member steps: an op starts when its
 * dependencies are met, runs on its stream (compute re-timed while
 * communication kernels hold SMs), ends in an event the engine merges with
 * the others of its stream and time, and its end moves the counters that
 * let the next ops start; a collective's members end together, a send's
 * end reaches its peer's mailbox. Everything a step calls on every op is
 * here, static, so the compiler inlines it.
 */
#include <math.h>
#include <string.h>

#include "core/invariant.h"
#include "run/runner_int.h"

/* Ask for local's state ahead of its use: a merged event's ranks and a
 * collective's members lie far apart in memory, and a loop over them would
 * wait on each otherwise. */
static inline void prefetch_rank(const cs_runner *r, int64_t local)
{
	const char *p = (const char *)&r->shared.ranks[local];
	for (size_t o = 0; o < CS__RANK_HOT_BYTES; o += 64)
		__builtin_prefetch(p + o);
	if (r->shared.paths)
		__builtin_prefetch(p + offsetof(cs__rank, path_from));
}

/* A transfer of `xfer` ns ended now on counter c: the part of it inside the
 * compute stream's current wait on c is exposed. Transfers on one counter do
 * not overlap, so the parts add up. */
static inline void note_transfer(cs_runner *r, cs__rank *rs, int c, cs_time xfer)
{
	if (rs->wait_counter != (uint8_t)c || xfer <= 0)
		return;
	cs_time in_wait = cs_sim_now(r->sim) - rs->blocked_at;
	rs->wait_xfer += xfer < in_wait ? xfer : in_wait;
}

/* The op at the head of local's stream s, `op`, ends now. Inline: every
 * op ends here, most with nothing to record. */
static inline void complete(cs_runner *r, int64_t local, int s, const cs_op *op, const cs__done *d)
{
	cs__rank *rs = &r->shared.ranks[local];
	CS_ASSERT((rs->busy & (1u << s)) && op == cs__run_head(r, rs, s));
	if (rs->held[s]) {
		cs__run_contend(r, local, -(int)rs->held[s]);
		rs->held[s] = 0;
	}
	if (op->mem < 0)
		rs->mem += op->mem;
	if (r->shared.times)
		cs__run_complete_times(r, local, s, op, d);
	rs->busy &= (uint8_t) ~(1u << s);
	rs->retry |= (uint8_t)(1u << s);
	cs__run_counter_moved(rs, s);
	r->ops_done++;
	if (d->xfer >= 0)
		note_transfer(r, rs, s, d->xfer);
	cs_time now = cs_sim_now(r->sim);
	rs->st.end = now;
	if (now > r->makespan)
		r->makespan = now;
}

/* Collective op starts on local's stream s: the member arrives. Inline:
 * most arrivals only count themselves (and take their SMs). */
static inline void start_coll(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op)
{
	if (r->shared.paths && rs->comp_path_ref)
		cs__run_path_ref_arrive(r, local, rs, s, op);
	int64_t gi = rs->gidx[op->group];
	cs__comm_table *t = &r->shared.comm[op->group][s];
	cs__slot *sl = gi >= 0 && !(r->shared.cross[op->group] && r->shared.cross[op->group][gi])
			       ? &t->slots[gi]
			       : NULL;
	if (!sl || sl->expected == 0 || sl->arrived + 1 >= sl->expected) {
		cs__run_arrive(r, local, rs, s, op);
		return;
	}
	cs__run_hold(r, local, rs, s, op, t, gi, &sl->tuned);
	sl->arrived++;
}

static void on_op_done(cs_sim *sim, void *ctx, unsigned stream, const uint64_t *items, uint32_t n);

/* Schedule fn(arg) at `at`: a duration at the horizon stops the run, and
 * says so. */
static bool can_schedule(cs_runner *r, cs_time at)
{
	if (at >= cs_sim_now(r->sim) && at <= CS_TIME_HORIZON)
		return true;
	if (!r->failed)
		r->failed = CS_ERR_SIM;
	cs_sim_stop(r->sim);
	return false;
}

void cs__run_schedule(cs_runner *r, cs_time at, cs_event_fn fn, uint64_t arg)
{
	if (can_schedule(r, at) && cs_sim_at(r->sim, at, fn, r, arg) != 0 && !r->failed)
		r->failed = CS_ERR_NOMEM;
}

/* Ops that end on one stream at one time end in one event, in the order
 * they were scheduled (the engine merges them): a collective's members
 * starting their next kernels, identical replicas ending identical
 * kernels. With jitter nearly every op ends alone. */
static inline void schedule_op_done(cs_runner *r, cs_time at, cs__ticket tk, int s)
{
	if (can_schedule(r, at) &&
	    cs_sim_at_merge(r->sim, at, on_op_done, r, (unsigned)s, (uint64_t)tk) != 0 && !r->failed)
		r->failed = CS_ERR_NOMEM;
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
static void account_wait(cs_runner *r, cs__rank *rs)
{
	if (rs->wait_counter == CS__NO_COUNTER)
		return;
	cs_time wait = cs_sim_now(r->sim) - rs->blocked_at;
	if (rs->wait_counter != CS_STREAM_COMPUTE)
		rs->st.exposed[counter_kind(rs->wait_counter)] += rs->wait_xfer < wait ? rs->wait_xfer : wait;
	rs->wait_xfer = 0;
	rs->wait_counter = CS__NO_COUNTER;
}

/*
 * Clocks under the power cap (docs/compute-model.md). The controller sees
 * the rank's recent work through an exponential window: the share of time
 * in GEMMs (clk_g) and the power the rest leaves under the cap (clk_h, W).
 * A GEMM runs r = 1 + (boost - 1)(1 - exp(-H / h0)) times its speed at the
 * cap, H = clk_h / clk_g the headroom per unit of GEMM time; the table's
 * GEMMs ran gemm_table times that speed. Idle time counts at idle_w.
 */
static void clock_idle_to(const cs_kprof_clock *k, cs__rank *rs, cs_time now)
{
	if (now <= rs->clk_at)
		return;
	double a = exp(-(double)(now - rs->clk_at) / k->window_ns);
	rs->clk_g *= a;
	rs->clk_h = rs->clk_h * a + (k->cap_w - k->idle_w) * (1.0 - a);
	rs->clk_at = now;
}

/* An op from `from` for dt: its GEMM share g and the W h it leaves enter
 * the averages, after the idle stretch before it. */
static void clock_run(const cs_kprof_clock *k, cs__rank *rs, cs_time from, cs_time dt, double g, double h)
{
	clock_idle_to(k, rs, from);
	double a = exp(-(double)dt / k->window_ns);
	rs->clk_g = rs->clk_g * a + g * (1.0 - a);
	rs->clk_h = rs->clk_h * a + h * (1.0 - a);
	rs->clk_at = from + dt;
}

/* A GEMM's speed over its speed at the power cap when the controller's
 * averages are g (GEMM share of time) and h (W left under the cap). */
static double clock_speedup(const cs_kprof_clock *k, double g, double h)
{
	if (!(g > 0.0))
		return h > 0.0 ? k->gemm_boost : 1.0;
	if (!(h > 0.0))
		return 1.0;
	return 1.0 + (k->gemm_boost - 1.0) * (1.0 - exp(-(h / g) / k->headroom_w));
}

/* The duration of compute op `op` (ns, as the table times it) at the clock
 * the rank's recent work leaves it; *gemm_share: its GEMMs' share of that.
 * f is the rank's own slowness, for the statistics. */
static cs_time clock_op(const cs_kprof_clock *k, cs__rank *rs, cs_time now, const cs_op *op, cs_time ns,
			double f, double *gemm_share)
{
	if (op->gemm_ns <= 0)
		return ns;
	clock_idle_to(k, rs, now);
	double r = clock_speedup(k, rs->clk_g, rs->clk_h);
	double cap = (double)op->gemm_ns * k->gemm_table;
	cs_time gemm = cs_time_of(cap / r);
	ns = cs_time_add(ns - op->gemm_ns, gemm);
	*gemm_share = ns > 0 ? (double)gemm / (double)ns : 0.0;
	rs->st.gemm = cs_time_add(rs->st.gemm, cs_time_of((double)gemm * f));
	rs->st.gemm_cap = cs_time_add(rs->st.gemm_cap, cs_time_of(cap * f));
	return ns;
}

/* Compute op `op` starts now on local's stream s: its duration at the
 * rank's speed, the GPU's share left by communication kernels and the
 * clock the rank's recent work leaves it. */
static void start_compute(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op, cs_time now)
{
	cs_time ns = op->ns;
	if (s == CS_STREAM_COMPUTE)
		account_wait(r, rs);
	double f = rs->factor;
	rs->comp_rate = cs__run_rate(r, rs);
	if (rs->comp_rate != 1.0f)
		f /= (double)rs->comp_rate;
	if (r->shared.env.doc_factor && op->attn_ns > 0 && op->micro >= 0) {
		int64_t dp = cs_mesh_coord(r->shared.env.mesh, cs__run_rank_of(r, local), CS_AXIS_DP);
		double g = r->shared.env.doc_factor[dp * r->shared.env.doc_micro + op->micro];
		/* g <= 1 for a document mask: this takes away part of ns */
		ns += (cs_time)((double)op->attn_ns * (g - 1.0) + (g >= 1.0 ? 0.5 : -0.5));
	}
	const cs_kprof_clock *clk = s == CS_STREAM_COMPUTE ? r->shared.env.clock : NULL;
	double gemm_share = 0.0;
	if (clk)
		ns = clock_op(clk, rs, now, op, ns, f, &gemm_share);
	cs_time d = f == 1.0 ? ns : cs_time_of((double)ns * f);
	if (clk)
		clock_run(clk, rs, now, d, gemm_share, op->spare / (double)(ns > 0 ? ns : 1));
	rs->st.busy += d;
	rs->comp_end = rs->comp_wake = now + d;
	rs->comp_gen++;
	schedule_op_done(r, now + d, cs__ticket_of(local, rs->comp_gen), s);
}

/* Pipeline send `op` starts now on local's stream s. */
static void start_send(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op, cs_time now)
{
	int64_t rank = cs__run_rank_of(r, local);
	int up = op->to > 0;
	if (op->ns && cs_op_peer(op) != rs->p2p_peer[up]) {
		/* a send to a rank the op names: routed anew when that rank changes */
		rs->p2p_peer[up] = cs_op_peer(op);
		rs->p2p_bytes[up] = -1.0;
	} else if (rs->p2p_peer[up] < 0) {
		int64_t p = r->shared.env.mesh->deg[CS_AXIS_PP];
		int64_t st = cs_mesh_coord(r->shared.env.mesh, rank, CS_AXIS_PP);
		rs->p2p_peer[up] = cs_mesh_pp_peer(r->shared.env.mesh, rank, (st + op->to + p) % p);
	}
	int64_t peer = rs->p2p_peer[up];
	if (rs->p2p_bytes[up] != op->bytes)
		cs__run_p2p_route(r, rs, up, rank, op->bytes);
	if (r->shared.contend) {
		rs->held[s] = rs->p2p_ch[up];
		cs__run_contend(r, local, rs->held[s]);
	}
	rs->send_at = now;
	if (r->net) {
		int64_t pair[2] = { rank, peer };
		cs__run_net_start(r, pair, 2, CS_COLL_SEND_RECV, rs->p2p_net[up], CS_ALGO_RING,
				  CS_NET_ROUTE_LATENCY, cs__send_tag(local, s), &rs->p2p_plan[up]);
		return;
	}
	schedule_op_done(r, now + rs->p2p_ns[up], local, s);
}

/* The op at the head of stream s starts now: its path is its last
 * predecessor's (the stream's previous op, or the latest dependency),
 * read in place until it changes (runner_path.c): a stream's own
 * path cannot change before this op completes, and a dependency's most
 * often does not either, so most ops copy nothing here. */
static void path_begin(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op)
{
	int pred = s;
	const cs_time *done_at = r->shared.times[local].done_at;
	cs_time best = done_at[s];
	const cs_dep *d = &r->shared.tmpls[rs->tmpl].deps[op->dep];
	for (int i = 0; i < op->ndeps; i++)
		if (done_at[d[i].counter] > best) {
			best = done_at[d[i].counter];
			pred = d[i].counter;
		}
	rs->path_from[s] = (uint8_t)pred;
}

/* Op `op`, its dependencies met, starts on local's stream s. Apart from
 * the check that comes first: half the tries of a run find a dependency
 * unmet, and need none of this. */
static void start_op(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op)
{
	CS_ASSERT(!(rs->busy & (1u << s)));
	rs->busy |= (uint8_t)(1u << s);
	if (r->shared.times)
		r->shared.times[local].started[s] = cs_sim_now(r->sim);
	if (r->shared.paths)
		path_begin(r, local, rs, s, op);
	if (op->mem > 0) {
		rs->mem += op->mem;
		if (rs->mem > rs->st.mem_peak)
			rs->st.mem_peak = rs->mem;
	}
	switch (op->kind) {
	case CS_OP_COMPUTE: start_compute(r, local, rs, s, op, cs_sim_now(r->sim)); break;
	case CS_OP_COLL: start_coll(r, local, rs, s, op); break;
	case CS_OP_SEND: start_send(r, local, rs, s, op, cs_sim_now(r->sim)); break;
	}
}

/* Stream s, not busy, starts its head op if its dependencies are met, or
 * waits on the first it lacks. */
static inline void try_stream(cs_runner *r, int64_t local, cs__rank *rs, int s)
{
	const cs_op *op = cs__run_head(r, rs, s);
	if (!op)
		return;
	int32_t short_by;
	int c = cs__run_unmet_dep(&r->shared.tmpls[rs->tmpl], rs, op, &short_by);
	if (c < 0) {
		start_op(r, local, rs, s, op);
		return;
	}
	rs->waiters[c] |= (uint8_t)(1u << s);
	rs->left[s] = (uint16_t)(short_by < 0xffff ? short_by : 0xffff);
	if (s == CS_STREAM_COMPUTE) {
		if (rs->wait_counter == CS__NO_COUNTER) {
			rs->blocked_at = cs_sim_now(r->sim);
			rs->wait_xfer = 0;
		}
		rs->wait_counter = (uint8_t)c;
	}
}

/* Try the streams that may have become able to start: those whose head
 * changed or whose awaited counter moved (a stream waiting on a counter that
 * did not move would wait still), in stream order. */
void cs__run_try_rank(cs_runner *r, int64_t local)
{
	/* a part touches its own ranks alone: what makes its windows run
	 * apart from the others' (parts.c) */
	CS_ASSERT(local >= 0 && local < r->shared.nlocal &&
		  (r->hi == 0 || (local >= r->lo && local < r->hi)));
	cs__rank *rs = &r->shared.ranks[local];
	unsigned mask = r->shared.tmpls[rs->tmpl].stream_mask & ~(unsigned)rs->busy & rs->retry;
	rs->retry &= (uint8_t)~mask;
	for (; mask; mask &= mask - 1)
		try_stream(r, local, rs, __builtin_ctz(mask));
}

/* The op at the head of local's stream s ends now: a kernel, or a pipeline
 * send (whose message reaches the peer). */
static void op_done(cs_runner *r, cs__ticket tk, int s)
{
	int64_t local = cs__ticket_local(tk);
	if (s == CS_STREAM_COMPUTE) {
		cs__rank *rs = &r->shared.ranks[local];
		cs_time now = cs_sim_now(r->sim);
		if (cs__ticket_gen(tk) != (rs->comp_gen & CS__GEN_MASK) ||
		    !(rs->busy & (1u << CS_STREAM_COMPUTE)) || now > rs->comp_end)
			return; /* an event of an op already done */
		if (now < rs->comp_end) {
			/* slowed since it was scheduled: wake again at the new end,
			 * unless an earlier wake is still to come */
			if (now == rs->comp_wake) {
				rs->comp_wake = rs->comp_end;
				schedule_op_done(r, rs->comp_end, tk, CS_STREAM_COMPUTE);
			}
			return;
		}
	}
	const cs_op *op = cs__run_head(r, &r->shared.ranks[local], s);
	/* only the compute stream's ends may be stale (re-timed ops) */
	CS_ASSERT(op && (r->shared.ranks[local].busy & (1u << s)));
	if (op->kind == CS_OP_SEND) {
		cs__run_send_done(r, local, s, op);
		return;
	}
	cs__done d = { .xfer = -1 };
	complete(r, local, s, op, &d);
	cs__run_try_rank(r, local);
}

enum { PREFETCH_AHEAD = 4 };

/* The ops that end now on `stream`, in order. Their ranks lie far apart:
 * ask for a few ahead; and while these run, for the rank of the event
 * after (with jitter each event is one rank's, a cache miss each). */
static void on_op_done(cs_sim *sim, void *ctx, unsigned stream, const uint64_t *items, uint32_t n)
{
	cs_runner *r = ctx;
	int s = (int)stream;
	CS_ASSERT(n > 0 && s < CS_STREAMS);
	uint64_t next;
	cs_time nat;
	unsigned ns;
	if (cs_sim_next_item(sim, on_op_done, &nat, &ns, &next)) {
		int64_t nl = cs__ticket_local((cs__ticket)next);
		prefetch_rank(r, nl);
		if (r->shared.times) {
			/* and what its completion records: its times and its path */
			__builtin_prefetch(&r->shared.times[nl]);
			__builtin_prefetch(&r->shared.times[nl].done_at[CS_STREAMS]);
			if (r->shared.paths) {
				__builtin_prefetch(&r->shared.paths[nl * CS__PATHS_PER_RANK + ns]);
				if (ns == CS_STREAM_COMPUTE)
					__builtin_prefetch(&r->shared.path_refs[nl]);
			}
		}
	}
	if (n > 1)
		for (uint32_t i = 0; i < n && i < PREFETCH_AHEAD; i++)
			prefetch_rank(r, cs__ticket_local((cs__ticket)items[i]));
	for (uint32_t i = 0; i < n; i++) {
		if (n > 1 && i + PREFETCH_AHEAD < n)
			prefetch_rank(r, cs__ticket_local((cs__ticket)items[i + PREFETCH_AHEAD]));
		op_done(r, (cs__ticket)items[i], s);
	}
	if (r->progress)
		cs__run_progress(r, cs_sim_events(sim), cs_sim_now(sim));
}

/*
 * Contention as rates: communication kernels hold SMs (one CTA per NCCL
 * channel) and stream memory, and the compute kernel running beside them
 * continues at the rate the kernel profile measured for that share of the
 * SMs. When a rank's held SMs change while its compute stream is busy, the
 * op's remaining work (in nominal ns) is re-timed at the new rate; only the
 * overlapped part is slowed. No change of rate, no event; a slower rate
 * costs at most one more event (at the old end, to wake again at the new).
 */
void cs__run_retime(cs_runner *r, int64_t local, cs__rank *rs, float rate)
{
	cs_time now = cs_sim_now(r->sim);
	double work = (double)(rs->comp_end - now) * (double)rs->comp_rate;
	cs_time end = now + cs_time_of(work / (double)rate);
	rs->comp_rate = rate;
	rs->st.busy += end - rs->comp_end;
	rs->comp_end = end;
	/* a later end is reached by waking at the pending event and again then;
	 * an earlier one needs an event of its own */
	if (end < rs->comp_wake) {
		rs->comp_wake = end;
		schedule_op_done(r, end, cs__ticket_of(local, rs->comp_gen), CS_STREAM_COMPUTE);
	}
}

void cs__run_send_done(cs_runner *r, int64_t local, int s, const cs_op *op)
{
	cs__rank *rs = &r->shared.ranks[local];
	int64_t peer = rs->p2p_peer[op->to > 0]; /* set when the send started */
	int mbox = op->to > 0 ? CS_MBOX_UP : CS_MBOX_DOWN;
	cs_time xfer = cs_sim_now(r->sim) - rs->send_at;
	int sim_peer = cs__run_simulated(r, peer);
	int64_t pl = sim_peer ? cs__run_local_of(r, peer) : -1;
	cs__done d = { .xfer = xfer };
	if (r->shared.paths) /* the tier it crossed, on both ranks' paths */
		d.tier = rs->p2p_tier[op->to > 0];
	complete(r, local, s, op, &d);
	if (sim_peer) {
		if (r->shared.times)
			r->shared.times[pl].done_at[mbox] = cs_sim_now(r->sim);
		cs__run_counter_moved(&r->shared.ranks[pl], mbox);
		note_transfer(r, &r->shared.ranks[pl], mbox, xfer);
		cs__run_try_rank(r, pl);
	}
	cs__run_try_rank(r, local);
}

/* A collective ends now: its members leave it together; in a part, a
 * collective across parts ends for the part's own members (parts.c). */
void cs__run_on_coll_done(cs_sim *sim, void *ctx, uint64_t arg)
{
	cs_runner *r = ctx;
	cs__coll_ev e = cs__coll_ev_unpack(arg);
	const cs__slot *sl = &r->shared.comm[e.kind][e.stream].slots[e.slot];
	const int64_t *locals = sl->locals;
	int64_t n = sl->expected;
	(void)sim;
	if (r->shared.cross[e.kind] && r->shared.cross[e.kind][e.slot]) {
		const cs__part_group *pg = &r->part_groups[e.kind][e.stream][e.slot];
		locals += pg->off;
		n = pg->expected;
	}
	cs__done d = { .xfer = sl->dur, .choice = &sl->choice, .gen = sl->gen };
	/* members lie far apart in memory: fetch each four ahead */
	for (int64_t i = 0; i < n; i++) {
		if (i + 4 < n)
			prefetch_rank(r, locals[i + 4]);
		complete(r, locals[i], e.stream, cs__run_head(r, &r->shared.ranks[locals[i]], e.stream), &d);
	}
	for (int64_t i = 0; i < n; i++)
		cs__run_try_rank(r, locals[i]);
}
