/*
 * progress.c - pool progress on standard error (progress.h).
 */
#include "cli/progress.h"

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "clustersim/clustersim.h"

int cs_cli_progress_default(void) { return isatty(2) ? CS_PROGRESS_TERMINAL : CS_PROGRESS_NONE; }

int cs_cli_progress_asked(void) { return isatty(2) ? CS_PROGRESS_TERMINAL : CS_PROGRESS_LINES; }

void cs_cli_progress_init(cs_cli_progress *p, int mode, const char *what)
{
	*p = (cs_cli_progress){ .mode = mode, .what = what };
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
}

void cs_cli_progress_pool(void *ud, size_t done, size_t total, size_t running, size_t failed)
{
	cs_cli_progress *p = ud;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	double el = (double)(t.tv_sec - p->t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - p->t0.tv_nsec);
	bool lines = p->mode == CS_PROGRESS_LINES, last = done == total;
	if (lines && p->lines > 0 && (last ? p->ended : el < p->last_s + 10.0))
		return;
	p->last_s = el;
	p->ended = last;
	p->lines++;
	fprintf(stderr, "%s[%zu/%zu %s] %zu running, %zu failed, %.1f s elapsed%s", lines ? "" : "\r", done,
		total, p->what, running, failed, el, lines ? "\n" : " ");
	fflush(stderr);
}

void cs_cli_progress_end(const cs_cli_progress *p)
{
	if (p->mode == CS_PROGRESS_TERMINAL && p->lines > 0)
		fputc('\n', stderr);
}
