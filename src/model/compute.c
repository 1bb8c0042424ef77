/*
 * compute.c - roofline time of an op on one GPU with GEMM wave quantization.
 *
 * The GPU's gemm_efficiency is the MAMF figure (the best measured GEMM
 * throughput over peak), measured on large square GEMMs such as 8192^3. A
 * measurement already includes that shape's own wave quantization, so the
 * fraction achievable on a full wave is gemm_efficiency divided by the
 * wave efficiency of the 8192^3 reference shape on the same GPU; the
 * reference shape then lands on MAMF exactly, and every other shape is
 * scaled by its wave efficiency relative to it.
 */
#include <math.h>

#include "model/compute.h"

#define CS__REF_GEMM 8192

static double frac(double x, double fallback)
{
	return x > 0.0 ? x : fallback;
}

double cs_compute_peak(const cs_gpu_spec *gpu, cs_precision prec)
{
	switch (prec) {
	case CS_PREC_FP8:
		return gpu->peak_fp8 > 0.0 ? gpu->peak_fp8 : gpu->peak_bf16;
	case CS_PREC_FP32:
		return gpu->peak_bf16 / 2.0;
	case CS_PREC_BF16:
	case CS_PREC_FP16:
		break;
	}
	return gpu->peak_bf16;
}

double cs_compute_wave_efficiency(const cs_gpu_spec *gpu, int64_t m, int64_t n, int64_t batch)
{
	int64_t sms = gpu->sms > 0 ? gpu->sms : 1;
	if (m < 1) m = 1;
	if (n < 1) n = 1;
	if (batch < 1) batch = 1;
	int64_t tiles = ((m + CS_GEMM_TILE_M - 1) / CS_GEMM_TILE_M) *
			((n + CS_GEMM_TILE_N - 1) / CS_GEMM_TILE_N) * batch;
	int64_t waves = (tiles + sms - 1) / sms;
	return (double)tiles / ((double)waves * (double)sms);
}

static double gemm_full_wave_fraction(const cs_gpu_spec *gpu)
{
	double ref = cs_compute_wave_efficiency(gpu, CS__REF_GEMM, CS__REF_GEMM, 1);
	double f = frac(gpu->gemm_efficiency, 1.0) / ref;
	return f < 1.0 ? f : 1.0;
}

static int64_t to_ns(double seconds)
{
	if (!(seconds > 0.0))
		return 0;
	double ns = ceil(seconds * 1e9);
	if (ns > 9.2e18)
		return INT64_MAX;
	return ns < 1.0 ? 1 : (int64_t)ns;
}

int64_t cs_compute_op_ns(const cs_gpu_spec *gpu, cs_precision prec, const cs_layer_op *op)
{
	if (op->cls == CS_OPC_COMM)
		return 0;
	double bw = gpu->hbm_bandwidth * frac(gpu->hbm_efficiency, 1.0);
	double t_mem = bw > 0.0 ? op->bytes / bw : 0.0;
	double t_flop = 0.0;
	double peak = cs_compute_peak(gpu, prec);

	if (op->flops > 0.0 && peak > 0.0) {
		switch (op->cls) {
		case CS_OPC_GEMM: {
			/* no shape beats the best measured one (MAMF is a maximum) */
			double eff = gemm_full_wave_fraction(gpu) *
				     cs_compute_wave_efficiency(gpu, op->m, op->n, op->batch);
			double best = frac(gpu->gemm_efficiency, 1.0);
			t_flop = op->flops / (peak * (eff < best ? eff : best));
			break;
		}
		case CS_OPC_ATTN:
			t_flop = op->flops /
				 (peak * frac(gpu->attn_efficiency, frac(gpu->gemm_efficiency, 1.0)));
			break;
		case CS_OPC_MEMBOUND:
		case CS_OPC_COMM:
			break;
		}
	}
	int64_t ns = to_ns(t_flop > t_mem ? t_flop : t_mem);
	if (ns == 0 && (op->flops > 0.0 || op->bytes > 0.0))
		ns = 1;
	return ns;
}
