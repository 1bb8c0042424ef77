/*
 * parts.c - one run split into parts that advance in parallel.
 *
 * When the data-parallel axis is the mesh's outermost, the ranks of a
 * replica interact among themselves through pipeline messages and tensor,
 * context and expert collectives at zero delay, but with other replicas only
 * through data-parallel collectives, which take at least their latency. The
 * runner then splits the replicas into parts, each a copy of the runner with
 * its own engine (which merges its same-time completions) and tuner,
 * sharing the rank state (each part touches only its own ranks) and the
 * comm tables.
 *
 * The parts advance in windows, as in YAWNS: every part runs its events
 * before the earliest pending time plus the lookahead, the shortest time a
 * collective across parts can take; then the root counts the parts whose
 * members of such a collective have all arrived, and starts those complete
 * at the latest arrival. Their end lies at or after the window's end, so no
 * part has run past it. What a part does within a window depends only on
 * its own state, and the root's work between windows is done in part order:
 * the result does not depend on how many threads run the parts.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "run/runner_int.h"

/* At most this many parts, unless the scenario says otherwise: enough for
 * 16 threads to share the work evenly in 4 parts each; a part is at least
 * one replica, and at least MIN_PART_RANKS ranks, whose state (384 bytes
 * each) then about fills a core's L2. More parts cost more events (a
 * merged event of same-time completions holds one part's ranks), and parts
 * smaller than that gain no locality for it (docs/performance.md measures
 * both). The count does not depend on the threads, so neither does any
 * figure of the report. */
enum { MAX_PARTS = 64, MIN_PART_RANKS = 2048 };

typedef struct cs__parts {
	cs_runner **part;
	int32_t nparts;
	int threads; /* the root's thread and threads - 1 workers */
	cs_time lookahead;
	cs_time end; /* of the window being run */
	int lost;    /* a collective across parts ended inside a window */
	pthread_t *tid;
	atomic_uint go;  /* windows started */
	atomic_int done; /* workers through the current window */
	atomic_int next; /* the next part to run in this window */
	atomic_bool quit;
} cs__parts;

/* ---- the parts' side ---------------------------------------------------- */

void cs__run_cross_arrive(cs_runner *r, int64_t local, cs__rank *rs, int s, const cs_op *op,
			  cs__comm_table *t, int64_t gi)
{
	cs__part_group **tab = &r->part_groups[op->group][s];
	if (!*tab && !(*tab = calloc((size_t)t->ngroups, sizeof **tab))) {
		r->failed = CS_ERR_NOMEM;
		return;
	}
	cs__part_group *pg = &(*tab)[gi];
	const cs__slot *sl = &t->slots[gi];
	if (pg->expected == 0) {
		pg->off = cs__lower_bound(sl->locals, sl->expected, r->lo);
		pg->expected = (int32_t)(cs__lower_bound(sl->locals, sl->expected, r->hi) - pg->off);
	}
	cs__run_hold(r, local, rs, s, op, t, gi, &pg->tuned);
	if (++pg->arrived < pg->expected)
		return;
	pg->arrived = 0;
	if (r->nout == r->capout) {
		int32_t cap = r->capout ? 2 * r->capout : 64;
		cs__arrival *o = realloc(r->out, (size_t)cap * sizeof *o);
		if (!o) {
			r->failed = CS_ERR_NOMEM;
			return;
		}
		r->out = o;
		r->capout = cap;
	}
	r->out[r->nout++] = (cs__arrival){
		.op = op, .gi = gi, .at = cs_sim_now(r->sim), .local = local, .kind = op->group, .stream = s
	};
}

/* ---- the root's side ----------------------------------------------------- */

/* A part's share of a collective is complete: when it is the last part's,
 * the collective starts at the latest arrival (the later part's on a tie)
 * and ends in each part that holds members. */
