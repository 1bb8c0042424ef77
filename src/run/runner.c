/*
 * runner.c - per-rank streams, dependencies and completions.
 *
 * Per-rank state is a program counter and a completion counter per stream,
 * two mailbox counters and a few accumulators; per group instance a
 * rendezvous slot (runner_coll.c). Nothing grows with the number of ops a
 * rank runs.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "run/runner_int.h"

/* ---- execution -------------------------------------------------------- */

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
	if (can_schedule(r, at) && cs_sim_at_merge(r->sim, at, on_op_done, r, (unsigned)s, (uint64_t)tk) != 0 &&
	    !r->failed)
		r->failed = CS_ERR_NOMEM;
}

/* The first dependency of op that rs lacks, -1 for none; *short_by: how
 * many moves of its counter it still needs. */
static int unmet_dep(const cs_runner *r, const rank_state *rs, const cs_op *op, int32_t *short_by)
{
	const cs_dep *d = &r->shared.tmpls[rs->tmpl].deps[op->dep];
	for (int i = 0; i < op->ndeps; i++)
		if (rs->cnt[d[i].counter] < d[i].value) {
			*short_by = d[i].value - rs->cnt[d[i].counter];
			return d[i].counter;
		}
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

/*
 * Clocks under the power cap (docs/compute-model.md). The controller sees
 * the rank's recent work through an exponential window: the share of time
 * in GEMMs (clk_g) and the power the rest leaves under the cap (clk_h, W).
 * A GEMM runs r = 1 + (boost - 1)(1 - exp(-H / h0)) times its speed at the
 * cap, H = clk_h / clk_g the headroom per unit of GEMM time; the table's
 * GEMMs ran gemm_table times that speed. Idle time counts at idle_w.
 */
static void clock_idle_to(const cs_kprof_clock *k, rank_state *rs, cs_time now)
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
static void clock_run(const cs_kprof_clock *k, rank_state *rs, cs_time from, cs_time dt,
		      double g, double h)
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
static cs_time clock_op(const cs_kprof_clock *k, rank_state *rs, cs_time now, const cs_op *op,
			cs_time ns, double f, double *gemm_share)
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
static void start_compute(cs_runner *r, int64_t local, rank_state *rs, int s, const cs_op *op,
			  cs_time now)
{
	cs_time ns = op->ns;
	if (s == CS_STREAM_COMPUTE)
		account_wait(r, rs);
	double f = rs->factor;
	rs->crate = cs__run_rate(r, rs);
	if (rs->crate != 1.0f)
		f /= (double)rs->crate;
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
	rs->cend = rs->cwake = now + d;
	rs->cgen++;
	schedule_op_done(r, now + d, cs__ticket_of(local, rs->cgen), s);
}

/* Pipeline send `op` starts now on local's stream s. */
static void start_send(cs_runner *r, int64_t local, rank_state *rs, int s, const cs_op *op, cs_time now)
{
	int64_t rank = cs__run_rank_of(r, local);
	int up = op->to > 0;
	if (rs->p2p_peer[up] < 0) {
		int64_t p = r->shared.env.mesh->deg[CS_AXIS_PP];
		int64_t st = cs_mesh_coord(r->shared.env.mesh, rank, CS_AXIS_PP);
		rs->p2p_peer[up] = cs_mesh_pp_peer(r->shared.env.mesh, rank, (st + op->to + p) % p);
	}
	int64_t peer = rs->p2p_peer[up];
	if (rs->p2p_bytes[up] != op->bytes) {
		int ch = 0, tier = 0;
		rs->p2p_bytes[up] = op->bytes;
		rs->p2p_ns[up] = cs__run_p2p_time(r, rank, peer, op->bytes, &ch, &tier);
		rs->p2p_ch[up] = (uint8_t)(ch < 0 ? 0 : ch > 255 ? 255 : ch);
		rs->p2p_tier[up] = (uint8_t)tier;
		rs->p2p_plan[up] = 0;
		if (r->net)
			rs->p2p_net[up] = cs__run_p2p_net_bytes(r, rank, peer, op->bytes);
	}
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

/* Op `op`, its dependencies met, starts on local's stream s. Apart from
 * the check that comes first: half the tries of a run find a dependency
 * unmet, and need none of this. */
static void start_op(cs_runner *r, int64_t local, rank_state *rs, int s, const cs_op *op)
{
	rs->busy |= (uint8_t)(1u << s);
	if (r->shared.times)
		r->shared.times[local].started[s] = cs_sim_now(r->sim);
	if (r->shared.paths)
		cs__run_path_begin(r, local, rs, s, op);
	if (op->mem > 0) {
		rs->mem += op->mem;
		if (rs->mem > rs->st.mem_peak)
			rs->st.mem_peak = rs->mem;
	}
	switch (op->kind) {
	case CS_OP_COMPUTE:
		start_compute(r, local, rs, s, op, cs_sim_now(r->sim));
		break;
	case CS_OP_COLL:
		cs__run_start_coll(r, local, rs, s, op);
		break;
	case CS_OP_SEND:
		start_send(r, local, rs, s, op, cs_sim_now(r->sim));
		break;
	}
}

/* Stream s, not busy, starts its head op if its dependencies are met, or
 * waits on the first it lacks. */
static inline void try_stream(cs_runner *r, int64_t local, rank_state *rs, int s)
{
	const cs_op *op = cs__run_head(r, rs, s);
	if (!op)
		return;
	int32_t short_by;
	int c = unmet_dep(r, rs, op, &short_by);
	if (c < 0) {
		start_op(r, local, rs, s, op);
		return;
	}
	rs->waiters[c] |= (uint8_t)(1u << s);
	rs->left[s] = (uint16_t)(short_by < 0xffff ? short_by : 0xffff);
	if (s == CS_STREAM_COMPUTE) {
		if (rs->blockc == NO_BLOCK) {
			rs->blocked_at = cs_sim_now(r->sim);
			rs->wait_xfer = 0;
		}
		rs->blockc = (uint8_t)c;
	}
}

/* Try the streams that may have become able to start: those whose head
 * changed or whose awaited counter moved (a stream waiting on a counter that
 * did not move would wait still), in stream order. */
void cs__run_try_rank(cs_runner *r, int64_t local)
{
	rank_state *rs = &r->shared.ranks[local];
	unsigned mask = r->shared.tmpls[rs->tmpl].stream_mask & ~(unsigned)rs->busy & rs->retry;
	rs->retry &= (uint8_t)~mask;
	for (; mask; mask &= mask - 1)
		try_stream(r, local, rs, __builtin_ctz(mask));
}

void cs__run_progress(cs_runner *r, uint64_t ev, cs_time now)
{
	if (ev < r->next_progress_events)
		return;
	r->next_progress_events = ev + (1u << 20);
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	double el = (double)(t.tv_sec - r->t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - r->t0.tv_nsec);
	/* a terminal's line is rewritten; a file or pipe gets a line every 10 s */
	bool lines = r->progress == CS_PROGRESS_LINES;
	if (lines && r->progress_lines > 0 && el < r->last_progress_s + 10.0)
		return;
	r->last_progress_s = el;
	r->progress_lines++;
	fprintf(stderr, "%s  simulating: %5.1f %% of %llu ops, %.3f s simulated, %.1f s elapsed%s",
		lines ? "" : "\r", r->ops_total ? 100.0 * (double)r->ops_done / (double)r->ops_total : 0.0,
		(unsigned long long)r->ops_total, 1e-9 * (double)now, el, lines ? "\n" : "");
}

/* The op at the head of local's stream s ends now: a kernel, or a pipeline
 * send (whose message reaches the peer). */
static void op_done(cs_runner *r, cs__ticket tk, int s)
{
	int64_t local = cs__ticket_local(tk);
	if (s == CS_STREAM_COMPUTE) {
		rank_state *rs = &r->shared.ranks[local];
		cs_time now = cs_sim_now(r->sim);
		if (cs__ticket_gen(tk) != (rs->cgen & CS__GEN_MASK) ||
		    !(rs->busy & (1u << CS_STREAM_COMPUTE)) || now > rs->cend)
			return; /* an event of an op already done */
		if (now < rs->cend) {
			/* slowed since it was scheduled: wake again at the new end,
			 * unless an earlier wake is still to come */
			if (now == rs->cwake) {
				rs->cwake = rs->cend;
				schedule_op_done(r, rs->cend, tk, CS_STREAM_COMPUTE);
			}
			return;
		}
	}
	const cs_op *op = cs__run_head(r, &r->shared.ranks[local], s);
	if (op->kind == CS_OP_SEND) {
		cs__run_send_done(r, local, s, op);
		return;
	}
	cs__done d = { .xfer = -1 };
	cs__run_complete(r, local, s, op, &d);
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
	uint64_t next;
	cs_time nat;
	unsigned ns;
	if (cs_sim_next_item(sim, on_op_done, &nat, &ns, &next)) {
		int64_t nl = cs__ticket_local((cs__ticket)next);
		cs__run_prefetch(r, nl);
		if (r->shared.times) {
			/* and what its completion records: its times and its path */
			__builtin_prefetch(&r->shared.times[nl]);
			__builtin_prefetch(&r->shared.times[nl].done_at[CS_STREAMS]);
			if (r->shared.paths) {
				__builtin_prefetch(&r->shared.paths[nl * NPATHS + ns]);
				if (ns == CS_STREAM_COMPUTE)
					__builtin_prefetch(&r->shared.crefs[nl]);
			}
		}
	}
	if (n > 1)
		for (uint32_t i = 0; i < n && i < PREFETCH_AHEAD; i++)
			cs__run_prefetch(r, cs__ticket_local((cs__ticket)items[i]));
	for (uint32_t i = 0; i < n; i++) {
		if (n > 1 && i + PREFETCH_AHEAD < n)
			cs__run_prefetch(r, cs__ticket_local((cs__ticket)items[i + PREFETCH_AHEAD]));
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
void cs__run_retime(cs_runner *r, int64_t local, rank_state *rs, float rate)
{
	cs_time now = cs_sim_now(r->sim);
	double work = (double)(rs->cend - now) * (double)rs->crate;
	cs_time end = now + cs_time_of(work / (double)rate);
	rs->crate = rate;
	rs->st.busy += end - rs->cend;
	rs->cend = end;
	/* a later end is reached by waking at the pending event and again then;
	 * an earlier one needs an event of its own */
	if (end < rs->cwake) {
		rs->cwake = end;
		schedule_op_done(r, end, cs__ticket_of(local, rs->cgen), CS_STREAM_COMPUTE);
	}
}

/* The ranks' state, zeroed. Ops visit ranks in no order a cache can
 * follow, so a large array is asked for on huge pages, where the TLB
 * covers it (an advice the kernel may ignore). */
static rank_state *alloc_ranks(size_t n)
{
	size_t size = n * sizeof(rank_state), align = _Alignof(rank_state);
#ifdef MADV_HUGEPAGE
	const size_t huge = (size_t)2 << 20;
	if (size >= huge) {
		align = huge;
		size = (size + huge - 1) / huge * huge;
	}
#endif
	rank_state *rs = aligned_alloc(align, size);
	if (!rs)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align > _Alignof(rank_state))
		(void)madvise(rs, size, MADV_HUGEPAGE);
#endif
	memset(rs, 0, size);
	return rs;
}

/* The shared state (cs__run_shared): the ranks, templates, comm tables
 * and what the trace and the critical path keep. 0, or -1 when out of
 * memory (what was made is freed by shared_free). */
static int shared_init(cs_runner *r, const cs_run_env *env)
{
	cs__run_shared *sh = &r->shared;
	sh->env = *env;
	sh->gpn = cs_cluster_shard_unit(&env->sc->cluster); /* hybrid sharding's unit */
	/* compute's rate while k SMs are held: the profile's measured curve,
	 * its slowdown scaled by collectives.contention */
	double sms = env->sc->cluster.gpu.sms > 0 ? env->sc->cluster.gpu.sms : 1;
	for (int k = 0; k <= CS__MAX_CTAS; k++) {
		sh->rate_of[k] = (float)cs_kprof_contention_scaled(env->prof, (double)k / sms,
								   env->sc->coll.contention);
		sh->contend |= sh->rate_of[k] < 1.0f;
	}
	const cs_mesh *m = env->mesh;
	int64_t ntmpl = env->tmpl_of ? env->ntmpl : m->deg[CS_AXIS_PP];
	if (env->fold && !env->tmpl_of) { /* folding assumes templates by stage */
		sh->fold_mask = (1 << CS_AXIS_TP) | (1 << CS_AXIS_CP) | (1 << CS_AXIS_EP) | (1 << CS_AXIS_DP);
		int rc = cs__run_fold_exceptions(r);
		if (rc < 0)
			return -1;
		if (rc > 0)
			sh->fold_mask = 0;
		sh->nlocal = rc > 0 ? env->nranks : sh->nx ? sh->nx * sh->per_replica : m->deg[CS_AXIS_PP];
	} else {
		sh->nlocal = env->nranks;
	}
	sh->ranks = alloc_ranks((size_t)sh->nlocal);
	sh->tmpls = aligned_alloc(_Alignof(cs__tmpl), (size_t)ntmpl * sizeof(cs__tmpl));
	if (!sh->ranks || !sh->tmpls)
		return -1;
	if (env->critical_path || env->traced) {
		sh->times = calloc((size_t)sh->nlocal, sizeof(rank_times));
		if (!sh->times)
			return -1;
	}
	if (env->critical_path) {
		sh->paths = malloc((size_t)sh->nlocal * NPATHS * sizeof *sh->paths);
		sh->crefs = malloc((size_t)sh->nlocal * sizeof *sh->crefs);
		if (!sh->paths || !sh->crefs)
			return -1;
		for (int64_t l = 0; l < sh->nlocal; l++)
			for (int c = 0; c < NPATHS; c++)
				cs_path_start(&sh->paths[l * NPATHS + c], cs__run_rank_of(r, l));
	}
	if (cs__run_tables(r))
		return -1;
	for (int64_t l = 0; l < sh->nlocal; l++) {
		int64_t rank = cs__run_rank_of(r, l);
		rank_state *rs = &sh->ranks[l];
		rs->tmpl = env->tmpl_of ? env->tmpl_of[rank] : (uint16_t)cs_mesh_coord(m, rank, CS_AXIS_PP);
		rs->factor = env->compute_factor ? env->compute_factor[rank] : 1.0f;
		if (env->clock) { /* the step before ran the same program */
			const cs_program *pg = &env->progs[rs->tmpl];
			double all = pg->compute_ns > 0 ? (double)pg->compute_ns : 1.0;
			rs->clk_g = (double)pg->class_ns[CS_COMPUTE_GEMM] / all;
			rs->clk_h = pg->spare / all;
		}
		rs->blockc = NO_BLOCK;
		rs->retry = 0xff;
		memset(rs->fly_ref, FLY_OWN, sizeof rs->fly_ref);
		rs->p2p_peer[0] = rs->p2p_peer[1] = -1;
		rs->p2p_bytes[0] = rs->p2p_bytes[1] = -1.0;
		for (int k = 0; k < CS_GROUP_KINDS; k++)
			rs->gidx[k] = -1;
	}
	for (int64_t t = 0; t < ntmpl; t++) {
		cs__tmpl *tp = &sh->tmpls[t];
		*tp = (cs__tmpl){ .deps = env->progs[t].deps };
		for (int s = 0; s < CS_STREAMS; s++) {
			tp->ops[s] = env->progs[t].ops[s];
			tp->nops[s] = env->progs[t].nops[s];
			if (tp->nops[s] > 0)
				tp->stream_mask |= (uint8_t)(1u << s);
		}
	}
	return 0;
}

static void shared_free(cs__run_shared *sh)
{
	free(sh->xdp);
	for (int k = 0; k < CS_GROUP_KINDS; k++) {
		free(sh->cross[k]);
		for (int s = 0; s < CS_STREAMS; s++) {
			comm_table *t = &sh->comm[k][s];
			for (int64_t g = 0; t->slots && g < t->ngroups; g++) {
				free(t->slots[g].locals);
				free(t->slots[g].parts);
			}
			free(t->slots);
			free(t->shapes);
			free(t->shape_ok);
			free(t->paths);
			free(t->xfers);
			free(t->keep);
			free(t->lat);
			free(t->alone);
		}
	}
	free(sh->tmpls);
	free(sh->paths);
	free(sh->crefs);
	free(sh->times);
	free(sh->ranks);
}

int cs__run_own_init(cs_runner *r, cs_coll *coll, int progress)
{
	r->coll = coll;
	r->progress = progress;
	for (int c = 0; c < CS_COMM_KINDS; c++)
		r->last_at[c] = -1;
	r->sim = cs_sim_new();
	return r->sim && coll ? 0 : -1;
}

/* Flow fidelity: the network collectives share, and one to time each
 * alone. 0, or -1 when out of memory. */
static int flow_init(cs_runner *r)
{
	const cs_run_env *env = &r->shared.env;
	r->net = cs_net_new(env->topo, &env->sc->cluster);
	r->idle = cs_net_new(env->topo, &env->sc->cluster);
	r->members = malloc((size_t)env->mesh->world * sizeof(int64_t));
	/* the idle net, the measure of a collective alone, routes ideally */
	if (!r->net || !r->idle || !r->members ||
	    (cs_cluster_ecmp(&env->sc->cluster) && cs_net_route_ecmp(r->net, env->sc->coll.qps, env->sc->sim.seed)))
		return -1;
	if (env->links)
		cs__run_degrade_net(r);
	return 0;
}

cs_runner *cs_runner_new(const cs_run_env *env)
{
	cs_runner *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (shared_init(r, env) || cs__run_own_init(r, env->coll, env->progress) ||
	    (env->sc->coll.fidelity == CS_FIDELITY_FLOW && flow_init(r)) || cs__run_partition(r)) {
		cs_runner_free(r);
		return NULL;
	}
	for (int64_t l = 0; l < r->shared.nlocal; l++)
		for (int st = 0; st < CS_STREAMS; st++)
			r->ops_total += (uint64_t)env->progs[r->shared.ranks[l].tmpl].nops[st];
	return r;
}

void cs__run_own_free(cs_runner *r)
{
	cs_sim_free(r->sim);
	cs_net_free(r->net);
	cs_net_free(r->idle);
	free(r->members);
	for (int k = 0; k < CS_GROUP_KINDS; k++)
		for (int s = 0; s < CS_STREAMS; s++)
			free(r->share[k][s]);
	free(r->out);
}

void cs_runner_free(cs_runner *r)
{
	if (!r)
		return;
	cs__run_parts_free(r);
	cs__run_own_free(r);
	shared_free(&r->shared);
	free(r);
}

static void describe_stuck(const cs_runner *r, cs_diag *diag)
{
	for (int64_t l = 0; l < r->shared.nlocal; l++) {
		const rank_state *rs = &r->shared.ranks[l];
		for (int s = 0; s < CS_STREAMS; s++) {
			const cs_op *op = cs__run_head(r, rs, s);
			if (!op)
				continue;
			int32_t short_by;
			int c = unmet_dep(r, rs, op, &short_by);
			snprintf(diag->msg, sizeof(diag->msg),
				 "simulation deadlocked: rank %lld stream '%s' stopped at op %d of %d "
				 "(micro-batch %d, %s)",
				 (long long)cs__run_rank_of(r, l), cs_stream_name((cs_stream)s), rs->cnt[s],
				 r->shared.env.progs[rs->tmpl].nops[s], op->micro,
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
	if (r->crew) {
		cs_status st = cs__run_parts(r, diag);
		if (st != CS_OK)
			return st;
	} else {
		for (int64_t l = 0; l < r->shared.nlocal; l++)
			cs__run_try_rank(r, l);
		cs_sim_run(r->sim, 0);
	}
	if (r->progress == CS_PROGRESS_TERMINAL)
		fputs("\r\033[K", stderr);
	if (r->failed == CS_ERR_SIM) {
		snprintf(diag->msg, sizeof(diag->msg), "simulated time exceeds 2^61 ns (73 years): an op or "
			 "a transfer takes far too long (check the bandwidths, peak FLOP/s and straggler "
			 "factors)");
		return CS_ERR_SIM;
	}
	if (r->failed) {
		snprintf(diag->msg, sizeof(diag->msg), "out of memory while simulating");
		return CS_ERR_NOMEM;
	}
	for (int64_t l = 0; l < r->shared.nlocal; l++)
		for (int s = 0; s < CS_STREAMS; s++)
			if (cs__run_head(r, &r->shared.ranks[l], s)) {
				describe_stuck(r, diag);
				return CS_ERR_SIM;
			}
	return CS_OK;
}

int64_t cs_runner_representative(const cs_runner *r, int64_t rank)
{
	if (!r->shared.fold_mask || cs__run_simulated(r, rank))
		return rank;
	const cs_mesh *m = r->shared.env.mesh;
	if (r->shared.nx)
		return rank + (r->shared.rep_dp - cs_mesh_coord(m, rank, CS_AXIS_DP)) * m->stride[CS_AXIS_DP];
	return cs_mesh_coord(m, rank, CS_AXIS_PP) * m->stride[CS_AXIS_PP];
}

int64_t cs_runner_whole_replicas(const cs_runner *r)
{
	return r->shared.fold_mask ? r->shared.nx : 0;
}

const cs_rank_stats *cs_runner_stats(const cs_runner *r, int64_t rank)
{
	if (!cs__run_simulated(r, rank))
		return NULL;
	return &r->shared.ranks[cs__run_local_of(r, rank)].st;
}

cs_time cs_runner_makespan(const cs_runner *r)
{
	return r->makespan;
}

uint64_t cs_runner_events(const cs_runner *r)
{
	return r->crew ? cs__run_parts_events(r) : cs_sim_events(r->sim);
}

const cs_coll_choice *cs_runner_last_choice(const cs_runner *r, cs_comm_kind kind)
{
	return &r->last_choice[kind];
}
