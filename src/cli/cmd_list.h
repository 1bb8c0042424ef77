/*
 * cmd_list.h - `clustersim list`: GPU and model presets, shipped scenarios.
 */
#ifndef CS_CLI_CMD_LIST_H
#define CS_CLI_CMD_LIST_H

int cs_cmd_list(int argc, char **argv);

#endif
