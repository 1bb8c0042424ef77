/*
 * model_kernels.c - the element-wise kernels of a block as each framework
 * runs them: norms, casts, rotary embedding, the MLP activation and the
 * residual adds, each with the bytes it moves and the measured kernel kind
 * (hw/kprof.h) that times it.
 *
 * Megatron-LM with Transformer Engine (CS_FW_MEGATRON) fuses them: a norm
 * kernel writes the GEMM's 16-bit input, RoPE is one kernel over q and k,
 * SwiGLU and GeLU one kernel, bias-dropout-add one kernel; the residual
 * stream and the weights are 16-bit.
 *
 * Eager PyTorch under autocast with fp32 weights (CS_FW_PYTORCH) runs
 * every operator as its own kernel: the residual stream stays fp32 (the
 * embedding's output is fp32), so the norms run in fp32 and their output is
 * cast to bf16 before each GEMM; every GEMM casts its fp32 weight to bf16
 * (per micro-batch); RoPE is mul, neg, cat, mul, add on broadcast and
 * strided operands in fp32; SwiGLU is silu on one half then mul; the
 * residual add mixes fp32 and bf16. Backward mirrors each with its casts.
 * Under FSDP mixed precision (CS_FW_FSDP) the kernels are eager PyTorch's
 * but weights and the residual stream are already 16-bit: no casts.
 *
 * torch.compile over each block (training.compile; Inductor) fuses the
 * pointwise chains and their reductions between the GEMMs, which stay
 * cuBLAS calls: each chain reads its inputs once and writes its outputs
 * once. RoPE and the MLP activation become one kernel each (Megatron's
 * bytes); a norm writes the GEMM's 16-bit input itself (no cast after it)
 * and its backward takes the 16-bit gradient and adds the residual
 * branch's in the same kernel. The weights' autocast casts stay: a GEMM
 * input is materialised.
 *
 * Kinds: contiguous casts and copies run as `copy`; mixed-precision
 * element-wise kernels (fp32 += bf16, fp32 + bf16, bf16 -> fp32 casts) take
 * PyTorch's unrolled path, which loads element by element: they are timed
 * per element at the measured `grad_accum` kernel's rate, i.e. charged its
 * 10 bytes per element; broadcast or strided operands (RoPE, SwiGLU halves)
 * as `silu_mul`; same-dtype vectorized binary ops as `add`; vectorized unary
 * ops as `gelu`.
 */

/* Bytes per element a mixed-precision (unrolled) kernel is charged: the
 * measured fp32 += bf16 kernel's (read 2 + 4, write 4). */
#define MIXED_BYTES 10.0
#include "model/model_ops.h"

static bool eager(const cs__dims *d) { return d->fw != CS_FW_MEGATRON && !d->compiled; }

void cs__norm(cs__oplist *l, const cs_model_spec *m, const cs__dims *d, const char *name, double n, bool bwd)
{
	cs_mem_kind fwd = m->arch == CS_ARCH_LLAMA ? CS_MEM_RMSNORM : CS_MEM_LAYERNORM;
	double rb = d->rb;
	if (d->compiled) {
		/* forward: read x, write the 16-bit y; backward: read x, the 16-bit
		 * dy and the residual gradient, write dx */
		if (bwd)
			cs__mem(l, name, CS_MEM_NORM_BWD, n * (3.0 * rb + d->ab), 1);
		else
			cs__mem(l, name, fwd, n * (rb + d->ab), 1);
		return;
	}
	if (!bwd) {
		/* read x, write y (weight and bias are negligible) */
		cs__mem(l, name, fwd, 2.0 * n * rb, 1);
		return;
	}
	/* read x and dy, write dx; the weight-gradient reduction is part of
	 * the measured backward; then the residual branch's gradient is added */
	cs__mem(l, name, CS_MEM_NORM_BWD, 3.0 * n * rb, 2);
	cs__mem(l, "residual_grad_add", CS_MEM_ADD, 3.0 * n * rb, 1);
}

void cs__cast_act(cs__oplist *l, const cs__dims *d, const char *name, double n, bool bwd)
{
	if (d->rb == d->ab || d->compiled) /* compiled: inside the norm */
		return;
	/* forward: the fast vectorized fp32 -> bf16 copy; backward: bf16 -> fp32
	 * through the generic unrolled kernel */
	if (bwd)
		cs__mem(l, name, CS_MEM_GRAD_ACCUM, n * MIXED_BYTES, 1);
	else
		cs__mem(l, name, CS_MEM_COPY, n * (d->rb + d->ab), 1);
}

