/*
 * cmd_chakra.h - `clustersim export-chakra` and `clustersim run-chakra`.
 */
#ifndef CS_CLI_CMD_CHAKRA_H
#define CS_CLI_CMD_CHAKRA_H

int cs_cmd_export_chakra(int argc, char **argv);
int cs_cmd_run_chakra(int argc, char **argv);

#endif
