/*
 * cmd_calibrate.h - `clustersim calibrate`: per-class factors that make a
 * simulation reproduce a profiler trace, written as a calibration file.
 */
#ifndef CS_CLI_CMD_CALIBRATE_H
#define CS_CLI_CMD_CALIBRATE_H

int cs_cmd_calibrate(int argc, char **argv);

#endif
