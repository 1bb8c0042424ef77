/*
 * progress.h - the progress of a long command on standard error: a
 * terminal's line is rewritten; a file or pipe gets a line every 10 s (the
 * first once 10 s have passed, so a short command prints none), and the
 * last one. Each output a command writes is then announced as "wrote FILE".
 * `--progress` and `--no-progress` choose, for every command that takes
 * them.
 */
#ifndef CS_CLI_PROGRESS_H
#define CS_CLI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

typedef struct cs_cli_progress {
	int mode;         /* CS_PROGRESS_NONE, CS_PROGRESS_TERMINAL or CS_PROGRESS_LINES */
	const char *what; /* "points", "plans" */
	struct timespec t0;
	double last_s;
	int lines;  /* printed so far */
	bool ended; /* the line of done == total is out */
	bool phase; /* the last line was a phase's (a terminal's is cleared at the end) */
} cs_cli_progress;

/* The mode by default, and the one --progress asks for: a rewritten line on
 * a terminal, else a line every 10 s. --no-progress is CS_PROGRESS_NONE. */
int cs_cli_progress_default(void);

/* Start the clock; `what` must outlive p. */
void cs_cli_progress_init(cs_cli_progress *p, int mode, const char *what);
/* A cs_pool_progress_fn; ud is the cs_cli_progress. */
void cs_cli_progress_pool(void *ud, size_t done, size_t total, size_t running, size_t failed);
/* A command's next phase (`phase` a few words: "simulating the scenario"),
 * for work that reports no count: on a terminal at once, on a file or pipe
 * when 10 s have passed since the last line. */
void cs_cli_progress_phase(cs_cli_progress *p, const char *phase);
/* End a terminal's rewritten line (nothing for lines). */
void cs_cli_progress_end(const cs_cli_progress *p);
/* "wrote PATH" on standard error, unless the mode is CS_PROGRESS_NONE or
 * PATH is NULL or "-" (standard output). */
void cs_cli_wrote(int mode, const char *path);

#endif
