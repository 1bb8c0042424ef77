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
	bool mla; /* latent attention: its own projections and TP comm */
	double cp;
	double wgrad_elems; /* weight-gradient elements written in this pass */
	cs_quant q;         /* the recipe's casts (all zero without one) */
} blk;

/* A weight-gradient GEMM dW(m x n) = X^T dY, `batch` of them; eager
 * PyTorch then casts the 16-bit gradient back through the weight's autocast
 * cast to fp32. */
/* Transformer Engine's recipes (training.precision fp8, mxfp8, nvfp4): a
 * linear layer's 16-bit input is quantized for both of its uses, the
 * forward's and the weight gradient's, or, where the kernel before it
 * writes the quantized tensor itself (the norm before QKV and MLP-up, the
 * activation before MLP-down, the activation's backward before MLP-up's
 * input gradient), what is left of that (cs_quant_recipe). */
static void fp8_cast_k(blk *B, const char *name, double n, bool fused, int kernels)
{
	double bytes = fused ? B->q.fused : B->q.cast;
	if (cs_prec_is_recipe(B->c->precision) && bytes > 0.0)
		cs__mem(B->l, name, CS_MEM_COPY, bytes * n, kernels);
}

static void fp8_cast(blk *B, const char *name, double n, bool fused) { fp8_cast_k(B, name, n, fused, 1); }

/* The GEMM just pushed is a linear layer's. */
static void mark_linear(blk *B)
{
	if (B->l->n > 0 && B->l->n <= B->l->cap)
		B->l->out[B->l->n - 1].linear = true;
}

static void wgrad(blk *B, const char *name, double m, double n, double k, double batch)
{
	cs__gemm(B->l, name, m, n, k, batch, B->d.ab, B->d.ab, CS_GEMM_TN);
	mark_linear(B);
	cs__cast_weight(B->l, &B->d, "weight_grad_cast", m * n * batch, true);
	B->wgrad_elems += m * n * batch;
}

/* A forward GEMM with its weight (fan-in k x fan-out n) cast first under
 * autocast, and the input-gradient GEMM of the same weight. */
static void fgemm(blk *B, const char *name, double m, double n, double k, double batch)
{
	cs__cast_weight(B->l, &B->d, "weight_cast", k * n * batch, false);
	cs__gemm(B->l, name, m, n, k, batch, B->d.ab, B->d.wb, CS_GEMM_NT);
	mark_linear(B);
}

static void dgemm(blk *B, const char *name, double m, double n, double k, double batch)
{
	cs__gemm(B->l, name, m, n, k, batch, B->d.ab, B->d.wb, CS_GEMM_NN);
	mark_linear(B);
}

static double gate_mult(const blk *B) { return B->m->arch == CS_ARCH_LLAMA ? 2.0 : 1.0; }

/* ---- attention core ----------------------------------------------------- */

static double kv_block_bytes(const blk *B) { return B->d.tokens * (B->d.kv + B->d.kvv) / B->d.tp * B->d.ab; }

static void flash_op(blk *B, const char *name, double flops, double bytes, double seq, bool bwd)
{
	double b = (double)(B->c->micro_batch > 0 ? B->c->micro_batch : 1);
	double heads = (double)B->m->heads / B->d.tp;
	int hd = (int)cs_model_qk_head_dim(B->m);
	bool gqa = B->m->kv_heads > 0 && B->m->kv_heads < B->m->heads;
	cs__attn(B->l, name, flops, bytes, b * heads, seq, hd, bwd, gqa);
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
		/* half of 2*T*s*(q + v)/tp (4*T*s*h/tp with q = v = h), of which a
		 * sliding window keeps its share */
		double causal =
			d->tokens * s * (d->q + d->v) / d->tp * cs_model_window_fraction(B->m, B->c->seq_len);
		double q_o = d->tokens * (d->q + d->v) / d->tp * d->ab; /* Q read, O written */
		double flops = bwd ? 2.5 * causal : causal;
		double bytes =
			bwd ? 2.0 * q_o + 2.0 * kv_block_bytes(B) * B->cp : q_o + kv_block_bytes(B) * B->cp;
		const char *name = bwd ? "attn_core_bwd" : "attn_core";
		if (!ring) {
			flash_op(B, name, flops, bytes, s, bwd);
		} else {
			/* One K/V block per ring step; the backward also passes dK/dV on. */
			double msg = kv_block_bytes(B) * (bwd ? 2.0 : 1.0);
			for (int64_t i = 0; i < (int64_t)B->cp; i++) {
				if (i + 1 < (int64_t)B->cp)
					cs__comm(B->l, bwd ? "cp_kv_send_recv_bwd" : "cp_kv_send_recv",
						 CS_COMM_CP, CS_COLL_SEND_RECV, msg);
				flash_op(B, name, flops / B->cp, bytes / B->cp, s / B->cp, bwd);
			}
		}
	} else {
		double heads = (double)B->m->heads / d->tp;
		double dh = (double)cs_model_qk_head_dim(B->m), dv = (double)cs_model_v_head_dim(B->m);
		double batch = b * heads;
		double sl = s / B->cp;
		double probs = batch * sl * s;
		double ab = d->ab;
		double drop = B->c->dropout ? 1.0 : 0.0;
		if (!bwd) {
			cs__gemm(B->l, "attn_scores", sl, s, dh, batch, ab, ab, CS_GEMM_NT);
			cs__mem(B->l, "attn_softmax", CS_MEM_SOFTMAX, probs * 2.0 * ab, 1);
			if (drop > 0.0)
				cs__mem(B->l, "attn_dropout", CS_MEM_DROPOUT, probs * (1.0 + 2.0 * ab), 1);
			cs__gemm(B->l, "attn_context", sl, dv, s, batch, ab, ab, CS_GEMM_NN);
		} else {
			cs__gemm(B->l, "attn_dprobs", sl, s, dv, batch, ab, ab, CS_GEMM_NT);
			cs__gemm(B->l, "attn_dv", s, dv, sl, batch, ab, ab, CS_GEMM_TN);
			cs__mem(B->l, "attn_softmax_bwd", CS_MEM_SOFTMAX, probs * (3.0 * ab + drop), 1);
			cs__gemm(B->l, "attn_dq", sl, dh, s, batch, ab, ab, CS_GEMM_NN);
			cs__gemm(B->l, "attn_dk", s, dh, sl, batch, ab, ab, CS_GEMM_TN);
		}
	}

	if (gather && bwd)
		cs__comm(B->l, "cp_rs_dkv", CS_COMM_CP, CS_COLL_REDUCE_SCATTER, kv_block_bytes(B) * B->cp);
}

