/*
 * nccl_style.h - nccl-tests' options for `clustersim coll` (internal to the
 * command line).
 */
#ifndef CS_CLI_NCCL_STYLE_H
#define CS_CLI_NCCL_STYLE_H

#include <stddef.h>

#include "coll/coll_op.h"

/* argv with nccl-tests' short options (-b 8, -b8 and -b=8) as its long
 * ones (--minbytes 8), every one of its getopt string: a new array the
 * caller frees (the strings stay argv's or static). NULL when out of
 * memory. */
char **cs__nccl_translate(int argc, char **argv, int *out_argc);

/* A size as nccl-tests reads it (a bare K, M, G or T suffix is binary) or
 * as the scenario units do (8KB, 1MiB): 0, or -1 with a message. */
int cs__nccl_size(const char *v, double *out, char *msg, size_t n);

/* The collective (a cs_coll_op) of an nccl-tests binary's name, with or
 * without a directory and the _mpi suffix: "all_reduce_perf",
 * "./build/all_gather_perf_mpi"; -1 when `arg` names no test (a scenario
 * file), -2 for a test clustersim has no model for (hypercube_perf). */
int cs__nccl_test(const char *arg);

#endif
