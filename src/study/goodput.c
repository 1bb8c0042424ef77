/*
 * goodput.c - the goodput study (goodput.h): the step simulated once (and
 * once more with a replica fewer for elastic runs), the checkpoint sized by
 * the memory model and timed by the storage, then sampled runs on the pool.
 */
#include "study/goodput.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "model/memory.h"
#include "study/fleet.h"
#include "study/study.h"

/* Llama 3 405B, 54 days on 16,384 H100s in 2,048 servers (Dubey et al.
 * 2024, Table 5: 419 unexpected interruptions by root cause, 47 planned),
 * as rates per unit per hour: gpu = faulty GPU 148 + SRAM 19 + system
 * processor 17 + silent data corruption 6 + thermal interface and sensor
 * 6 = 196 over 16,384 GPUs; hbm = 72 over the GPUs; host = unplanned host
 * maintenance 32 + SSD 3 + power supply 3 + chassis 2 + IO board 2 + CPU 2
 * + system memory 2 = 46 over 2,048 nodes; nic = 7 over 16,384 NICs;
 * network = switch and cable 35 over the nodes; software = software bug 54
 * + dependency 2 + NCCL watchdog timeouts 7 = 63 for the job. */
#define LLAMA3_HOURS (54.0 * 24.0)
static const double llama3_rate[CS_FAIL_CLASSES] = {
	[CS_FAIL_GPU] = 196.0 / (LLAMA3_HOURS * 16384.0),   [CS_FAIL_HBM] = 72.0 / (LLAMA3_HOURS * 16384.0),
	[CS_FAIL_HOST] = 46.0 / (LLAMA3_HOURS * 2048.0),    [CS_FAIL_NIC] = 7.0 / (LLAMA3_HOURS * 16384.0),
	[CS_FAIL_NETWORK] = 35.0 / (LLAMA3_HOURS * 2048.0), [CS_FAIL_SOFTWARE] = 63.0 / LLAMA3_HOURS,
};
#define LLAMA3_PLANNED_PER_DAY (47.0 / 54.0)

/* The failed unit is replaced by a node (hardware), or the job restarts on
 * the same nodes (a switch is routed around, software restarts). */
static const bool needs_spare[CS_FAIL_CLASSES] = {
	[CS_FAIL_GPU] = true,
	[CS_FAIL_HBM] = true,
	[CS_FAIL_HOST] = true,
	[CS_FAIL_NIC] = true,
};

static cs_status fail_at(const cs_scenario *sc, const char *key, cs_diag *diag, const char *fmt, double a,
			 double b)
{
	char where[400], body[600];
	cs_config_locate(sc, key, where, sizeof where);
	snprintf(body, sizeof body, fmt, a, b);
	snprintf(diag->msg, sizeof diag->msg, "%.380s: %.600s", where, body);
	return CS_ERR_INPUT;
}

/* The scenario's step, folded when the scenario's checks allow folding
 * (nothing breaks the ranks' symmetry, so folded and full runs are equal:
 * docs/performance.md). */
static cs_status simulate_step(const cs_scenario *sc, double *step_s, double *tokens, cs_diag *diag)
{
	cs_scenario *s = malloc(sizeof *s);
	if (!s) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		return CS_ERR_NOMEM;
	}
	*s = *sc;
	cs__fleet fl;
	cs__fleet_plan(sc, &fl);
	s->sim.fold = CS_FOLD_ON;
	cs_diag refused;
	/* the checks that refuse folding: stragglers, documents, ...; and a
	 * fleet with per-GPU effects, which a folded run leaves out */
	if (fl.fx.spread || fl.fx.slow_machines || cs_config_validate(s, &refused) != CS_OK)
		*s = *sc;
	cs_result *res = NULL;
	cs_status st = cs_simulate(s, NULL, &res, diag);
	if (st == CS_OK) {
		*step_s = cs_result_metrics(res)->step_time_s;
		*tokens = (double)s->training.global_batch * (double)s->training.seq_len;
	}
	cs_result_free(res);
	free(s);
	return st;
}

