/*
 * nccl_out.h - nccl-tests' output for a collective the tuner times: its
 * header (the test, its parameters, the ranks), one row per size with
 * out-of-place and in-place alike and the algorithm and protocol NCCL's
 * tuner picks as two more columns, and the average bus bandwidth; or the
 * rows as a JSON array. Also what nccl-tests prints per collective: its
 * data types, its count, redop and root columns (its tests' names are the
 * reader's, ingest/nccltests.h).
 */
#ifndef CS_REPORT_NCCL_OUT_H
#define CS_REPORT_NCCL_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "coll/coll.h"
#include "config/scenario.h"

/* nccl-tests' data types: how many, each one's name and bytes. */
int cs_nccl_dtypes(void);
const char *cs_nccl_dtype_name(int i);
int cs_nccl_dtype_bytes(int i);

/* The count column (elements per rank for the ops whose size is the whole
 * buffer over the ranks) and the bytes the op then moves. */
void cs_nccl_count(cs_coll_op op, double size, int word, int64_t n, double *count, double *bytes);
/* Whether the op reduces (a redop column) and has a root (a root column). */
bool cs_nccl_reduces(cs_coll_op op);
bool cs_nccl_rooted(cs_coll_op op);

/* One nccl-tests run: `op` on the group g of GPUs 0..n-1 of cluster c,
 * sizes from min to max multiplying by factor, in data type dtype (an
 * index of cs_nccl_dtype_name), redop the name of the reduction. */
typedef struct cs_nccl_run {
	const cs_cluster_spec *c;
	cs_coll_op op;
	const cs_group_shape *g;
	int64_t n;
	double min, max, factor;
	int dtype;
	const char *redop;
} cs_nccl_run;

/* The output of run r timed by coll, as text or JSON. Returns whether some
 * row's algorithm is not `asked` (CS_ALGO_AUTO: false). */
bool cs_nccl_write(FILE *f, bool json, const cs_nccl_run *r, cs_coll *coll, cs_coll_algo asked);

#endif
