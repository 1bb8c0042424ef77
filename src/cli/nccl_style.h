/*
 * nccl_style.h - nccl-tests' conventions for `clustersim coll` (internal to
 * the command line).
 */
#ifndef CS_CLI_NCCL_STYLE_H
#define CS_CLI_NCCL_STYLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/coll_op.h"

/* argv with nccl-tests' -b 8, -b8 and -b=8 as --min 8 (and -e, -f, -g,
 * -d, -o, -n, -w, -c likewise): a new array the caller frees (the strings
 * stay argv's or static). NULL when out of memory. */
char **cs__nccl_translate(int argc, char **argv, int *out_argc);

/* A size as nccl-tests reads it (a bare K, M, G or T suffix is binary) or
 * as the scenario units do (8KB, 1MiB): 0, or -1 with a message. */
int cs__nccl_size(const char *v, double *out, char *msg, size_t n);

/* nccl-tests' data types: how many, each one's name and bytes. */
int cs__nccl_dtypes(void);
const char *cs__nccl_dtype_name(int i);
int cs__nccl_dtype_bytes(int i);

/* The test that measures `op` ("all_reduce_perf", ...). */
const char *cs__nccl_test_name(cs_coll_op op);
/* The count column (elements per rank for the ops whose size is the whole
 * buffer over the ranks) and the bytes the op then moves. */
void cs__nccl_count(cs_coll_op op, double size, int word, int64_t n, double *count, double *bytes);
/* Whether the op reduces (a redop column) and has a root (a root column). */
bool cs__nccl_reduces(cs_coll_op op);
bool cs__nccl_rooted(cs_coll_op op);

#endif
