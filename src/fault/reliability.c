/*
 * reliability.c - one sampled training run (reliability.h): an event loop over the
 * next failure of each class, the next checkpoint, an async write becoming
 * durable and the horizon, in integer nanoseconds.
 *
 * The wall clock splits exactly into kept training (tokens / full rate) and
 * the losses: horizon = kept + checkpoint + restart + rework + wait +
 * degraded, the last two of training time counted at the full rate.
 */
#include "fault/reliability.h"

#include "core/invariant.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stddef.h>

#define NEVER INT64_MAX
#define MAX_BACK 4096 /* nodes in repair at once that are tracked */

typedef struct run {
	const cs_rel_job *j;
	gsl_rng *rng;
	cs_rel_run *o;
	cs_rel_span_fn on_span;
	void *ctx;
	int64_t t, horizon;
	int64_t next[CS_FAIL_CLASSES + 1]; /* [CS_FAIL_CLASSES]: planned maintenance */
	double tokens, durable;
	int64_t since_ckpt; /* training time since the last checkpoint */
	double pending;     /* async: tokens durable at pending_at */
	int64_t pending_at;
	int64_t back[MAX_BACK]; /* when nodes in repair return as spares */
	int nback;
	int64_t spares;
	int lost;                   /* replicas missing (elastic) */
	double loss[CS_LOSS_KINDS]; /* ns */
	double full_rate;           /* tokens per ns at full size */
} run;

const char *cs_fail_class_name(int c)
{
	static const char *const names[CS_FAIL_CLASSES + 1] = { "gpu",     "hbm",      "host",   "nic",
								"network", "software", "planned" };
	return c >= 0 && c <= CS_FAIL_CLASSES ? names[c] : "?";
}

const char *cs_rel_loss_name(cs_rel_loss k)
{
	static const char *const names[CS_LOSS_KINDS] = { "checkpoint", "restart", "rework", "wait",
							  "degraded" };
	return (unsigned)k < CS_LOSS_KINDS ? names[k] : "?";
}

/* The gap to a class's next failure from now. */
static int64_t gap(run *r, int c)
{
	double per_ns = c == CS_FAIL_CLASSES ? r->j->planned_per_ns : r->j->fail_per_ns[c];
	if (!(per_ns > 0))
		return NEVER;
	double mean = 1.0 / per_ns, g;
	CS_ASSERT(r->j->dist != CS_FAIL_WEIBULL || r->j->shape >= CS_REL_MIN_SHAPE);
	if (r->j->dist == CS_FAIL_WEIBULL && c != CS_FAIL_CLASSES)
		g = gsl_ran_weibull(r->rng, mean / tgamma(1.0 + 1.0 / r->j->shape), r->j->shape);
	else
		g = gsl_ran_exponential(r->rng, mean);
	return !(g < 9e18) ? NEVER : g < 1 ? 1 : (int64_t)llround(g); /* NaN never lands */
}

static int64_t at_plus(int64_t t, int64_t d) { return d >= NEVER - t ? NEVER : t + d; }

static int next_failure(const run *r, int64_t *when)
{
	int cls = 0;
	for (int c = 1; c <= CS_FAIL_CLASSES; c++)
		if (r->next[c] < r->next[cls])
			cls = c;
	*when = r->next[cls];
	return cls;
}

static void span(run *r, cs_rel_state s, int64_t t0, int64_t t1, int cls)
{
	if (r->on_span && t1 > t0)
		r->on_span(r->ctx, s, t0, t1, cls);
}

/* Nodes back from repair by now join the spares. */
static void release(run *r)
{
	for (int i = 0; i < r->nback;)
		if (r->back[i] <= r->t) {
			r->spares++;
			r->back[i] = r->back[--r->nback];
		} else {
			i++;
		}
}

/* Train until `until` at the current size. */
static void train(run *r, int64_t until)
{
	int64_t dt = until - r->t;
	const cs_rel_job *j = r->j;
	double rate = j->lost_tokens_per_step[r->lost] / (double)j->lost_step_ns[r->lost];
	r->tokens += (double)dt * rate;
	r->since_ckpt += dt;
	r->loss[CS_LOSS_DEGRADED] += (double)dt * (1.0 - rate / r->full_rate);
	span(r, r->lost ? CS_GP_DEGRADED : CS_GP_TRAIN, r->t, until, -1);
	r->t = until;
}

/* A failure (or planned stop) of class c at r->t: counted, the class's
 * clock renewed, the work since the durable checkpoint lost, and a node
 * replaced: by a spare, by going on smaller, or by waiting for one. */
static void fail(run *r, int c)
{
	const cs_rel_job *j = r->j;
	if (c == CS_FAIL_CLASSES)
		r->o->planned++;
	else
		r->o->failures[c]++;
	r->next[c] = at_plus(r->t, gap(r, c));
	r->loss[CS_LOSS_REWORK] += (r->tokens - r->durable) / r->full_rate;
	r->tokens = r->durable;
	r->pending_at = NEVER;
	if (c == CS_FAIL_CLASSES || !j->needs_spare[c])
		return;
	release(r);
	if (r->nback < MAX_BACK)
		r->back[r->nback++] = at_plus(r->t, j->repair_ns);
	if (r->spares > 0) {
		r->spares--;
		return;
	}
	if (r->lost < j->max_lost) {
		r->lost++;
		return;
	}
	/* wait for the first node back; the hardware of an idle job is not
	 * counted as failing meanwhile */
	int64_t b = NEVER;
	for (int i = 0; i < r->nback; i++)
		b = r->back[i] < b ? r->back[i] : b;
	if (b > r->horizon)
		b = r->horizon;
	r->loss[CS_LOSS_WAIT] += (double)(b - r->t);
	span(r, CS_GP_WAIT, r->t, b, c);
	r->t = b;
	for (int k = 0; k <= CS_FAIL_CLASSES; k++)
		if (r->next[k] < b)
			r->next[k] = at_plus(b, gap(r, k));
	release(r);
	if (r->spares > 0)
		r->spares--;
}

