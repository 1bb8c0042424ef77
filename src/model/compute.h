/*
 * compute.h - the time of one op on one GPU.
 *
 * GEMMs: FLOPs at peak x gemm_efficiency x wave efficiency (128x256 output
 * tiles over the SMs), or HBM traffic, whichever is slower. Attention
 * (FlashAttention): FLOPs at peak x attn_efficiency. Everything else is
 * bandwidth bound. The slowdown while comm kernels hold SMs is the
 * runner's, not applied here.
 */
#ifndef CS_MODEL_COMPUTE_H
#define CS_MODEL_COMPUTE_H

#include <stdint.h>

#include "config/scenario.h"
#include "model/model.h"

#define CS_GEMM_TILE_M 128
#define CS_GEMM_TILE_N 256

/* Dense tensor-core peak of `gpu` in `prec`, FLOP/s (fp32: TF32, half of bf16;
 * fp8 without an fp8 peak: bf16). */
double cs_compute_peak(const cs_gpu_spec *gpu, cs_precision prec);

/* Fraction of the SM slots busy over the waves of an (m x n) x batch GEMM:
 * tiles / (ceil(tiles / sms) * sms). */
double cs_compute_wave_efficiency(const cs_gpu_spec *gpu, int64_t m, int64_t n, int64_t batch);

/* Time of one op on one GPU, integer nanoseconds (>= 1 for any op with
 * work; 0 for an op without FLOPs or bytes, and for comm ops). */
int64_t cs_compute_op_ns(const cs_gpu_spec *gpu, cs_precision prec, const cs_layer_op *op);

#endif
