/*
 * cmd_run.h - `clustersim run` and `clustersim validate`.
 */
#ifndef CS_CLI_CMD_RUN_H
#define CS_CLI_CMD_RUN_H

int cs_cmd_run(int argc, char **argv);
int cs_cmd_validate(int argc, char **argv);

#endif