/* The same plan with one data-parallel replica (and its nodes) fewer, the
 * micro-batches per replica kept. */
static cs_status simulate_smaller(const cs_scenario *sc, double *step_s, double *tokens, cs_diag *diag)
{
	const cs_parallel_spec *p = &sc->parallel;
	int64_t per_replica = p->tp * p->pp * p->cp, gpn = sc->cluster.gpus_per_node;
	if (p->dp < 2 || per_replica % gpn != 0)
		return fail_at(sc, "reliability.elastic", diag,
			       "elastic running drops whole "
			       "data-parallel replicas: it needs dp >= 2 (here %.0f) and a replica of "
			       "whole nodes (tp x pp x cp = %.0f GPUs)",
			       (double)p->dp, (double)per_replica);
	cs_scenario *s = malloc(sizeof *s);
	if (!s) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory");
		return CS_ERR_NOMEM;
	}
	*s = *sc;
	char a[3][96];
	snprintf(a[0], sizeof a[0], "cluster.nodes=%lld", (long long)(sc->cluster.nodes - per_replica / gpn));
	snprintf(a[1], sizeof a[1], "parallelism.dp=%lld", (long long)(p->dp - 1));
	snprintf(a[2], sizeof a[2], "training.global_batch=%lld",
		 (long long)(sc->training.global_batch / p->dp * (p->dp - 1)));
	cs_status st = CS_OK;
	for (int i = 0; i < 3 && st == CS_OK; i++)
		st = cs_config_apply_override(s, a[i], diag);
	if (st == CS_OK)
		st = cs_config_validate(s, diag);
	if (st == CS_OK)
		st = simulate_step(s, step_s, tokens, diag);
	free(s);
	return st;
}