/* ---- TP comm points ----------------------------------------------------- */

/* A sequence-parallel all-gather. Under the fp8 recipe, one before an fp8
 * GEMM (the norm's output before QKV and MLP-up, the output gradient
 * before the row-parallel layers' backward) moves the fp8 tensor: TE
 * (module/layernorm_linear.py, linear.py, base.py grad_output_preprocess)
 * casts before it gathers. The MoE layer's gather feeds the router, in
 * 16 bits. */
static void tp_gather(blk *B, const char *name, bool fp8_gemm_next)
{
	bool q = fp8_gemm_next && cs_prec_is_recipe(B->c->precision) && B->c->fp8_gather;
	if (!B->sp)
		return;
	/* per-tensor current scaling (NVFP4's, fp8-current's): the shards
	 * share one scale, their amaxes all-reduced before the quantized
	 * gather (TE's amax reduction group) */
	if (q && (B->c->precision == CS_PREC_NVFP4 || B->c->precision == CS_PREC_FP8_CURRENT))
		cs__comm(B->l, "nvfp4_amax_ar", CS_COMM_TP, CS_COLL_ALL_REDUCE, 4.0);
	cs__comm(B->l, name, CS_COMM_TP, CS_COLL_ALL_GATHER,
		 B->d.tokens * B->d.h * (q ? B->q.elem : B->d.ab));
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
	double tokens; /* per local expert, busiest rank */
	double local;  /* experts on this rank */
	double ffn;    /* expert ffn per expert-TP rank */
	double shared; /* the shared experts' ffn per TP rank */
	double routed; /* tokens this rank routes */
	double etp;    /* folded: the expert-TP group the dispatched tokens are gathered
	                * over (1: none); unfolded 1, the whole TP group's tokens routed */
	double a2a;    /* this rank's routed token copies, bytes (what it permutes) */
	double a2a_to; /* of the sends to the experts (dispatch, the combine's backward) */
	double probs;  /* the routing probabilities sent beside the tokens (fp32) */
	bool pad;      /* every expert padded to its capacity: every size known in advance */
	double pace;   /* the busiest rank's exchange over this one's: every rank sends its
	                * share, the busiest receives the imbalance times it (and sends it
	                * back), and the all-to-all ends when that rank's traffic does */
} moe_dims;

static moe_dims moe_init(const blk *B)
{
	moe_dims e;
	double ep = (double)(B->c->ep > 0 ? B->c->ep : 1);
	double imb = B->c->expert_imbalance >= 1.0 ? B->c->expert_imbalance : 1.0;
	double k = (double)B->m->top_k, cap = B->c->moe_capacity, sent = 1.0;
	bool fold = B->c->moe_folded;
	/* with a capacity the busiest expert keeps at most that share and
	 * drops the rest; padded, every expert computes and receives exactly
	 * its capacity (Megatron-Core's get_capacity over a rank's tokens) */
	e.pad = cap > 0.0 && B->c->moe_pad;
	if (e.pad)
		imb = sent = cap;
	else if (cap > 0.0 && imb > cap)
		imb = cap;
	e.local = (double)B->m->experts / ep;
	if (e.local < 1.0)
		e.local = 1.0;
	/* folded, each rank routes its sequence-parallel share, and what the
	 * EP group sends it is gathered over the expert-TP group
	 * (Megatron-Core's MoEAlltoAllTokenDispatcher with tp_size = etp) */
	e.routed = fold && B->sp ? B->d.norm_tokens : B->d.tokens;
	e.etp = fold ? (double)B->c->etp : 1.0;
	e.tokens = e.routed * k * imb * e.etp / e.local;
	e.ffn = (double)B->m->expert_ffn / (fold ? (double)B->c->etp : B->d.tp);
	e.shared = (double)B->m->expert_ffn / B->d.tp * (double)B->m->shared_experts;
	e.a2a = e.routed * k * sent * B->d.h * B->d.ab;
	e.a2a_to = B->c->moe_fp8_dispatch ? e.routed * k * sent * B->d.h : e.a2a;
	e.probs = e.routed * k * sent * 4.0;
	e.pace = imb / sent;
	return e;
}

/* Whether the MLP's input is gathered over TP and its output reduced:
 * always for a dense MLP and for experts split over TP; folded, only for
 * the shared experts, which keep the attention's TP (Megatron-Core's
 * SharedExpertMLP). */
static bool mlp_tp_comm(const blk *B, bool moe)
{
	return !moe || !B->c->moe_folded || B->m->shared_experts > 0;
}

/* A collective over the experts' TP group (folded, etp > 1): part of the
 * dispatch or the combine, on the expert-parallel stream after the
 * all-to-all (and exposed as ep). */
