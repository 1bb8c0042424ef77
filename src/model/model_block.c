/*
 * model_block.c - the ops of one transformer block, per rank and per pass.
 *
 * Shapes per rank: T = s/cp * b tokens; TP shards heads, the QKV/up
 * projections by columns and the output/down projections by rows
 * (Megatron); sequence parallelism shards the norm and residual region
 * along s. FlashAttention with a causal mask does half of the s x s square
 * (the forward), and 2.5 times that in the backward (dQ, dK, dV plus the
 * recomputed scores); materialised attention computes the full square as
 * batched GEMMs around a bandwidth-bound softmax. Ring context parallelism
 * always runs the online-softmax (flash) kernel.
 */
#include "model/model_ops.h"

#include "clustersim/clustersim.h"
#include "coll/coll_op.h"

typedef struct blk {
	const cs_model_spec *m;
	const cs_layer_ctx *c;
	cs__dims d;
	cs__oplist *l;
	bool tp_on, sp;
	double cp;
	double wgrad_elems;  /* weight-gradient elements written in this pass */
} blk;

/* A weight-gradient GEMM dW(m x n) = X^T dY, `batch` of them. */
static void wgrad(blk *B, const char *name, double m, double n, double k, double batch)
{
	cs__gemm(B->l, name, m, n, k, batch, B->d.ab, B->d.ab);
	B->wgrad_elems += m * n * batch;
}

static double gate_mult(const blk *B)
{
	return B->m->arch == CS_ARCH_LLAMA ? 2.0 : 1.0;
}

/* ---- attention core ----------------------------------------------------- */

static double kv_block_bytes(const blk *B)
{
	return B->d.tokens * 2.0 * B->d.kv / B->d.tp * B->d.ab;
}

static void flash_op(blk *B, const char *name, double flops, double bytes)
{
	cs_layer_op op = {0};
	op.name = name;
	op.cls = CS_OPC_ATTN;
	op.flops = flops;
	op.bytes = bytes;
	op.batch = 1;
	cs__push(B->l, &op);
}

static void attn_core(blk *B, bool bwd)
{
	const cs__dims *d = &B->d;
	double s = (double)B->c->seq_len;
	double b = (double)(B->c->micro_batch > 0 ? B->c->micro_batch : 1);
	bool ring = B->cp > 1.0 && B->c->cp_kind == CS_CP_RING;
	bool gather = B->cp > 1.0 && !ring;

	if (gather && !bwd)
		cs__comm(B->l, "cp_ag_kv", CS_COMM_CP, CS_COLL_ALL_GATHER, kv_block_bytes(B) * B->cp);

	if (B->c->flash_attention || ring) {
		double causal = 2.0 * d->tokens * s * d->h / d->tp;   /* half of 4*T*s*h/tp */
		double q_o = d->tokens * d->h / d->tp * d->ab;
		double flops = bwd ? 2.5 * causal : causal;
		double bytes = bwd ? 4.0 * q_o + 2.0 * kv_block_bytes(B) * B->cp
				   : 2.0 * q_o + kv_block_bytes(B) * B->cp;
		const char *name = bwd ? "attn_core_bwd" : "attn_core";
		if (!ring) {
			flash_op(B, name, flops, bytes);
		} else {
			/* One K/V block per ring step; the backward also passes dK/dV on. */
			double msg = kv_block_bytes(B) * (bwd ? 2.0 : 1.0);
			for (int64_t i = 0; i < (int64_t)B->cp; i++) {
				if (i + 1 < (int64_t)B->cp)
					cs__comm(B->l, bwd ? "cp_kv_send_recv_bwd" : "cp_kv_send_recv",
						 CS_COMM_CP, CS_COLL_SEND_RECV, msg);
				flash_op(B, name, flops / B->cp, bytes / B->cp);
			}
		}
	} else {
		double heads = (double)B->m->heads / d->tp;
		double dh = d->h / (double)B->m->heads;
		double batch = b * heads;
		double sl = s / B->cp;
		double probs = batch * sl * s;
		double ab = d->ab;
		double drop = B->c->dropout ? 1.0 : 0.0;
		if (!bwd) {
			cs__gemm(B->l, "attn_scores", sl, s, dh, batch, ab, ab);
			cs__membound(B->l, "attn_softmax", probs * (2.0 * ab + drop * (1.0 + ab)));
			cs__gemm(B->l, "attn_context", sl, dh, s, batch, ab, ab);
		} else {
			cs__gemm(B->l, "attn_dprobs", sl, s, dh, batch, ab, ab);
			cs__gemm(B->l, "attn_dv", s, dh, sl, batch, ab, ab);
			cs__membound(B->l, "attn_softmax_bwd", probs * (3.0 * ab + drop));
			cs__gemm(B->l, "attn_dq", sl, dh, s, batch, ab, ab);
			cs__gemm(B->l, "attn_dk", s, dh, sl, batch, ab, ab);
		}
	}

	if (gather && bwd)
		cs__comm(B->l, "cp_rs_dkv", CS_COMM_CP, CS_COLL_REDUCE_SCATTER, kv_block_bytes(B) * B->cp);
}

