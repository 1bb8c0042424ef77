/*
 * sweep_run.c - run a sweep's points on threads.
 *
 * Workers take point numbers from a shared atomic counter over this rank's
 * pending points; each loads and simulates its own scenario (the library
 * keeps no global state) and stores the outcome in the point's own slot, so
 * the results do not depend on the number of threads. The calling thread
 * only waits, watches the stop flag and reports progress; the workers block
 * every signal so that handlers run on it.
 */
#include "report/sweep_int.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report.h"

#define MAX_JOBS 1024

typedef struct runner {
	cs_sweep *sw;
	size_t *list;              /* the pending points of this rank, ascending */
	size_t nlist;
	atomic_size_t next;
	atomic_int stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t done, running, failed;  /* under mu */
	int live;                  /* workers not yet finished, under mu */
} runner;

static void run_point(cs_sweep *sw, size_t p)
{
	size_t len = 0;
	for (size_t k = 0; k < sw->nkeys; k++)
		len += strlen(sw->keys[k].key) + strlen(sw->keys[k].vals[cs_sweep_point_index(sw, p, k)]) + 2;
	char *buf = malloc(len ? len : 1);
	const char **all = malloc((sw->nsets + sw->nkeys + 1) * sizeof *all);
	cs_diag diag = { { 0 } };
	cs_scenario *sc = NULL;
	cs_result *res = NULL;
	cs_status st = CS_ERR_NOMEM;

	if (!buf || !all || cs_sweep_point_sets(sw, p, buf, len ? len : 1) != CS_OK) {
		snprintf(diag.msg, sizeof diag.msg, "out of memory");
		goto failed;
	}
	for (size_t i = 0; i < sw->nsets; i++)
		all[i] = sw->sets[i];
	for (size_t k = 0, off = 0; k < sw->nkeys; k++) {
		all[sw->nsets + k] = buf + off;
		off += strlen(buf + off) + 1;
	}
	st = cs_scenario_load(sw->path, all, sw->nsets + sw->nkeys, &sc, &diag);
	if (st == CS_OK)
		st = cs_simulate(sc, NULL, &res, &diag);
	if (st != CS_OK)
		goto failed;
	const char *names[CS_SWEEP_MAX_COLUMNS];
	double vals[CS_SWEEP_MAX_COLUMNS];
	cs_report_columns(cs_result_metrics(res), names, vals, CS_SWEEP_MAX_COLUMNS);
	cs__sweep_store(sw, p, CS_SWEEP_OK, vals, NULL);
	goto out;
failed:
	/* a message about one of this point's values names --vary, not --set */
	for (size_t k = 0; st != CS_OK && k < sw->nkeys && all; k++) {
		const char *a = all[sw->nsets + k];
		size_t n = strlen(a);
		if (!strncmp(diag.msg, "--set '", 7) && !strncmp(diag.msg + 7, a, n) &&
		    diag.msg[7 + n] == '\'') {
			char tmp[sizeof diag.msg];
			snprintf(tmp, sizeof tmp, "--vary %.1000s", diag.msg + 6);
			memcpy(diag.msg, tmp, sizeof tmp);
			break;
		}
	}
	if (!diag.msg[0])
		snprintf(diag.msg, sizeof diag.msg, "failed without a message");
	cs__sweep_store(sw, p, CS_SWEEP_FAILED, NULL, diag.msg);
out:
	cs_result_free(res);
	cs_scenario_free(sc);
	free(all);
	free(buf);
}

static void *worker(void *arg)
{
	runner *r = arg;
	for (;;) {
		if (atomic_load(&r->stop))
			break;
		size_t j = atomic_fetch_add(&r->next, 1);
		if (j >= r->nlist)
			break;
		pthread_mutex_lock(&r->mu);
		r->running++;
		pthread_mutex_unlock(&r->mu);
		run_point(r->sw, r->list[j]);
		pthread_mutex_lock(&r->mu);
		r->running--;
		r->done++;
		r->failed += cs_sweep_point_state(r->sw, r->list[j]) == CS_SWEEP_FAILED;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	pthread_mutex_lock(&r->mu);
	r->live--;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static void report(runner *r, const cs_sweep_run_opts *o)
{
	if (!o->progress)
		return;
	pthread_mutex_lock(&r->mu);
	size_t done = r->done, running = r->running, failed = r->failed;
	pthread_mutex_unlock(&r->mu);
	o->progress(o->progress_ud, done, r->nlist, running, failed);
}

cs_status cs_sweep_run(cs_sweep *sw, const cs_sweep_run_opts *o)
{
	if (!sw->checked)
		return CS_ERR_INPUT;
	int jobs = o->jobs < 1 ? 1 : o->jobs > MAX_JOBS ? MAX_JOBS : o->jobs;
	size_t rank = o->nranks > 0 && o->rank >= 0 ? (size_t)o->rank : 0;
	size_t nranks = o->nranks > 0 ? (size_t)o->nranks : 1;
	runner r;
	memset(&r, 0, sizeof r);
	r.sw = sw;
	r.list = malloc((sw->npoints / nranks + 1) * sizeof *r.list);
	pthread_t *tid = malloc((size_t)jobs * sizeof *tid);
	if (!r.list || !tid) {
		free(r.list);
		free(tid);
		return CS_ERR_NOMEM;
	}
	for (size_t p = rank; p < sw->npoints; p += nranks)
		if (sw->state[p] == CS_SWEEP_PENDING)
			r.list[r.nlist++] = p;
	atomic_init(&r.next, 0);
	atomic_init(&r.stop, o->stop && *o->stop);
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);

	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int started = 0;
	r.live = jobs;
	for (int i = 0; i < jobs; i++) {
		if (pthread_create(&tid[started], NULL, worker, &r) != 0)
			break;
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	pthread_mutex_lock(&r.mu);
	r.live = r.live - jobs + started;
	while (r.live > 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000 * 1000;
		if (ts.tv_nsec >= 1000 * 1000 * 1000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000 * 1000 * 1000;
		}
		pthread_cond_timedwait(&r.cv, &r.mu, &ts);
		if (o->stop && *o->stop)
			atomic_store(&r.stop, 1);
		pthread_mutex_unlock(&r.mu);
		report(&r, o);
		pthread_mutex_lock(&r.mu);
	}
	pthread_mutex_unlock(&r.mu);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	if (o->stop && *o->stop)
		atomic_store(&r.stop, 1);
	report(&r, o);

	cs_status st = CS_OK;
	if (!started)
		st = CS_ERR_NOMEM;
	else if (r.done < r.nlist)
		st = CS_ERR_SIM;
	pthread_cond_destroy(&r.cv);
	pthread_mutex_destroy(&r.mu);
	free(r.list);
	free(tid);
	return st;
}