static void etp_comm(blk *B, const char *name, int coll, const moe_dims *e)
{
	if (e->etp <= 1.0)
		return;
	cs__comm(B->l, name, CS_COMM_EP, coll, e->a2a * e->pace * e->etp);
	if (B->l->n > 0 && B->l->n <= B->l->cap)
		B->l->out[B->l->n - 1].expert_tp = true;
}

/*
 * The MoE layer around its experts as Megatron-Core runs it (Megatron-Core
 * 0.15: transformer/moe/router.py TopKRouter, moe_utils.py permute,
 * unpermute and sort_chunks_by_idxs, token_dispatcher.py
 * MoEAlltoAllTokenDispatcher; Transformer Engine 2.x GroupedLinear and its
 * fused router and permutation kernels), the kernels each step launches:
 *  - the router after its GEMM: unfused, the score function, top-k, the
 *    probabilities' and the routing map's scatters (zeros and scatter
 *    each), and the auxiliary loss's own scores, top-k, scatter,
 *    reductions and scalings; fused (--moe-router-fusion), TE's top-k with
 *    its score function, the aux loss's scores and the aux loss;
 *  - the dispatcher's preprocessing: the tokens per expert (a reduction of
 *    the routing map and its cast), the splits' reductions, the counts'
 *    all-gather over the expert-parallel group and the device-to-host
 *    copies of the splits; padded to capacity, one fill;
 *  - the permutation: unfused, the map's transpose, an index range, two
 *    masked_selects (a nonzero and a gather each) for the tokens' indices
 *    and the probabilities, and the tokens' index_select; fused, TE's row
 *    map (three kernels) and its permute;
 *  - the chunks sorted by local expert after the dispatch and back before
 *    the combine (a cat of the tokens and of the probabilities; fused one
 *    kernel each way); DeepEP's flex dispatcher permutes after its dispatch
 *    instead, and counts inside it;
 *  - the experts: one GEMM per local expert in each grouped linear layer
 *    (TE's multi-stream cuBLAS), each input quantized per expert under a
 *    recipe;
 *  - the unpermutation: unfused, the probabilities' transpose and
 *    masked_select, their product, a zero fill and the scatter_add; fused,
 *    TE's unpermute with the probabilities merged.
 * The backward launches the autograd of each. A dropless layer reads the
 * tokens per expert on the host: the all-to-all's splits and the grouped
 * GEMMs' sizes are host lists, so the host waits for the GPU to finish the
 * routing before it issues what follows (the dispatcher's event
 * synchronisation before the all-to-all, or the masked_select's nonzero in
 * the unfused permutation, which the unfused unpermutation repeats); padded
 * to capacity, every size is known and nothing waits.
 */
enum {
	ROUTER_FWD = 15,
	ROUTER_BWD = 10,
	ROUTER_FUSED = 3, /* each way */
	PREPROCESS = 11,  /* with a dispatch; 3 without (the counts and their copy) */
	PERMUTE = 10,
	PERMUTE_FUSED = 4,
	PERMUTE_BWD = 4,
	SORT = 2,
	UNPERMUTE = 7,
	UNPERMUTE_BWD = 5,
	FUSED = 1 /* a fused permutation kernel's other direction, a fused sort */
};

/* The op at `at` makes the host wait for the GPU before it is issued. */
static void host_sync_at(blk *B, int at)
{
	if (at >= 0 && at < B->l->n && at < B->l->cap)
		B->l->out[at].host_sync = true;
}

/* A grouped linear layer's GEMM over the local experts, written by `gemm`
 * (fgemm, dgemm or wgrad), one kernel each. */
static void expert_gemm(blk *B, void (*gemm)(blk *, const char *, double, double, double, double),
			const char *name, double m, double n, double k, double local)
{
	int at = B->l->n;
	gemm(B, name, m, n, k, local);
	for (; at < B->l->n && at < B->l->cap; at++)
		if (B->l->out[at].cls == CS_OPC_GEMM)
			B->l->out[at].kernels = (int)local;
}

/* A grouped linear layer's input quantized per local expert under a recipe. */
static void expert_cast(blk *B, const char *name, double n, double local)
{
	fp8_cast_k(B, name, n, false, (int)local);
}

/* A step of the router or the dispatcher: `k` kernels, each reading or
 * writing one tokens x experts tensor of `eb` bytes an element. */
static void moe_small(blk *B, const char *name, double rows, double eb, int k)
{
	cs__mem(B->l, name, CS_MEM_COPY, (double)k * rows * (double)B->m->experts * eb, k);
}

/* Whether the dispatcher exchanges tokens between ranks (Megatron-Core's
 * ep_size > 1 or tp_size > 1), so its preprocessing gathers the counts. */
static bool moe_dispatches(const blk *B, const moe_dims *e)
{
	return B->c->ep > 1 || e->etp > 1.0 || (!B->c->moe_folded && B->d.tp > 1.0);
}

/* The router, the dispatcher's preprocessing and the permutation; returns
 * the op before which the host waits for the GPU (-1: none). */