/* ---- TP comm points ----------------------------------------------------- */

static void tp_gather(blk *B, const char *name)
{
	if (B->sp)
		cs__comm(B->l, name, CS_COMM_TP, CS_COLL_ALL_GATHER, B->d.tokens * B->d.h * B->d.ab);
}

static void tp_reduce(blk *B, const char *ar_name, const char *rs_name)
{
	double bytes = B->d.tokens * B->d.h * B->d.ab;
	if (B->sp)
		cs__comm(B->l, rs_name, CS_COMM_TP, CS_COLL_REDUCE_SCATTER, bytes);
	else if (B->tp_on)
		cs__comm(B->l, ar_name, CS_COMM_TP, CS_COLL_ALL_REDUCE, bytes);
}

/* ---- MLP / MoE ---------------------------------------------------------- */

typedef struct moe_dims {
	double tokens;   /* per local expert, busiest rank */
	double local;    /* experts on this rank */
	double ffn;      /* expert ffn per TP rank */
	double a2a;      /* all-to-all send buffer */
} moe_dims;

static moe_dims moe_init(const blk *B)
{
	moe_dims e;
	double ep = (double)(B->c->ep > 0 ? B->c->ep : 1);
	double imb = B->c->expert_imbalance >= 1.0 ? B->c->expert_imbalance : 1.0;
	double k = (double)B->m->top_k;
	e.local = (double)B->m->experts / ep;
	if (e.local < 1.0)
		e.local = 1.0;
	e.tokens = B->d.tokens * k * imb / e.local;
	e.ffn = (double)B->m->expert_ffn / B->d.tp;
	e.a2a = B->d.tokens * k * B->d.h * B->d.ab;
	return e;
}

static void mlp_fwd(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double g = gate_mult(B), ab = d->ab, wb = d->wb;
	double act = B->m->arch == CS_ARCH_LLAMA ? 3.0 : 2.0;
	if (!moe) {
		double f = d->ffn / d->tp;
		cs__gemm(B->l, "mlp_up", d->tokens, g * f, d->h, 1, ab, wb);
		cs__membound(B->l, "mlp_act", act * d->tokens * f * ab);
		cs__gemm(B->l, "mlp_down", d->tokens, d->h, f, 1, ab, wb);
		return;
	}
	moe_dims e = moe_init(B);
	cs__gemm(B->l, "router", d->tokens, (double)B->m->experts, d->h, 1, ab, wb);
	cs__membound(B->l, "moe_permute", 2.0 * e.a2a);
	if (B->c->ep > 1)
		cs__comm(B->l, "ep_dispatch", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.a2a);
	cs__gemm(B->l, "expert_up", e.tokens, g * e.ffn, d->h, e.local, ab, wb);
	cs__membound(B->l, "expert_act", act * e.tokens * e.local * e.ffn * ab);
	cs__gemm(B->l, "expert_down", e.tokens, d->h, e.ffn, e.local, ab, wb);
	if (B->c->ep > 1)
		cs__comm(B->l, "ep_combine", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.a2a);
	cs__membound(B->l, "moe_unpermute", 2.0 * e.a2a);
	if (B->m->shared_experts > 0) {
		double f = e.ffn * (double)B->m->shared_experts;
		cs__gemm(B->l, "shared_up", d->tokens, g * f, d->h, 1, ab, wb);
		cs__membound(B->l, "shared_act", act * d->tokens * f * ab);
		cs__gemm(B->l, "shared_down", d->tokens, d->h, f, 1, ab, wb);
	}
}