/* The job a run samples, and the report's description of it. */
static cs_status prepare(const cs_scenario *sc, double step_s, cs_rel_job *job, cs_goodput_report *g,
			 cs_diag *diag)
{
	const cs_reliability_spec *rl = &sc->reliability;
	bool llama = rl->preset == CS_RELIAB_LLAMA3;
	memset(job, 0, sizeof *job);
	g->gpus = cs_scenario_gpus(sc);
	g->nodes = sc->cluster.nodes;
	g->replicas = sc->parallel.dp;
	double units[CS_FAIL_CLASSES] = {
		[CS_FAIL_GPU] = (double)g->gpus,      [CS_FAIL_HBM] = (double)g->gpus,
		[CS_FAIL_HOST] = (double)g->nodes,    [CS_FAIL_NIC] = (double)g->gpus,
		[CS_FAIL_NETWORK] = (double)g->nodes, [CS_FAIL_SOFTWARE] = 1.0,
	};
	double per_h = 0;
	for (int c = 0; c < CS_FAIL_CLASSES; c++) {
		double r = rl->rate[c] >= 0 ? rl->rate[c] : llama ? llama3_rate[c] : 0.0;
		job->fail_per_ns[c] = r * units[c] / 3600e9;
		job->needs_spare[c] = needs_spare[c];
		g->fail_per_day[c] = r * units[c] * 24.0;
		per_h += r * units[c];
	}
	double planned = rl->planned_per_day >= 0 ? rl->planned_per_day
			 : llama                  ? LLAMA3_PLANNED_PER_DAY
						  : 0.0;
	job->planned_per_ns = planned / 86400e9;
	g->fail_per_day[CS_FAIL_CLASSES] = planned;
	g->mtbf_h = per_h > 0 ? 1.0 / per_h : INFINITY;
	job->dist = rl->distribution;
	job->shape = rl->weibull_shape;
	if (job->dist == CS_FAIL_WEIBULL && !(job->shape >= CS_REL_MIN_SHAPE))
		return fail_at(sc, "reliability.weibull_shape", diag,
			       "a Weibull shape of %g is below the least sampled, %g (the scale's "
			       "gamma function overflows)",
			       job->shape, CS_REL_MIN_SHAPE);

	cs_status st = CS_OK;
	if (step_s > 0) {
		g->step_s = step_s;
		g->tokens_per_step = (double)sc->training.global_batch * (double)sc->training.seq_len;
	} else if ((st = simulate_step(sc, &g->step_s, &g->tokens_per_step, diag)) != CS_OK) {
		return st;
	}
	job->lost_step_ns[0] = (int64_t)llround(g->step_s * 1e9);
	job->lost_tokens_per_step[0] = g->tokens_per_step;
	if (rl->elastic) {
		double s1, t1;
		if ((st = simulate_smaller(sc, &s1, &t1, diag)) != CS_OK)
			return st;
		g->elastic_step_s = s1;
		/* the step of one replica fewer stands for k fewer: a data-parallel
		 * step hardly changes with a few replicas */
		job->max_lost = (int)(g->replicas - 1 < CS_REL_MAX_LOST ? g->replicas - 1 : CS_REL_MAX_LOST);
		for (int k = 1; k <= job->max_lost; k++) {
			job->lost_step_ns[k] = (int64_t)llround(s1 * 1e9);
			job->lost_tokens_per_step[k] =
				g->tokens_per_step * (double)(g->replicas - k) / (double)g->replicas;
		}
	}

	/* the checkpoint: every distinct shard of weights and optimizer state */
	if (rl->checkpoint_bytes > 0) {
		g->checkpoint_bytes = rl->checkpoint_bytes;
	} else {
		double w, master, moments;
		cs_mem_bytes_per_param(sc->training.precision, sc->training.grad_dtype,
				       sc->training.optimizer, sc->training.optimizer_dtype, &w, NULL,
				       &master, &moments);
		cs_mem_breakdown mb = cs_mem_per_gpu(&sc->model, &sc->training, &sc->parallel,
						     &sc->cluster.gpu, cs_cluster_shard_unit(&sc->cluster));
		g->checkpoint_bytes = (double)mb.params * (w + master + moments);
	}
	if (rl->storage_capacity > 0 && g->checkpoint_bytes > rl->storage_capacity)
		return fail_at(sc, "reliability.checkpoint.storage_capacity", diag,
			       "a checkpoint of "
			       "%.4g GB does not fit the storage's %.4g GB",
			       g->checkpoint_bytes / 1e9, rl->storage_capacity / 1e9);
	double bw = fmin((double)g->nodes * rl->node_write_bw, rl->storage_bw);
	double write_s = g->checkpoint_bytes / bw;
	g->restart_s = (double)rl->restart_ns / 1e9 + write_s; /* loading reads it back */
	g->interval_s = (double)rl->checkpoint_interval_ns / 1e9;
	if (rl->checkpoint_interval_ns > 0 && g->interval_s < g->step_s)
		return fail_at(sc, "reliability.checkpoint.interval", diag,
			       "a checkpoint every %.4g s "
			       "is shorter than a step (%.4g s)",
			       g->interval_s, g->step_s);
	if (rl->async_checkpoint) {
		g->stall_s = g->checkpoint_bytes / (double)g->gpus / rl->snapshot_bw;
		g->write_s = write_s;
		if (rl->checkpoint_interval_ns > 0 && write_s > g->interval_s)
			return fail_at(sc, "reliability.checkpoint.interval", diag,
				       "an async "
				       "checkpoint every %.4g s is shorter than its write (%.4g s)",
				       g->interval_s, write_s);
	} else {
		g->stall_s = write_s;
		g->write_s = 0;
	}
	job->interval_ns = rl->checkpoint_interval_ns;
	job->stall_ns = (int64_t)llround(g->stall_s * 1e9);
	job->write_ns = (int64_t)llround(g->write_s * 1e9);
	job->restart_ns = (int64_t)llround(g->restart_s * 1e9);
	job->repair_ns = rl->repair_ns;
	job->spares = rl->spares;

	double m_s = g->mtbf_h * 3600.0;
	g->young_daly_s = sqrt(2.0 * g->stall_s * m_s); /* infinite without failures */
	/* a first-order figure: past the whole wall clock it says all is lost */
	g->first_order_lost = fmin(
		1.0, (g->interval_s > 0 ? g->stall_s / g->interval_s + g->interval_s / (2.0 * m_s) : 0.0) +
			     g->restart_s / m_s);
	return CS_OK;
}

