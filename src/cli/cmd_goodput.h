/*
 * cmd_goodput.h - `clustersim goodput`: effective training time over a run
 * of days under failures, checkpoints and restarts.
 */
#ifndef CS_CLI_CMD_GOODPUT_H
#define CS_CLI_CMD_GOODPUT_H

int cs_cmd_goodput(int argc, char **argv);

#endif
