/*
 * pool.h - the job pool of the studies: run n independent jobs on threads
 * (the points of a sweep, the plans of a search).
 *
 * Jobs are taken in index order from one atomic counter, and each writes
 * only its own results, so what a study computes does not depend on the
 * number of threads. The calling thread does no job: it waits, watches the
 * stop flag and reports progress; the workers block every signal, so that
 * handlers run on it. Nothing here keeps global state.
 */
#ifndef CS_STUDY_POOL_H
#define CS_STUDY_POOL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#define CS_POOL_MAX_JOBS 1024

/* Job i of n; returns false when it failed (counted for the progress). */
typedef bool (*cs_pool_job_fn)(void *ctx, size_t i);
/* Called on the calling thread about 5 times a second, and once at the end. */
typedef void (*cs_pool_progress_fn)(void *ud, size_t done, size_t total, size_t running, size_t failed);

typedef struct cs_pool_opts {
	int jobs;                          /* threads: < 1 means 1, at most CS_POOL_MAX_JOBS */
	const volatile sig_atomic_t *stop; /* when it becomes non-zero, start no more jobs */
	cs_pool_progress_fn progress;      /* NULL: none */
	void *progress_ud;
} cs_pool_opts;

/* Run job(ctx, i) for i = 0 .. n-1 and return how many ran: n, unless
 * stopped. When no thread can start, the jobs run on the calling thread. */
size_t cs_pool_run(size_t n, cs_pool_job_fn job, void *ctx, const cs_pool_opts *opts);

#endif
