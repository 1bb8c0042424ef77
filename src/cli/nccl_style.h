/*
 * nccl_style.h - nccl-tests' options for `clustersim coll` (internal to the
 * command line).
 */
#ifndef CS_CLI_NCCL_STYLE_H
#define CS_CLI_NCCL_STYLE_H

#include <stddef.h>

/* argv with nccl-tests' -b 8, -b8 and -b=8 as --min 8 (and -e, -f, -g,
 * -d, -o, -n, -w, -c likewise): a new array the caller frees (the strings
 * stay argv's or static). NULL when out of memory. */
char **cs__nccl_translate(int argc, char **argv, int *out_argc);

/* A size as nccl-tests reads it (a bare K, M, G or T suffix is binary) or
 * as the scenario units do (8KB, 1MiB): 0, or -1 with a message. */
int cs__nccl_size(const char *v, double *out, char *msg, size_t n);

#endif