static void arrive(cs_runner *r, const cs__arrival *a)
{
	cs__parts *c = r->parts;
	cs__comm_table *t = &r->shared.comm[a->kind][a->stream];
	cs__slot *sl = &t->slots[a->gi];
	if (sl->arrived == 0 || a->at >= sl->start) {
		sl->start = a->at;
		sl->last = a->local;
	}
	if (++sl->arrived < sl->nparts)
		return;
	sl->arrived = 0;
	cs_time at = sl->start, d = cs__run_coll_begin(r, t, a->gi, a->stream, a->op, sl->last, at);
	if (at + d > CS_TIME_HORIZON) {
		r->failed = CS_ERR_SIM;
		return;
	}
	if (at + d < c->end)
		c->lost = 1;
	uint64_t tag = cs__coll_ev_pack((cs__coll_ev){ .slot = a->gi, .kind = a->kind, .stream = a->stream });
	for (int32_t i = 0; i < sl->nparts; i++) {
		cs_runner *p = c->part[sl->parts[i]];
		if (cs_sim_at(p->sim, at + d, cs__run_on_coll_done, p, tag) != 0)
			r->failed = CS_ERR_NOMEM;
	}
}

static void collect_arrivals(cs_runner *r)
{
	cs__parts *c = r->parts;
	for (int32_t j = 0; j < c->nparts; j++) {
		cs_runner *p = c->part[j];
		for (int32_t i = 0; i < p->nout; i++)
			arrive(r, &p->out[i]);
		p->nout = 0;
		if (p->failed && !r->failed)
			r->failed = p->failed;
	}
}

/* ---- threads ------------------------------------------------------------- */

/* Run parts before the window's end until none is left: each thread takes
 * the next part not yet taken, so a thread that the machine slows does
 * less (the parts are independent within a window). */
static void run_share(cs__parts *c)
{
	for (;;) {
		int32_t j = atomic_fetch_add_explicit(&c->next, 1, memory_order_relaxed);
		if (j >= c->nparts)
			return;
		cs_sim_run_before(c->part[j]->sim, c->end);
	}
}

/* Wait a little on the spot, then give the core away: a machine may have
 * fewer cores than threads. */
static void pause_briefly(unsigned *spins)
{
	if (++*spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		return;
	}
	sched_yield();
}

static void *work(void *arg)
{
	cs__parts *c = arg;
	unsigned seen = 0;
	for (;;) {
		unsigned spins = 0, g;
		while ((g = atomic_load_explicit(&c->go, memory_order_acquire)) == seen)
			pause_briefly(&spins);
		seen = g;
		if (atomic_load_explicit(&c->quit, memory_order_acquire))
			return NULL;
		run_share(c);
		atomic_fetch_add_explicit(&c->done, 1, memory_order_acq_rel);
	}
}

static void run_window(cs__parts *c)
{
	atomic_store_explicit(&c->next, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->go, 1, memory_order_acq_rel);
	run_share(c);
	unsigned spins = 0;
	while (atomic_load_explicit(&c->done, memory_order_acquire) != c->threads - 1)
		pause_briefly(&spins);
	atomic_store_explicit(&c->done, 0, memory_order_relaxed);
}

static void start_threads(cs__parts *c)
{
	c->tid = malloc((size_t)c->threads * sizeof *c->tid);
	int started = 1;
	if (c->tid)
		for (; started < c->threads; started++)
			if (pthread_create(&c->tid[started], NULL, work, c) != 0)
				break;
	/* fewer threads than asked: the parts are shared among those there are */
	c->threads = started;
}

static void stop_threads(cs__parts *c)
{
	atomic_store_explicit(&c->quit, true, memory_order_release);
	atomic_fetch_add_explicit(&c->go, 1, memory_order_acq_rel);
	for (int i = 1; i < c->threads; i++)
		pthread_join(c->tid[i], NULL);
	c->threads = 1;
}

/* The events the parts' engines have run. */
static uint64_t parts_events(const cs__parts *c)
{
	uint64_t n = 0;
	for (int32_t j = 0; j < c->nparts; j++)
		n += cs_sim_events(c->part[j]->sim);
	return n;
}

