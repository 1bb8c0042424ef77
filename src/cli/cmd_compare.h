/*
 * cmd_compare.h - `clustersim compare`: a profiler trace beside a simulation.
 */
#ifndef CS_CLI_CMD_COMPARE_H
#define CS_CLI_CMD_COMPARE_H

int cs_cmd_compare(int argc, char **argv);

#endif
