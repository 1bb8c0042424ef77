/*
 * planner.c - the plan search: enumerate, prune by memory and validity,
 * order the survivors by estimate, simulate the best of them (folded) on a
 * pool of threads, rank by step time.
 *
 * Each worker owns its scratch scenario; the plans array is shared but
 * every job writes only its own element, and the next job is taken with an
 * atomic counter, so the threads share nothing else.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "model/memory.h"
#include "plan/planner.h"
#include "run/simulate_int.h"

#define MAX_THREADS 256

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* ---- the list of surviving plans ---------------------------------------- */

typedef struct plan_list {
	cs_plan *v;
	int64_t n, cap;
} plan_list;

static int push(plan_list *l, const cs_plan *p)
{
	if (l->n == l->cap) {
		int64_t cap = l->cap ? 2 * l->cap : 256;
		cs_plan *v = realloc(l->v, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *p;
	return 0;
}

static bool same_plan(const cs_plan *a, const cs_plan *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->dp == b->dp && a->cp == b->cp &&
	       a->ep == b->ep && a->vstages == b->vstages && a->micro_batch == b->micro_batch &&
	       a->sharding == b->sharding && a->recompute == b->recompute;
}

static int by_estimate(const void *x, const void *y)
{
	const cs_plan *a = x, *b = y;
	if (a->estimate_s != b->estimate_s)
		return a->estimate_s < b->estimate_s ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Step time, then less memory, then enumeration order. */
static int by_step(const void *x, const void *y)
{
	const cs_plan *a = x, *b = y;
	if (a->step_time_s != b->step_time_s)
		return a->step_time_s < b->step_time_s ? -1 : 1;
	if (a->mem_bytes != b->mem_bytes)
		return a->mem_bytes < b->mem_bytes ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* ---- enumeration -------------------------------------------------------- */

typedef struct search_ctx {
	const cs_scenario *base;
	cs_scenario *scratch;
	cs_plan_search *s;
	plan_list keep;
} search_ctx;

/* Count p, prune it or keep it. -1 only when out of memory. */
static int consider(search_ctx *c, cs_plan *p)
{
	cs_plan_search *s = c->s;
	cs_scenario *sc = c->scratch;
	cs_diag diag;

	p->index = s->considered++;
	p->sequence_parallel = p->tp > 1;
	p->tp_beyond_domain = p->tp > c->base->cluster.scale_up_domain;
	cs__plan_fill(c->base, p, sc);
	cs_mem_breakdown mem = cs_mem_per_gpu(&sc->model, &sc->training, &sc->parallel,
					      &sc->cluster.gpu, sc->cluster.gpus_per_node);
	p->mem_bytes = mem.total;
	if (mem.total > s->budget_bytes) {
		s->pruned_memory++;
		return 0;
	}
	diag.msg[0] = '\0';
	if (cs_config_validate(sc, &diag) != CS_OK) {
		if (!s->first_invalid[0])
			snprintf(s->first_invalid, sizeof s->first_invalid, "%.250s", diag.msg);
		s->pruned_invalid++;
		return 0;
	}
	p->estimate_s = cs_plan_estimate(sc, p);
	return push(&c->keep, p);
}

static int enumerate(search_ctx *c)
{
	static const cs_recompute rcs[] = {CS_RECOMPUTE_NONE, CS_RECOMPUTE_SELECTIVE,
					   CS_RECOMPUTE_FULL};
	/* zero2 stands for FSDP's shard-grad-op too: the same memory, and the
	 * same schedule while parameter gathers overlap (the default) */
	static const cs_sharding shs[] = {CS_SHARD_NONE, CS_SHARD_ZERO1, CS_SHARD_ZERO2,
					  CS_SHARD_ZERO3};
	static const int64_t vs[] = {1, 2, 4};
	const cs_scenario *b = c->base;
	const cs_model_spec *m = &b->model;
	int64_t gpus = cs_scenario_gpus(b), domain = b->cluster.scale_up_domain;
	int64_t mbs[4] = {1, 2, 4, 0}, nmb = 3, cp_max = 1;

	if (b->training.micro_batch != 1 && b->training.micro_batch != 2 &&
	    b->training.micro_batch != 4)
		mbs[nmb++] = b->training.micro_batch;
	if (b->training.seq_len >= CS_PLAN_CP_SEQ)
		cp_max = CS_PLAN_CP_MAX;
	for (int64_t tp = 1; tp <= m->heads && tp <= 2 * domain && tp <= gpus; tp++) {
		if (m->heads % tp)
			continue;
		for (int64_t cp = 1; cp <= cp_max; cp *= 2) {
			if (gpus % (tp * cp))
				continue;
			int64_t rest = gpus / (tp * cp);
			for (int64_t pp = 1; pp <= m->layers && pp <= rest; pp++) {
				if (rest % pp)
					continue;
				int64_t dp = rest / pp;
				for (size_t iv = 0; iv < 3 && (iv == 0 || pp > 1); iv++) {
					for (int64_t im = 0; im < nmb; im++) {
						for (size_t is = 0; is < 4 && (is == 0 || dp * cp > 1); is++) {
							for (size_t ir = 0; ir < 3; ir++) {
								cs_plan p = {0};
								p.tp = tp;
								p.pp = pp;
								p.dp = dp;
								p.cp = cp;
								p.ep = gcd64(b->parallel.ep, dp);
								p.vstages = vs[iv];
								p.micro_batch = mbs[im];
								p.sharding = shs[is];
								p.recompute = rcs[ir];
								if (consider(c, &p) != 0)
									return -1;
							}
						}
					}
				}
			}
		}
	}
	return 0;
}

/* ---- simulation --------------------------------------------------------- */

typedef struct pool {
	const cs_scenario *base;
	const cs_kprof *prof;   /* the GPU's kernel profile, loaded once for every plan */
	cs_plan **jobs;
	int64_t n;
	atomic_llong next;
	pthread_mutex_t lock;   /* guards failure */
	char *failure;          /* the first failure's message */
	size_t failure_size;
} pool;

static void failed(pool *P, const cs_plan *p, const char *msg)
{
	pthread_mutex_lock(&P->lock);
	if (!P->failure[0])
		snprintf(P->failure, P->failure_size, "tp %lld pp %lld dp %lld cp %lld: %.180s",
			 (long long)p->tp, (long long)p->pp, (long long)p->dp, (long long)p->cp, msg);
	pthread_mutex_unlock(&P->lock);
}

static void simulate_one(pool *P, cs_plan *p, cs_scenario *sc)
{
	cs_diag diag;
	cs_result *res = NULL;

	p->simulated = false;
	diag.msg[0] = '\0';
	if (cs_plan_apply(P->base, p, sc, &diag) != CS_OK) {
		failed(P, p, diag.msg);
		return;
	}
	if (cs__simulate_prof(sc, NULL, 0, P->prof, &res, &diag) != CS_OK) {
		failed(P, p, diag.msg);
		cs_result_free(res);
		return;
	}
	const cs_metrics *m = cs_result_metrics(res);
	p->step_time_s = m->step_time_s;
	p->mfu = m->mfu;
	p->tflops_per_gpu = m->tflops_per_gpu;
	p->tokens_per_s = m->tokens_per_s;
	p->compute_s = m->compute_s;
	p->bubble_s = m->bubble_s;
	p->bound = CS_PLAN_BOUND_COMPUTE;
	double worst = m->compute_s;
	for (int k = 0; k < CS_COMM_KINDS; k++) {
		p->exposed_s[k] = m->exposed_comm_s[k];
		if (m->exposed_comm_s[k] > worst) {
			worst = m->exposed_comm_s[k];
			p->bound = CS_PLAN_BOUND_COMM + k;
		}
	}
	if (m->bubble_s > worst)
		p->bound = CS_PLAN_BOUND_BUBBLE;
	p->simulated = true;
	cs_result_free(res);
}

static void *worker(void *arg)
{
	pool *P = arg;
	cs_scenario *sc = malloc(sizeof *sc);

	if (!sc)
		return NULL;   /* the other threads (or the caller) take the jobs */
	for (;;) {
		long long i = atomic_fetch_add(&P->next, 1);
		if (i >= P->n)
			break;
		simulate_one(P, P->jobs[i], sc);
	}
	free(sc);
	return NULL;
}

static void run_pool(pool *P, int jobs)
{
	pthread_t th[MAX_THREADS];
	int started = 0;

	if (jobs > MAX_THREADS)
		jobs = MAX_THREADS;
	if ((int64_t)jobs > P->n)
		jobs = (int)P->n;
	for (int i = 1; i < jobs; i++) {
		if (pthread_create(&th[started], NULL, worker, P) != 0)
			break;
		started++;
	}
	worker(P);   /* the calling thread works too */
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

/* ---- the search --------------------------------------------------------- */

void cs_plan_search_free(cs_plan_search *s)
{
	if (!s)
		return;
	free(s->plans);
	free(s);
}

/* Pick at most s->max_sims survivors by estimate, the heuristic's plan
 * among them when it survived. Returns the number picked (at the front). */
static int64_t select_survivors(plan_list *keep, const cs_plan *h, int64_t max_sims)
{
	if (keep->n <= max_sims)
		return keep->n;
	int64_t hi = -1;
	for (int64_t i = 0; i < keep->n; i++)
		if (same_plan(&keep->v[i], h))
			hi = i;
	cs_plan hp = hi >= 0 ? keep->v[hi] : *h;
	if (keep->n > 1)
		qsort(keep->v, (size_t)keep->n, sizeof *keep->v, by_estimate);
	if (hi >= 0) {
		bool in = false;
		for (int64_t i = 0; i < max_sims; i++)
			in = in || same_plan(&keep->v[i], &hp);
		if (!in)
			keep->v[max_sims - 1] = hp;
	}
	return max_sims;
}

cs_status cs_plan_search_run(const cs_scenario *base_in, const cs_plan_opts *opts,
			     cs_plan_search **out, cs_diag *diag)
{
	cs_plan_opts o = opts ? *opts : (cs_plan_opts){0};
	double t0 = now_s();
	cs_status st = CS_ERR_NOMEM;
	search_ctx c = {0};
	cs_scenario *base = NULL;
	cs_plan **jobs = NULL;
	cs_kprof *prof = NULL;
	cs_plan_search *s;
	cs_diag scratch;

	if (!diag)
		diag = &scratch;
	*out = NULL;
	if (o.headroom == 0.0)
		o.headroom = CS_PLAN_HEADROOM;
	if (!(o.headroom > 0.0 && o.headroom <= 1.0)) {
		snprintf(diag->msg, sizeof diag->msg, "'headroom' (%g) must be in (0, 1]", o.headroom);
		return CS_ERR_INPUT;
	}
	if (o.max_sims <= 0)
		o.max_sims = CS_PLAN_MAX_SIMS;
	if (o.jobs <= 0)
		o.jobs = 1;
	s = calloc(1, sizeof *s);
	base = malloc(sizeof *base);
	c.scratch = malloc(sizeof *c.scratch);
	if (!s || !base || !c.scratch)
		goto fail;
	*base = *base_in;
	if (o.gpus > 0 && (st = cs_plan_resize(base, o.gpus, diag)) != CS_OK)
		goto fail;
	st = CS_ERR_NOMEM;
	c.base = base;
	c.s = s;
	s->gpus = cs_scenario_gpus(base);
	s->headroom = o.headroom;
	s->budget_bytes = o.headroom * base->cluster.gpu.hbm_bytes;
	s->max_sims = o.max_sims;
	s->jobs = o.jobs;

	cs_plan_heuristic(base, &s->heuristic, &s->heuristic_fits);
	s->heuristic.index = -1;
	s->heuristic.tp_beyond_domain = false;
	{
		cs_diag d2;
		s->heuristic_valid = cs_plan_apply(base, &s->heuristic, c.scratch, &d2) == CS_OK;
		if (!s->heuristic_valid)
			snprintf(s->heuristic_note, sizeof s->heuristic_note, "refused: %.140s", d2.msg);
		else
			s->heuristic.mem_bytes = cs_mem_per_gpu(&c.scratch->model, &c.scratch->training,
				&c.scratch->parallel, &c.scratch->cluster.gpu,
				c.scratch->cluster.gpus_per_node).total;
		s->heuristic.estimate_s = s->heuristic_valid ? cs_plan_estimate(c.scratch, &s->heuristic)
							     : 0.0;
	}

	if (enumerate(&c) != 0)
		goto fail;
	s->survived = c.keep.n;
	int64_t pick = select_survivors(&c.keep, &s->heuristic, o.max_sims);
	s->skipped = s->survived - pick;
	s->simulated = pick;

	jobs = malloc((size_t)(pick + 1) * sizeof *jobs);
	if (!jobs)
		goto fail;
	for (int64_t i = 0; i < pick; i++)
		jobs[i] = &c.keep.v[i];
	int64_t njobs = pick;
	if (s->heuristic_valid)
		jobs[njobs++] = &s->heuristic;
	if ((st = cs_config_load_profile(base, &prof, diag)) != CS_OK)
		goto fail;
	st = CS_ERR_NOMEM;
	pool P = {.base = base, .prof = prof, .jobs = jobs, .n = njobs, .failure = s->first_failure,
		  .failure_size = sizeof s->first_failure};
	atomic_init(&P.next, 0);
	if (pthread_mutex_init(&P.lock, NULL) != 0)
		goto fail;
	run_pool(&P, o.jobs);
	pthread_mutex_destroy(&P.lock);

	/* keep the simulated plans that succeeded, best first */
	int64_t n = 0;
	for (int64_t i = 0; i < pick; i++) {
		if (c.keep.v[i].simulated)
			c.keep.v[n++] = c.keep.v[i];
		else
			s->failed++;
	}
	if (n > 1) /* qsort takes no NULL array, even of none */
		qsort(c.keep.v, (size_t)n, sizeof *c.keep.v, by_step);
	s->plans = c.keep.v;
	s->nplans = n;
	c.keep.v = NULL;

	if (s->heuristic_valid && s->heuristic.mem_bytes > s->budget_bytes) {
		snprintf(s->heuristic_note, sizeof s->heuristic_note, "over the memory budget "
			 "(%.1f GB of %.1f GB), simulated for reference only",
			 s->heuristic.mem_bytes / 1e9, s->budget_bytes / 1e9);
	} else if (s->heuristic_valid && s->heuristic.simulated) {
		s->heuristic_rank = 1;
		for (int64_t i = 0; i < n; i++) {
			const cs_plan *p = &s->plans[i];
			if (same_plan(p, &s->heuristic))
				break;
			if (p->step_time_s < s->heuristic.step_time_s ||
			    (p->step_time_s == s->heuristic.step_time_s &&
			     p->mem_bytes < s->heuristic.mem_bytes))
				s->heuristic_rank++;
		}
	} else if (s->heuristic_valid) {
		snprintf(s->heuristic_note, sizeof s->heuristic_note, "its simulation failed");
	}
	s->wall_s = now_s() - t0;
	*out = s;
	s = NULL;
	st = CS_OK;
fail:
	if (st == CS_ERR_NOMEM)
		snprintf(diag->msg, sizeof diag->msg, "out of memory in the plan search");
	free(jobs);
	free(c.keep.v);
	free(c.scratch);
	free(base);
	cs_kprof_free(prof);
	cs_plan_search_free(s);
	return st;
}