static int moe_route_fwd(blk *B, const moe_dims *e)
{
	bool rf = B->c->moe_router_fusion, pf = B->c->moe_permute_fusion, pad = e->pad;
	bool disp = moe_dispatches(B, e);
	fgemm(B, "router", e->routed, (double)B->m->experts, B->d.h, 1);
	moe_small(B, "moe_router", e->routed, 4.0, rf ? ROUTER_FUSED : ROUTER_FWD);
	/* DeepEP counts the tokens inside its dispatch (its notify kernel) */
	bool counts = disp && !pad && !B->c->moe_deepep;
	moe_small(B, "moe_preprocess", e->routed, 1.0, pad ? 1 : counts ? PREPROCESS : 3);
	if (counts)
		cs__comm(B->l, "ep_counts_ag", CS_COMM_EP, CS_COLL_ALL_GATHER,
			 (double)B->m->experts * 8.0 * (double)(B->c->ep > 1 ? B->c->ep : 1));
	int at = B->l->n;
	cs__mem(B->l, "moe_permute", CS_MEM_COPY, 2.0 * e->a2a, pf ? PERMUTE_FUSED : PERMUTE);
	/* unfused, the permutation's masked_select waits; fused, the event
	 * before the all-to-all (or before the experts when nothing is sent) */
	return pad ? -1 : pf ? at + 1 : at;
}

/* The received tokens sorted by local expert or restored, with their
 * routing probabilities when `probs`. */
static void moe_sort(blk *B, const char *name, const moe_dims *e, bool probs)
{
	/* DeepEP delivers a rank's tokens unsorted and the permutation after it
	 * sorts them (Megatron-Core's _DeepepManager), which the permutation
	 * before the dispatch stands for */
	if (e->local <= 1.0 || !moe_dispatches(B, e) || B->c->moe_deepep)
		return;
	int k = B->c->moe_permute_fusion ? FUSED : probs ? SORT : SORT - 1;
	cs__mem(B->l, name, CS_MEM_COPY, 2.0 * e->tokens * e->local * B->d.h * B->d.ab, k);
}

static void mlp_fwd(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double g = gate_mult(B);
	if (!moe) {
		double f = d->ffn / d->tp;
		if (!B->m->parallel_block) /* else the attention branch's input serves */
			fp8_cast(B, "fp8_transpose_mlp_in", d->tokens * d->h, true);
		fgemm(B, "mlp_up", d->tokens, g * f, d->h, 1);
		cs__act(B->l, B->m, d, "mlp_act", d->tokens * f, false);
		fp8_cast(B, "fp8_transpose_act", d->tokens * f, true);
		fgemm(B, "mlp_down", d->tokens, d->h, f, 1);
		return;
	}
	moe_dims e = moe_init(B);
	bool pf = B->c->moe_permute_fusion;
	int sync = moe_route_fwd(B, &e);
	if (B->c->ep > 1) {
		cs__comm(B->l, "ep_dispatch", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.a2a_to * e.pace);
		cs__comm(B->l, "ep_dispatch_probs", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.probs * e.pace);
	}
	etp_comm(B, "etp_ag_dispatch", CS_COLL_ALL_GATHER, &e);
	moe_sort(B, "moe_sort_chunks", &e, true);
	if (!B->c->moe_fp8_dispatch)
		expert_cast(B, "fp8_cast_expert_in", e.tokens * e.local * d->h, e.local);
	expert_gemm(B, fgemm, "expert_up", e.tokens, g * e.ffn, d->h, e.local);
	cs__act(B->l, B->m, d, "expert_act", e.tokens * e.local * e.ffn, false);
	expert_cast(B, "fp8_cast_expert_act", e.tokens * e.local * e.ffn, e.local);
	expert_gemm(B, fgemm, "expert_down", e.tokens, d->h, e.ffn, e.local);
	moe_sort(B, "moe_unsort_chunks", &e, false);
	etp_comm(B, "etp_rs_combine", CS_COLL_REDUCE_SCATTER, &e);
	if (B->c->ep > 1)
		cs__comm(B->l, "ep_combine", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.a2a * e.pace);
	cs__mem(B->l, "moe_unpermute", CS_MEM_COPY, 2.0 * e.a2a, pf ? FUSED : UNPERMUTE);
	if (!pf && !e.pad) /* its masked_select's nonzero */
		host_sync_at(B, B->l->n - 1);
	host_sync_at(B, sync);
	if (B->m->shared_experts > 0) {
		double f = e.shared;
		fgemm(B, "shared_up", d->tokens, g * f, d->h, 1);
		cs__act(B->l, B->m, d, "shared_act", d->tokens * f, false);
		fgemm(B, "shared_down", d->tokens, d->h, f, 1);
	}
}

