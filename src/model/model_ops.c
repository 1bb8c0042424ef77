/*
 * model_ops.c - the op-list writer and the per-rank sizes every op list uses.
 */
#include <math.h>

#include "model/model_ops.h"

static double pos(double x, double fallback) { return x > 0.0 ? x : fallback; }

void cs__dims_init(cs__dims *d, const cs_model_spec *m, const cs_layer_ctx *c)
{
	double tp = (double)(c->tp > 0 ? c->tp : 1);
	double cp = (double)(c->cp > 0 ? c->cp : 1);
	double b = (double)(c->micro_batch > 0 ? c->micro_batch : 1);
	int64_t kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;

	d->tokens = (double)c->seq_len / cp * b;
	d->norm_tokens = c->sequence_parallel ? d->tokens / tp : d->tokens;
	d->h = (double)m->hidden;
	d->kv = (double)kvh * (double)cs_model_qk_head_dim(m);
	d->q = (double)m->heads * (double)cs_model_qk_head_dim(m);
	d->v = (double)m->heads * (double)cs_model_v_head_dim(m);
	d->kvv = (double)kvh * (double)cs_model_v_head_dim(m);
	d->ffn = (double)m->ffn;
	d->tp = tp;
	d->ab = c->precision == CS_PREC_FP32 ? 4.0 : 2.0;
	d->wb = pos(cs_model_dtype_bytes(c->precision), 2.0);
	d->fw = c->framework;
	d->compiled = c->compiled && c->framework != CS_FW_MEGATRON;
	d->rb = c->framework == CS_FW_PYTORCH ? 4.0 : d->ab;
}

void cs__push(cs__oplist *l, const cs_layer_op *op)
{
	if (l->n < l->cap)
		l->out[l->n] = *op;
	l->n++;
}

void cs__gemm(cs__oplist *l, const char *name, double m, double n, double k, double batch, double ab,
	      double wb, cs_gemm_layout layout)
{
	cs_layer_op op = { 0 };
	op.name = name;
	op.cls = CS_OPC_GEMM;
	op.layout = (uint8_t)layout;
	op.m = (int64_t)ceil(m);
	op.n = (int64_t)ceil(n);
	op.k = (int64_t)ceil(k);
	op.batch = (int64_t)ceil(batch);
	op.flops = 2.0 * m * n * k * batch;
	op.bytes = (m * k * ab + k * n * wb + m * n * ab) * batch;
	cs__push(l, &op);
}

void cs__mem(cs__oplist *l, const char *name, cs_mem_kind kind, double bytes, int kernels)
{
	cs_layer_op op = { 0 };
	op.name = name;
	op.cls = CS_OPC_MEMBOUND;
	op.mem = (uint8_t)kind;
	op.bytes = bytes;
	op.kernels = kernels;
	cs__push(l, &op);
}

void cs__attn(cs__oplist *l, const char *name, double flops, double bytes, double bh, double seq, int hd,
	      bool bwd, bool gqa)
{
	cs_layer_op op = { 0 };
	op.name = name;
	op.cls = CS_OPC_ATTN;
	op.flops = flops;
	op.bytes = bytes;
	op.batch = 1;
	op.attn_bh = bh;
	op.attn_seq = seq;
	op.head_dim = hd;
	op.attn_bwd = bwd;
	/* cuDNN's backward adds a dO.O reduction and a dQ conversion, and with
	 * grouped K/V heads a reduction of dK and of dV over each group */
	op.kernels = bwd ? (gqa ? 5 : 3) : 1;
	cs__push(l, &op);
}

void cs__comm(cs__oplist *l, const char *name, int kind, int coll, double bytes)
{
	cs_layer_op op = { 0 };
	op.name = name;
	op.cls = CS_OPC_COMM;
	op.comm_kind = kind;
	op.coll = coll;
	op.comm_bytes = bytes;
	cs__push(l, &op);
}

/* Bytes per local gradient element the optimizer and the gradient norm
 * read: eager PyTorch keeps fp32 gradients of its fp32 weights. */
static double grad_bytes(cs_precision grad_dtype, cs_framework fw)
{
	return fw == CS_FW_PYTORCH ? 4.0 : cs_model_dtype_bytes(grad_dtype);
}

/* Kernels of one multi-tensor pass over `params` elements: at most 320
 * blocks of 65,536 elements per launch (Apex's and PyTorch's
 * multi_tensor_apply). */
static int multi_tensor_kernels(int64_t params) { return 1 + (int)((double)params / (320.0 * 65536.0)); }