cs_status cs__run_parts(cs_runner *r, cs_diag *diag)
{
	cs__parts *c = r->parts;
	for (int32_t j = 0; j < c->nparts; j++)
		for (int64_t l = c->part[j]->lo; l < c->part[j]->hi; l++)
			cs__run_try_rank(c->part[j], l);
	c->end = 0;
	collect_arrivals(r);
	start_threads(c);
	while (!r->failed && !c->lost) {
		cs_time t = CS_TIME_MAX;
		for (int32_t j = 0; j < c->nparts; j++) {
			cs_time n = cs_sim_next_time(c->part[j]->sim);
			t = n < t ? n : t;
		}
		if (t == CS_TIME_MAX)
			break;
		c->end = t < CS_TIME_MAX - c->lookahead ? t + c->lookahead : CS_TIME_MAX;
		run_window(c);
		collect_arrivals(r);
		if (r->progress) {
			r->ops_done = 0;
			for (int32_t j = 0; j < c->nparts; j++)
				r->ops_done += c->part[j]->ops_done;
			cs__run_progress(r, parts_events(c), t);
		}
	}
	stop_threads(c);
	/* the parts' results: the last op's end, the last choice of each kind */
	for (int32_t j = 0; j < c->nparts; j++) {
		const cs_runner *p = c->part[j];
		if (p->makespan > r->makespan)
			r->makespan = p->makespan;
		for (int k = 0; k < CS_COMM_KINDS; k++)
			if (p->last_at[k] > r->last_at[k]) {
				r->last_at[k] = p->last_at[k];
				r->last_choice[k] = p->last_choice[k];
			}
	}
	if (c->lost) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "internal error: a collective across parts of the "
			 "run ended before its window did (lookahead %lld ns)",
			 (long long)c->lookahead);
		return CS_ERR_SIM;
	}
	return CS_OK;
}

/* A partitioned run's events are its parts'. */
uint64_t cs_runner_events(const cs_runner *r)
{
	return r->parts ? parts_events(r->parts) : cs_sim_events(r->sim);
}

/* ---- setup --------------------------------------------------------------- */

/* How many parts a run splits into: 1 unless every rank is simulated, the
 * programs are the plan's (pipeline peers within a replica) and the
 * data-parallel axis is the outermost. */
