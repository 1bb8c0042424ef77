/*
 * runner.c - a runner's life: made per owner (the state its engines
 * share: the ranks, templates and comm tables; its own engine, the flow
 * network, the parts), run to its end or to a deadlock it describes, read,
 * freed; and the progress line.
 *
 * Per-rank state is a program counter and a completion counter per stream,
 * two mailbox counters and a few accumulators (rank.h); per group instance
 * a rendezvous slot (runner_coll.c). Nothing grows with the number of ops
 * a rank runs. The steps an op takes are in step.c.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "run/runner_int.h"

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

/* The ranks' state, zeroed. Ops visit ranks in no order a cache can
 * follow, so a large array is asked for on huge pages, where the TLB
 * covers it (an advice the kernel may ignore). */
static cs__rank *alloc_ranks(size_t n)
{
	size_t size = n * sizeof(cs__rank), align = _Alignof(cs__rank);
#ifdef MADV_HUGEPAGE
	const size_t huge = (size_t)2 << 20;
	if (size >= huge) {
		align = huge;
		size = (size + huge - 1) / huge * huge;
	}
#endif
	cs__rank *rs = aligned_alloc(align, size);
	if (!rs)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align > _Alignof(cs__rank))
		(void)madvise(rs, size, MADV_HUGEPAGE);
#endif
	memset(rs, 0, size);
	return rs;
}

/* Table t of group kind `kind`: per instance a rendezvous slot and a
 * shape, and what the critical path and degraded links keep. */
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

/* The comm tables of every group kind and stream the programs use
 * (cs__run_shared.comm): allocated up front, not at first use, so that the
 * parts of a partitioned run, copies of this runner, share them. */
