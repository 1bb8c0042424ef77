/*
 * progress.c - a long command's progress on standard error (progress.h).
 */
#include "cli/progress.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clustersim/clustersim.h"

int cs_cli_progress_default(void) { return isatty(2) ? CS_PROGRESS_TERMINAL : CS_PROGRESS_LINES; }

void cs_cli_progress_init(cs_cli_progress *p, int mode, const char *what)
{
	*p = (cs_cli_progress){ .mode = mode, .what = what };
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
}

static double elapsed(const cs_cli_progress *p)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - p->t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - p->t0.tv_nsec);
}

/* Whether a line is due at `el` s: always on a terminal; on a file or pipe
 * 10 s after the last line (or the start), and the last line of a count
 * once some line is out. */
static bool due(cs_cli_progress *p, double el, bool last)
{
	if (p->mode == CS_PROGRESS_NONE)
		return false;
	if (p->mode == CS_PROGRESS_LINES && !(last ? p->lines > 0 && !p->ended : el >= p->last_s + 10.0))
		return false;
	p->last_s = el;
	p->ended = last;
	p->lines++;
	return true;
}

void cs_cli_progress_pool(void *ud, size_t done, size_t total, size_t running, size_t failed)
{
	cs_cli_progress *p = ud;
	double el = elapsed(p);
	bool lines = p->mode == CS_PROGRESS_LINES;
	if (!due(p, el, done == total))
		return;
	p->phase = false;
	fprintf(stderr, "%s[%zu/%zu %s] %zu running, %zu failed, %.1f s elapsed%s", lines ? "" : "\r", done,
		total, p->what, running, failed, el, lines ? "\n" : " ");
	fflush(stderr);
}

void cs_cli_progress_phase(cs_cli_progress *p, const char *phase)
{
	double el = elapsed(p);
	bool lines = p->mode == CS_PROGRESS_LINES;
	if (!due(p, el, false))
		return;
	p->phase = true;
	fprintf(stderr, "%s[%s] %s, %.1f s elapsed%s", lines ? "" : "\r\033[K", p->what, phase, el,
		lines ? "\n" : " ");
	fflush(stderr);
}

void cs_cli_progress_end(const cs_cli_progress *p)
{
	if (p->mode == CS_PROGRESS_TERMINAL && p->lines > 0)
		fputs(p->phase ? "\r\033[K" : "\n", stderr);
}

void cs_cli_wrote(int mode, const char *path)
{
	if (mode != CS_PROGRESS_NONE && path && strcmp(path, "-") != 0)
		fprintf(stderr, "wrote %s\n", path);
}
