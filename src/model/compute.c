/*
 * compute.c - the time of an op on one GPU: from the kernel profile's
 * measured throughput when there is one, else the flat roofline model with
 * GEMM wave quantization.
 *
 * Flat model:
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

#include "core/sim.h"

#define CS__REF_GEMM 8192

static double frac(double x, double fallback) { return x > 0.0 ? x : fallback; }

double cs_compute_peak(const cs_gpu_spec *gpu, cs_precision prec)
{
	/* the validation refuses nvfp4 without an fp4 peak */
	if (prec == CS_PREC_NVFP4 && gpu->peak_fp4 > 0.0)
		return gpu->peak_fp4;
	switch (prec) {
	case CS_PREC_NVFP4:
	case CS_PREC_FP8:
	case CS_PREC_FP8_ALL:
	case CS_PREC_FP8_CURRENT:
	case CS_PREC_MXFP8: return gpu->peak_fp8 > 0.0 ? gpu->peak_fp8 : gpu->peak_bf16;
	case CS_PREC_FP32: return gpu->peak_bf16 / 2.0;
	case CS_PREC_BF16:
	case CS_PREC_FP16: break;
	}
	return gpu->peak_bf16;
}

double cs_compute_wave_efficiency(const cs_gpu_spec *gpu, int64_t m, int64_t n, int64_t batch)
{
	int64_t sms = gpu->sms > 0 ? gpu->sms : 1;
	if (m < 1)
		m = 1;
	if (n < 1)
		n = 1;
	if (batch < 1)
		batch = 1;
	int64_t tiles = ((m + CS_GEMM_TILE_M - 1) / CS_GEMM_TILE_M) *
			((n + CS_GEMM_TILE_N - 1) / CS_GEMM_TILE_N) * batch;
	int64_t waves = (tiles + sms - 1) / sms;
	return (double)tiles / ((double)waves * (double)sms);
}

/* Waves of 128 x 256 output tiles an (m x n) GEMM needs on the GPU's SMs. */
static double gemm_waves(const cs_gpu_spec *gpu, double m, double n)
{
	double sms = gpu->sms > 0 ? (double)gpu->sms : 1.0;
	return ceil(ceil(m / CS_GEMM_TILE_M) * ceil(n / CS_GEMM_TILE_N) / sms);
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
	if (ns >= (double)CS_TIME_HORIZON)
		return CS_TIME_HORIZON; /* the run fails at the horizon, with a message */
	return ns < 1.0 ? 1 : (int64_t)ns;
}

cs_compute_kind cs_compute_op_class(const cs_layer_op *op)
{
	switch (op->cls) {
	case CS_OPC_GEMM: return CS_COMPUTE_GEMM;
	case CS_OPC_ATTN: return CS_COMPUTE_ATTN;
	case CS_OPC_MEMBOUND:
	case CS_OPC_COMM: break;
	}
	if (op->mem == CS_MEM_ADAM_FUSED || op->mem == CS_MEM_ADAM_FOREACH)
		return CS_COMPUTE_OPTIM;
	return CS_COMPUTE_MEMBOUND;
}

/* The precision `op` runs in: under Transformer Engine's recipes only the
 * linear layers' GEMMs are quantized (the LM head, materialised attention
 * and the rest stay bf16); fp8-all runs every GEMM in fp8. */
static cs_precision op_prec(const cs_compute *c, const cs_layer_op *op)
{
	if (cs_prec_is_recipe(c->prec) && !(op->cls == CS_OPC_GEMM && op->linear))
		return CS_PREC_BF16;
	return c->prec;
}

/* Seconds of `op` at the profile's measured throughput; < 0 when the
 * profile has nothing for it (the flat model times it then). */
