/*
 * model_params.c - parameter counts and model FLOPs of a transformer.
 *
 * Llama: attention 2h^2 + 2*h*kv_dim (W_q, W_o, W_k, W_v), MLP 3*h*ffn
 * (gate, up, down), two RMSNorm weights 2h, final norm h, embedding V*h and
 * an untied LM head V*h. GPT adds the biases (q/k/v/o and both MLP
 * matrices), LayerNorm biases (4h per block, 2h final) and the learned
 * position table.
 *
 * Multi-head latent attention (DeepSeek-V2/V3, kv_lora_rank > 0) replaces
 * W_q, W_k and W_v: a query latent h*q_lora (with its RMSNorm) rebuilt as
 * q_lora*heads*(head_dim + rope) (or W_q = h*heads*(head_dim + rope)
 * without one); a key/value latent and the shared rotary key,
 * h*(kv_lora + rope), normed and rebuilt as kv_lora*heads*(head_dim + v);
 * W_o = heads*v*h.
 */
#include "model/model.h"

static bool gated(const cs_model_spec *m) { return m->arch == CS_ARCH_LLAMA; }

int64_t cs_model_head_dim(const cs_model_spec *m)
{
	if (m->head_dim > 0)
		return m->head_dim;
	return m->heads > 0 ? m->hidden / m->heads : m->hidden;
}

bool cs_model_mla(const cs_model_spec *m) { return m->kv_lora_rank > 0; }

int64_t cs_model_rope_head_dim(const cs_model_spec *m)
{
	if (!cs_model_mla(m))
		return 0;
	return m->rope_head_dim > 0 ? m->rope_head_dim : 64;
}

int64_t cs_model_qk_head_dim(const cs_model_spec *m)
{
	return cs_model_head_dim(m) + cs_model_rope_head_dim(m);
}

int64_t cs_model_v_head_dim(const cs_model_spec *m)
{
	return cs_model_mla(m) && m->v_head_dim > 0 ? m->v_head_dim : cs_model_head_dim(m);
}

/* The weights of latent attention's projections (no norms). */
static int64_t mla_weights(const cs_model_spec *m)
{
	int64_t h = m->hidden, a = m->heads, qk = cs_model_qk_head_dim(m), v = cs_model_v_head_dim(m);
	int64_t q = m->q_lora_rank > 0 ? h * m->q_lora_rank + m->q_lora_rank * a * qk : h * a * qk;
	int64_t kv = h * (m->kv_lora_rank + cs_model_rope_head_dim(m)) +
		     m->kv_lora_rank * a * (cs_model_head_dim(m) + v);
	return q + kv + a * v * h;
}

static int64_t kv_dim(const cs_model_spec *m)
{
	int64_t kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
	return kv * cs_model_head_dim(m);
}

/* One MLP of inner width `ffn`, weights and (GPT) biases. */
static int64_t mlp_params(const cs_model_spec *m, int64_t ffn)
{
	int64_t h = m->hidden;
	if (gated(m))
		return 3 * h * ffn;
	return 2 * h * ffn + ffn + h;
}

static int64_t attn_params(const cs_model_spec *m)
{
	if (cs_model_mla(m)) /* the two latents' RMSNorms */
		return mla_weights(m) + m->q_lora_rank + m->kv_lora_rank;
	int64_t h = m->hidden, kv = kv_dim(m), q = m->heads * cs_model_head_dim(m);
	int64_t w = 2 * h * q + 2 * h * kv;
	if (!gated(m))
		w += q + 2 * kv + h; /* q, k, v and output biases */
	return w;
}

static int64_t norm_params(const cs_model_spec *m) { return gated(m) ? m->hidden : 2 * m->hidden; }

bool cs_model_layer_is_moe(const cs_model_spec *m, int64_t layer)
{
	return m->experts > 0 && layer >= m->dense_layers && layer < m->layers;
}

double cs_model_state_bytes(cs_state_dtype s) { return s == CS_STATE_BF16 ? 2.0 : 4.0; }

double cs_model_dtype_bytes(cs_precision p)
{
	switch (p) {
	case CS_PREC_FP8:
	case CS_PREC_FP8_CURRENT:
	case CS_PREC_FP8_ALL: return 1.0;
	case CS_PREC_MXFP8: return 1.0 + 1.0 / 32.0; /* an E8M0 scale per 32 */
	case CS_PREC_NVFP4: return 0.5 + 1.0 / 16.0; /* an E4M3 scale per 16 */
	case CS_PREC_FP32: return 4.0;
	case CS_PREC_BF16:
	case CS_PREC_FP16: break;
	}
	return 2.0;
}