static void mlp_bwd_input(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double g = gate_mult(B), ab = d->ab, wb = d->wb;
	double act = B->m->arch == CS_ARCH_LLAMA ? 5.0 : 3.0;
	if (!moe) {
		double f = d->ffn / d->tp;
		cs__gemm(B->l, "mlp_down_dgrad", d->tokens, f, d->h, 1, ab, wb);
		cs__membound(B->l, "mlp_act_bwd", act * d->tokens * f * ab);
		cs__gemm(B->l, "mlp_up_dgrad", d->tokens, d->h, g * f, 1, ab, wb);
		return;
	}
	moe_dims e = moe_init(B);
	if (B->m->shared_experts > 0) {
		double f = e.ffn * (double)B->m->shared_experts;
		cs__gemm(B->l, "shared_down_dgrad", d->tokens, f, d->h, 1, ab, wb);
		cs__membound(B->l, "shared_act_bwd", act * d->tokens * f * ab);
		cs__gemm(B->l, "shared_up_dgrad", d->tokens, d->h, g * f, 1, ab, wb);
	}
	cs__membound(B->l, "moe_unpermute_bwd", 2.0 * e.a2a);
	if (B->c->ep > 1)
		cs__comm(B->l, "ep_combine_bwd", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.a2a);
	cs__gemm(B->l, "expert_down_dgrad", e.tokens, e.ffn, d->h, e.local, ab, wb);
	cs__membound(B->l, "expert_act_bwd", act * e.tokens * e.local * e.ffn * ab);
	cs__gemm(B->l, "expert_up_dgrad", e.tokens, d->h, g * e.ffn, e.local, ab, wb);
	if (B->c->ep > 1)
		cs__comm(B->l, "ep_dispatch_bwd", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.a2a);
	cs__membound(B->l, "moe_permute_bwd", 2.0 * e.a2a);
	cs__gemm(B->l, "router_dgrad", d->tokens, d->h, (double)B->m->experts, 1, ab, wb);
}

/* dW = X^T dY: m = fan-in, n = fan-out, k = tokens. */
static void mlp_bwd_weight(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double g = gate_mult(B);
	if (!moe) {
		double f = d->ffn / d->tp;
		wgrad(B, "mlp_down_wgrad", f, d->h, d->tokens, 1);
		wgrad(B, "mlp_up_wgrad", d->h, g * f, d->tokens, 1);
		return;
	}
	moe_dims e = moe_init(B);
	if (B->m->shared_experts > 0) {
		double f = e.ffn * (double)B->m->shared_experts;
		wgrad(B, "shared_down_wgrad", f, d->h, d->tokens, 1);
		wgrad(B, "shared_up_wgrad", d->h, g * f, d->tokens, 1);
	}
	wgrad(B, "expert_down_wgrad", e.ffn, d->h, e.tokens, e.local);
	wgrad(B, "expert_up_wgrad", d->h, g * e.ffn, e.tokens, e.local);
	wgrad(B, "router_wgrad", d->h, (double)B->m->experts, d->tokens, 1);
}

/* ---- passes ------------------------------------------------------------- */

static double residual_bytes(const blk *B)
{
	double n = B->d.norm_tokens * B->d.h;
	return 3.0 * n * B->d.ab + (B->c->dropout ? n : 0.0);
}