static int tables(cs_runner *r)
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
		sh->times = calloc((size_t)sh->nlocal, sizeof(cs__rank_times));
		if (!sh->times)
			return -1;
	}
	if (env->critical_path) {
		sh->paths = malloc((size_t)sh->nlocal * CS__PATHS_PER_RANK * sizeof *sh->paths);
		sh->path_refs = malloc((size_t)sh->nlocal * sizeof *sh->path_refs);
		if (!sh->paths || !sh->path_refs)
			return -1;
		for (int64_t l = 0; l < sh->nlocal; l++)
			for (int c = 0; c < CS__PATHS_PER_RANK; c++)
				cs_path_start(&sh->paths[l * CS__PATHS_PER_RANK + c], cs__run_rank_of(r, l));
	}
	if (tables(r))
		return -1;
	for (int64_t l = 0; l < sh->nlocal; l++) {
		int64_t rank = cs__run_rank_of(r, l);
		cs__rank *rs = &sh->ranks[l];
		rs->tmpl = env->tmpl_of ? env->tmpl_of[rank] : (uint16_t)cs_mesh_coord(m, rank, CS_AXIS_PP);
		rs->factor = env->compute_factor ? env->compute_factor[rank] : 1.0f;
		if (env->clock) { /* the step before ran the same program */
			const cs_program *pg = &env->progs[rs->tmpl];
			double all = pg->compute_ns > 0 ? (double)pg->compute_ns : 1.0;
			rs->clk_g = (double)pg->class_ns[CS_COMPUTE_GEMM] / all;
			rs->clk_h = pg->spare / all;
		}
		rs->wait_counter = CS__NO_COUNTER;
		rs->retry = 0xff;
		memset(rs->path_from, CS__PATH_OWN, sizeof rs->path_from);
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
	free(sh->rep_of);
	for (int k = 0; k < CS_GROUP_KINDS; k++) {
		free(sh->cross[k]);
		for (int s = 0; s < CS_STREAMS; s++) {
			cs__comm_table *t = &sh->comm[k][s];
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
	free(sh->path_refs);
	free(sh->times);
	free(sh->ranks);
}

/* What this engine owns, made with the tuner it asks and its progress
 * (CS_PROGRESS_*): 0, or -1 when out of memory. */
static int own_init(cs_runner *r, cs_coll *coll, int progress)
{
	r->coll = coll;
	r->progress = progress;
	for (int c = 0; c < CS_COMM_KINDS; c++)
		r->last_at[c] = -1;
	r->sim = cs_sim_new();
	return r->sim && coll ? 0 : -1;
}

cs_runner *cs_runner_new(const cs_run_env *env)
{
	cs_runner *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (shared_init(r, env) || own_init(r, env->coll, env->progress) ||
	    (env->sc->coll.fidelity == CS_FIDELITY_FLOW && cs__run_flow_init(r)) || cs__run_partition(r)) {
		cs_runner_free(r);
		return NULL;
	}
	for (int64_t l = 0; l < r->shared.nlocal; l++)
		for (int st = 0; st < CS_STREAMS; st++)
			r->ops_total += (uint64_t)env->progs[r->shared.ranks[l].tmpl].nops[st];
	return r;
}

/* What own_init made, and what the engine made since (the flow network, a
 * part's shares of groups across parts), all but the tuner. */
static void own_free(cs_runner *r)
{
	cs_sim_free(r->sim);
	cs_net_free(r->net);
	cs_net_free(r->idle);
	free(r->members);
	for (int k = 0; k < CS_GROUP_KINDS; k++)
		for (int s = 0; s < CS_STREAMS; s++)
			free(r->part_groups[k][s]);
	free(r->out);
}

cs_runner *cs__run_part_new(const cs_runner *root, int64_t lo, int64_t hi)
{
	cs_runner *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->shared = root->shared;
	p->lo = lo;
	p->hi = hi;
	if (own_init(p, cs_coll_clone(root->coll), 0)) {
		cs_runner_free(p);
		return NULL;
	}
	return p;
}

void cs_runner_free(cs_runner *r)
{
	if (!r)
		return;
	cs__run_parts_free(r);
	own_free(r);
	if (r->hi) /* a part: the tuner is its copy, the shared state the root's */
		cs_coll_free(r->coll);
	else
		shared_free(&r->shared);
	free(r);
}

/* The run stopped with ops left: the first rank and stream that waits,
 * and on what. */
static void describe_stuck(const cs_runner *r, cs_diag *diag)
{
	for (int64_t l = 0; l < r->shared.nlocal; l++) {
		const cs__rank *rs = &r->shared.ranks[l];
		for (int s = 0; s < CS_STREAMS; s++) {
			const cs_op *op = cs__run_head(r, rs, s);
			if (!op)
				continue;
			int32_t short_by;
			int c = cs__run_unmet_dep(&r->shared.tmpls[rs->tmpl], rs, op, &short_by);
			snprintf(diag->msg, sizeof(diag->msg),
				 "simulation deadlocked: rank %lld stream '%s' stopped at op %d of %d "
				 "(micro-batch %d, %s)",
				 (long long)cs__run_rank_of(r, l), cs_stream_name((cs_stream)s), rs->cnt[s],
				 r->shared.env.progs[rs->tmpl].nops[s], op->micro,
				 c >= 0 ? "waiting on a dependency"
					: "waiting for its group's other members");
			return;
		}
	}
	snprintf(diag->msg, sizeof(diag->msg), "simulation deadlocked");
}

cs_status cs_runner_run(cs_runner *r, cs_diag *diag)
{
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	r->next_progress_events = 1u << 20;
	if (r->parts) {
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
		snprintf(diag->msg, sizeof(diag->msg),
			 "simulated time exceeds 2^61 ns (73 years): an op or "
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
	if (r->shared.nx) {
		int64_t d = cs_mesh_coord(m, rank, CS_AXIS_DP);
		return rank + (r->shared.rep_of[d] - d) * m->stride[CS_AXIS_DP];
	}
	return cs_mesh_coord(m, rank, CS_AXIS_PP) * m->stride[CS_AXIS_PP];
}

int64_t cs_runner_simulated_ranks(const cs_runner *r) { return r->shared.nlocal; }

const cs_rank_stats *cs_runner_stats(const cs_runner *r, int64_t rank)
{
	if (!cs__run_simulated(r, rank))
		return NULL;
	return &r->shared.ranks[cs__run_local_of(r, rank)].st;
}

cs_time cs_runner_makespan(const cs_runner *r) { return r->makespan; }

const cs_coll_choice *cs_runner_last_choice(const cs_runner *r, cs_comm_kind kind)
{
	return &r->last_choice[kind];
}
