/*
 * nccltests.h - the text output of NVIDIA's nccl-tests (all_reduce_perf,
 * all_gather_perf, reduce_scatter_perf, alltoall_perf, broadcast_perf,
 * sendrecv_perf), as `clustersim calibrate --nccl-tests` reads it:
 *
 *   # Collective test starting: all_reduce_perf           (newer versions)
 *   #  Rank  0 Group  0 Pid  313 on node-0 device  0 [0x18] NVIDIA H100 80GB HBM3
 *   ...
 *   #       size   count  type  redop  root   time  algbw  busbw #wrong   time  algbw  busbw #wrong
 *              8       2 float    sum    -1  37.35   0.00   0.00      0  36.92   0.00   0.00      0
 *
 * Columns are found by the header's names (older versions lack 'root' or
 * say 'error' for '#wrong'); lines that start with neither '#' nor a digit
 * (mpirun's and NCCL's own messages) are skipped. A launcher's prefix on a
 * line is dropped first: mpirun --tag-output's "[1,0]<stdout>:", torchrun's
 * "[default0]:", srun -l's "0: ", Intel MPI -prepend-rank's "[0] ". An
 * MPI build's name (all_reduce_perf_mpi)
 * is its test's. The group is the '# Rank'
 * lines: their count and their distinct hosts. Tokens are split at any run
 * of blanks, so output whose spaces were collapsed (or turned into tabs)
 * reads the same.
 *
 * One file may hold several tests, one after another (a script running
 * all_reduce_perf, then all_gather_perf, into one log): a test's lines
 * ('# Collective test starting', '# nThread', '# Using devices', '# Rank'
 * or a column header) after another test's result rows start the next.
 *
 * nccl-tests' -J FILE.json output (its util.cu, version 3) reads too: the
 * test from args[0], the group from config.devices (one per process) times
 * config.nthreads and config.ngpus, the rows from results[] (time or
 * cpu_time of out_of_place and in_place, bus_bw).
 */
#ifndef CS_INGEST_NCCLTESTS_H
#define CS_INGEST_NCCLTESTS_H

#include <stddef.h>
#include <stdint.h>

#include "clustersim/clustersim.h"
#include "coll/coll_op.h"
#include "hw/topo.h"

/* One size: out-of-place [0] and in-place [1] time, NAN where not given. */
typedef struct cs_nccl_row {
	double bytes;
	double time_us[2];
	double busbw[2]; /* GB/s as printed, NAN where not given */
	int line;
} cs_nccl_row;

typedef struct cs_nccltests {
	char test[40];          /* "all_reduce_perf" from the header, "" when absent */
	char redop[16];         /* of the first row, "" without the column */
	int64_t root;           /* of the first row, -1 without the column */
	int64_t nranks, nhosts; /* the '# Rank' lines and their distinct hosts */
	int64_t ranks_per_host; /* the most on one host */
	char gpu[64];           /* rank 0's device name */
	cs_nccl_row *rows;      /* sizes in file order, size 0 left out */
	size_t nrows;
	int line; /* where the test's output starts (1 for JSON) */
} cs_nccltests;

/* The tests of one file, in file order. */
typedef struct cs_nccltests_set {
	cs_nccltests *tests;
	size_t n;
} cs_nccltests_set;

/* Parse buf[len], the output read from `file` (named in messages), into
 * *out: every test it holds, each with rows and ranks. The caller releases
 * it with cs_nccltests_set_free (also after an error). CS_ERR_INPUT with
 * "file:line:col: message" for: no column header, a header without size,
 * time, algbw or busbw, a result row whose columns do not match the header
 * or are not numbers, a test without result rows or '# Rank' lines, a NUL
 * byte; for JSON, "file:line:col: message" for bad JSON and "file: key:
 * message" for a key that is missing or of the wrong kind. */
cs_status cs_nccltests_parse_set(const char *buf, size_t len, const char *file, cs_nccltests_set *out,
				 cs_diag *diag);

/* The first test of buf[len] alone (the others are parsed and dropped). */
cs_status cs_nccltests_parse(const char *buf, size_t len, const char *file, cs_nccltests *out, cs_diag *diag);

/* Read (at most 64 MiB) and parse the file `path`. */
cs_status cs_nccltests_load_set(const char *path, cs_nccltests_set *out, cs_diag *diag);
cs_status cs_nccltests_load(const char *path, cs_nccltests *out, cs_diag *diag);

void cs_nccltests_free(cs_nccltests *t);
void cs_nccltests_set_free(cs_nccltests_set *s);

/* Whether the device name of an output (rank 0's, "NVIDIA A100-SXM4-40GB")
 * names the family of the GPU `gpu` (a preset's name, "h100-sxm-80g", or a
 * scenario's own): 1 when the family's token (letters then digits: a100,
 * h100, gb200, mi300x) is one of the device name's, 0 when it is not, -1
 * when the device has no name or the GPU's name no such token. */
int cs_nccltests_same_gpu(const char *device, const char *gpu);

/* The output's group on the cluster *c: its hosts are nodes, its ranks the
 * first ranks_per_host GPUs of each. CS_ERR_INPUT naming the file when it
 * does not fit the cluster; CS_ERR_NOMEM. */
cs_status cs_nccltests_group(const cs_nccltests *t, const char *file, const cs_cluster_spec *c,
			     cs_group_shape *g, cs_diag *diag);

/* The collective the output measured: from the test's name when the header
 * gives it, else from busbw / algbw of the largest size (2(n-1)/n
 * all-reduce; (n-1)/n reduce-scatter when the rows have a reduction, else
 * all-gather, which all-to-all prints alike: name the op then; 1 broadcast
 * or send/recv by the root column). `forced` (< 0: none) wins. CS_ERR_INPUT
 * naming the file when the test is one clustersim has no model for or the
 * op cannot be told. */
cs_status cs_nccltests_op(const cs_nccltests *t, const char *file, int forced, cs_coll_op *op, cs_diag *diag);

/* The test that measures `op` ("all_reduce_perf", ...). */
const char *cs_nccltests_name(cs_coll_op op);

#endif