void cs__cast_grad_in(cs__oplist *l, const cs__dims *d, const char *name, double n)
{
	if (d->rb != d->ab) /* the block's first kernel: nothing to fuse with */
		cs__mem(l, name, CS_MEM_COPY, n * (d->rb + d->ab), 1);
}

void cs__cast_weight(cs__oplist *l, const cs__dims *d, const char *name, double w, bool bwd)
{
	if (d->fw != CS_FW_PYTORCH)
		return;
	if (bwd)
		cs__mem(l, name, CS_MEM_GRAD_ACCUM, w * MIXED_BYTES, 1);
	else
		cs__mem(l, name, CS_MEM_COPY, w * (4.0 + d->ab), 1);
}

void cs__rope(cs__oplist *l, const cs__dims *d, const char *name, double n, bool bwd)
{
	if (!eager(d)) {
		/* one fused kernel: read and write q and k */
		cs__mem(l, name, CS_MEM_ACT, 2.0 * n * d->ab, 1);
		return;
	}
	/* x*cos (bf16 x broadcast table -> rb), neg of one half, cat of the
	 * halves, *sin, then the add; backward runs the mirror set on the
	 * gradient. Two tensors (q, k), five kernels each. */
	double ab = d->ab, rb = d->rb;
	double strided = n * (ab + rb) + n * ab + 2.0 * n * ab + n * (ab + rb);
	cs__mem(l, name, CS_MEM_STRIDED, strided, 8);
	cs__mem(l, bwd ? "rope_bwd_add" : "rope_add", CS_MEM_ADD, 3.0 * n * rb, 2);
}

void cs__act(cs__oplist *l, const cs_model_spec *m, const cs__dims *d, const char *name, double n, bool bwd)
{
	double ab = d->ab;
	bool glu = m->arch == CS_ARCH_LLAMA;
	if (!eager(d)) {
		/* fused: SwiGLU reads 2n, writes n (backward: reads 2n and dy,
		 * writes 2n); GeLU reads n, writes n (backward: x, dy -> dx) */
		double bytes = glu ? (bwd ? 5.0 : 3.0) * n * ab : (bwd ? 3.0 : 2.0) * n * ab;
		cs__mem(l, name, CS_MEM_ACT, bytes, 1);
		return;
	}
	if (!glu) {
		/* GELU reads x and writes y (backward: x, dy -> dx); ReLU the same,
		 * its backward reading y for the mask: one vectorized unary kernel
		 * each way, the measured `gelu` kind */
		cs__mem(l, name, CS_MEM_ACT, (bwd ? 3.0 : 2.0) * n * ab, 1);
		return;
	}
	if (!bwd) {
		/* silu on the gate half, mul by the up half: exactly the measured
		 * pair, in its convention of 3 bytes per output element (it moves
		 * 5: silu reads and writes 2, mul reads 4 and writes 2... per pair
		 * of 16-bit elements, 10 of 6 counted) */
		cs__mem(l, name, CS_MEM_STRIDED, 3.0 * n * ab, 2);
		return;
	}
	/* d(up) = dy * silu(gate) (vectorized), d(silu) = dy * up and
	 * silu_backward (strided: 12 bytes per element against the forward
	 * pair's 10, so 6/10 of that in the measured convention), cat of the
	 * two halves */
	cs__mem(l, "swiglu_bwd_mul", CS_MEM_ADD, 3.0 * n * ab, 1);
	cs__mem(l, name, CS_MEM_STRIDED, 3.6 * n * ab, 2);
	cs__mem(l, "swiglu_bwd_cat", CS_MEM_COPY, 4.0 * n * ab, 1);
}

void cs__residual(cs__oplist *l, const cs__dims *d, const char *name, double n, bool dropout)
{
	/* x (rb) + branch (ab) -> rb, plus the dropout mask */
	double bytes = n * (2.0 * d->rb + d->ab) + (dropout ? n : 0.0);
	cs__mem(l, name, d->rb != d->ab ? CS_MEM_GRAD_ACCUM : CS_MEM_ADD, bytes, 1);
}
