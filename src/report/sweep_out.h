/*
 * sweep_out.h - a sweep's results for people and programs: the CSV of its
 * points and an SVG chart of one metric (study/sweep.h runs the sweep).
 */
#ifndef CS_REPORT_SWEEP_OUT_H
#define CS_REPORT_SWEEP_OUT_H

#include <stdio.h>

#include "clustersim/clustersim.h"
#include "study/sweep.h"

/* The CSV: a header (the varied keys, status, error, the metric columns),
 * then one row per finished point in point order (pending points left
 * out). Returns 0, or -1 on a write error. */
int cs_sweep_write_csv(const cs_sweep *sw, FILE *f);
/* One row (no header) of point p, finished or not, with its line break. */
void cs_sweep_write_row(const cs_sweep *sw, size_t p, FILE *f);

/* An SVG line chart of metric against the first varied key: numeric x
 * positions when every value parses as a number (with the key's unit),
 * else evenly spaced categories; one polyline per combination of the other
 * keys' values (per value of the second key when there are two). Returns
 * 0, -1 with a message for an unknown metric or no key, -2 on a write error. */
int cs_sweep_plot(const cs_sweep *sw, const char *metric, FILE *f, cs_diag *diag);

#endif