static void mlp_bwd_input(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double g = gate_mult(B);
	if (!moe) {
		double f = d->ffn / d->tp;
		fp8_cast(B, "fp8_cast_mlp_grad", d->tokens * d->h, false);
		dgemm(B, "mlp_down_dgrad", d->tokens, f, d->h, 1);
		cs__act(B->l, B->m, d, "mlp_act_bwd", d->tokens * f, true);
		fp8_cast(B, "fp8_transpose_act_grad", d->tokens * g * f, true);
		dgemm(B, "mlp_up_dgrad", d->tokens, d->h, g * f, 1);
		return;
	}
	moe_dims e = moe_init(B);
	if (B->m->shared_experts > 0) {
		double f = e.shared;
		dgemm(B, "shared_down_dgrad", d->tokens, f, d->h, 1);
		cs__act(B->l, B->m, d, "shared_act_bwd", d->tokens * f, true);
		dgemm(B, "shared_up_dgrad", d->tokens, d->h, g * f, 1);
	}
	bool pf = B->c->moe_permute_fusion;
	cs__mem(B->l, "moe_unpermute_bwd", CS_MEM_COPY, 2.0 * e.a2a, pf ? FUSED : UNPERMUTE_BWD);
	if (B->c->ep > 1)
		cs__comm(B->l, "ep_combine_bwd", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.a2a_to * e.pace);
	etp_comm(B, "etp_ag_combine_bwd", CS_COLL_ALL_GATHER, &e);
	moe_sort(B, "moe_unsort_chunks_bwd", &e, false);
	if (!B->c->moe_fp8_dispatch)
		expert_cast(B, "fp8_cast_expert_grad", e.tokens * e.local * d->h, e.local);
	expert_gemm(B, dgemm, "expert_down_dgrad", e.tokens, e.ffn, d->h, e.local);
	cs__act(B->l, B->m, d, "expert_act_bwd", e.tokens * e.local * e.ffn, true);
	expert_cast(B, "fp8_cast_expert_act_grad", e.tokens * e.local * g * e.ffn, e.local);
	expert_gemm(B, dgemm, "expert_up_dgrad", e.tokens, d->h, g * e.ffn, e.local);
	moe_sort(B, "moe_sort_chunks_bwd", &e, true);
	etp_comm(B, "etp_rs_dispatch_bwd", CS_COLL_REDUCE_SCATTER, &e);
	if (B->c->ep > 1) {
		cs__comm(B->l, "ep_dispatch_bwd", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.a2a * e.pace);
		cs__comm(B->l, "ep_dispatch_probs_bwd", CS_COMM_EP, CS_COLL_ALL_TO_ALL, e.probs * e.pace);
	}
	cs__mem(B->l, "moe_permute_bwd", CS_MEM_COPY, 2.0 * e.a2a, pf ? FUSED : PERMUTE_BWD);
	moe_small(B, "moe_router_bwd", e.routed, 4.0, B->c->moe_router_fusion ? ROUTER_FUSED : ROUTER_BWD);
	dgemm(B, "router_dgrad", e.routed, d->h, (double)B->m->experts, 1);
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
		double f = e.shared;
		wgrad(B, "shared_down_wgrad", f, d->h, d->tokens, 1);
		wgrad(B, "shared_up_wgrad", d->h, g * f, d->tokens, 1);
	}
	expert_gemm(B, wgrad, "expert_down_wgrad", e.ffn, d->h, e.tokens, e.local);
	expert_gemm(B, wgrad, "expert_up_wgrad", d->h, g * e.ffn, e.tokens, e.local);
	wgrad(B, "router_wgrad", d->h, (double)B->m->experts, e.routed, 1);
}

/* ---- latent attention (DeepSeek-V2/V3) ------------------------------------ */

/*
 * Megatron-Core's MLASelfAttention: the down projections to the query
 * latent (q_lora) and to the key/value latent with the shared rotary key
 * (kv_lora + rope) have whole weights on every TP rank; under sequence
 * parallelism they run on the rank's s/tp tokens, their normed latents are
 * all-gathered for the column-parallel up projections (one gather, not the
 * hidden width's), and the latents' gradients reduce-scattered back;
 * without it they run on all tokens, and the latents' gradients, partial
 * over the ranks' heads, are all-reduced.
 */
typedef struct mla_dims {
	double tl;          /* tokens of the down projections */
	double ql, kvl;     /* latents: query (0 without), key/value */
	double rope;        /* the shared rotary key */
	double q_up, kv_up; /* up projections' outputs per rank */
} mla_dims;

static mla_dims mla_init(const blk *B)
{
	const cs__dims *d = &B->d;
	double a = (double)B->m->heads / d->tp;
	double nope = (double)cs_model_head_dim(B->m), v = (double)cs_model_v_head_dim(B->m);
	mla_dims x = { .tl = B->sp ? d->norm_tokens : d->tokens,
		       .ql = (double)B->m->q_lora_rank,
		       .kvl = (double)B->m->kv_lora_rank,
		       .rope = (double)cs_model_rope_head_dim(B->m) };
	x.q_up = a * (nope + x.rope);
	x.kv_up = a * (nope + v);
	return x;
}

static double mla_latent_bytes(const blk *B, const mla_dims *x)
{
	return B->d.tokens * (x->ql + x->kvl + x->rope) * B->d.ab;
}

static void mla_rope(blk *B, const mla_dims *x, bool bwd)
{
	double n = B->d.tokens * ((double)B->m->heads / B->d.tp * x->rope + x->rope);
	if (bwd) {
		cs__cast_act(B->l, &B->d, "rope_cast_bwd", n, true);
		cs__rope(B->l, &B->d, "rope_bwd", n, true);
	} else {
		cs__rope(B->l, &B->d, "rope", n, false);
		cs__cast_act(B->l, &B->d, "rope_cast", n, false);
	}
}

/* The up projections from the latents (or Q's from the input without a
 * query latent) and RoPE: what mla_up_proj recomputes. */
static void mla_up_fwd(blk *B, const mla_dims *x)
{
	const cs__dims *d = &B->d;
	if (x->ql > 0)
		fgemm(B, "q_up", d->tokens, x->q_up, x->ql, 1);
	else
		fgemm(B, "q_proj", d->tokens, x->q_up, d->h, 1);
	fgemm(B, "kv_up", d->tokens, x->kv_up, x->kvl, 1);
	mla_rope(B, x, false);
}

static void mla_fwd(blk *B)
{
	const cs__dims *d = &B->d;
	mla_dims x = mla_init(B);
	if (x.ql > 0) {
		fgemm(B, "q_down", x.tl, x.ql, d->h, 1);
		cs__norm(B->l, B->m, d, "q_norm", x.tl * x.ql, false);
	}
	fgemm(B, "kv_down", x.tl, x.kvl + x.rope, d->h, 1);
	cs__norm(B->l, B->m, d, "kv_norm", x.tl * x.kvl, false);
	if (B->sp)
		cs__comm(B->l, "sp_ag_latent", CS_COMM_TP, CS_COLL_ALL_GATHER, mla_latent_bytes(B, &x));
	mla_up_fwd(B, &x);
}

