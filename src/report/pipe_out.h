/*
 * pipe_out.h - one pipeline schedule's run (program/pipesim.h) as
 * `clustersim pipeline` prints it: the schedule, its shape, the makespan
 * and bubble fraction, the in-flight peak of every stage; as text or JSON.
 * svg.h draws its timeline.
 */
#ifndef CS_REPORT_PIPE_OUT_H
#define CS_REPORT_PIPE_OUT_H

#include <stdio.h>

#include "program/pipesim.h"

/* `ticks_per_unit` converts simulated time to the unit of the caller's
 * op times, in which the makespan is printed. */
void cs_pipe_write_text(FILE *f, const cs_pipe_result *r, double ticks_per_unit);
/* 0, or -1 when the JSON writer was misused (cs_jw_finish). */
int cs_pipe_write_json(FILE *f, const cs_pipe_result *r, double ticks_per_unit);

#endif
