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
 * "[default0]:", srun -l's "0: ". An MPI build's name (all_reduce_perf_mpi)
 * is its test's. The group is the '# Rank'
 * lines: their count and their distinct hosts.
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
	double busbw[2];    /* GB/s as printed, NAN where not given */
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
} cs_nccltests;

/* Parse buf[len], the output read from `file` (named in messages), into
 * *out, which the caller releases with cs_nccltests_free (also after an
 * error). CS_ERR_INPUT with "file:line:col: message" for: no column header,
 * a header without size, time, algbw or busbw, a result row whose columns
 * do not match the header or are not numbers, no result rows, no '# Rank'
 * lines, a NUL byte. */
cs_status cs_nccltests_parse(const char *buf, size_t len, const char *file, cs_nccltests *out,
			     cs_diag *diag);

/* Read (at most 64 MiB) and parse the file `path`. */
cs_status cs_nccltests_load(const char *path, cs_nccltests *out, cs_diag *diag);

void cs_nccltests_free(cs_nccltests *t);

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
cs_status cs_nccltests_op(const cs_nccltests *t, const char *file, int forced, cs_coll_op *op,
			  cs_diag *diag);

/* The test that measures `op` ("all_reduce_perf", ...). */
const char *cs_nccltests_name(cs_coll_op op);

#endif