/*
 * Transformer Engine 2.x's quantization of a linear layer's operands
 * (docs/compute-model.md, "Low-precision recipes"). A GEMM reads its input
 * row-wise (forward) and column-wise (the weight gradient's):
 *  - delayed-scaling fp8 on Hopper casts a 16-bit tensor to fp8 (read 2,
 *    write 1) and transposes it (write 1); where the kernel before writes
 *    fp8 itself (a norm, the activation) only the transpose is left (read
 *    1, write 1). Blackwell's tensor cores take either layout of fp8, so
 *    one copy serves both uses: read 2, write 1, and nothing after a fused
 *    kernel;
 *  - MXFP8 scales 1 x 32 blocks along the contraction, so the two uses are
 *    two quantizations from 16 bits (a quantized tensor cannot be
 *    transposed), written together: read 2, write 2 x 1.03125; a fused
 *    kernel writes both itself, 0.0625 bytes past its 16-bit output;
 *  - per-tensor current scaling (fp8-current) reads the tensor for its
 *    amax first (read 2), then casts as fp8 does; no kernel before it can
 *    write the quantized tensor, its scale unknown until then;
 *  - NVFP4's per-tensor scale needs the tensor's amax first (read 2), then
 *    both uses are written (read 2, write 2 x 0.5625; the column-wise one
 *    through the 16-point Hadamard transform, still memory-bound at 32
 *    flops per 2 bytes); no kernel fuses it.
 * A weight kept quantized (training.fp8.params) is made ready for its
 * other use once per cast: fp8 transposed on Hopper (2), nothing on
 * Blackwell nor in MXFP8 (the optimizer's cast writes both uses), NVFP4's
 * 16 x 16 blocks transposed as they are (read and write 0.5625).
 */
cs_quant cs_quant_recipe(cs_precision p, int arch)
{
	cs_quant q = { 0 };
	double e = cs_model_dtype_bytes(p);
	switch (p) {
	case CS_PREC_FP8:
		q.elem = e;
		q.cast = arch >= 100 ? 3.0 : 4.0;
		q.fused = arch >= 100 ? 0.0 : 2.0;
		q.weight_ready = q.fused;
		q.param_cast = 3.0;
		break;
	case CS_PREC_FP8_CURRENT:
		/* the tensor's amax first (read 2), then fp8's cast; nothing
		 * writes it quantized before its amax is known */
		q.elem = e;
		q.cast = 2.0 + (arch >= 100 ? 3.0 : 4.0);
		q.fused = q.cast;
		q.weight_ready = arch >= 100 ? 0.0 : 2.0;
		q.param_cast = 2.0 + 3.0;
		break;
	case CS_PREC_MXFP8:
		q.elem = e;
		q.cast = 2.0 + 2.0 * e;
		q.fused = 2.0 * e - 2.0;
		q.weight_ready = 0.0;
		q.param_cast = q.cast;
		break;
	case CS_PREC_NVFP4:
		q.elem = e;
		q.cast = 4.0 + 2.0 * e;
		q.fused = q.cast;
		q.weight_ready = 2.0 * e;
		q.param_cast = 4.0 + e;
		break;
	case CS_PREC_BF16:
	case CS_PREC_FP16:
	case CS_PREC_FP32:
	case CS_PREC_FP8_ALL: break;
	}
	return q;
}

double cs_model_grad_accum_bytes(cs_precision precision, cs_precision grad_dtype)
{
	double out = precision == CS_PREC_FP32 ? 4.0 : 2.0;
	return out + 2.0 * cs_model_dtype_bytes(grad_dtype);
}

