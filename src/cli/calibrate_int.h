/*
 * calibrate_int.h - what the two halves of `clustersim calibrate` share:
 * cmd_calibrate.c (a profiler trace) and cmd_calibrate_net.c (nccl-tests
 * output).
 */
#ifndef CS_CLI_CALIBRATE_INT_H
#define CS_CLI_CALIBRATE_INT_H

#include <stdbool.h>

#include "cli/args.h"

/* Write the calibration *cal to `path` atomically, after a comment naming
 * the scenario and the measurement; 0, or 2 after printing the problem. */
struct cs_calib;
int cs__calibrate_write(const char *path, const char *scenario, const char *source,
			const struct cs_calib *cal);

/* `calibrate --nccl-tests FILE SCENARIO --out OUT` (cmd_calibrate_net.c):
 * forced_op < 0 takes the op from the file; `force` writes factors outside
 * the plausible range; `plot` (or NULL) the chart of the fit to write;
 * `progress` (CS_PROGRESS_*) says whether "wrote OUT" is printed. Returns
 * the exit status. */
int cs__calibrate_nccl(const char *file, const cs_scenario_args *sc, int forced_op, const char *out,
		       const char *plot, bool force, int progress);

#endif
