/*
 * svg.h - a pipeline schedule drawn as an SVG timeline.
 *
 * One row per stage, stage 0 on top; one box per op, coloured by kind
 * (F blue, B orange, W green, full backward BW red) and labelled with its
 * micro-batch number, "micro.chunk" when stages hold several chunks; a time
 * axis below in the caller's unit, and a legend.
 */
#ifndef CS_REPORT_SVG_H
#define CS_REPORT_SVG_H

#include <stdio.h>

#include "program/pipesim.h"

/* Writes the whole document to f. `ticks_per_unit` converts simulated time
 * to the axis unit named `unit` (e.g. "t_f"); both label the axis only.
 * Returns 0, or -1 when f reports a write error. */
int cs_svg_pipeline(FILE *f, const cs_pipe_result *res, double ticks_per_unit, const char *unit);

#endif
