/*
 * search.c - the plan search's simulations (search.h): the kernel profile
 * is loaded once for every plan; each job applies its plan to its own
 * scratch scenario and writes only its own plan, so the results do not
 * depend on the number of threads.
 */
#include "study/search.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hw/files.h"
#include "study/study.h"

typedef struct search_jobs {
	const cs_plan_search *s;
	const cs_kprof *prof;
	cs_plan **plans;
	pthread_mutex_t lock; /* guards failure */
	char *failure;        /* the first failure's message */
	size_t failure_size;
} search_jobs;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void failed(search_jobs *J, const cs_plan *p, const char *msg)
{
	pthread_mutex_lock(&J->lock);
	if (!J->failure[0])
		snprintf(J->failure, J->failure_size, "tp %lld pp %lld dp %lld cp %lld: %.180s",
			 (long long)p->tp, (long long)p->pp, (long long)p->dp, (long long)p->cp, msg);
	pthread_mutex_unlock(&J->lock);
}

/* What bounds the plan: the largest of compute, each exposed kind, bubble. */
static int bound_of(const cs_metrics *m)
{
	int bound = CS_PLAN_BOUND_COMPUTE;
	double worst = m->compute_s;
	for (int k = 0; k < CS_COMM_KINDS; k++)
		if (m->exposed_comm_s[k] > worst) {
			worst = m->exposed_comm_s[k];
			bound = CS_PLAN_BOUND_COMM + k;
		}
	return m->bubble_s > worst ? CS_PLAN_BOUND_BUBBLE : bound;
}

static bool simulate_plan(void *ctx, size_t i)
{
	search_jobs *J = ctx;
	cs_plan *p = J->plans[i];
	cs_scenario *sc = malloc(sizeof *sc);
	cs_result *res = NULL;
	cs_diag diag = { { 0 } };

	p->simulated = false;
	if (!sc) {
		failed(J, p, "out of memory");
		return false;
	}
	if (cs_plan_apply(J->s->base, p, sc, &diag) != CS_OK ||
	    cs__simulate(sc, &(cs__sim_request){ .have_prof = true, .prof = J->prof }, &res, &diag) !=
		    CS_OK) {
		failed(J, p, diag.msg);
		cs_result_free(res);
		free(sc);
		return false;
	}
	const cs_metrics *m = cs_result_metrics(res);
	p->step_time_s = m->step_time_s;
	p->mfu = m->mfu;
	p->tflops_per_gpu = m->tflops_per_gpu;
	p->tokens_per_s = m->tokens_per_s;
	p->compute_s = m->compute_s;
	p->bubble_s = m->bubble_s;
	for (int k = 0; k < CS_COMM_KINDS; k++)
		p->exposed_s[k] = m->exposed_comm_s[k];
	p->bound = bound_of(m);
	p->simulated = true;
	cs_result_free(res);
	free(sc);
	return true;
}

cs_status cs_study_plans(const cs_scenario *base, const cs_plan_opts *opts, const cs_pool_opts *pool,
			 cs_plan_search **out, cs_diag *diag)
{
	double t0 = now_s();
	cs_plan_search *s = NULL;
	cs_kprof *prof = NULL;
	cs_diag scratch;
	if (!diag)
		diag = &scratch;
	*out = NULL;
	cs_status st = cs_plan_prepare(base, opts, &s, diag);
	if (st != CS_OK)
		return st;
	if ((st = cs_hw_load_profile(s->base, &prof, diag)) != CS_OK) {
		cs_plan_search_free(s);
		return st;
	}
	/* the picked plans, then the heuristic's when the validation takes it */
	search_jobs J = { .s = s,
			  .prof = prof,
			  .failure = s->first_failure,
			  .failure_size = sizeof s->first_failure,
			  .plans = malloc((size_t)(s->nplans + 1) * sizeof *J.plans) };
	if (!J.plans || pthread_mutex_init(&J.lock, NULL) != 0) {
		free(J.plans);
		cs_kprof_free(prof);
		cs_plan_search_free(s);
		snprintf(diag->msg, sizeof diag->msg, "out of memory in the plan search");
		return CS_ERR_NOMEM;
	}
	size_t n = 0;
	for (int64_t i = 0; i < s->nplans; i++)
		J.plans[n++] = &s->plans[i];
	if (s->heuristic_valid)
		J.plans[n++] = &s->heuristic;
	cs_pool_opts po = pool ? *pool : (cs_pool_opts){ 0 };
	po.jobs = s->jobs;
	size_t done = cs_pool_run(n, simulate_plan, &J, &po);
	pthread_mutex_destroy(&J.lock);
	free(J.plans);
	cs_kprof_free(prof);
	if (done < n) {
		cs_plan_search_free(s);
		snprintf(diag->msg, sizeof diag->msg, "the plan search was interrupted");
		return CS_ERR_SIM;
	}
	cs_plan_rank(s);
	s->wall_s = now_s() - t0;
	*out = s;
	return CS_OK;
}
