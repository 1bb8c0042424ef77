/*
 * pipesim.c - executes generated pipeline orders on cs_sim (see pipesim.h).
 *
 * One event per op: its end. When an op ends, its stage moves on and the
 * stage waiting for it (the next virtual stage for F, the previous one for
 * B and BW) is offered its head op again. An op whose dependency has not
 * ended yet simply waits; a run that stops with ops left is a deadlock.
 */
#include "program/pipesim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pipe_stage {
	cs_sched_op *ops;
	int64_t n, pc;
	int busy;
} pipe_stage;

typedef struct pipe_run {
	cs_sim *sim;
	cs_schedule sched;
	int64_t p, m, v, nv;
	cs_pipe_times t;
	pipe_stage *st;
	cs_time *fdone, *bdone; /* [nv*m], end time or -1 */
	cs_pipe_span *spans;
	int64_t n_spans;
	int oom;
} pipe_run;

static void try_start(pipe_run *r, int64_t s);

static int64_t vstage_of(const pipe_run *r, int64_t s, const cs_sched_op *op)
{
	return cs_sched_virtual_stage(r->sched, r->p, r->v, s, op->chunk);
}

static void stage_of(const pipe_run *r, int64_t k, int64_t *s)
{
	int64_t c;
	cs_sched_stage_of(r->sched, r->p, r->v, k, s, &c);
}

static void on_end(cs_sim *sim, void *ctx, uint64_t arg)
{
	pipe_run *r = ctx;
	int64_t s = (int64_t)arg, other = -1;
	pipe_stage *st = &r->st[s];
	const cs_sched_op *op = &st->ops[st->pc];
	int64_t k = vstage_of(r, s, op);

	if (op->kind == CS_SCHED_F) {
		r->fdone[k * r->m + op->micro] = cs_sim_now(sim);
		if (k + 1 < r->nv)
			stage_of(r, k + 1, &other);
	} else if (op->kind != CS_SCHED_W) {
		r->bdone[k * r->m + op->micro] = cs_sim_now(sim);
		if (k > 0)
			stage_of(r, k - 1, &other);
	}
	st->busy = 0;
	st->pc++;
	try_start(r, s);
	if (other >= 0 && other != s)
		try_start(r, other);
}

static void try_start(pipe_run *r, int64_t s)
{
	pipe_stage *st = &r->st[s];
	if (st->busy || st->pc >= st->n || r->oom)
		return;
	const cs_sched_op *op = &st->ops[st->pc];
	int64_t k = vstage_of(r, s, op), j = op->micro;
	cs_time dur;

	switch (op->kind) {
	case CS_SCHED_F:
		if (k > 0 && r->fdone[(k - 1) * r->m + j] < 0)
			return;
		dur = r->t.f;
		break;
	case CS_SCHED_W:
		if (r->bdone[k * r->m + j] < 0)
			return;
		dur = r->t.w;
		break;
	default:
		if (r->fdone[k * r->m + j] < 0)
			return;
		if (k + 1 < r->nv && r->bdone[(k + 1) * r->m + j] < 0)
			return;
		dur = op->kind == CS_SCHED_B ? r->t.b : r->t.b + r->t.w;
		break;
	}
	cs_time now = cs_sim_now(r->sim);
	if (cs_sim_at(r->sim, now + dur, on_end, r, (uint64_t)s) != 0) {
		r->oom = 1;
		return;
	}
	st->busy = 1;
	r->spans[r->n_spans++] = (cs_pipe_span){ now, now + dur, s, *op };
}

typedef struct mem_ev {
	int64_t stage;
	cs_time at;
	int delta;
} mem_ev;

static int mem_ev_cmp(const void *a, const void *b)
{
	const mem_ev *x = a, *y = b;
	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return (x->delta > y->delta) - (x->delta < y->delta); /* frees first */
}

/* Peak live chunk activations per stage, divided by v. */
static int peaks(const pipe_run *r, double *peak)
{
	mem_ev *ev = malloc((size_t)r->n_spans * sizeof(*ev));
	int64_t n = 0;

	if (!ev && r->n_spans > 0)
		return -1;
	for (int64_t i = 0; i < r->n_spans; i++) {
		const cs_pipe_span *sp = &r->spans[i];
		if (sp->op.kind == CS_SCHED_F)
			ev[n++] = (mem_ev){ sp->stage, sp->start, +1 };
		else if (sp->op.kind != CS_SCHED_B)
			ev[n++] = (mem_ev){ sp->stage, sp->end, -1 };
	}
	qsort(ev, (size_t)n, sizeof(*ev), mem_ev_cmp);
	int64_t live = 0, best = 0;
	for (int64_t i = 0; i < n; i++) {
		if (i > 0 && ev[i].stage != ev[i - 1].stage) {
			peak[ev[i - 1].stage] = (double)best / (double)r->v;
			live = best = 0;
		}
		live += ev[i].delta;
		if (live > best)
			best = live;
	}
	if (n > 0)
		peak[ev[n - 1].stage] = (double)best / (double)r->v;
	free(ev);
	return 0;
}