static void mla_bwd_input(blk *B)
{
	const cs__dims *d = &B->d;
	mla_dims x = mla_init(B);
	mla_rope(B, &x, true);
	dgemm(B, "kv_up_dgrad", d->tokens, x.kvl, x.kv_up, 1);
	if (x.ql > 0)
		dgemm(B, "q_up_dgrad", d->tokens, x.ql, x.q_up, 1);
	else
		dgemm(B, "q_proj_dgrad", d->tokens, d->h, x.q_up, 1);
	if (B->sp)
		cs__comm(B->l, "sp_rs_latent_bwd", CS_COMM_TP, CS_COLL_REDUCE_SCATTER,
			 mla_latent_bytes(B, &x));
	else if (B->tp_on)
		cs__comm(B->l, "tp_ar_latent_bwd", CS_COMM_TP, CS_COLL_ALL_REDUCE, mla_latent_bytes(B, &x));
	cs__norm(B->l, B->m, d, "kv_norm_bwd", x.tl * x.kvl, true);
	dgemm(B, "kv_down_dgrad", x.tl, d->h, x.kvl + x.rope, 1);
	if (x.ql > 0) {
		cs__norm(B->l, B->m, d, "q_norm_bwd", x.tl * x.ql, true);
		dgemm(B, "q_down_dgrad", x.tl, d->h, x.ql, 1);
	}
}

static void mla_bwd_weight(blk *B)
{
	const cs__dims *d = &B->d;
	mla_dims x = mla_init(B);
	wgrad(B, "kv_up_wgrad", x.kvl, x.kv_up, d->tokens, 1);
	if (x.ql > 0) {
		wgrad(B, "q_up_wgrad", x.ql, x.q_up, d->tokens, 1);
		wgrad(B, "q_down_wgrad", d->h, x.ql, x.tl, 1);
	} else {
		wgrad(B, "q_proj_wgrad", d->h, x.q_up, d->tokens, 1);
	}
	wgrad(B, "kv_down_wgrad", d->h, x.kvl + x.rope, x.tl, 1);
}

/* ---- passes ------------------------------------------------------------- */

/* The attention branch from the normed input to the output projection's
 * partial sums, and its input gradient back to the normed input's. */
static void attn_branch_fwd(blk *B)
{
	const cs__dims *d = &B->d;
	double qkv_n = (d->q + 2.0 * d->kv) / d->tp;
	fp8_cast(B, "fp8_transpose_attn_in", (B->mla ? mla_init(B).tl : d->tokens) * d->h, true);
	if (B->mla)
		mla_fwd(B);
	else
		fgemm(B, "qkv", d->tokens, qkv_n, d->h, 1);
	if (!B->mla && cs_model_positions(B->m) == CS_POS_ROTARY) {
		double qk = d->tokens * (d->q + d->kv) / d->tp;
		cs__rope(B->l, d, "rope", qk, false);
		cs__cast_act(B->l, d, "rope_cast", qk, false);
	}
	attn_core(B, false);
	fp8_cast(B, "fp8_cast_attn_out", d->tokens * d->v / d->tp, false);
	fgemm(B, "out_proj", d->tokens, d->h, d->v / d->tp, 1);
}

static void attn_branch_bwd(blk *B)
{
	const cs__dims *d = &B->d;
	double qkv_n = (d->q + 2.0 * d->kv) / d->tp;
	fp8_cast(B, "fp8_cast_attn_grad", d->tokens * d->h, false);
	dgemm(B, "out_proj_dgrad", d->tokens, d->v / d->tp, d->h, 1);
	attn_core(B, true);
	if (B->mla) {
		mla_bwd_input(B);
		return;
	}
	if (cs_model_positions(B->m) == CS_POS_ROTARY) {
		double qk = d->tokens * (d->q + d->kv) / d->tp;
		cs__cast_act(B->l, d, "rope_cast_bwd", qk, true);
		cs__rope(B->l, d, "rope_bwd", qk, true);
	}
	if (d->fw != CS_FW_MEGATRON) /* autograd cats dq, dk, dv for the fused QKV weight */
		cs__mem(B->l, "qkv_grad_cat", CS_MEM_COPY, 2.0 * d->tokens * qkv_n * d->ab, 1);
	fp8_cast(B, "fp8_cast_qkv_grad", d->tokens * qkv_n, false);
	dgemm(B, "qkv_dgrad", d->tokens, d->h, qkv_n, 1);
	if (B->m->arch == CS_ARCH_GPT && d->fw != CS_FW_MEGATRON) {
		/* eager autograd sums each bias gradient over the tokens (QKV,
		 * out, up, down); Megatron fuses it into the weight-gradient pass */
		double outs = qkv_n + d->h + d->ffn / d->tp + d->h;
		cs__mem(B->l, "bias_grad", CS_MEM_COPY, d->tokens * outs * d->ab, 4);
	}
}

/* The parallel block (PaLM, GPT-J): x + attn(norm(x)) + mlp(norm(x)). One
 * norm feeds both branches; their row-parallel outputs are partial sums
 * that add up locally, so one TP reduction (or reduce-scatter) ends the
 * forward and one ends the input gradient's backward, where the
 * sequential block has two of each. */
static void block_fwd_parallel(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double n = d->norm_tokens * d->h, full = d->tokens * d->h;
	cs__norm(B->l, B->m, d, "block_norm", n, false);
	tp_gather(B, "sp_ag_block", !moe);
	cs__cast_act(B->l, d, "block_norm_cast", full, false);
	attn_branch_fwd(B);
	mlp_fwd(B, moe);
	cs__mem(B->l, "branch_sum", CS_MEM_ADD, 3.0 * full * d->ab, 1);
	tp_reduce(B, "tp_ar_block", "tp_rs_block");
	cs__residual(B->l, d, "block_residual", n, B->c->dropout);
}

