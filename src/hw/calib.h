/*
 * calib.h - a calibration file: one factor per compute class that scales
 * the kernel profile's op times to a measured cluster (made by
 * `clustersim calibrate`, named by cluster.gpu.calibration):
 *
 *   calibration:
 *     gemm: 0.953
 *     attention: 1.04
 *     memory_bound: 0.965
 *     optimizer: 1.066
 *
 * Classes not given keep the factor 1. Everything here works on the
 * caller's memory; nothing is allocated past a call.
 */
#ifndef CS_HW_CALIB_H
#define CS_HW_CALIB_H

#include <stdio.h>

#include "clustersim/clustersim.h"

/* The file's key of compute class k (gemm, attention, memory_bound,
 * optimizer), NULL for CS_COMPUTE_HOST. */
const char *cs_calib_key(cs_compute_kind k);

/* Parse the YAML text buf[len] of the file named `file` (for messages) into
 * factor[] (every class 1 first). CS_ERR_INPUT with "file:line:col: ..." in
 * diag on a syntax error, a top level that is not a mapping with the one
 * key 'calibration', an unknown class, or a factor that is not a positive
 * finite number. */
cs_status cs_calib_parse(const char *buf, size_t len, const char *file,
			 double factor[CS_COMPUTE_KINDS], cs_diag *diag);

/* Read and parse the file `path` (cs_file_read's messages when it cannot
 * be read). */
cs_status cs_calib_load(const char *path, double factor[CS_COMPUTE_KINDS], cs_diag *diag);

/* Write a calibration file of the classes with have[k] to f, with a comment
 * naming the scenario and the trace; factors to 4 significant digits.
 * Returns 0, or -1 on a write error (ferror(f)). */
int cs_calib_write(FILE *f, const char *scenario, const char *trace,
		   const double factor[CS_COMPUTE_KINDS], const bool have[CS_COMPUTE_KINDS]);

#endif
