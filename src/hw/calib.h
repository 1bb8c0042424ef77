/*
 * calib.h - a calibration file: one factor per compute class that scales
 * the kernel profile's op times to a measured cluster, and factors on the
 * collective tuner's link bandwidths and latencies (made by `clustersim
 * calibrate` from a profiler trace and from nccl-tests output, named by
 * cluster.gpu.calibration):
 *
 *   calibration:
 *     gemm: 0.953
 *     attention: 1.04
 *     memory_bound: 0.965
 *     optimizer: 1.066
 *   gemm_shapes:                 # [M, N, K, batch, factor], from a trace with shapes
 *     - [16384, 6144, 4096, 1, 0.95]
 *   host:
 *     kernel_gap_us: 2.3         # GPU idle between consecutive kernels
 *     memory_bound_kernels: 1.19 # kernels launched per kernel modelled
 *   network:
 *     scale_up_bandwidth: 0.97
 *     scale_out_bandwidth: 0.93
 *     latency: 1.2
 *
 * Any section may be missing; a factor not given is 1, the gap 0. A GEMM
 * whose shape is listed takes its shape's factor instead of the class's.
 * Everything here works on the caller's memory (cs_calib is a value);
 * nothing is allocated past a call.
 */
#ifndef CS_HW_CALIB_H
#define CS_HW_CALIB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "clustersim/clustersim.h"

/* The network factors: on the NVLink bus bandwidth the tuner derives, on
 * one NIC's achievable rate, and on every (algorithm, protocol) latency. */
typedef enum cs_calib_net {
	CS_CALIB_SCALE_UP_BW,
	CS_CALIB_SCALE_OUT_BW,
	CS_CALIB_LATENCY,
	CS_CALIB_NETS
} cs_calib_net;

#define CS_CALIB_MAX_SHAPES 256
/* The largest of a GEMM shape's M, N, K and batch a file holds. */
#define CS_CALIB_MAX_DIM 1e12
/* The host's largest figures a file may give: the gap in us, and the
 * kernels launched per kernel modelled. */
#define CS_CALIB_MAX_GAP_US 1e6
#define CS_CALIB_MAX_KERNELS 1000

/* A GEMM shape's factor on its profiled time. */
typedef struct cs_calib_shape {
	int64_t m, n, k, batch;
	double factor;
} cs_calib_shape;

/* A calibration: factor 1 and has 0 for whatever the file does not give. */
typedef struct cs_calib {
	double factor[CS_COMPUTE_KINDS];
	bool has_factor[CS_COMPUTE_KINDS];
	cs_calib_shape shape[CS_CALIB_MAX_SHAPES]; /* sorted by (m, n, k, batch) */
	size_t nshapes;
	double kernel_gap_us; /* host: GPU idle per kernel */
	bool has_gap;
	double kernels[CS_COMPUTE_KINDS]; /* host: launches per modelled kernel */
	bool has_kernels[CS_COMPUTE_KINDS];
	double net[CS_CALIB_NETS];
	bool has_net[CS_CALIB_NETS];
} cs_calib;

/* The factor of GEMMs of shape (m, n, k, batch): the shape's, else the
 * gemm class's. */
double cs_calib_gemm_factor(const cs_calib *c, int64_t m, int64_t n, int64_t k, int64_t batch);

/* Add or replace shape s's factor (kept sorted); -1 when the table is full. */
int cs_calib_set_shape(cs_calib *c, const cs_calib_shape *s);

/* The empty calibration: every factor 1. */
void cs_calib_init(cs_calib *c);

/* The file's key of compute class k (gemm, attention, memory_bound,
 * optimizer), NULL for CS_COMPUTE_HOST. */
const char *cs_calib_key(cs_compute_kind k);
/* The file's key of network factor k in 'network'. */
const char *cs_calib_net_key(cs_calib_net k);

/* Parse the YAML text buf[len] of the file named `file` (for messages) into
 * *out (cs_calib_init first, and again on failure). CS_ERR_INPUT with
 * "file:line:col: ..." in diag on a syntax error, a top level that is not a
 * mapping of the sections above, an unknown key, a factor that is not a
 * positive finite number (a gap: not finite or negative), a shape that is
 * not four positive whole numbers and a factor, a shape listed twice, more
 * than CS_CALIB_MAX_SHAPES shapes. */
cs_status cs_calib_parse(const char *buf, size_t len, const char *file, cs_calib *out, cs_diag *diag);

/* Read and parse the file `path` (cs_file_read's messages when it cannot
 * be read). */
cs_status cs_calib_load(const char *path, cs_calib *out, cs_diag *diag);

/* Write the factors c has to f, after a comment naming the scenario and the
 * measurement; factors to 4 significant digits. Returns 0, or -1 on a
 * write error (ferror(f)). */
int cs_calib_write(FILE *f, const char *scenario, const char *source, const cs_calib *c);

#endif
