/*
 * cmd_memory.h - `clustersim memory`: the per-GPU training-memory breakdown
 * of a model under a parallel plan, and whether it fits the GPU.
 */
#ifndef CS_CLI_CMD_MEMORY_H
#define CS_CLI_CMD_MEMORY_H

#include <stdio.h>

/* argv[0] is "memory". Returns the exit status: 0, 2 (bad input), 3 (out
 * of memory). Writes the report to stdout and errors to stderr. */
int cs_cmd_memory(int argc, char **argv);

/* The same, writing to `out` and `err`. */
int cs_cmd_memory_to(int argc, char **argv, FILE *out, FILE *err);

#endif
