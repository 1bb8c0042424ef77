/*
 * svg.h - a pipeline schedule drawn as an SVG timeline, and what the report
 * module's charts draw with.
 *
 * One row per stage, stage 0 on top; one box per op, coloured by kind
 * (F blue, B orange, W green, full backward BW red) and labelled with its
 * micro-batch number, "micro.chunk" when stages hold several chunks; a time
 * axis below in the caller's unit, and a legend.
 */
#ifndef CS_REPORT_SVG_H
#define CS_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "program/pipesim.h"

/* Writes the whole document to f. `ticks_per_unit` converts simulated time
 * to the axis unit named `unit` (e.g. "t_f"); both label the axis only.
 * Returns 0, or -1 when f reports a write error. */
int cs_svg_pipeline(FILE *f, const cs_pipe_result *res, double ticks_per_unit, const char *unit);

/* ---- the charts' primitives: the report module's own (cs__svg_) ------------
 *
 * A chart is cs__svg_begin, axes, marks, a legend and cs__svg_end. Text is
 * 12 px sans-serif unless an element says otherwise; cs__svg_text escapes
 * it. An axis maps data onto pixels: linear with round ticks, or
 * logarithmic with a tick at each power of ten (of two for byte sizes). */

typedef struct cs__svg_axis {
	double lo, hi; /* the data range shown */
	double p0, p1; /* the pixels of lo and hi */
	double step;   /* linear: between ticks; log: the factor between ticks */
	bool log;      /* lo > 0 */
	bool cut;      /* linear: lo > 0, the axis does not start at 0 */
} cs__svg_axis;

/* A tick label for v into buf. */
typedef void cs__svg_fmt(char *buf, size_t n, double v);

void cs__svg_begin(FILE *f, double width, double height);
/* </svg>; 0, or -1 when f reports a write error. */
int cs__svg_end(FILE *f);
/* <text x y ATTRS>TEXT</text>, TEXT escaped; attrs may be "". */
void cs__svg_text(FILE *f, double x, double y, const char *attrs, const char *text);
/* A round step (1, 2 or 5 times a power of ten) giving about n ticks. */
double cs__svg_step(double span, int n);
/* A linear axis over data from lo to hi. It starts at 0 unless the data lie
 * in the upper half of [0, hi] and differ (a 2 % difference is then a visible one): it
 * then starts at a round value below lo and is marked cut. */
void cs__svg_axis_lin(cs__svg_axis *a, double lo, double hi, double p0, double p1);
/* A logarithmic axis from lo to hi (both > 0); base 2 puts the ticks at
 * powers of two (a few apart), else at powers of ten. */
void cs__svg_axis_log(cs__svg_axis *a, double lo, double hi, double p0, double p1, int base);
double cs__svg_pos(const cs__svg_axis *a, double v);
/* The vertical axis at x (grid lines to x_end), its ticks labelled by fmt
 * ("%g" when NULL) and its rotated label; a cut axis says it does not
 * start at 0 in its label and with a break mark at its foot. */
void cs__svg_yaxis(FILE *f, const cs__svg_axis *a, double x, double x_end, const char *label,
		   cs__svg_fmt *fmt);
/* The horizontal axis at y (grid lines up to y_top), the same way. */
void cs__svg_xaxis(FILE *f, const cs__svg_axis *a, double y, double y_top, const char *label,
		   cs__svg_fmt *fmt);
/* The i-th colour of the charts' palette (ten, then again). */
const char *cs__svg_colour(size_t i);
/* A legend entry at (x, y), y the text's baseline: a box (box) or a line of
 * colour, then the text. */
void cs__svg_key(FILE *f, double x, double y, const char *colour, bool box, const char *text);
/* text broken at spaces into lines of at most `width` characters, one under
 * the other from baseline y, dy apart; returns the lines written. */
int cs__svg_lines(FILE *f, double x, double y, double dy, const char *attrs, const char *text, size_t width);
/* Byte sizes as tick labels: "8 B", "4 KiB", "1 GiB". */
void cs__svg_fmt_bytes(char *buf, size_t n, double v);

#endif
