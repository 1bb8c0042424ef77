/*
 * compute.h - the time of one op on one GPU.
 *
 * With a kernel profile (hw/kprof.h), each kernel runs at the throughput
 * measured for its class and shape: GEMMs by layout and (M, N, K),
 * attention by backend, sequence, head dimension and direction,
 * memory-bound kernels by kind at their measured bandwidth for the bytes
 * they move; no kernel beats its roofline (FLOPs at the dense peak, bytes
 * at the HBM datasheet bandwidth) or runs shorter than the shortest
 * measured kernel; a calibration's class factor scales the measured time
 * before those floors. Without one (a GPU with no profile, or profile "none"),
 * the flat model: GEMMs at peak x gemm_efficiency x wave efficiency
 * (128x256 output tiles over the SMs) or HBM traffic, whichever is slower;
 * attention at peak x attn_efficiency; everything else bandwidth bound at
 * hbm_efficiency. The slowdown while comm kernels hold SMs is the
 * runner's, not applied here.
 */
#ifndef CS_MODEL_COMPUTE_H
#define CS_MODEL_COMPUTE_H

#include <stdint.h>

#include "config/scenario.h"
#include "hw/calib.h"
#include "hw/kprof.h"
#include "model/model.h"

#define CS_GEMM_TILE_M 128
#define CS_GEMM_TILE_N 256

/* What times ops: the GPU, the matmul precision, the kernel profile (NULL
 * for the flat efficiencies), the fused attention implementation and the
 * calibration whose factors scale the profile's times, per GEMM shape or
 * per compute class (cluster.gpu.calibration; NULL for none). The caller
 * keeps the pointed-to data alive while it times ops. */
typedef struct cs_compute {
	const cs_gpu_spec *gpu;
	cs_precision prec;
	const cs_kprof *prof;
	cs_attn_backend attn;
	const cs_calib *calib;
	const cs_kprof_clock *clock; /* the power-cap clock model, NULL for none */
} cs_compute;

/* The class of compute time `op` counts in (clustersim.h's cs_compute_kind;
 * CS_COMPUTE_HOST is the builder's). */
cs_compute_kind cs_compute_op_class(const cs_layer_op *op);

/* Dense tensor-core peak of `gpu` in `prec`, FLOP/s (fp32: TF32, half of bf16;
 * fp8 without an fp8 peak: bf16). */
double cs_compute_peak(const cs_gpu_spec *gpu, cs_precision prec);

/* Fraction of the SM slots busy over the waves of an (m x n) x batch GEMM:
 * tiles / (ceil(tiles / sms) * sms). */
double cs_compute_wave_efficiency(const cs_gpu_spec *gpu, int64_t m, int64_t n, int64_t batch);

/* Time of one op on one GPU, integer nanoseconds (>= 1 for any op with
 * work; 0 for an op without FLOPs or bytes, and for comm ops). */
int64_t cs_compute_op_ns(const cs_compute *c, const cs_layer_op *op);

/* The power, W, that `op` leaves under the power cap while it runs (cap
 * minus its kind's power at full clock; negative for kinds that draw more);
 * 0 for GEMMs, whose clock the runner sets, for comm ops and without a
 * clock model. */
double cs_compute_op_spare_w(const cs_compute *c, const cs_layer_op *op);

#endif