static cs_status nomem(cs_diag *diag)
{
	snprintf(diag->msg, sizeof(diag->msg), "out of memory simulating the pipeline");
	return CS_ERR_NOMEM;
}

static cs_status build(pipe_run *r, cs_diag *diag)
{
	int64_t total = 0;

	r->st = calloc((size_t)r->p, sizeof(*r->st));
	if (!r->st)
		return nomem(diag);
	for (int64_t s = 0; s < r->p; s++) {
		int64_t n = cs_sched_stage_ops(r->sched, r->p, r->m, r->v, s, NULL, 0, diag);
		if (n < 0)
			return CS_ERR_INPUT;
		r->st[s].ops = malloc((size_t)(n > 0 ? n : 1) * sizeof(cs_sched_op));
		if (!r->st[s].ops)
			return nomem(diag);
		if (cs_sched_stage_ops(r->sched, r->p, r->m, r->v, s, r->st[s].ops, n, diag) != n)
			return CS_ERR_INPUT;
		r->st[s].n = n;
		total += n;
	}
	r->fdone = malloc((size_t)(2 * r->nv * r->m) * sizeof(cs_time));
	r->spans = malloc((size_t)total * sizeof(*r->spans));
	r->sim = cs_sim_new();
	if (!r->fdone || !r->spans || !r->sim)
		return nomem(diag);
	r->bdone = r->fdone + r->nv * r->m;
	for (int64_t i = 0; i < 2 * r->nv * r->m; i++)
		r->fdone[i] = -1;
	return CS_OK;
}

static cs_status finish(pipe_run *r, cs_pipe_result *out, cs_diag *diag)
{
	for (int64_t s = 0; s < r->p; s++) {
		const pipe_stage *st = &r->st[s];
		if (st->pc < st->n) {
			const cs_sched_op *op = &st->ops[st->pc];
			static const char kinds[] = "FBWX";
			snprintf(diag->msg, sizeof(diag->msg),
				 "schedule '%s' deadlocked: stage %lld waits at op %c%d (chunk %d)",
				 cs_sched_name(r->sched), (long long)s, kinds[op->kind & 3], (int)op->micro,
				 (int)op->chunk);
			return CS_ERR_SIM;
		}
	}
	out->peak_in_flight = calloc((size_t)r->p, sizeof(double));
	if (!out->peak_in_flight || peaks(r, out->peak_in_flight) != 0)
		return nomem(diag);
	for (int64_t i = 0; i < r->n_spans; i++) {
		const cs_pipe_span *sp = &r->spans[i];
		if (sp->end > out->makespan)
			out->makespan = sp->end;
		out->busy += sp->end - sp->start;
	}
	out->bubble_fraction =
		out->makespan > 0 ? 1.0 - (double)out->busy / ((double)r->p * (double)out->makespan) : 0.0;
	out->spans = r->spans;
	out->n_spans = r->n_spans;
	r->spans = NULL;
	out->events = cs_sim_events(r->sim);
	return CS_OK;
}

cs_status cs_pipe_run(cs_schedule sched, int64_t p, int64_t m, int64_t v, const cs_pipe_times *times,
		      cs_pipe_result *out, cs_diag *diag)
{
	pipe_run r = { .sched = sched, .p = p, .m = m, .v = v, .nv = p * v, .t = *times };
	cs_status rc;

	memset(out, 0, sizeof(*out));
	out->sched = sched;
	out->stages = p;
	out->micro_batches = m;
	out->chunks = v;
	if (times->f < 0 || times->b < 0 || times->w < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "op times must not be negative");
		return CS_ERR_INPUT;
	}
	if (cs_sched_stage_ops(sched, p, m, v, 0, NULL, 0, diag) < 0)
		return CS_ERR_INPUT;
	double worst = 3.0 * (double)p * (double)m * (double)v * (double)(times->f + times->b + times->w);
	if (worst > 9e18) {
		snprintf(diag->msg, sizeof(diag->msg), "op times are too large to simulate");
		return CS_ERR_INPUT;
	}
	rc = build(&r, diag);
	if (rc == CS_OK) {
		for (int64_t s = 0; s < p; s++)
			try_start(&r, s);
		cs_sim_run(r.sim, 0);
		rc = r.oom ? nomem(diag) : finish(&r, out, diag);
	}
	if (r.st)
		for (int64_t s = 0; s < p; s++)
			free(r.st[s].ops);
	free(r.st);
	free(r.fdone);
	free(r.spans);
	cs_sim_free(r.sim);
	if (rc != CS_OK)
		cs_pipe_result_release(out);
	return rc;
}

void cs_pipe_result_release(cs_pipe_result *res)
{
	free(res->peak_in_flight);
	free(res->spans);
	res->peak_in_flight = NULL;
	res->spans = NULL;
	res->n_spans = 0;
}
