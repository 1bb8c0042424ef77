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
 *   network:
 *     scale_up_bandwidth: 0.97
 *     scale_out_bandwidth: 0.93
 *     latency: 1.2
 *
 * Either section may be missing; a factor not given is 1. Everything here
 * works on the caller's memory; nothing is allocated past a call.
 */
#ifndef CS_HW_CALIB_H
#define CS_HW_CALIB_H

#include <stdbool.h>
#include <stdio.h>

#include "clustersim/clustersim.h"

/* The network factors: on the NVLink bus bandwidth the tuner derives, on
 * one NIC's achievable rate, and on every (algorithm, protocol) latency. */
typedef enum cs_calib_net {
	CS_CALIB_SCALE_UP_BW, CS_CALIB_SCALE_OUT_BW, CS_CALIB_LATENCY, CS_CALIB_NETS
} cs_calib_net;

/* A calibration: factor 1 and has 0 for whatever the file does not give. */
typedef struct cs_calib {
	double factor[CS_COMPUTE_KINDS];
	bool has_factor[CS_COMPUTE_KINDS];
	double net[CS_CALIB_NETS];
	bool has_net[CS_CALIB_NETS];
} cs_calib;

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
 * mapping of 'calibration' and 'network', an unknown key, or a factor that
 * is not a positive finite number. */
cs_status cs_calib_parse(const char *buf, size_t len, const char *file, cs_calib *out,
			 cs_diag *diag);

/* Read and parse the file `path` (cs_file_read's messages when it cannot
 * be read). */
cs_status cs_calib_load(const char *path, cs_calib *out, cs_diag *diag);

/* Write the factors c has to f, after a comment naming the scenario and the
 * measurement; factors to 4 significant digits. Returns 0, or -1 on a
 * write error (ferror(f)). */
int cs_calib_write(FILE *f, const char *scenario, const char *source, const cs_calib *c);

#endif
