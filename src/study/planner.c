/*
 * planner.c - the plan search's own part: enumerate, prune by memory and
 * validity, order the survivors by estimate and pick the best of them; and,
 * once the study has simulated them (study/search.c), rank by step time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "model/memory.h"
#include "study/planner.h"

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
	return a->tp == b->tp && a->pp == b->pp && a->dp == b->dp && a->cp == b->cp && a->ep == b->ep &&
	       a->etp == b->etp && a->vstages == b->vstages && a->micro_batch == b->micro_batch &&
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
	cs_mem_breakdown mem = cs_mem_per_gpu(&sc->model, &sc->training, &sc->parallel, &sc->cluster.gpu,
					      cs_cluster_shard_unit(&sc->cluster));
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

/* The expert layouts tried for tp x cp x dp ranks, at most `cap`, as (ep,
 * etp) pairs: a dense model's one (the base's ep, as a gcd); for experts,
 * ep inside dp (etp 0, unfolded) for each power of two that divides dp
 * and the experts, then the experts folded (Megatron-Core's expert mesh)
 * with each power-of-two expert TP below tp x cp's span, over tp / etp x
 * cp x each power of two dividing dp. */
static int expert_layouts(const cs_scenario *b, int64_t tp, int64_t cp, int64_t dp, int64_t (*out)[2],
			  int cap)
{
	const cs_model_spec *m = &b->model;
	int n = 0;
	if (m->experts == 0) {
		out[n][0] = gcd64(b->parallel.ep, dp);
		out[n++][1] = 0;
		return n;
	}
	for (int64_t ep = 1; ep <= dp && n < cap; ep *= 2)
		if (dp % ep == 0 && m->experts % ep == 0) {
			out[n][0] = ep;
			out[n++][1] = 0;
		}
	for (int64_t etp = 1; etp <= tp && n < cap; etp *= 2) {
		int64_t in = tp / etp * cp;
		if (tp % etp != 0 || in == 1 || m->expert_ffn % etp != 0)
			continue;
		for (int64_t e = 1; e <= dp && n < cap; e *= 2)
			if (dp % e == 0 && m->experts % (in * e) == 0) {
				out[n][0] = in * e;
				out[n++][1] = etp;
			}
	}
	return n;
}

static int enumerate(search_ctx *c)
{
	static const cs_recompute rcs[] = { CS_RECOMPUTE_NONE, CS_RECOMPUTE_SELECTIVE, CS_RECOMPUTE_FULL };
	/* zero2 stands for FSDP's shard-grad-op too: the same memory, and the
	 * same schedule while parameter gathers overlap (the default) */
	static const cs_sharding shs[] = { CS_SHARD_NONE, CS_SHARD_ZERO1, CS_SHARD_ZERO2, CS_SHARD_ZERO3 };
	static const int64_t vs[] = { 1, 2, 4 };
	const cs_scenario *b = c->base;
	const cs_model_spec *m = &b->model;
	int64_t gpus = cs_scenario_gpus(b), domain = b->cluster.scale_up_domain;
	int64_t mbs[4] = { 1, 2, 4, 0 }, nmb = 3, cp_max = 1;

	if (b->training.micro_batch != 1 && b->training.micro_batch != 2 && b->training.micro_batch != 4)
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
				int64_t dp = rest / pp, layouts[64][2];
				int nl = expert_layouts(b, tp, cp, dp, layouts, 64);
				for (int il = 0; il < nl; il++) {
					for (size_t iv = 0; iv < 3 && (iv == 0 || pp > 1); iv++) {
						for (int64_t im = 0; im < nmb; im++) {
							for (size_t is = 0;
							     is < 4 && (is == 0 || dp * cp > 1); is++) {
								for (size_t ir = 0; ir < 3; ir++) {
									cs_plan p = { 0 };
									p.tp = tp;
									p.pp = pp;
									p.dp = dp;
									p.cp = cp;
									p.ep = layouts[il][0];
									p.etp = layouts[il][1];
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
	}
	return 0;
}

/* ---- the search --------------------------------------------------------- */

void cs_plan_search_free(cs_plan_search *s)
{
	if (!s)
		return;
	free(s->plans);
	free(s->base);
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

cs_status cs_plan_prepare(const cs_scenario *base_in, const cs_plan_opts *opts, cs_plan_search **out,
			  cs_diag *diag)
{
	cs_plan_opts o = opts ? *opts : (cs_plan_opts){ 0 };
	cs_status st = CS_ERR_NOMEM;
	search_ctx c = { 0 };
	cs_scenario *base = NULL;
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
	s->base = base;
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
								cs_cluster_shard_unit(&c.scratch->cluster))
							 .total;
		s->heuristic.estimate_s =
			s->heuristic_valid ? cs_plan_estimate(c.scratch, &s->heuristic) : 0.0;
	}

	if (enumerate(&c) != 0)
		goto fail;
	s->survived = c.keep.n;
	int64_t pick = select_survivors(&c.keep, &s->heuristic, o.max_sims);
	s->skipped = s->survived - pick;
	s->simulated = pick;
	s->plans = c.keep.v;
	s->nplans = pick;
	c.keep.v = NULL;
	*out = s;
	s = NULL;
	st = CS_OK;
fail:
	if (st == CS_ERR_NOMEM)
		snprintf(diag->msg, sizeof diag->msg, "out of memory in the plan search");
	free(c.keep.v);
	free(c.scratch);
	if (s && !s->base)
		free(base);
	cs_plan_search_free(s);
	return st;
}

void cs_plan_rank(cs_plan_search *s)
{
	/* keep the simulated plans that succeeded, best first */
	int64_t n = 0;
	for (int64_t i = 0; i < s->nplans; i++) {
		if (s->plans[i].simulated)
			s->plans[n++] = s->plans[i];
		else
			s->failed++;
	}
	if (n > 1) /* qsort takes no NULL array, even of none */
		qsort(s->plans, (size_t)n, sizeof *s->plans, by_step);
	s->nplans = n;

	if (s->heuristic_valid && s->heuristic.mem_bytes > s->budget_bytes) {
		snprintf(s->heuristic_note, sizeof s->heuristic_note,
			 "over the memory budget "
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
}
