/*
 * sweep_int.h - the sweep's private body, shared by sweep.c (points, CSV,
 * exact text form), sweep_run.c (threads) and sweep_plot.c (chart).
 */
#ifndef CS_STUDY_SWEEP_INT_H
#define CS_STUDY_SWEEP_INT_H

#include "study/sweep.h"

#define CS_SWEEP_MAX_COLUMNS 64

typedef struct cs_sweep_key_vals {
	char *key;
	char **vals; /* as given, spaces around them dropped */
	size_t n;
} cs_sweep_key_vals;

struct cs_sweep {
	char *path;
	char **sets; /* the --set assignments, applied first */
	size_t nsets;
	cs_sweep_key_vals keys[CS_SWEEP_MAX_KEYS];
	size_t nkeys;
	size_t npoints;
	int checked;         /* cs_sweep_check passed; the arrays below exist */
	double goodput_days; /* > 0: goodput columns over runs of that many days */
	int64_t goodput_runs;
	size_t nmetric; /* the run's columns; the goodput ones follow */
	size_t ncols;
	const char *colnames[CS_SWEEP_MAX_COLUMNS]; /* static strings of cs_study_columns */
	unsigned char *state;                       /* cs_sweep_state per point */
	double *values;                             /* npoints x ncols */
	char **errors;                              /* per point, NULL unless failed */
};

/* Record the outcome of point p; only one thread touches a given p. */
void cs__sweep_store(cs_sweep *sw, size_t p, cs_sweep_state st, const double *vals, const char *err);

#endif
