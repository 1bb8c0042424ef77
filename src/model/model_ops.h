/*
 * model_ops.h - private helpers shared by the op-list builders of src/model.
 */
#ifndef CS_MODEL_MODEL_OPS_H
#define CS_MODEL_MODEL_OPS_H

#include "model/model.h"

/* An op list being written: ops past `cap` are counted, not stored. */
typedef struct cs__oplist {
	cs_layer_op *out;
	int cap;
	int n;
} cs__oplist;

/* Per-rank sizes of one micro-batch. */
typedef struct cs__dims {
	double tokens;      /* s/cp * b: tokens this rank computes */
	double norm_tokens; /* tokens under the norms (divided by tp with SP) */
	double h, kv, ffn;  /* hidden, the keys' width (kv heads x query/key head), ffn (full) */
	double q;           /* the queries' width: heads x query/key head */
	double v, kvv;      /* the attention output's (heads x value head) and the values' widths */
	double tp;
	double ab; /* activation bytes per element */
	double wb; /* weight bytes per element */
	double rb; /* residual-stream bytes per element (eager PyTorch keeps
	                     * it in fp32 when its weights are fp32) */
	cs_framework fw;
	bool compiled; /* torch.compile: element-wise chains fused */
} cs__dims;

void cs__dims_init(cs__dims *d, const cs_model_spec *m, const cs_layer_ctx *c);
void cs__push(cs__oplist *l, const cs_layer_op *op);
/* A GEMM Y(m x n) = X(m x k) W(k x n), `batch` of them; weights of `wbytes`;
 * operands laid out as `layout` (forward NT, input gradient NN, weight
 * gradient TN for weights stored [out, in]). */
void cs__gemm(cs__oplist *l, const char *name, double m, double n, double k, double batch, double ab,
	      double wb, cs_gemm_layout layout);
/* `kernels` memory-bound kernels of `kind` moving `bytes` in all. */
void cs__mem(cs__oplist *l, const char *name, cs_mem_kind kind, double bytes, int kernels);
/* A fused attention kernel: `flops` over `bh` sequences x heads of `seq`
 * tokens, head dimension `hd`; `gqa` when query heads share K/V heads. */
void cs__attn(cs__oplist *l, const char *name, double flops, double bytes, double bh, double seq, int hd,
	      bool bwd, bool gqa);

/* ---- the element-wise kernels of each framework (model_kernels.c) ------ */

/* A norm over `n` elements: forward, or its backward with the residual
 * gradient's add. */
void cs__norm(cs__oplist *l, const cs_model_spec *m, const cs__dims *d, const char *name, double n, bool bwd);
/* The cast of a GEMM's input from the residual stream to 16 bits (eager
 * PyTorch under autocast), or, backward, of its gradient back. */
void cs__cast_act(cs__oplist *l, const cs__dims *d, const char *name, double n, bool bwd);
/* The cast of the fp32 gradient entering a block's backward to 16 bits
 * (eager PyTorch under autocast; compiled too: the block's first kernel). */
void cs__cast_grad_in(cs__oplist *l, const cs__dims *d, const char *name, double n);
/* The per-micro-batch cast of `w` fp32 weights to 16 bits (autocast), or,
 * backward, of their 16-bit gradient to fp32. */
void cs__cast_weight(cs__oplist *l, const cs__dims *d, const char *name, double w, bool bwd);
/* Rotary embedding of `n` elements (q and k of T tokens). */
void cs__rope(cs__oplist *l, const cs__dims *d, const char *name, double n, bool bwd);
/* The MLP activation over `n` = T x ffn elements (SwiGLU for Llama). */
void cs__act(cs__oplist *l, const cs_model_spec *m, const cs__dims *d, const char *name, double n, bool bwd);
/* Eager PyTorch's accumulation of `weights` fp32 gradients into .grad. */
void cs__eager_accum(cs__oplist *l, const cs_layer_ctx *c, double weights);
/* A residual add of `n` elements (`dropout`: with its mask). */
void cs__residual(cs__oplist *l, const cs__dims *d, const char *name, double n, bool dropout);
void cs__comm(cs__oplist *l, const char *name, int kind, int coll, double bytes);

#endif