static double profile_seconds(const cs_compute *c, const cs_layer_op *op)
{
	const cs_kprof *p = c->prof;
	switch (op->cls) {
	case CS_OPC_GEMM: {
		double m = (double)op->m * (double)(op->batch > 0 ? op->batch : 1);
		double thr = 0.0;
		double b16 = cs_kprof_gemm(p, CS_GEMM_BF16, (cs_gemm_layout)op->layout, m, (double)op->n,
					   (double)op->k);
		cs_precision prec = op_prec(c, op);
		if (cs_prec_is_low(prec)) {
			/* MXFP8's block-scaled MMA runs at the fp8 rate; NVFP4's
			 * at the fp4 peak's multiple of it, no table measuring it
			 * (docs/kernel-profiles.md, "Blackwell precisions") */
			thr = cs_kprof_gemm(p, CS_GEMM_FP8, (cs_gemm_layout)op->layout, m, (double)op->n,
					    (double)op->k);
			double fp8 = cs_compute_peak(c->gpu, CS_PREC_FP8);
			double peak = cs_compute_peak(c->gpu, prec);
			if (prec == CS_PREC_NVFP4 && fp8 > 0.0)
				thr *= peak / fp8;
			/* no faster than the 16-bit GEMM of its shape by more than
			 * the peaks' ratio: the fp8 table's ratios to the bf16
			 * grid reach 2.2 where the two were measured at different
			 * clocks (docs/kernel-profiles.md, "fp8") */
			double r = c->gpu->peak_bf16 > 0.0 ? peak / c->gpu->peak_bf16 : 0.0;
			if (r > 0.0 && b16 > 0.0 && thr > r * b16)
				thr = r * b16;
		}
		if (!(thr > 0.0))
			thr = b16;
		if (c->prec == CS_PREC_FP32)
			thr /= 2.0; /* TF32 at half the 16-bit rate */
		if (!(thr > 0.0))
			return -1.0;
		/* below the table's rows the lookup holds the time of its fewest
		 * rows; the GEMM then takes that time per wave of output tiles */
		double rows = cs_kprof_gemm_min_rows(p);
		return op->flops / thr *
		       (m < rows ? gemm_waves(c->gpu, m, (double)op->n) /
					   gemm_waves(c->gpu, rows, (double)op->n)
				 : 1.0);
	}
	case CS_OPC_ATTN: {
		if (op->head_dim <= 0 || !(op->attn_seq > 0.0) || !(op->attn_bh > 0.0))
			return -1.0;
		double thr = cs_kprof_attn(p, c->attn, true, op->head_dim, op->attn_bh, op->attn_seq,
					   op->attn_bwd);
		return thr > 0.0 ? op->flops / thr : -1.0;
	}
	case CS_OPC_MEMBOUND: {
		/* the curve is looked up at the op's bytes: several kinds were
		 * measured as a group of kernels (a norm's backward, the silu-mul
		 * pair, the cross-entropy) */
		double bw = cs_kprof_mem(p, (cs_mem_kind)op->mem, op->bytes);
		return bw > 0.0 ? op->bytes / bw : -1.0;
	}
	case CS_OPC_COMM: break;
	}
	return -1.0;
}

static int64_t flat_op_ns(const cs_gpu_spec *gpu, cs_precision prec, const cs_layer_op *op);

int64_t cs_compute_op_ns(const cs_compute *c, const cs_layer_op *op)
{
	if (op->cls == CS_OPC_COMM)
		return 0;
	if (!c->prof)
		return flat_op_ns(c->gpu, op_prec(c, op), op);
	double t = profile_seconds(c, op);
	if (t < 0.0)
		return flat_op_ns(c->gpu, op_prec(c, op), op);
	if (c->calib) /* the calibration, before the floors */
		t *= op->cls == CS_OPC_GEMM ? cs_calib_gemm_factor(c->calib, op->m, op->n, op->k,
								   op->batch > 0 ? op->batch : 1)
					    : c->calib->factor[cs_compute_op_class(op)];
	/* no kernel beats its roofline nor the shortest measured kernel */
	double peak = cs_compute_peak(c->gpu, op_prec(c, op));
	if (op->cls == CS_OPC_ATTN)
		peak = cs_compute_peak(c->gpu, CS_PREC_BF16);
	if (peak > 0.0 && op->flops / peak > t)
		t = op->flops / peak;
	if (c->gpu->hbm_bandwidth > 0.0 && op->bytes / c->gpu->hbm_bandwidth > t)
		t = op->bytes / c->gpu->hbm_bandwidth;
	int kernels = op->kernels > 0 ? op->kernels : 1;
	double floor_s = kernels * cs_kprof_min_kernel_ns(c->prof) * 1e-9;
	if (t < floor_s && (op->flops > 0.0 || op->bytes > 0.0))
		t = floor_s;
	int64_t ns = to_ns(t);
	if (ns == 0 && (op->flops > 0.0 || op->bytes > 0.0))
		ns = 1;
	return ns;
}

double cs_compute_op_spare_w(const cs_compute *c, const cs_layer_op *op)
{
	const cs_kprof_clock *k = c->clock;
	if (!k || op->cls == CS_OPC_GEMM || op->cls == CS_OPC_COMM)
		return 0.0;
	if (op->cls == CS_OPC_ATTN)
		return k->cap_w - k->attention_w;
	return k->cap_w - k->membound_w[(unsigned)op->mem < CS_MEM_KINDS ? op->mem : CS_MEM_COPY];
}

static int64_t flat_op_ns(const cs_gpu_spec *gpu, cs_precision prec, const cs_layer_op *op)
{
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
		case CS_OPC_COMM: break;
		}
	}
	int64_t ns = to_ns(t_flop > t_mem ? t_flop : t_mem);
	if (ns == 0 && (op->flops > 0.0 || op->bytes > 0.0))
		ns = 1;
	return ns;
}
