/*
 * cmd_compare.h - `clustersim compare`: a profiler trace beside a simulation.
 */
#ifndef CS_CLI_CMD_COMPARE_H
#define CS_CLI_CMD_COMPARE_H

#include <stdint.h>

#include "cli/args.h"

int cs_cmd_compare(int argc, char **argv);

/* What compare and calibrate both take: a trace and a scenario, given in
 * that order, the scenario's --set overrides and --steps. */
typedef struct cs_trace_args {
	const char *trace;
	cs_scenario_args sc;
	int64_t steps;        /* 0: the trace's */
} cs_trace_args;

/* Take cs_args_next's `id` when it is one of those (o_set, o_steps: the
 * command's ids for --set and --steps): 1 when taken, 0 when not, 2 after
 * printing the problem. */
int cs_trace_args_take(cs_args *a, int id, const char *val, int o_set, int o_steps,
                       cs_trace_args *t);
/* 0 when the trace and the scenario were given, else 2 after saying so. */
int cs_trace_args_check(cs_args *a, const cs_trace_args *t);

#endif