cs_param_counts cs_model_params(const cs_model_spec *m)
{
	cs_param_counts pc = { 0 };
	int64_t h = m->hidden;
	int64_t attn = attn_params(m);
	int64_t norms = (m->parallel_block ? 1 : 2) * norm_params(m);
	int64_t dense_mlp = mlp_params(m, m->ffn);
	int64_t expert = m->experts > 0 ? mlp_params(m, m->expert_ffn) : 0;
	int64_t router = h * m->experts;
	int64_t moe_mlp = router + (m->experts + m->shared_experts) * expert;
	int64_t moe_active = router + (m->top_k + m->shared_experts) * expert;

	pc.dense_layer = attn + dense_mlp + norms;
	pc.moe_layer = m->experts > 0 ? attn + moe_mlp + norms : 0;
	pc.embedding = m->vocab * h;
	pc.unembedding = m->tied_embeddings ? 0 : m->vocab * h;
	pc.positions = cs_model_positions(m) == CS_POS_LEARNED ? m->max_positions * h : 0;
	pc.final_norm = norm_params(m);
	pc.norms = m->embedding_norm ? norm_params(m) : 0; /* BLOOM's, after the embedding */

	int64_t base = pc.embedding + pc.unembedding + pc.positions + pc.final_norm + pc.norms;
	pc.total = base;
	pc.active = base;
	for (int64_t l = 0; l < m->layers; l++) {
		pc.attention += attn;
		pc.norms += norms;
		if (cs_model_layer_is_moe(m, l)) {
			pc.mlp += moe_mlp;
			pc.experts += (m->experts + m->shared_experts) * expert;
			pc.routed += m->experts * expert;
			pc.total += pc.moe_layer;
			pc.active += attn + norms + moe_active;
		} else {
			pc.mlp += dense_mlp;
			pc.total += pc.dense_layer;
			pc.active += pc.dense_layer;
		}
	}
	return pc;
}

/* The query width, heads x head_dim (the hidden width unless head_dim says). */
static double q_dim(const cs_model_spec *m) { return (double)m->heads * (double)cs_model_head_dim(m); }

/* Matmul FLOPs of one block's forward per token: 2 per weight of every
 * projection, plus QK^T and PV over the full s x s square (2*s*heads*(qk +
 * v) for query/key heads of qk and value heads of v; 4*s*q, with q = heads
 * x head_dim, without latent attention: PaLM's 12*L*H*Q*T over forward and
 * backward). */
static double attn_core_fwd_flops_per_token(const cs_model_spec *m, int64_t s)
{
	double a = (double)m->heads;
	return 2.0 * (double)s * a * (double)(cs_model_qk_head_dim(m) + cs_model_v_head_dim(m));
}

static double block_fwd_flops_per_token(const cs_model_spec *m, bool moe, int64_t s)
{
	double h = (double)m->hidden, kv = (double)kv_dim(m), q = q_dim(m);
	double f = cs_model_mla(m) ? 2.0 * (double)mla_weights(m)
				   : 2.0 * (2.0 * h * q + 2.0 * h * kv); /* q, o, k, v */
	f += attn_core_fwd_flops_per_token(m, s);                        /* scores + context */
	double per_mlp = gated(m) ? 3.0 : 2.0;
	if (moe) {
		f += 2.0 * h * (double)m->experts; /* router */
		f += 2.0 * per_mlp * h * (double)m->expert_ffn * (double)(m->top_k + m->shared_experts);
	} else {
		f += 2.0 * per_mlp * h * (double)m->ffn;
	}
	return f;
}

double cs_model_flops_per_step(const cs_model_spec *m, int64_t seq_len, int64_t global_batch)
{
	double tokens = (double)seq_len * (double)global_batch;
	double f = 0.0;
	for (int64_t l = 0; l < m->layers; l++)
		f += block_fwd_flops_per_token(m, cs_model_layer_is_moe(m, l), seq_len);
	f += 2.0 * (double)m->hidden * (double)m->vocab; /* LM head */
	return 3.0 * tokens * f;
}

cs_positions cs_model_positions(const cs_model_spec *m)
{
	if (m->positions != CS_POS_AUTO)
		return m->positions;
	return m->arch == CS_ARCH_LLAMA ? CS_POS_ROTARY : CS_POS_LEARNED;
}

double cs_model_window_fraction(const cs_model_spec *m, int64_t s)
{
	if (m->attention_window <= 0 || m->attention_window >= s || s <= 0)
		return 1.0;
	double x = (double)m->attention_window / (double)s;
	return 2.0 * x - x * x;
}

double cs_model_causal_flops_per_step(const cs_model_spec *m, int64_t seq_len, int64_t global_batch)
{
	double tokens = (double)seq_len * (double)global_batch;
	/* the masked upper half of every s x s score and context matmul is not
	 * work, nor what a sliding window leaves out of the lower half */
	double kept = 0.5 * cs_model_window_fraction(m, seq_len);
	double masked = (1.0 - kept) * (double)m->layers * attn_core_fwd_flops_per_token(m, seq_len);
	return cs_model_flops_per_step(m, seq_len, global_batch) - 3.0 * tokens * masked;
}