cs_layer_op cs_model_optimizer_op(int64_t params, cs_optimizer opt, cs_precision grad_dtype,
				  cs_state_dtype state, cs_framework fw)
{
	/* Per parameter: read the gradient, read and write the master weight
	 * and each moment (fp32, or bf16 with a bf16 state), write the 16-bit
	 * weight (eager PyTorch keeps no 16-bit copy: autocast casts the fp32
	 * weight at each GEMM, and its gradients are fp32). */
	double g = grad_bytes(grad_dtype, fw);
	double w16 = fw == CS_FW_PYTORCH ? 0.0 : 2.0;
	double sb = cs_model_state_bytes(state);
	double moments = 0.0, flops = 2.0;
	switch (opt) {
	case CS_OPT_ADAM:
		moments = 2.0 * sb;
		flops = 12.0;
		break;
	case CS_OPT_ADAM_8BIT:
		moments = 2.0 * 1.0;
		flops = 16.0;
		break;
	case CS_OPT_SGD_MOMENTUM:
		moments = sb;
		flops = 4.0;
		break;
	case CS_OPT_LAMB:
		moments = 2.0 * sb;
		flops = 16.0;
		break;
	case CS_OPT_ADAFACTOR: flops = 12.0; break;
	case CS_OPT_SGD: break;
	}
	cs_layer_op op = { 0 };
	op.name = "optimizer";
	op.cls = CS_OPC_MEMBOUND;
	/* fused multi-tensor Adam (Apex/TE in Megatron, fused=True in PyTorch);
	 * other optimizers are multi-tensor kernels alike */
	op.mem = CS_MEM_ADAM_FUSED;
	op.flops = flops * (double)params;
	op.bytes = (double)params * (g + 2.0 * sb + 2.0 * moments + w16);
	/* LAMB (Apex's FusedLAMB): the update goes to an fp32 buffer (written,
	 * read for its norm and for the step) and the master weight is read
	 * once more for its norm. Adafactor reads the gradient twice: once for
	 * its squares' row and column sums, once for the update. */
	if (opt == CS_OPT_LAMB)
		op.bytes += (double)params * (4.0 + 2.0 * 4.0 + 4.0);
	else if (opt == CS_OPT_ADAFACTOR)
		op.bytes += (double)params * g;
	op.kernels = multi_tensor_kernels(params); /* PyTorch's MultiTensorApply.cuh */
	return op;
}

/* ---- the step's edges ------------------------------------------------- */

cs_layer_op cs_model_grad_norm_op(int64_t params, cs_precision grad_dtype, cs_framework fw)
{
	cs_layer_op op = { 0 };
	op.name = "grad_norm";
	op.cls = CS_OPC_MEMBOUND;
	op.mem = CS_MEM_COPY;
	op.bytes = (double)params * grad_bytes(grad_dtype, fw);
	op.flops = 2.0 * (double)params;
	/* Apex's multi_tensor_l2norm and its cleanup kernel, then the square
	 * (Megatron's clip_grads.py); PyTorch's _foreach_norm, then stack and
	 * vector_norm of the norms (torch.nn.utils.get_total_norm) */
	op.kernels = multi_tensor_kernels(params) + 2;
	return op;
}

cs_layer_op cs_model_grad_scale_op(int64_t params, cs_precision grad_dtype, cs_framework fw)
{
	cs_layer_op op = { 0 };
	op.name = "grad_clip";
	op.cls = CS_OPC_MEMBOUND;
	op.mem = CS_MEM_ACT;
	op.bytes = 2.0 * (double)params * grad_bytes(grad_dtype, fw);
	op.flops = (double)params;
	/* Megatron's multi_tensor_scale by a coefficient the host computed;
	 * PyTorch computes it on the GPU (divide, add, clamp) before
	 * _foreach_mul_ (torch.nn.utils.clip_grads_with_norm_) */
	op.kernels = multi_tensor_kernels(params) + (fw == CS_FW_MEGATRON ? 0 : 3);
	return op;
}

cs_layer_op cs_model_grad_zero_op(int64_t params, cs_precision grad_dtype)
{
	cs_layer_op op = { 0 };
	op.name = "zero_grad";
	op.cls = CS_OPC_MEMBOUND;
	op.mem = CS_MEM_COPY;
	op.bytes = (double)params * cs_model_dtype_bytes(grad_dtype); /* written once */
	op.kernels = 1;
	return op;
}
