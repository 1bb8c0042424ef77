/*
 * cmd_sweep.h - `clustersim sweep`: a scenario over the cartesian product of
 * varied keys, one CSV row per point.
 */
#ifndef CS_CLI_CMD_SWEEP_H
#define CS_CLI_CMD_SWEEP_H

int cs_cmd_sweep(int argc, char **argv);

#endif