/* The runs' work, bounded: each run's events (the failures and planned
 * stops the rates give, the checkpoints the interval gives) over all runs
 * at most CS__GOODPUT_MAX_EVENTS, some 30 minutes on one core
 * (docs/performance.md: 10,000 runs of the Llama 3 setup, 1.6e8 events,
 * take 2.9 s). */
#define CS__GOODPUT_MAX_EVENTS 1e11
static cs_status bound_work(const cs_scenario *sc, const cs_goodput_report *g, const cs_goodput_opts *opts,
			    cs_diag *diag)
{
	double per_day = 0;
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		per_day += g->fail_per_day[c];
	if (g->interval_s > 0)
		per_day += 86400.0 / g->interval_s;
	double events = (double)g->runs * opts->days * per_day;
	if (events <= CS__GOODPUT_MAX_EVENTS)
		return CS_OK;
	char where[400];
	cs_config_locate(sc, "reliability.checkpoint.interval", where, sizeof where);
	snprintf(diag->msg, sizeof diag->msg,
		 "%.380s: %lld runs of %g days at %.4g events a day (failures, stops and checkpoints) are "
		 "%.3g events, more than the %.0e a study takes (hours of work): fewer '--runs' or "
		 "'--days', or a longer checkpoint interval",
		 where, (long long)g->runs, opts->days, per_day, events, CS__GOODPUT_MAX_EVENTS);
	return CS_ERR_INPUT;
}

/* ---- the runs ------------------------------------------------------------ */

typedef struct sampler {
	const cs_rel_job *job;
	int64_t horizon_ns;
	uint64_t seed;
	cs_rel_run *runs;
} sampler;

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t z = a * 0x9e3779b97f4a7c15ull + b + 0x632be59bd9b4e019ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool sample_one(void *ctx, size_t i)
{
	sampler *S = ctx;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!rng)
		return false;
	gsl_rng_set(rng, (unsigned long)mix(S->seed, (uint64_t)i));
	cs_rel_sample(S->job, S->horizon_ns, rng, &S->runs[i], NULL, NULL);
	gsl_rng_free(rng);
	return true;
}

typedef struct acc {
	double n, sum, sq;
} acc;

static void add(acc *a, double x)
{
	a->n++;
	a->sum += x;
	a->sq += x * x;
}

/* The mean and its interval, within [lo, hi], where the figure lies
 * whatever the sample (a fraction in [0, 1], a count not below 0): the
 * normal interval would pass the bounds of a skewed sample, and the sums
 * round a mean of ones to 1.0000000000000002. */
static cs_goodput_ci ci(const acc *a, double lo, double hi)
{
	double m = a->sum / a->n;
	double var = a->n > 1 ? fmax(0.0, (a->sq - a->n * m * m) / (a->n - 1)) : 0.0;
	double h = 2.576 * sqrt(var / a->n);
	return (cs_goodput_ci){ fmin(hi, fmax(lo, m)), fmin(hi, fmax(lo, m - h)), fmin(hi, fmax(lo, m + h)) };
}

