/*
 * nccl_out.h - nccl-tests' output for a collective the tuner times, as
 * nccl-tests 2.19 (src/util.cu) prints it: its version line, the test, its
 * parameters and the ranks; one row per size with out-of-place and in-place
 * alike (7-character times, 6-character bandwidths) and the algorithm and
 * protocol NCCL's tuner picks as two more columns; the out-of-bounds and
 * average bus bandwidth footer. Also its -J JSON (version 3), or the rows
 * as clustersim's own JSON array; and what nccl-tests prints per
 * collective: its data types, its tests' names, its count, redop and root
 * columns. And the rows as a chart: bus bandwidth against size.
 */
#ifndef CS_REPORT_NCCL_OUT_H
#define CS_REPORT_NCCL_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "coll/coll.h"
#include "config/scenario.h"

/* nccl-tests' data types: how many, each one's name and bytes, and the
 * order -d all runs them in (i < cs_nccl_dtypes(): an index of the name). */
int cs_nccl_dtypes(void);
const char *cs_nccl_dtype_name(int i);
int cs_nccl_dtype_bytes(int i);
int cs_nccl_dtype_all(int i);

/* nccl-tests' reductions in its order (sum, prod, max, min, avg, mulsum),
 * the order -o all runs them in. */
int cs_nccl_redops(void);
const char *cs_nccl_redop_name(int i);

/* The version of NCCL whose tuner is modelled, as NCCL_VERSION_CODE. */
#define CS_NCCL_VERSION_CODE 23000
/* The nccl-tests whose output is written. */
#define CS_NCCL_TESTS_VERSION "2.19.6"

/* The count column (elements per rank for the ops whose size is the whole
 * buffer over the ranks) and the bytes the op then moves. */
void cs_nccl_count(cs_coll_op op, double size, int word, int64_t n, double *count, double *bytes);
/* Whether op's size is the whole buffer over the ranks (its count per rank). */
bool cs_nccl_per_rank(cs_coll_op op);
/* Whether the op reduces (a redop column) and has a root (a root column). */
bool cs_nccl_reduces(cs_coll_op op);
bool cs_nccl_rooted(cs_coll_op op);

/* One nccl-tests run: `op` on the group g of GPUs 0..n-1 of cluster c,
 * sizes from min to max multiplying by factor (or adding stepbytes when
 * factor is 0), in data type dtype (an index of cs_nccl_dtype_name),
 * redop the index of the reduction. Zero is nccl-tests' default where a
 * field says so; the rest is echoed in the header as nccl-tests echoes it
 * and changes no time. */
typedef struct cs_nccl_run {
	const cs_cluster_spec *c;
	cs_coll_op op;
	const cs_group_shape *g;
	int64_t n;
	double min, max, factor, stepbytes;
	int dtype, redop;
	bool all_dtypes, all_redops; /* -d all, -o all */
	int64_t root;                /* of the rooted ops; -1 every rank in turn */
	int64_t nthreads, ngpus;     /* per process (0: 1, and all n ranks) */
	int64_t warmup, iters, agg, check, graph, unalign, blocking, cycles; /* cycles 0: 1 */
	bool parallel_init, cputime;
	int argc; /* the command line the JSON's args echo */
	char *const *argv;
} cs_nccl_run;

/* The rows run r prints: a size below one element per rank (or per
 * buffer) prints none, as in nccl-tests. */
int64_t cs_nccl_rows(const cs_nccl_run *r);

/* The output of run r timed by coll, as text or clustersim's JSON array.
 * Returns whether some row's algorithm is not `asked` (CS_ALGO_AUTO:
 * false). */
bool cs_nccl_write(FILE *f, bool json, const cs_nccl_run *r, cs_coll *coll, cs_coll_algo asked);

/* The JSON nccl-tests' -J FILE.json writes for run r: 0, or -1 when f
 * failed. `now` is the time written as start_time and end_time. */
int cs_nccl_write_json(FILE *f, const cs_nccl_run *r, cs_coll *coll, const char *now);

/* The bus bandwidth of run r's rows against their size (log x) as an SVG
 * chart, one line per algorithm and protocol the rows show, over the sizes
 * where it is the one; only the first data type's, reduction's, root's and
 * cycle's rows. 0, or -1 when memory runs out or f failed. */
int cs_nccl_write_svg(FILE *f, const cs_nccl_run *r, cs_coll *coll, cs_coll_algo asked);

/* One nccl-tests test beside the tuner: its sizes, the times measured and
 * those the model gives before and after a fit, ns; bus_factor turns
 * size over time into bus bandwidth. */
typedef struct cs_nccl_fit_series {
	const char *label; /* "all_reduce on 32 ranks" */
	double bus_factor;
	size_t n;
	const double *bytes, *measured_ns, *before_ns, *after_ns;
} cs_nccl_fit_series;

/* The tests of a calibration as an SVG chart: bus bandwidth against size
 * (log x), each test's measured sizes as dots beside the model's line
 * before the fit (dashed) and after it (solid). 0, or -1 when f failed or
 * memory ran out. */
int cs_nccl_write_fit_svg(FILE *f, const char *title, const cs_nccl_fit_series *s, size_t n);

#endif
