/*
 * cmd_coll.h - `clustersim coll`: the nccl-tests twin.
 */
#ifndef CS_CLI_CMD_COLL_H
#define CS_CLI_CMD_COLL_H

/* argv[0] is "coll". Returns the exit status: 0, 2 on bad input, 3 on
 * out-of-memory. */
int cs_cmd_coll(int argc, char **argv);

#endif
