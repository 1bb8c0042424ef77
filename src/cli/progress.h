/*
 * progress.h - the progress of a study's job pool on standard error, in
 * the manner of `run --progress`: a terminal's line is rewritten; a file or
 * pipe gets a line every 10 s, and the last one.
 */
#ifndef CS_CLI_PROGRESS_H
#define CS_CLI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

typedef struct cs_cli_progress {
	int mode;         /* CS_PROGRESS_TERMINAL or CS_PROGRESS_LINES */
	const char *what; /* "points", "plans" */
	struct timespec t0;
	double last_s;
	int lines;  /* printed so far */
	bool ended; /* the line of done == total is out */
} cs_cli_progress;

/* The mode by default: a rewritten line on a terminal, else none. */
int cs_cli_progress_default(void);
/* The mode --progress asks for: a rewritten line on a terminal, else a line
 * every 10 s. */
int cs_cli_progress_asked(void);

/* Start the clock; `what` must outlive p. */
void cs_cli_progress_init(cs_cli_progress *p, int mode, const char *what);
/* A cs_pool_progress_fn; ud is the cs_cli_progress. */
void cs_cli_progress_pool(void *ud, size_t done, size_t total, size_t running, size_t failed);
/* End a terminal's rewritten line (nothing for lines). */
void cs_cli_progress_end(const cs_cli_progress *p);

#endif