static void block_bwd_input_parallel(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double n = d->norm_tokens * d->h, full = d->tokens * d->h;
	tp_gather(B, "sp_ag_block_bwd", !moe);
	cs__cast_grad_in(B->l, d, "block_grad_cast", full);
	mlp_bwd_input(B, moe);
	attn_branch_bwd(B);
	cs__mem(B->l, "branch_grad_sum", CS_MEM_ADD, 3.0 * full * d->ab, 1);
	tp_reduce(B, "tp_ar_block_bwd", "tp_rs_block_bwd");
	cs__cast_act(B->l, d, "block_norm_cast_bwd", full, true);
	cs__norm(B->l, B->m, d, "block_norm_bwd", n, true);
}

static void block_fwd(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	if (B->m->parallel_block) {
		block_fwd_parallel(B, moe);
		return;
	}
	double n = d->norm_tokens * d->h, full = d->tokens * d->h;
	bool drop = B->c->dropout;
	cs__norm(B->l, B->m, d, "attn_norm", n, false);
	if (!B->mla) /* latent attention gathers its latents instead */
		tp_gather(B, "sp_ag_attn", true);
	cs__cast_act(B->l, d, "attn_norm_cast", B->mla ? n : full, false);
	attn_branch_fwd(B);
	tp_reduce(B, "tp_ar_attn", "tp_rs_attn");
	cs__residual(B->l, d, "attn_residual", n, drop);
	cs__norm(B->l, B->m, d, "mlp_norm", n, false);
	bool tpc = mlp_tp_comm(B, moe);
	if (tpc)
		tp_gather(B, "sp_ag_mlp", !moe);
	cs__cast_act(B->l, d, "mlp_norm_cast", tpc ? full : n, false);
	mlp_fwd(B, moe);
	if (tpc)
		tp_reduce(B, "tp_ar_mlp", "tp_rs_mlp");
	cs__residual(B->l, d, "mlp_residual", n, drop);
}

static void block_bwd_input(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	if (B->m->parallel_block) {
		block_bwd_input_parallel(B, moe);
		return;
	}
	double n = d->norm_tokens * d->h, full = d->tokens * d->h;
	bool tpc = mlp_tp_comm(B, moe);
	if (tpc)
		tp_gather(B, "sp_ag_mlp_bwd", !moe);
	cs__cast_grad_in(B->l, d, "mlp_grad_cast", tpc ? full : n);
	mlp_bwd_input(B, moe);
	if (tpc)
		tp_reduce(B, "tp_ar_mlp_bwd", "tp_rs_mlp_bwd");
	cs__cast_act(B->l, d, "mlp_norm_cast_bwd", tpc ? full : n, true);
	cs__norm(B->l, B->m, d, "mlp_norm_bwd", n, true);
	tp_gather(B, "sp_ag_attn_bwd", true);
	cs__cast_act(B->l, d, "attn_grad_cast", full, false);
	attn_branch_bwd(B);
	if (!B->mla) /* latent attention reduces its latents' gradients instead */
		tp_reduce(B, "tp_ar_attn_bwd", "tp_rs_attn_bwd");
	cs__cast_act(B->l, d, "attn_norm_cast_bwd", B->mla ? n : full, true);
	cs__norm(B->l, B->m, d, "attn_norm_bwd", n, true);
}

/* Eager PyTorch adds each micro-batch's fp32 weight gradients into .grad
 * (read both, write one); the first micro-batch of a step only stores its
 * own, so a step of M micro-batches pays M - 1 adds, charged evenly. */
void cs__eager_accum(cs__oplist *l, const cs_layer_ctx *c, double weights)
{
	int64_t mb = c->micro_batches > 0 ? c->micro_batches : 1;
	if (mb > 1)
		cs__mem(l, "grad_accum", CS_MEM_ADD, 12.0 * weights * (double)(mb - 1) / (double)mb, 1);
}

static void block_bwd_weight(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	double qkv_n = (d->q + 2.0 * d->kv) / d->tp;
	mlp_bwd_weight(B, moe);
	wgrad(B, "out_proj_wgrad", d->v / d->tp, d->h, d->tokens, 1);
	if (B->mla)
		mla_bwd_weight(B);
	else
		wgrad(B, "qkv_wgrad", d->h, qkv_n, d->tokens, 1);
	/* the recipe casts each weight (with its transpose) on a step's first
	 * micro-batch and keeps the fp8 copy for the rest (TE's
	 * is_first_microbatch): charged evenly; weights kept quantized are
	 * only made ready for their other use. Without the cache, every
	 * micro-batch. */
	int64_t mb = B->c->micro_batches > 0 && !B->c->fp8_recast ? B->c->micro_batches : 1;
	if (B->c->fp8_params && cs_prec_is_recipe(B->c->precision) && B->q.weight_ready > 0.0)
		cs__mem(B->l, "fp8_weight_transpose", CS_MEM_COPY,
			B->q.weight_ready * B->wgrad_elems / (double)mb, 1);
	else if (!B->c->fp8_params)
		fp8_cast(B, "fp8_weight_cast", B->wgrad_elems / (double)mb, false);
	if (d->fw == CS_FW_PYTORCH)
		cs__eager_accum(B->l, B->c, B->wgrad_elems);
	else if (B->c->grad_accum_bytes > 0.0)
		cs__mem(B->l, "grad_accum", CS_MEM_GRAD_ACCUM, B->wgrad_elems * B->c->grad_accum_bytes, 1);
}

