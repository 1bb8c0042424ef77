/*
 * compare_out.h - what `clustersim compare` prints of a comparison
 * (study/compare.h): per class of kernel, per step, the trace's time and
 * kernels beside the simulation's and the relative error, then the
 * compute sum, the trace-only classes, GPU idle and the step; as text,
 * JSON, CSV or a chart.
 */
#ifndef CS_REPORT_COMPARE_OUT_H
#define CS_REPORT_COMPARE_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "study/compare.h"

/* `trace` is the trace's path as given; `steps_given` says the step count
 * came from the caller, not from the trace. */
void cs_compare_write_text(FILE *f, const cs_compare *c, const char *trace, bool steps_given);
void cs_compare_write_json(FILE *f, const cs_compare *c, const char *trace, bool steps_given);
void cs_compare_write_csv(FILE *f, const cs_compare *c);

/* The trace's kernels by name, the most time first, each with its class,
 * kernels and time per step (`compare --kernels`): a table, a JSON object
 * with a "kernels" array, or one CSV row per name. */
enum { CS_COMPARE_TEXT, CS_COMPARE_JSON, CS_COMPARE_CSV };
void cs_compare_write_kernels(FILE *f, const cs_compare *c, const char *trace, int format);

/* The comparison as an SVG chart: a group of horizontal bars per row of the
 * text (ms per step), the trace's beside the simulation's with its error;
 * with `after` (a simulation of the same trace after calibration, or
 * NULL) a third bar of it. 0, or -1 when f failed. */
int cs_compare_write_svg(FILE *f, const cs_compare *c, const char *trace, const cs_compare *after);

#endif
