/*
 * cmd_pipeline.h - `clustersim pipeline`: run one pipeline schedule with
 * per-op times and report its makespan, bubble and in-flight peaks.
 */
#ifndef CS_CLI_CMD_PIPELINE_H
#define CS_CLI_CMD_PIPELINE_H

/* argv[0] is "pipeline". Returns the exit status: 0, 1 (deadlock), 2 (bad
 * input), 3 (out of memory). */
int cs_cmd_pipeline(int argc, char **argv);

#endif