/* ---- selective recomputation ------------------------------------------- */

/* torchtitan's op policy (the block's ops but its saved list's, of whose
 * matmuls wq, wk, wv, wo, w1, w3, w2 every second one): the norms and the
 * all-gathers after them, K's projection, RoPE, the output projection and
 * its reduction (an all-reduce; a reduce-scatter's output is saved), the
 * gate (w3) with the activation, or without gating the down projection, the
 * residuals; materialised attention is not a saved op. */
static void block_recompute_op(blk *B)
{
	const cs__dims *d = &B->d;
	double n = d->norm_tokens * d->h, full = d->tokens * d->h;
	bool drop = B->c->dropout, gate = B->m->arch == CS_ARCH_LLAMA;
	double f = d->ffn / d->tp;
	cs__norm(B->l, B->m, d, "attn_norm", n, false);
	tp_gather(B, "sp_ag_attn", true);
	cs__cast_act(B->l, d, "attn_norm_cast", full, false);
	fgemm(B, "k_proj", d->tokens, d->kv / d->tp, d->h, 1);
	if (cs_model_positions(B->m) == CS_POS_ROTARY) {
		double qk = d->tokens * (d->q + d->kv) / d->tp;
		cs__rope(B->l, d, "rope", qk, false);
		cs__cast_act(B->l, d, "rope_cast", qk, false);
	}
	if (!B->c->flash_attention)
		attn_core(B, false);
	fgemm(B, "out_proj", d->tokens, d->h, d->v / d->tp, 1);
	if (!B->sp)
		tp_reduce(B, "tp_ar_attn", "tp_rs_attn");
	cs__residual(B->l, d, "attn_residual", n, drop);
	cs__norm(B->l, B->m, d, "mlp_norm", n, false);
	tp_gather(B, "sp_ag_mlp", true);
	cs__cast_act(B->l, d, "mlp_norm_cast", full, false);
	if (gate)
		fgemm(B, "mlp_gate", d->tokens, f, d->h, 1);
	cs__act(B->l, B->m, d, "mlp_act", d->tokens * f, false);
	if (!gate) {
		fgemm(B, "mlp_down", d->tokens, d->h, f, 1);
		if (!B->sp)
			tp_reduce(B, "tp_ar_mlp", "tp_rs_mlp");
	}
	cs__residual(B->l, d, "mlp_residual", n, drop);
}

/* Megatron-LM's modules, in forward order: the input norm, latent
 * attention's up projections with RoPE, the attention core, the pre-MLP
 * norm, then the dense MLP or the MoE layer whole (each checkpoint re-runs
 * its TP and EP collectives), or the experts' activation and the shared
 * experts. */
static void block_recompute(blk *B, bool moe)
{
	const cs__dims *d = &B->d;
	unsigned x = B->c->recompute_modules ? B->c->recompute_modules : CS_RCM_CORE_ATTN;
	double n = d->norm_tokens * d->h, full = d->tokens * d->h;
	if (x & CS_RCM_OP) {
		block_recompute_op(B);
		return;
	}
	bool norms = (x & CS_RCM_LAYERNORM) != 0;
	if (norms) {
		cs__norm(B->l, B->m, d, B->m->parallel_block ? "block_norm" : "attn_norm", n, false);
		cs__cast_act(B->l, d, "attn_norm_cast", B->mla ? n : full, false);
	}
	if ((x & CS_RCM_MLA_UP) && B->mla) {
		mla_dims m = mla_init(B);
		mla_up_fwd(B, &m);
	}
	if (x & CS_RCM_CORE_ATTN)
		attn_core(B, false);
	if (norms && !B->m->parallel_block) {
		cs__norm(B->l, B->m, d, "mlp_norm", n, false);
		cs__cast_act(B->l, d, "mlp_norm_cast", full, false);
	}
	if ((!moe && (x & CS_RCM_MLP)) || (moe && (x & CS_RCM_MOE))) {
		bool tpc = mlp_tp_comm(B, moe);
		if (tpc)
			tp_gather(B, "sp_ag_mlp", !moe);
		mlp_fwd(B, moe);
		if (tpc)
			tp_reduce(B, "tp_ar_mlp", "tp_rs_mlp");
		return;
	}
	if (!moe)
		return;
	moe_dims e = moe_init(B);
	if (x & CS_RCM_MOE_ACT)
		cs__act(B->l, B->m, d, "expert_act", e.tokens * e.local * e.ffn, false);
	if ((x & CS_RCM_SHARED) && B->m->shared_experts > 0) {
		double f = e.shared, g = gate_mult(B);
		fgemm(B, "shared_up", d->tokens, g * f, d->h, 1);
		cs__act(B->l, B->m, d, "shared_act", d->tokens * f, false);
		fgemm(B, "shared_down", d->tokens, d->h, f, 1);
	}
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
	B.mla = cs_model_mla(m);
	B.q = cs_quant_recipe(c->precision, c->arch);
	moe = moe && m->experts > 0;

	switch (pass) {
	case CS_PASS_FWD: block_fwd(&B, moe); break;
	case CS_PASS_BWD_INPUT: block_bwd_input(&B, moe); break;
	case CS_PASS_BWD_WEIGHT: block_bwd_weight(&B, moe); break;
	case CS_PASS_RECOMPUTE:
		if (c->recompute == CS_RECOMPUTE_FULL)
			block_fwd(&B, moe);
		else if (c->recompute == CS_RECOMPUTE_SELECTIVE)
			block_recompute(&B, moe);
		break;
	}
	return l.n;
}