double cs_model_hw_flops_per_step(const cs_model_spec *m, int64_t seq_len, int64_t global_batch,
				  cs_recompute rc)
{
	double tokens = (double)seq_len * (double)global_batch;
	double extra = 0.0;
	for (int64_t l = 0; l < m->layers; l++) {
		if (rc == CS_RECOMPUTE_FULL)
			extra += block_fwd_flops_per_token(m, cs_model_layer_is_moe(m, l), seq_len);
		else if (rc == CS_RECOMPUTE_SELECTIVE)
			extra += attn_core_fwd_flops_per_token(m, seq_len);
	}
	return cs_model_flops_per_step(m, seq_len, global_batch) + tokens * extra;
}

cs_recompute cs_model_layer_recompute(const cs_parallel_spec *p, int64_t i, int64_t r)
{
	switch (p->recompute) {
	case CS_RECOMPUTE_NONE: break;
	case CS_RECOMPUTE_FULL:
		if (p->recompute_method == CS_RECOMPUTE_BLOCK && i >= p->recompute_layers)
			return CS_RECOMPUTE_NONE;
		return CS_RECOMPUTE_FULL;
	case CS_RECOMPUTE_SELECTIVE:
		if (p->recompute_every > 0)
			return (r + 1) % p->recompute_every == 0 ? CS_RECOMPUTE_FULL : CS_RECOMPUTE_NONE;
		return CS_RECOMPUTE_SELECTIVE;
	}
	return CS_RECOMPUTE_NONE;
}

int64_t cs_model_chunk_layers(const cs_parallel_spec *p, int64_t layers)
{
	int64_t chunks = (p->pp > 0 ? p->pp : 1) * (p->virtual_stages > 0 ? p->virtual_stages : 1);
	int64_t n = layers / chunks;
	return n > 0 ? n : 1;
}

double cs_model_recompute_flops_per_token(const cs_model_spec *m, bool moe, int64_t s, cs_recompute rc,
					  unsigned modules, bool flash)
{
	if (rc == CS_RECOMPUTE_FULL)
		return block_fwd_flops_per_token(m, moe, s);
	if (rc != CS_RECOMPUTE_SELECTIVE)
		return 0.0;
	unsigned x = modules ? modules : CS_RCM_CORE_ATTN;
	double h = (double)m->hidden, a = (double)m->heads, per_mlp = gated(m) ? 3.0 : 2.0;
	double ef = (double)m->expert_ffn, f = 0.0;
	if (x & CS_RCM_OP) {
		/* K's projection, the output projection and the gate (or, not
		 * gated, the down projection): the even-numbered matmuls of wq,
		 * wk, wv, wo, w1, w3, w2; materialised attention's too */
		f = 2.0 * h * (double)kv_dim(m) + 2.0 * q_dim(m) * h + 2.0 * h * (double)m->ffn;
		return f + (flash ? 0.0 : attn_core_fwd_flops_per_token(m, s));
	}
	if (x & CS_RCM_CORE_ATTN)
		f += attn_core_fwd_flops_per_token(m, s);
	if ((x & CS_RCM_MLA_UP) && cs_model_mla(m)) {
		double qk = (double)cs_model_qk_head_dim(m), v = (double)cs_model_v_head_dim(m);
		double q_in = m->q_lora_rank > 0 ? (double)m->q_lora_rank : h;
		f += 2.0 * (q_in * a * qk + (double)m->kv_lora_rank * a * ((double)cs_model_head_dim(m) + v));
	}
	if (!moe && (x & CS_RCM_MLP))
		f += 2.0 * per_mlp * h * (double)m->ffn;
	if (moe && (x & CS_RCM_MOE))
		f += 2.0 * h * (double)m->experts +
		     2.0 * per_mlp * h * ef * (double)(m->top_k + m->shared_experts);
	else if (moe && (x & CS_RCM_SHARED))
		f += 2.0 * per_mlp * h * ef * (double)m->shared_experts;
	return f;
}

double cs_model_hw_flops_per_step_p(const cs_model_spec *m, int64_t seq_len, int64_t global_batch,
				    const cs_parallel_spec *p)
{
	double tokens = (double)seq_len * (double)global_batch;
	int64_t n = cs_model_chunk_layers(p, m->layers), pp = p->pp > 0 ? p->pp : 1;
	double extra = 0.0;
	for (int64_t l = 0; l < m->layers; l++) {
		int64_t chunk = l / n, i = l % n;
		cs_recompute rc = cs_model_layer_recompute(p, i, chunk / pp * n + i);
		extra += cs_model_recompute_flops_per_token(m, cs_model_layer_is_moe(m, l), seq_len, rc,
							    p->recompute_modules, p->flash_attention);
	}
	return cs_model_flops_per_step(m, seq_len, global_batch) + tokens * extra;
}