static void block_fwd(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double qkv_n = (d->h + 2.0 * d->kv) / d->tp;
	cs__membound(B->l, "attn_norm", 2.0 * d->norm_tokens * d->h * d->ab);
	tp_gather(B, "sp_ag_attn");
	cs__gemm(B->l, "qkv", d->tokens, qkv_n, d->h, 1, d->ab, d->wb);
	if (B->m->arch == CS_ARCH_LLAMA)
		cs__membound(B->l, "rope", 2.0 * d->tokens * (d->h + d->kv) / d->tp * d->ab);
	attn_core(B, false);
	cs__gemm(B->l, "out_proj", d->tokens, d->h, d->h / d->tp, 1, d->ab, d->wb);
	tp_reduce(B, "tp_ar_attn", "tp_rs_attn");
	cs__membound(B->l, "attn_residual", residual_bytes(B));
	cs__membound(B->l, "mlp_norm", 2.0 * d->norm_tokens * d->h * d->ab);
	tp_gather(B, "sp_ag_mlp");
	mlp_fwd(B, moe);
	tp_reduce(B, "tp_ar_mlp", "tp_rs_mlp");
	cs__membound(B->l, "mlp_residual", residual_bytes(B));
}

static void block_bwd_input(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double qkv_n = (d->h + 2.0 * d->kv) / d->tp;
	double norm_bwd = 4.0 * d->norm_tokens * d->h * d->ab;
	tp_gather(B, "sp_ag_mlp_bwd");
	mlp_bwd_input(B, moe);
	tp_reduce(B, "tp_ar_mlp_bwd", "tp_rs_mlp_bwd");
	cs__membound(B->l, "mlp_norm_bwd", norm_bwd);
	tp_gather(B, "sp_ag_attn_bwd");
	cs__gemm(B->l, "out_proj_dgrad", d->tokens, d->h / d->tp, d->h, 1, d->ab, d->wb);
	attn_core(B, true);
	if (B->m->arch == CS_ARCH_LLAMA)
		cs__membound(B->l, "rope_bwd", 2.0 * d->tokens * (d->h + d->kv) / d->tp * d->ab);
	cs__gemm(B->l, "qkv_dgrad", d->tokens, d->h, qkv_n, 1, d->ab, d->wb);
	tp_reduce(B, "tp_ar_attn_bwd", "tp_rs_attn_bwd");
	cs__membound(B->l, "attn_norm_bwd", norm_bwd);
}

static void block_bwd_weight(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double qkv_n = (d->h + 2.0 * d->kv) / d->tp;
	mlp_bwd_weight(B, moe);
	wgrad(B, "out_proj_wgrad", d->h / d->tp, d->h, d->tokens, 1);
	wgrad(B, "qkv_wgrad", d->h, qkv_n, d->tokens, 1);
	if (B->c->grad_accum_bytes > 0.0)
		cs__membound(B->l, "grad_accum", B->wgrad_elems * B->c->grad_accum_bytes);
}

int cs_model_block_ops(const cs_model_spec *m, const cs_layer_ctx *c, bool moe, cs_pass pass,
                       cs_layer_op *out, int cap)
{
	cs__oplist l = { out, out ? cap : 0, 0 };
	blk B = { .m = m, .c = c, .l = &l };
	cs__dims_init(&B.d, m, c);
	B.tp_on = c->tp > 1;
	B.sp = B.tp_on && c->sequence_parallel;
	B.cp = (double)(c->cp > 0 ? c->cp : 1);
	moe = moe && m->experts > 0;

	switch (pass) {
	case CS_PASS_FWD:
		block_fwd(&B, moe);
		break;
	case CS_PASS_BWD_INPUT:
		block_bwd_input(&B, moe);
		break;
	case CS_PASS_BWD_WEIGHT:
		block_bwd_weight(&B, moe);
		break;
	case CS_PASS_RECOMPUTE:
		if (c->recompute == CS_RECOMPUTE_FULL)
			block_fwd(&B, moe);
		else if (c->recompute == CS_RECOMPUTE_SELECTIVE)
			attn_core(&B, false);
		break;
	}
	return l.n;
}