/* From a stop at r->t to training again; failures meanwhile start it over. */
static void restart(run *r, int cls)
{
	for (;;) {
		int64_t end = at_plus(r->t, r->j->restart_ns), tf;
		int c = next_failure(r, &tf);
		if (tf < end && tf < r->horizon) {
			r->loss[CS_LOSS_RESTART] += (double)(tf - r->t);
			span(r, CS_GP_RESTART, r->t, tf, cls);
			r->t = tf;
			fail(r, c);
			cls = c;
			continue;
		}
		if (end > r->horizon)
			end = r->horizon;
		r->loss[CS_LOSS_RESTART] += (double)(end - r->t);
		span(r, CS_GP_RESTART, r->t, end, cls);
		r->t = end;
		break;
	}
	r->since_ckpt = 0;
	release(r);
	while (r->lost > 0 && r->spares > 0) {
		r->lost--;
		r->spares--;
	}
}

/* The checkpoint due now: a stall, then durable (sync) or a write in the
 * background (async). A failure during the stall cancels it. */
static void checkpoint(run *r)
{
	int64_t tf, end = at_plus(r->t, r->j->stall_ns);
	int c = next_failure(r, &tf);
	if (tf < end || end > r->horizon) {
		int64_t stop = tf < end ? tf : r->horizon;
		r->loss[CS_LOSS_CHECKPOINT] += (double)(stop - r->t);
		span(r, CS_GP_CHECKPOINT, r->t, stop, -1);
		r->t = stop;
		if (stop == tf && tf < r->horizon) {
			fail(r, c);
			restart(r, c);
		}
		return;
	}
	r->loss[CS_LOSS_CHECKPOINT] += (double)(end - r->t);
	span(r, CS_GP_CHECKPOINT, r->t, end, -1);
	r->t = end;
	r->since_ckpt = 0;
	if (r->j->write_ns > 0) {
		r->pending = r->tokens;
		r->pending_at = at_plus(end, r->j->write_ns);
	} else {
		r->durable = r->tokens;
	}
}

/* Planned maintenance: a full checkpoint first, so nothing is lost. A
 * failure during that checkpoint cancels it, as during any other: the
 * stop is counted, and the failure takes its course from there. */
static void planned_stop(run *r)
{
	int64_t end = at_plus(r->t, r->j->stall_ns + r->j->write_ns), tf;
	if (end > r->horizon)
		end = r->horizon;
	int64_t due = r->next[CS_FAIL_CLASSES];
	r->next[CS_FAIL_CLASSES] = NEVER; /* the stop itself is no failure during it */
	int c = next_failure(r, &tf);
	r->next[CS_FAIL_CLASSES] = due;
	int64_t stop = tf < end ? tf : end;
	r->loss[CS_LOSS_CHECKPOINT] += (double)(stop - r->t);
	span(r, CS_GP_CHECKPOINT, r->t, stop, CS_FAIL_CLASSES);
	r->t = stop;
	if (stop == tf && tf < end) {
		r->o->planned++;
		r->next[CS_FAIL_CLASSES] = at_plus(r->t, gap(r, CS_FAIL_CLASSES));
		fail(r, c);
		restart(r, c);
		return;
	}
	r->durable = r->tokens;
	fail(r, CS_FAIL_CLASSES);
	if (r->t < r->horizon)
		restart(r, CS_FAIL_CLASSES);
}

void cs_rel_sample(const cs_rel_job *job, int64_t horizon_ns, gsl_rng *rng, cs_rel_run *out,
		   cs_rel_span_fn on_span, void *span_ctx)
{
	run r = { .j = job,
		  .rng = rng,
		  .o = out,
		  .on_span = on_span,
		  .ctx = span_ctx,
		  .horizon = horizon_ns,
		  .pending_at = NEVER,
		  .spares = job->spares,
		  .full_rate = job->lost_tokens_per_step[0] / (double)job->lost_step_ns[0] };
	*out = (cs_rel_run){ .horizon_ns = horizon_ns };
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		r.next[c] = gap(&r, c);
	while (r.t < r.horizon) {
		int64_t tf;
		int c = next_failure(&r, &tf);
		int64_t tc = job->interval_ns > 0 ? at_plus(r.t, job->interval_ns - r.since_ckpt) : NEVER;
		int64_t tn = r.horizon;
		tn = tf < tn ? tf : tn;
		tn = tc < tn ? tc : tn;
		tn = r.pending_at < tn ? r.pending_at : tn;
		train(&r, tn);
		if (r.t >= r.horizon)
			break;
		if (tn == r.pending_at) { /* durable before anything at the same time */
			r.durable = r.pending;
			r.pending_at = NEVER;
		} else if (tn == tf && c == CS_FAIL_CLASSES) {
			planned_stop(&r);
		} else if (tn == tf) {
			fail(&r, c);
			restart(&r, c);
		} else {
			checkpoint(&r);
		}
	}
	out->tokens = r.tokens;
	for (int k = 0; k < CS_LOSS_KINDS; k++)
		out->lost_ns[k] = (int64_t)llround(r.loss[k]);
}