static int32_t nparts_for(const cs_runner *r)
{
	const cs_mesh *m = r->shared.env.mesh;
	int64_t dp = m->deg[CS_AXIS_DP];
	if (r->net || r->shared.fold_mask || r->shared.env.tmpl_of || r->shared.env.first_rank != 0 ||
	    r->shared.nlocal != m->world || dp < 2 || m->stride[CS_AXIS_DP] * dp != m->world)
		return 1;
	int64_t most = r->shared.env.sc->sim.parts;
	if (most <= 0) {
		most = m->world / MIN_PART_RANKS;
		most = most < 1 ? 1 : most > MAX_PARTS ? MAX_PARTS : most;
	}
	return (int32_t)(dp < most ? dp : most);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The part of each local, by data-parallel coordinate: part j holds
 * coordinates [j dp / n, (j + 1) dp / n). */
static int32_t part_of(const cs_runner *r, int32_t n, int64_t local)
{
	const cs_mesh *m = r->shared.env.mesh;
	int64_t d = local / m->stride[CS_AXIS_DP], dp = m->deg[CS_AXIS_DP];
	return (int32_t)(((d + 1) * n - 1) / dp);
}

/* Mark the instances of group kinds whose members lie in several parts, and
 * list those members once, sorted, with the parts they lie in. */
static int mark_crossing(cs_runner *r, int32_t n)
{
	const cs_mesh *m = r->shared.env.mesh;
	for (int k = 0; k < CS_GROUP_KINDS; k++) {
		int used = 0;
		int64_t ng = 0;
		for (int s = 0; s < CS_STREAMS; s++)
			if (r->shared.comm[k][s].slots) {
				used = 1;
				ng = r->shared.comm[k][s].ngroups;
			}
		if (!used)
			continue;
		int64_t *first = malloc((size_t)ng * sizeof *first);
		r->shared.cross[k] = calloc((size_t)ng, 1);
		if (!first || !r->shared.cross[k]) {
			free(first);
			return -1;
		}
		for (int64_t g = 0; g < ng; g++)
			first[g] = -1;
		int any = 0;
		for (int64_t l = 0; l < r->shared.nlocal; l++) {
			int64_t g = cs_mesh_group_index(m, (cs_group_kind)k, l, r->shared.gpn);
			if (first[g] < 0)
				first[g] = l;
			else if (!r->shared.cross[k][g] && part_of(r, n, first[g]) != part_of(r, n, l))
				r->shared.cross[k][g] = any = 1;
		}
		for (int s = 0; s < CS_STREAMS; s++) {
			cs__comm_table *t = &r->shared.comm[k][s];
			for (int64_t g = 0; t->slots && g < ng; g++) {
				if (!r->shared.cross[k][g])
					continue;
				cs__slot *sl = &t->slots[g];
				cs_group grp = cs_mesh_group(m, (cs_group_kind)k, first[g], r->shared.gpn);
				int64_t size = cs_group_size(&grp);
				sl->locals = malloc((size_t)size * sizeof *sl->locals);
				sl->parts = malloc((size_t)n * sizeof *sl->parts);
				if (!sl->locals || !sl->parts) {
					free(first);
					return -1;
				}
				for (int64_t i = 0; i < size; i++)
					sl->locals[i] = cs_group_member(&grp, i);
				qsort(sl->locals, (size_t)size, sizeof *sl->locals, cmp_i64);
				sl->expected = (int32_t)size;
				for (int64_t i = 0; i < size; i++) {
					int32_t p = part_of(r, n, sl->locals[i]);
					if (sl->nparts == 0 || sl->parts[sl->nparts - 1] != p)
						sl->parts[sl->nparts++] = p;
				}
				cs__run_group_shape(r, t, g, k, first[g]);
			}
		}
		free(first);
		if (!any) {
			free(r->shared.cross[k]);
			r->shared.cross[k] = NULL;
		}
	}
	return 0;
}

/* The shortest time any collective across parts can take: each op of a
 * crossing kind on each shape its crossing instances have (links degraded
 * only lengthen it). CS_TIME_MAX when there is none. */
static cs_time lookahead(cs_runner *r)
{
	cs_time best = CS_TIME_MAX;
	int64_t ntmpl = r->shared.env.mesh->deg[CS_AXIS_PP];
	for (int k = 0; k < CS_GROUP_KINDS; k++) {
		if (!r->shared.cross[k])
			continue;
		for (int s = 0; s < CS_STREAMS; s++) {
			const cs__comm_table *t = &r->shared.comm[k][s];
			const cs_group_shape *seen = NULL;
			for (int64_t g = 0; t->slots && g < t->ngroups; g++) {
				if (!r->shared.cross[k][g] ||
				    (seen && !memcmp(seen, &t->shapes[g], sizeof *seen)))
					continue;
				seen = &t->shapes[g];
				for (int64_t p = 0; p < ntmpl; p++)
					for (int32_t i = 0; i < r->shared.env.progs[p].nops[s]; i++) {
						const cs_op *op = &r->shared.env.progs[p].ops[s][i];
						if (op->kind != CS_OP_COLL || op->group != k)
							continue;
						cs_time d = cs_coll_time(r->coll, (cs_coll_op)op->coll, seen,
									 op->bytes, NULL);
						best = d < best ? d : best;
					}
			}
		}
	}
	return best;
}

/* Part j of n: the data-parallel coordinates [j dp / n, (j + 1) dp / n). */
static cs_runner *part_new(const cs_runner *r, int32_t j, int32_t n)
{
	const cs_mesh *m = r->shared.env.mesh;
	int64_t dp = m->deg[CS_AXIS_DP];
	return cs__run_part_new(r, (int64_t)j * dp / n * m->stride[CS_AXIS_DP],
				(int64_t)(j + 1) * dp / n * m->stride[CS_AXIS_DP]);
}

int cs__run_partition(cs_runner *r)
{
	int32_t n = nparts_for(r);
	if (n < 2)
		return 0;
	if (mark_crossing(r, n))
		return -1;
	cs_time la = lookahead(r);
	if (la <= 0)
		return 0; /* a collective across parts may take no time: run whole */
	cs__parts *c = calloc(1, sizeof *c);
	if (!c)
		return -1;
	r->parts = c;
	c->lookahead = la;
	c->part = calloc((size_t)n, sizeof *c->part);
	if (!c->part)
		return -1;
	c->nparts = n;
	for (int32_t j = 0; j < n; j++)
		if (!(c->part[j] = part_new(r, j, n)))
			return -1;
	int64_t want = r->shared.env.sc->sim.threads;
	if (want <= 0) { /* auto: the machine's cores */
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		want = cores > 0 ? cores : 1;
	}
	/* spans reach the caller in one order only when one thread runs */
	c->threads = r->shared.env.traced ? 1 : (int)(want < n ? want : n);
	return 0;
}

void cs__run_parts_free(cs_runner *r)
{
	cs__parts *c = r->parts;
	if (!c)
		return;
	for (int32_t j = 0; c->part && j < c->nparts; j++)
		cs_runner_free(c->part[j]);
	free(c->part);
	free(c->tid);
	free(c);
	r->parts = NULL;
}
