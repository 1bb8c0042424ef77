/*
 * schedule_zb.h - the list scheduler that builds the zero-bubble orders
 * (ZB-H1, ZB-V); internal to src/program, callers use cs_sched_stage_ops.
 */
#ifndef CS_PROGRAM_SCHEDULE_ZB_H
#define CS_PROGRAM_SCHEDULE_ZB_H

#include "program/schedule.h"

/* Arguments already validated by cs_sched_stage_ops. Writes min(count, cap)
 * ops of stage `stage` and returns the count (3*m*v), or -1 with a message
 * in *diag when out of memory. */
int64_t cs__sched_zb(cs_schedule sched, int64_t p, int64_t m, int64_t v, int64_t stage, cs_sched_op *out,
		     int64_t cap, cs_diag *diag);

#endif
