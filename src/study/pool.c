/*
 * pool.c - the job pool (pool.h): workers on one atomic counter, the
 * calling thread waiting on a condition variable with a 200 ms timeout to
 * watch the stop flag and report progress.
 */
#include "study/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

typedef struct pool {
	size_t n;
	cs_pool_job_fn job;
	void *ctx;
	atomic_size_t next;
	atomic_int stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t done, running, failed; /* under mu */
	int live;                     /* workers not yet finished, under mu */
} pool;

static bool stopped(const cs_pool_opts *o) { return o->stop && *o->stop; }

static void *worker(void *arg)
{
	pool *P = arg;
	while (!atomic_load(&P->stop)) {
		size_t i = atomic_fetch_add(&P->next, 1);
		if (i >= P->n)
			break;
		pthread_mutex_lock(&P->mu);
		P->running++;
		pthread_mutex_unlock(&P->mu);
		bool ok = P->job(P->ctx, i);
		pthread_mutex_lock(&P->mu);
		P->running--;
		P->done++;
		P->failed += !ok;
		pthread_cond_signal(&P->cv);
		pthread_mutex_unlock(&P->mu);
	}
	pthread_mutex_lock(&P->mu);
	P->live--;
	pthread_cond_signal(&P->cv);
	pthread_mutex_unlock(&P->mu);
	return NULL;
}

static void report(pool *P, const cs_pool_opts *o)
{
	if (!o->progress)
		return;
	pthread_mutex_lock(&P->mu);
	size_t done = P->done, running = P->running, failed = P->failed;
	pthread_mutex_unlock(&P->mu);
	o->progress(o->progress_ud, done, P->n, running, failed);
}

/* No thread could start: the calling thread runs the jobs itself. */
static size_t run_here(pool *P, const cs_pool_opts *o)
{
	for (size_t i = 0; i < P->n && !stopped(o); i++) {
		P->failed += !P->job(P->ctx, i);
		P->done++;
		report(P, o);
	}
	return P->done;
}

size_t cs_pool_run(size_t n, cs_pool_job_fn job, void *ctx, const cs_pool_opts *opts)
{
	cs_pool_opts o = opts ? *opts : (cs_pool_opts){ 0 };
	int jobs = o.jobs < 1 ? 1 : o.jobs > CS_POOL_MAX_JOBS ? CS_POOL_MAX_JOBS : o.jobs;
	if ((size_t)jobs > n)
		jobs = n ? (int)n : 1;
	pthread_t tid[CS_POOL_MAX_JOBS];
	pool P = { .n = n, .job = job, .ctx = ctx };
	atomic_init(&P.next, 0);
	atomic_init(&P.stop, stopped(&o));
	pthread_mutex_init(&P.mu, NULL);
	pthread_cond_init(&P.cv, NULL);

	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int started = 0;
	P.live = jobs;
	for (int i = 0; i < jobs && pthread_create(&tid[started], NULL, worker, &P) == 0; i++)
		started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	pthread_mutex_lock(&P.mu);
	P.live -= jobs - started; /* workers may have finished already */
	while (P.live > 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000 * 1000;
		if (ts.tv_nsec >= 1000 * 1000 * 1000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000 * 1000 * 1000;
		}
		pthread_cond_timedwait(&P.cv, &P.mu, &ts);
		if (stopped(&o))
			atomic_store(&P.stop, 1);
		pthread_mutex_unlock(&P.mu);
		report(&P, &o);
		pthread_mutex_lock(&P.mu);
	}
	pthread_mutex_unlock(&P.mu);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	size_t done = started ? P.done : run_here(&P, &o);
	if (started)
		report(&P, &o);
	pthread_cond_destroy(&P.cv);
	pthread_mutex_destroy(&P.mu);
	return done;
}
