/*
 * cmd_plan.h - `clustersim plan`: search the parallel plans of a scenario.
 */
#ifndef CS_CLI_CMD_PLAN_H
#define CS_CLI_CMD_PLAN_H

int cs_cmd_plan(int argc, char **argv);

#endif