cs_status cs_study_goodput(const cs_scenario *sc, const cs_goodput_opts *opts, cs_goodput_report *out,
			   cs_diag *diag)
{
	cs_diag scratch;
	if (!diag)
		diag = &scratch;
	memset(out, 0, sizeof *out);
	out->seed = sc->sim.seed;
	out->days = opts->days;
	out->runs = opts->runs > 0 ? opts->runs : 1000;
	if (!(opts->days > 0 && opts->days <= 36500)) {
		snprintf(diag->msg, sizeof diag->msg, "'--days' must be in (0, 36500], got %g", opts->days);
		return CS_ERR_INPUT;
	}
	cs_status st = prepare(sc, opts->step_s, &out->job, out, diag);
	if (st == CS_OK)
		st = bound_work(sc, out, opts, diag);
	if (st != CS_OK)
		return st;
	sampler S = { .job = &out->job,
		      .horizon_ns = (int64_t)llround(opts->days * 86400e9),
		      .seed = out->seed,
		      .runs = calloc((size_t)out->runs, sizeof *S.runs) };
	if (!S.runs) {
		snprintf(diag->msg, sizeof diag->msg, "out of memory for %lld runs", (long long)out->runs);
		return CS_ERR_NOMEM;
	}
	cs_pool_opts po = opts->pool;
	po.jobs = opts->jobs;
	size_t done = cs_pool_run((size_t)out->runs, sample_one, &S, &po);
	if (done < (size_t)out->runs) {
		free(S.runs);
		snprintf(diag->msg, sizeof diag->msg, "interrupted after %zu of %lld runs", done,
			 (long long)out->runs);
		return CS_ERR_SIM;
	}
	/* in run order, so the sums do not depend on the threads */
	double full_rate = out->tokens_per_step / out->step_s; /* per s */
	acc ett = { 0 }, per_day[CS_FAIL_CLASSES + 1] = { { 0 } }, inter = { 0 },
	    lost[CS_LOSS_KINDS] = { { 0 } };
	acc ttt = { 0 };
	for (int64_t i = 0; i < out->runs; i++) {
		const cs_rel_run *r = &S.runs[i];
		double h = (double)r->horizon_ns / 1e9, total = (double)r->planned;
		add(&ett, r->tokens / (h * full_rate));
		for (int c = 0; c < CS_FAIL_CLASSES; c++) {
			add(&per_day[c], (double)r->failures[c] / opts->days);
			total += (double)r->failures[c];
		}
		add(&per_day[CS_FAIL_CLASSES], (double)r->planned / opts->days);
		add(&inter, total / opts->days);
		for (int k = 0; k < CS_LOSS_KINDS; k++)
			add(&lost[k], (double)r->lost_ns[k] / (double)r->horizon_ns);
		if (opts->token_budget > 0 && r->tokens > 0)
			add(&ttt, opts->token_budget / (r->tokens / h) / 86400.0);
	}
	free(S.runs);
	out->ett = ci(&ett, 0, 1);
	for (int c = 0; c <= CS_FAIL_CLASSES; c++)
		out->per_day[c] = ci(&per_day[c], 0, INFINITY);
	out->interruptions_per_day = ci(&inter, 0, INFINITY);
	for (int k = 0; k < CS_LOSS_KINDS; k++)
		out->lost[k] = ci(&lost[k], 0, 1);
	if (opts->token_budget > 0) {
		out->ttt_ideal_days = opts->token_budget / full_rate / 86400.0;
		if (ttt.n > 0)
			out->ttt_days = ci(&ttt, out->ttt_ideal_days, INFINITY);
	}
	return CS_OK;
}

int cs_goodput_columns(const cs_goodput_report *g, const char **names, double *values, int cap)
{
	static const char *const lost[CS_LOSS_KINDS] = { "lost_checkpoint", "lost_restart", "lost_rework",
							 "lost_wait", "lost_degraded" };
	int n = 0;
#define COL(nm, v)                       \
	do {                             \
		if (n < cap) {           \
			names[n] = (nm); \
			values[n] = (v); \
		}                        \
		n++;                     \
	} while (0)
	COL("effective_training", g->ett.mean);
	COL("effective_training_lo99", g->ett.lo);
	COL("effective_training_hi99", g->ett.hi);
	COL("interruptions_per_day", g->interruptions_per_day.mean);
	for (int k = 0; k < CS_LOSS_KINDS; k++)
		COL(lost[k], g->lost[k].mean);
	COL("young_daly_interval_s", g->young_daly_s); /* infinite without failures: an empty cell */
#undef COL
	return n;
}

cs_status cs_study_goodput_sample(const cs_goodput_report *g, int64_t which, cs_rel_span_fn on_span,
				  void *ctx, cs_rel_run *out)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!rng)
		return CS_ERR_NOMEM;
	gsl_rng_set(rng, (unsigned long)mix(g->seed, (uint64_t)which));
	cs_rel_sample(&g->job, (int64_t)llround(g->days * 86400e9), rng, out, on_span, ctx);
	gsl_rng_free(rng);
	return CS_OK;
}
