/*
 * test_model.c - parameter counts, model FLOPs and the per-rank op lists.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clustersim/clustersim.h"
#include "coll/coll_op.h"
#include "config/config.h"
#include "model/model.h"
#include "model/routing.h"
#include "model_fixtures.h"

#define MAXOPS 256

static double rel(double a, double b)
{
	return fabs(a - b) / fabs(b);
}

/* ---- parameter counts ---------------------------------------------------- */

static const struct {
	cs_model_spec (*make)(void);
	double billions; /* published, three digits */
	double tol;
} param_cases[] = {
	{ fx_llama2_7b, 6.74, 0.005 },
	{ fx_llama3_8b, 8.03, 0.005 },
	{ fx_llama3_70b, 70.6, 0.05 },
	{ fx_llama3_405b, 405.9, 0.05 },
};

START_TEST(test_params_match_published_sizes)
{
	cs_model_spec m = param_cases[_i].make();
	cs_param_counts pc = cs_model_params(&m);
	double b = (double)pc.total / 1e9;
	ck_assert_msg(fabs(b - param_cases[_i].billions) < param_cases[_i].tol,
		      "%s: %.4f B params, want %.4g", m.name, b, param_cases[_i].billions);
	ck_assert_int_eq(pc.total, pc.active);
}
END_TEST

START_TEST(test_params_llama_closed_form)
{
	cs_model_spec m = fx_llama3_8b();
	cs_param_counts pc = cs_model_params(&m);
	int64_t h = 4096, kv = 8 * 128;
	int64_t layer = 2 * h * h + 2 * h * kv + 3 * h * 14336 + 2 * h;
	ck_assert_int_eq(pc.dense_layer, layer);
	ck_assert_int_eq(pc.total, 32 * layer + 2 * 128256 * h + h);
	ck_assert_int_eq(pc.attention + pc.mlp + pc.norms + pc.embedding + pc.unembedding +
			 pc.final_norm, pc.total);
	m.tied_embeddings = true;
	ck_assert_int_eq(cs_model_params(&m).total, 32 * layer + 128256 * h + h);
}
END_TEST

/* GPT-3: 12h^2 + 13h per block (weights, q/k/v/o and MLP biases, two
 * LayerNorms), learned positions, final LayerNorm. With the embedding tied
 * to the LM head (as GPT-3 does) that is 174.6 B, the "175B"; untied adds
 * V*h = 0.62 B. */
START_TEST(test_params_gpt3_counts_biases_and_positions)
{
	cs_model_spec m = fx_gpt3_175b();
	int64_t h = 12288, V = 50257;
	cs_param_counts pc = cs_model_params(&m);
	ck_assert_int_eq(pc.dense_layer, 12 * h * h + 13 * h);
	ck_assert_int_eq(pc.positions, 2048 * h);
	ck_assert_int_eq(pc.final_norm, 2 * h);
	ck_assert_int_eq(pc.total, 96 * (12 * h * h + 13 * h) + 2 * V * h + 2048 * h + 2 * h);
	m.tied_embeddings = true;
	pc = cs_model_params(&m);
	ck_assert_int_eq(pc.total, 174604259328LL);
	ck_assert(fabs((double)pc.total / 1e9 - 174.6) < 0.05);
}
END_TEST

START_TEST(test_params_moe_total_and_active)
{
	cs_model_spec m = fx_moe();
	cs_param_counts pc = cs_model_params(&m);
	int64_t h = 2048, kv = 4 * 128, e = 3 * h * 1408;
	int64_t attn = 2 * h * h + 2 * h * kv, norms = 2 * h;
	int64_t dense = attn + 3 * h * 8192 + norms;
	int64_t moe = attn + norms + h * 16 + 17 * e;
	int64_t ends = 2 * 32000 * h + h;
	ck_assert_int_eq(pc.dense_layer, dense);
	ck_assert_int_eq(pc.moe_layer, moe);
	ck_assert_int_eq(pc.total, 4 * dense + 12 * moe + ends);
	ck_assert_int_eq(pc.active, 4 * dense + 12 * (attn + norms + h * 16 + 3 * e) + ends);
	ck_assert_int_eq(pc.experts, 12 * 17 * e);
	ck_assert(!cs_model_layer_is_moe(&m, 3));
	ck_assert(cs_model_layer_is_moe(&m, 4));
	ck_assert(!cs_model_layer_is_moe(&m, 16));
}
END_TEST

/* DeepSeek-V3's latent attention by hand: the query latent and its norm
 * (h*1536 + 1536), its up projection to 128 heads of 128 + 64, the key/value
 * latent with the shared rotary key (h*(512 + 64)) and its norm, its up
 * projection to keys and values (512*128*(128 + 128)), the output
 * projection (128*128*h). The report's sizes: 671 B parameters, 37 B of
 * them active per token. */
/* Mixtral 8x7B (the preset): every layer's 8 experts of width 14,336, 2
 * active, a router of 4,096 x 8, GQA with 8 KV heads: 46,702,792,704
 * parameters, 12,879,925,248 active (the model card's 46.7 B and 12.9 B). */
START_TEST(test_params_mixtral_by_hand)
{
	const cs_model_spec *m = cs_preset_model("mixtral-8x7b");
	ck_assert_ptr_nonnull(m);
	cs_param_counts pc = cs_model_params(m);
	int64_t h = 4096, V = 32000, attn = h * (h + 2 * 1024) + h * h, expert = 3 * h * 14336;
	int64_t layer = attn + 8 * expert + h * 8 + 2 * h;
	ck_assert_int_eq(pc.moe_layer, layer);
	ck_assert_int_eq(pc.total, 32 * layer + 2 * V * h + h);
	ck_assert_int_eq(pc.total, 46702792704LL);
	ck_assert_int_eq(pc.active, 32 * (layer - 6 * expert) + 2 * V * h + h);
	ck_assert_int_eq(pc.active, 12879925248LL);
}
END_TEST

/* Qwen3's two MoE presets by hand: query/key heads of 128 (the query 2 x
 * the width), 4 KV heads, 128 experts in every layer, 8 active, a router
 * of h x 128: 30,532,110,336 and 235,093,610,496 parameters, 3,353,020,416
 * and 22,190,739,456 active (the report's 30.5 B / 3.3 B and 235 B / 22 B;
 * the query and key norms, 256 a layer, are not counted). */
START_TEST(test_params_qwen3_moe_by_hand)
{
	static const struct {
		const char *name;
		int64_t layers, h, heads, expert_ffn, total, active;
	} cases[] = {
		{ "qwen3-30b-a3b", 48, 2048, 32, 768, 30532110336LL, 3353020416LL },
		{ "qwen3-235b-a22b", 94, 4096, 64, 1536, 235093610496LL, 22190739456LL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const cs_model_spec *m = cs_preset_model(cases[i].name);
		ck_assert_ptr_nonnull(m);
		cs_param_counts pc = cs_model_params(m);
		int64_t h = cases[i].h, q = cases[i].heads * 128, kv = 4 * 128, V = 151936;
		int64_t attn = h * (q + 2 * kv) + q * h, expert = 3 * h * cases[i].expert_ffn;
		int64_t layer = attn + 128 * expert + h * 128 + 2 * h;
		ck_assert_int_eq(pc.moe_layer, layer);
		ck_assert_int_eq(pc.total, cases[i].layers * layer + 2 * V * h + h);
		ck_assert_int_eq(pc.total, cases[i].total);
		ck_assert_int_eq(pc.active, cases[i].layers * (layer - 120 * expert) + 2 * V * h + h);
		ck_assert_int_eq(pc.active, cases[i].active);
	}
}
END_TEST

START_TEST(test_params_deepseek_v3_latent_attention_by_hand)
{
	cs_model_spec m = fx_deepseek_v3();
	cs_param_counts pc = cs_model_params(&m);
	int64_t h = 7168, a = 128, V = 129280;
	int64_t attn = h * 1536 + 1536 + 1536 * a * (128 + 64) + h * (512 + 64) + 512 +
		       512 * a * (128 + 128) + a * 128 * h;
	int64_t expert = 3 * h * 2048, norms = 2 * h, router = h * 256;
	int64_t dense = attn + 3 * h * 18432 + norms;
	int64_t moe = attn + norms + router + 257 * expert;
	ck_assert_int_eq(attn, 187107328);
	ck_assert_int_eq(pc.dense_layer, dense);
	ck_assert_int_eq(pc.moe_layer, moe);
	ck_assert_int_eq(pc.total, 3 * dense + 58 * moe + 2 * V * h + h);
	ck_assert_int_eq(pc.active, 3 * dense + 58 * (attn + norms + router + 9 * expert) + 2 * V * h + h);
	ck_assert_int_eq(pc.total, 671026404352LL);
	ck_assert_int_eq(pc.active, 37552282624LL);
	ck_assert_int_eq(cs_model_qk_head_dim(&m), 192);
	ck_assert_int_eq(cs_model_v_head_dim(&m), 128);
	/* without a query latent, W_q maps the hidden state to the heads directly */
	m.q_lora_rank = 0;
	ck_assert_int_eq(cs_model_params(&m).dense_layer,
			 dense - (h * 1536 + 1536 + 1536 * a * 192) + h * a * 192);
	/* the rotary width defaults to 64, the value width to head_dim */
	m.rope_head_dim = 0;
	m.v_head_dim = 0;
	ck_assert_int_eq(cs_model_qk_head_dim(&m), 192);
	ck_assert_int_eq(cs_model_v_head_dim(&m), 128);
}
END_TEST

/* ---- model FLOPs --------------------------------------------------------- */

static const struct { int64_t s, B; } flop_cases[] = { { 2048, 1536 }, { 8192, 1 }, { 512, 64 } };

START_TEST(test_flops_equal_megatron_formula)
{
	cs_model_spec m = fx_gpt3_175b();
	double B = (double)flop_cases[_i].B, s = (double)flop_cases[_i].s;
	double L = 96, h = 12288, V = 50257;
	double megatron = 72.0 * B * s * L * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * h * L));
	double ours = cs_model_flops_per_step(&m, flop_cases[_i].s, flop_cases[_i].B);
	ck_assert_msg(rel(ours, megatron) < 1e-9, "%g vs %g", ours, megatron);
}
END_TEST

START_TEST(test_causal_flops_halve_the_attention_square)
{
	cs_model_spec m = fx_gpt3_175b();
	double B = (double)flop_cases[_i].B, s = (double)flop_cases[_i].s;
	double L = 96, h = 12288, V = 50257;
	double causal = 72.0 * B * s * L * h * h * (1.0 + s / (12.0 * h) + V / (12.0 * h * L));
	double ours = cs_model_causal_flops_per_step(&m, flop_cases[_i].s, flop_cases[_i].B);
	ck_assert_msg(rel(ours, causal) < 1e-9, "%g vs %g", ours, causal);
}
END_TEST

START_TEST(test_hw_flops_full_recompute_equal_megatron_hfu)
{
	cs_model_spec m = fx_gpt3_175b();
	double B = (double)flop_cases[_i].B, s = (double)flop_cases[_i].s;
	double L = 96, h = 12288, V = 50257;
	double hfu = 96.0 * B * s * L * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * h * L));
	double ours = cs_model_hw_flops_per_step(&m, flop_cases[_i].s, flop_cases[_i].B,
						 CS_RECOMPUTE_FULL);
	ck_assert_msg(rel(ours, hfu) < 1e-9, "%g vs %g", ours, hfu);
	double sel = cs_model_hw_flops_per_step(&m, flop_cases[_i].s, flop_cases[_i].B,
						CS_RECOMPUTE_SELECTIVE);
	double extra = B * s * L * 4.0 * s * h;
	ck_assert(rel(sel, cs_model_flops_per_step(&m, flop_cases[_i].s, flop_cases[_i].B) + extra) < 1e-9);
	ck_assert(cs_model_hw_flops_per_step(&m, 2048, 8, CS_RECOMPUTE_NONE) ==
		  cs_model_flops_per_step(&m, 2048, 8));
}
END_TEST

START_TEST(test_flops_llama_gqa_swiglu_closed_form)
{
	cs_model_spec m = fx_llama3_70b();
	double s = 8192, B = 16, h = 8192, kv = 1024, f = 28672, V = 128256, L = 80;
	double per_tok = L * (2.0 * (2 * h * h + 2 * h * kv) + 2.0 * 3 * h * f + 4 * s * h) + 2 * h * V;
	ck_assert(rel(cs_model_flops_per_step(&m, 8192, 16), 3.0 * s * B * per_tok) < 1e-12);
}
END_TEST

/* Latent attention's FLOPs per token: 2 per weight of its five projections
 * (the norms are no matmul), and the score and context matmuls over
 * queries/keys of 192 and values of 128: 2*s*heads*(192 + 128). */
START_TEST(test_flops_latent_attention_closed_form)
{
	cs_model_spec m = fx_deepseek_v3();
	double s = 4096, B = 8, h = 7168, a = 128, V = 129280;
	double proj = h * 1536 + 1536 * a * 192 + h * 576 + 512 * a * 256 + a * 128 * h;
	double attn = 2.0 * proj + 2.0 * s * a * (192 + 128);
	double dense = attn + 2.0 * 3 * h * 18432;
	double moe = attn + 2.0 * h * 256 + 2.0 * 3 * h * 2048 * 9;
	double per_tok = 3 * dense + 58 * moe + 2 * h * V;
	ck_assert(rel(cs_model_flops_per_step(&m, 4096, 8), 3.0 * s * B * per_tok) < 1e-12);
	/* causal: half the square */
	double masked = 61 * 0.5 * 2.0 * s * a * (192 + 128);
	ck_assert(rel(cs_model_causal_flops_per_step(&m, 4096, 8), 3.0 * s * B * (per_tok - masked)) < 1e-12);
}
END_TEST

/* ---- op lists ------------------------------------------------------------ */

static cs_layer_ctx ctx(int64_t s, int64_t b, int64_t tp, int64_t cp)
{
	cs_layer_ctx c;
	memset(&c, 0, sizeof(c));
	c.seq_len = s;
	c.micro_batch = b;
	c.tp = tp;
	c.cp = cp;
	c.ep = 1;
	c.precision = CS_PREC_BF16;
	c.expert_imbalance = 1.0;
	c.cp_kind = CS_CP_ALLGATHER;
	return c;
}

typedef struct tally {
	int n;
	double flops;              /* GEMM + ATTN */
	int colls[CS_COLL_OPS][CS_COMM_KINDS];
	double comm_bytes;
	int attn;
} tally;

static tally count(const cs_layer_op *ops, int n)
{
	tally t;
	memset(&t, 0, sizeof(t));
	t.n = n;
	for (int i = 0; i < n; i++) {
		ck_assert(ops[i].name != NULL);
		if (ops[i].cls == CS_OPC_COMM) {
			ck_assert(ops[i].coll >= 0 && ops[i].coll < CS_COLL_OPS);
			t.colls[ops[i].coll][ops[i].comm_kind]++;
			t.comm_bytes += ops[i].comm_bytes;
		} else if (ops[i].cls == CS_OPC_GEMM || ops[i].cls == CS_OPC_ATTN) {
			t.flops += ops[i].flops;
		}
		if (ops[i].cls == CS_OPC_ATTN)
			t.attn++;
	}
	return t;
}

static tally block(const cs_model_spec *m, const cs_layer_ctx *c, bool moe, cs_pass p)
{
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(m, c, moe, p, ops, MAXOPS);
	ck_assert_int_le(n, MAXOPS);
	ck_assert_int_eq(n, cs_model_block_ops(m, c, moe, p, NULL, 0));
	return count(ops, n);
}

static const struct { int64_t tp, cp; } split_cases[] = { { 1, 1 }, { 2, 1 }, { 8, 1 }, { 4, 2 }, { 1, 4 } };

/* Materialised attention: one micro-batch's forward over all blocks plus the
 * LM head, summed over the tp x cp ranks, is the model FLOPs / 3. */
START_TEST(test_fwd_ops_sum_to_model_flops)
{
	cs_model_spec m = fx_gpt3_175b();
	m.layers = 4;
	cs_layer_ctx c = ctx(2048, 2, split_cases[_i].tp, split_cases[_i].cp);
	double ranks = (double)(split_cases[_i].tp * split_cases[_i].cp);
	double f = 4.0 * block(&m, &c, false, CS_PASS_FWD).flops;
	cs_layer_op ops[16];
	int n = cs_model_head_ops(&m, &c, CS_PASS_FWD, ops, 16);
	f += count(ops, n).flops;
	double want = cs_model_flops_per_step(&m, 2048, 2) / 3.0;
	ck_assert_msg(rel(f * ranks, want) < 1e-9, "tp %ld cp %ld: %g vs %g",
		      (long)split_cases[_i].tp, (long)split_cases[_i].cp, f * ranks, want);
}
END_TEST

/* Latent attention's down projections have whole weights on every TP rank:
 * with sequence parallelism each rank runs them on its s/tp tokens, so the
 * ranks' forward sums to the model FLOPs / 3 as for any block; without it
 * every rank runs them on all tokens, tp - 1 copies more. */
START_TEST(test_latent_attention_ops_sum_to_model_flops)
{
	cs_model_spec m = fx_deepseek_v3();
	m.layers = 2;
	m.experts = m.top_k = m.shared_experts = 0; /* dense blocks */
	int64_t tp = split_cases[_i].tp, cp = split_cases[_i].cp, s = 4096, b = 2;
	double ranks = (double)(tp * cp), h = 7168;
	double want = cs_model_flops_per_step(&m, s, b) / 3.0;
	double down = 2.0 * (double)(s * b) * h * (1536 + 512 + 64); /* per layer, all tokens */
	for (int sp = 0; sp < 2; sp++) {
		cs_layer_ctx c = ctx(s, b, tp, cp);
		c.sequence_parallel = sp;
		double f = 2.0 * block(&m, &c, false, CS_PASS_FWD).flops;
		cs_layer_op ops[16];
		f += count(ops, cs_model_head_ops(&m, &c, CS_PASS_FWD, ops, 16)).flops;
		double copies = sp && tp > 1 ? 0.0 : 2.0 * down * (double)(tp - 1);
		ck_assert_msg(rel(f * ranks, want + copies) < 1e-9, "tp %ld cp %ld sp %d: %g vs %g", (long)tp,
			      (long)cp, sp, f * ranks, want + copies);
		/* backward: twice the forward's matmuls */
		double bwd = block(&m, &c, false, CS_PASS_BWD_INPUT).flops +
			     block(&m, &c, false, CS_PASS_BWD_WEIGHT).flops;
		ck_assert(rel(bwd, 2.0 * block(&m, &c, false, CS_PASS_FWD).flops) < 1e-9);
	}
}
END_TEST

/* A sliding window of w keys: query i (1-based) sees min(i, w) of them, so
 * the causal square's s^2/2 becomes s w - w^2/2 (continuous), counted by
 * hand here; the model FLOPs lose exactly the difference in the score and
 * context matmuls (4 h per key, times 3 for the backward), and the flash
 * attention ops of a block carry the same share of their causal FLOPs. */
START_TEST(test_sliding_window_keeps_its_share_of_the_square)
{
	static const int64_t win[][2] = { { 8192, 4096 }, { 8192, 1024 }, { 4096, 4096 }, { 2048, 0 } };
	for (size_t i = 0; i < sizeof win / sizeof win[0]; i++) {
		int64_t s = win[i][0], w = win[i][1];
		cs_model_spec m = fx_gpt3_175b();
		m.attention_window = w;
		double S = (double)s, W = w > 0 ? (double)w : S;
		double kept = S * W - W * W / 2.0, causal = S * S / 2.0;
		ck_assert_msg(rel(cs_model_window_fraction(&m, s), kept / causal) < 1e-12, "w %ld", (long)w);
		double B = 3, h = 12288, L = 96;
		double lost = 3.0 * B * L * 4.0 * h * (causal - kept);
		double want = cs_model_causal_flops_per_step(&(cs_model_spec){ .arch = m.arch, .layers = m.layers,
			.hidden = m.hidden, .heads = m.heads, .kv_heads = m.kv_heads, .ffn = m.ffn,
			.vocab = m.vocab, .max_positions = m.max_positions, .tied_embeddings = true }, s, 3) - lost;
		ck_assert_msg(rel(cs_model_causal_flops_per_step(&m, s, 3), want) < 1e-9, "w %ld", (long)w);
		/* the block's flash ops: their causal FLOPs times the share */
		cs_layer_ctx c = ctx(s, 1, 1, 1);
		c.flash_attention = true;
		cs_layer_op ops[MAXOPS];
		int n = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, MAXOPS);
		double attn = 0;
		for (int k = 0; k < n; k++)
			if (ops[k].cls == CS_OPC_ATTN)
				attn += ops[k].flops;
		ck_assert_msg(rel(attn, 2.0 * S * S * h * kept / causal) < 1e-12, "w %ld: %g", (long)w, attn);
	}
}
END_TEST

/* Backward = twice the forward matmuls (input and weight gradients);
 * FlashAttention's backward is 2.5 times its forward. */
START_TEST(test_bwd_is_twice_fwd)
{
	cs_model_spec m = fx_llama3_8b();
	cs_layer_ctx c = ctx(4096, 1, split_cases[_i].tp, split_cases[_i].cp);
	double fwd = block(&m, &c, false, CS_PASS_FWD).flops;
	double bwd = block(&m, &c, false, CS_PASS_BWD_INPUT).flops +
		     block(&m, &c, false, CS_PASS_BWD_WEIGHT).flops;
	ck_assert(rel(bwd, 2.0 * fwd) < 1e-9);

	c.flash_attention = true;
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, MAXOPS);
	double attn = 0.0;
	for (int i = 0; i < n; i++)
		if (ops[i].cls == CS_OPC_ATTN)
			attn += ops[i].flops;
	/* causal: half of 4 * T * s * h / tp */
	double T = 4096.0 / (double)c.cp;
	ck_assert(rel(attn, 2.0 * T * 4096.0 * 4096.0 / (double)c.tp) < 1e-12);
	fwd = block(&m, &c, false, CS_PASS_FWD).flops;
	bwd = block(&m, &c, false, CS_PASS_BWD_INPUT).flops +
	      block(&m, &c, false, CS_PASS_BWD_WEIGHT).flops;
	ck_assert(rel(bwd, 2.0 * (fwd - attn) + 2.5 * attn) < 1e-9);
}
END_TEST

/* ---- comm points --------------------------------------------------------- */

static const struct {
	int64_t tp;
	bool sp;
	int ar, rs, ag;   /* per pass, forward and backward alike */
} tp_cases[] = {
	{ 1, false, 0, 0, 0 },
	{ 1, true, 0, 0, 0 },
	{ 8, false, 2, 0, 0 },
	{ 8, true, 0, 2, 2 },
};

START_TEST(test_tp_comm_points_per_block)
{
	cs_model_spec m = fx_llama3_70b();
	cs_layer_ctx c = ctx(8192, 1, tp_cases[_i].tp, 1);
	c.sequence_parallel = tp_cases[_i].sp;
	c.flash_attention = true;
	cs_pass passes[] = { CS_PASS_FWD, CS_PASS_BWD_INPUT };
	for (int p = 0; p < 2; p++) {
		tally t = block(&m, &c, false, passes[p]);
		ck_assert_int_eq(t.colls[CS_COLL_ALL_REDUCE][CS_COMM_TP], tp_cases[_i].ar);
		ck_assert_int_eq(t.colls[CS_COLL_REDUCE_SCATTER][CS_COMM_TP], tp_cases[_i].rs);
		ck_assert_int_eq(t.colls[CS_COLL_ALL_GATHER][CS_COMM_TP], tp_cases[_i].ag);
		/* every TP buffer is the full (s, b, h) bf16 tensor */
		int k = tp_cases[_i].ar + tp_cases[_i].rs + tp_cases[_i].ag;
		ck_assert(fabs(t.comm_bytes - k * 8192.0 * 8192.0 * 2.0) < 1.0);
	}
	ck_assert_int_eq(block(&m, &c, false, CS_PASS_BWD_WEIGHT).colls[CS_COLL_ALL_REDUCE][CS_COMM_TP], 0);
}
END_TEST

/* Latent attention's TP traffic: with sequence parallelism one all-gather
 * of the latents (query 1536, key/value 512, rotary key 64) replaces the
 * hidden state's before attention, and its gradient is reduce-scattered
 * instead of the hidden state's; without it the latents' gradients, partial
 * over the ranks' heads, are all-reduced instead of the hidden state's. The
 * MLP's collectives are unchanged. */
START_TEST(test_latent_attention_tp_comm_points)
{
	cs_model_spec m = fx_deepseek_v3();
	cs_layer_ctx c = ctx(4096, 1, tp_cases[_i].tp, 1);
	c.sequence_parallel = tp_cases[_i].sp;
	c.flash_attention = true;
	double hid = 4096.0 * 7168 * 2, lat = 4096.0 * (1536 + 512 + 64) * 2;
	cs_pass passes[] = { CS_PASS_FWD, CS_PASS_BWD_INPUT };
	for (int p = 0; p < 2; p++) {
		cs_layer_op ops[MAXOPS];
		int n = cs_model_block_ops(&m, &c, false, passes[p], ops, MAXOPS);
		tally t = count(ops, n);
		ck_assert_int_eq(t.colls[CS_COLL_ALL_REDUCE][CS_COMM_TP], tp_cases[_i].ar);
		ck_assert_int_eq(t.colls[CS_COLL_REDUCE_SCATTER][CS_COMM_TP], tp_cases[_i].rs);
		ck_assert_int_eq(t.colls[CS_COLL_ALL_GATHER][CS_COMM_TP], tp_cases[_i].ag);
		int k = tp_cases[_i].ar + tp_cases[_i].rs + tp_cases[_i].ag;
		/* forward: the latents' gather (SP) and the output's reduce, or the
		 * output's all-reduce alone; backward: the output gradient's gather
		 * (SP) and the latents' reduce */
		bool latent = k > 0 && (tp_cases[_i].sp || passes[p] == CS_PASS_BWD_INPUT);
		double want = latent ? (k - 1) * hid + lat : k * hid;
		ck_assert_msg(fabs(t.comm_bytes - want) < 1.0, "pass %d: %g vs %g", p, t.comm_bytes, want);
		for (int i = 0; i < n; i++)
			ck_assert_msg(strcmp(ops[i].name, "sp_ag_attn") != 0 &&
					      strcmp(ops[i].name, "tp_ar_attn_bwd") != 0 &&
					      strcmp(ops[i].name, "tp_rs_attn_bwd") != 0,
				      "%s under latent attention", ops[i].name);
	}
}
END_TEST

/* DeepEP under the fp8 recipe: the tokens sent to their experts and the
 * gradients sent back to the experts' down projections in fp8, the two
 * combines in 16 bits (DeepSeek-V3 section 3.3.4). */
START_TEST(test_fp8_dispatch_halves_the_sends_to_the_experts)
{
	cs_model_spec m = fx_moe();
	cs_layer_ctx c = ctx(4096, 1, 1, 1);
	c.ep = 4;
	c.precision = CS_PREC_FP8;
	double full = 4096.0 * 2 * 2048 * 2; /* tokens x top_k x hidden x 2 bytes */
	static const struct { cs_pass pass; const char *fp8, *bf16; } cases[] = {
		{ CS_PASS_FWD, "ep_dispatch", "ep_combine" },
		{ CS_PASS_BWD_INPUT, "ep_combine_bwd", "ep_dispatch_bwd" },
	};
	for (int on = 0; on < 2; on++) {
		c.moe_fp8_dispatch = on;
		for (size_t k = 0; k < 2; k++) {
			cs_layer_op ops[MAXOPS];
			int n = cs_model_block_ops(&m, &c, true, cases[k].pass, ops, MAXOPS), seen = 0;
			for (int i = 0; i < n; i++) {
				if (strcmp(ops[i].name, cases[k].fp8) == 0) {
					ck_assert_double_eq(ops[i].comm_bytes, on ? full / 2 : full);
					seen++;
				} else if (strcmp(ops[i].name, cases[k].bf16) == 0) {
					ck_assert_double_eq(ops[i].comm_bytes, full);
					seen++;
				}
			}
			ck_assert_int_eq(seen, 2);
		}
	}
}
END_TEST

/* The parallel block: the attention and MLP partial sums add up before one
 * reduction, so each pass has half the sequential block's TP collectives
 * (one all-reduce; or one all-gather and one reduce-scatter with sequence
 * parallelism), the same matmul FLOPs, one norm forward and one backward,
 * and one norm's parameters per layer. */
START_TEST(test_parallel_block_halves_the_tp_collectives)
{
	cs_model_spec seq = fx_llama3_70b(), par = seq;
	par.parallel_block = true;
	cs_layer_ctx c = ctx(8192, 1, tp_cases[_i].tp, 1);
	c.sequence_parallel = tp_cases[_i].sp;
	c.flash_attention = true;
	cs_pass passes[] = { CS_PASS_FWD, CS_PASS_BWD_INPUT, CS_PASS_BWD_WEIGHT };
	for (int p = 0; p < 3; p++) {
		tally a = block(&seq, &c, false, passes[p]), b = block(&par, &c, false, passes[p]);
		ck_assert(rel(a.flops, b.flops) < 1e-12);
		for (int op = 0; op < CS_COLL_OPS; op++)
			ck_assert_int_eq(2 * b.colls[op][CS_COMM_TP], a.colls[op][CS_COMM_TP]);
		cs_layer_op ops[MAXOPS];
		int n = cs_model_block_ops(&par, &c, false, passes[p], ops, MAXOPS), norms = 0;
		for (int k = 0; k < n; k++)
			norms += ops[k].cls == CS_OPC_MEMBOUND && (ops[k].mem == CS_MEM_RMSNORM ||
								   ops[k].mem == CS_MEM_NORM_BWD);
		ck_assert_int_eq(norms, p == 2 ? 0 : 1);
	}
	int64_t h = 8192;
	ck_assert_int_eq(cs_model_params(&seq).dense_layer - cs_model_params(&par).dense_layer, h);
}
END_TEST

/* PaLM 540B (Chowdhery et al. 2022, Table 1 and section 2): 48 heads of 256
 * on a width of 18,432, one shared K/V head, SwiGLU of 4h, parallel
 * layers, shared embeddings of a 256k vocabulary: 540.35 B parameters. */
START_TEST(test_head_dim_sets_the_attention_width)
{
	cs_model_spec m = fx_llama3_70b();
	m.layers = 118;
	m.hidden = 18432;
	m.heads = 48;
	m.kv_heads = 1;
	m.head_dim = 256;
	m.ffn = 4 * 18432;
	m.vocab = 256000;
	m.parallel_block = true;
	m.tied_embeddings = true;
	int64_t h = 18432, q = 48 * 256, kv = 256, f = 4 * h, V = 256000;
	int64_t layer = 2 * h * q + 2 * h * kv + 3 * h * f + h;
	cs_param_counts pc = cs_model_params(&m);
	ck_assert_int_eq(pc.dense_layer, layer);
	ck_assert_int_eq(pc.total, 118 * layer + V * h + h);
	ck_assert(fabs((double)pc.total / 540.35e9 - 1) < 1e-4);
	/* 6N + 12 L H Q T per token (PaLM's appendix B), N without the embedding
	 * but with the LM head's matmul */
	double s = 2048, per_token = 118 * (2.0 * (double)(layer - h) + 4.0 * s * (double)q) +
				     2.0 * (double)(h * V);
	ck_assert(rel(cs_model_flops_per_step(&m, 2048, 1), 3.0 * s * per_token) < 1e-12);
	/* the block's GEMMs use the query width: qkv's columns, out_proj's rows */
	cs_layer_ctx c = ctx(2048, 1, 12, 1);
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, MAXOPS);
	int seen = 0;
	for (int k = 0; k < n; k++) {
		if (strcmp(ops[k].name, "qkv") == 0) {
			ck_assert_int_eq(ops[k].n, (q + 2 * kv) / 12 + ((q + 2 * kv) % 12 != 0));
			seen++;
		}
		if (strcmp(ops[k].name, "out_proj") == 0) {
			ck_assert_int_eq(ops[k].k, q / 12);
			seen++;
		}
		if (ops[k].cls == CS_OPC_ATTN)
			ck_assert_int_eq(ops[k].head_dim, 256);
	}
	ck_assert_int_eq(seen, 2);
	/* head_dim = hidden / heads is the default */
	cs_model_spec a = fx_llama3_70b(), b = a;
	b.head_dim = b.hidden / b.heads;
	ck_assert_int_eq(cs_model_params(&a).total, cs_model_params(&b).total);
}
END_TEST

static int ops_named(const cs_layer_op *ops, int n, const char *prefix)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += strncmp(ops[i].name, prefix, strlen(prefix)) == 0;
	return k;
}

/* Positions and the embedding norm, by hand: GPT-3's learned table is
 * 2048 x h parameters and an add after the embedding; ALiBi has neither,
 * nor kernels; rotary adds one RoPE kernel group per pass on q and k; a
 * learned table on a Llama adds the table and the add; BLOOM's embedding
 * LayerNorm adds 2h parameters and a norm forward and backward. */
START_TEST(test_positions_and_embedding_norm_by_hand)
{
	cs_layer_ctx c = ctx(2048, 1, 1, 1);
	c.flash_attention = true;
	cs_layer_op ops[MAXOPS];
	cs_model_spec gpt = fx_gpt3_175b(), alibi = gpt, rot = gpt, bloom = gpt;
	int64_t h = 12288;
	alibi.positions = CS_POS_ALIBI;
	rot.positions = CS_POS_ROTARY;
	bloom.positions = CS_POS_ALIBI;
	bloom.embedding_norm = true;
	ck_assert_int_eq(cs_model_params(&gpt).total - cs_model_params(&alibi).total, 2048 * h);
	ck_assert_int_eq(cs_model_params(&rot).total, cs_model_params(&alibi).total);
	ck_assert_int_eq(cs_model_params(&bloom).total - cs_model_params(&alibi).total, 2 * h);
	ck_assert_int_eq(ops_named(ops, cs_model_embed_ops(&gpt, &c, CS_PASS_FWD, ops, MAXOPS), "pos_embed"), 1);
	ck_assert_int_eq(ops_named(ops, cs_model_embed_ops(&alibi, &c, CS_PASS_FWD, ops, MAXOPS), "pos_embed"), 0);
	ck_assert_int_eq(ops_named(ops, cs_model_embed_ops(&bloom, &c, CS_PASS_FWD, ops, MAXOPS), "embed_norm"), 1);
	ck_assert_int_eq(ops_named(ops, cs_model_embed_ops(&bloom, &c, CS_PASS_BWD_INPUT, ops, MAXOPS),
				   "embed_norm_bwd"), 1);
	cs_pass passes[] = { CS_PASS_FWD, CS_PASS_BWD_INPUT };
	for (int p = 0; p < 2; p++) {
		int ng = cs_model_block_ops(&gpt, &c, false, passes[p], ops, MAXOPS);
		ck_assert_int_eq(ops_named(ops, ng, "rope"), 0);
		int na = cs_model_block_ops(&alibi, &c, false, passes[p], ops, MAXOPS);
		ck_assert_int_eq(na, ng);
		int nr = cs_model_block_ops(&rot, &c, false, passes[p], ops, MAXOPS);
		ck_assert_int_eq(ops_named(ops, nr, p ? "rope_bwd" : "rope"), 1);
	}
	cs_model_spec llama = fx_llama3_8b(), learned = llama;
	learned.positions = CS_POS_LEARNED;
	ck_assert_int_eq(cs_model_params(&learned).total - cs_model_params(&llama).total,
			 llama.max_positions * 4096);
	ck_assert_int_eq(ops_named(ops, cs_model_block_ops(&learned, &c, false, CS_PASS_FWD, ops, MAXOPS),
				   "rope"), 0);
}
END_TEST

/* OPT's ReLU: the GELU block's kernels, bytes and FLOPs, in every pass. */
START_TEST(test_relu_moves_what_gelu_moves)
{
	cs_model_spec gelu = fx_gpt3_175b(), relu = gelu;
	relu.activation = CS_ACT_RELU;
	cs_layer_ctx c = ctx(2048, 1, 8, 1);
	c.flash_attention = true;
	for (int p = 0; p < 3; p++) {
		cs_layer_op a[MAXOPS], b[MAXOPS];
		int na = cs_model_block_ops(&gelu, &c, false, (cs_pass)p, a, MAXOPS);
		ck_assert_int_eq(cs_model_block_ops(&relu, &c, false, (cs_pass)p, b, MAXOPS), na);
		for (int k = 0; k < na; k++)
			ck_assert(a[k].bytes == b[k].bytes && a[k].flops == b[k].flops);
	}
	ck_assert_int_eq(cs_model_params(&relu).total, cs_model_params(&gelu).total);
}
END_TEST

static double bytes_named(const cs_layer_op *ops, int n, const char *prefix)
{
	double b = 0;
	for (int i = 0; i < n; i++)
		if (strncmp(ops[i].name, prefix, strlen(prefix)) == 0)
			b += ops[i].bytes;
	return b;
}

/* Transformer Engine's fp8 recipe, by hand for a Llama 3 70B block at TP 8,
 * 8192 tokens: casts with transpose (4 bytes per element) of the attention
 * output, the output gradients of out-proj (h), MLP-down (h) and QKV
 * (h + 2 kv, over tp), and each weight once per step; transposes alone (2
 * bytes) where the kernel before writes fp8 (the norms' outputs, h each;
 * the activation's output, ffn/tp; its backward, 2 ffn/tp). Only the linear
 * layers' GEMMs are marked fp8; bf16 and fp8-all have no casts. */
START_TEST(test_fp8_recipe_casts_by_hand)
{
	cs_model_spec m = fx_llama3_70b();
	double T = 8192, h = 8192, tp = 8, f = 28672 / tp, qkv = (h + 2.0 * 1024) / tp;
	cs_layer_ctx c = ctx(8192, 1, 8, 1);
	c.flash_attention = true;
	c.micro_batches = 4;
	cs_layer_op ops[MAXOPS];
	c.precision = CS_PREC_FP8;
	int n = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, MAXOPS);
	ck_assert(bytes_named(ops, n, "fp8_") == 2 * T * h + 4 * T * h / tp + 2 * T * h + 2 * T * f);
	int linear = 0;
	for (int i = 0; i < n; i++)
		linear += ops[i].cls == CS_OPC_GEMM && ops[i].linear;
	ck_assert_int_eq(linear, 4);
	n = cs_model_block_ops(&m, &c, false, CS_PASS_BWD_INPUT, ops, MAXOPS);
	ck_assert(rel(bytes_named(ops, n, "fp8_"), 4 * T * h + 2 * T * 2 * f + 4 * T * h + 4 * T * qkv) < 1e-12);
	n = cs_model_block_ops(&m, &c, false, CS_PASS_BWD_WEIGHT, ops, MAXOPS);
	double weights = h * qkv + h / tp * h + h * 2 * f + f * h;
	ck_assert(rel(bytes_named(ops, n, "fp8_weight_cast"), 4 * weights / 4) < 1e-12);
	for (int k = 0; k < 2; k++) {
		c.precision = k ? CS_PREC_FP8_ALL : CS_PREC_BF16;
		for (int p = 0; p < 3; p++) {
			n = cs_model_block_ops(&m, &c, false, (cs_pass)p, ops, MAXOPS);
			ck_assert(bytes_named(ops, n, "fp8_") == 0);
		}
	}
}
END_TEST

/* Each recipe's casts by its bytes an element (cs_quant_recipe): the same
 * tensors as fp8's on Hopper, each quantized for both of its uses from 16
 * bits, or what is left after a kernel that writes it quantized. */
static const struct {
	cs_precision prec;
	int arch;
	double elem, cast, fused;
} recipe_cases[] = {
	{ CS_PREC_FP8, 90, 1.0, 4.0, 2.0 },                         /* copy and transpose */
	{ CS_PREC_FP8, 100, 1.0, 3.0, 0.0 },                        /* one copy serves both */
	{ CS_PREC_FP8_CURRENT, 90, 1.0, 6.0, 6.0 },                 /* amax, then fp8's */
	{ CS_PREC_FP8_CURRENT, 100, 1.0, 5.0, 5.0 },
	{ CS_PREC_MXFP8, 100, 33.0 / 32, 2 + 66.0 / 32, 2.0 / 32 }, /* both from 16 bits */
	{ CS_PREC_NVFP4, 100, 9.0 / 16, 4 + 18.0 / 16, 4 + 18.0 / 16 }, /* amax, then both */
};

START_TEST(test_recipes_cast_by_hand)
{
	cs_quant q = cs_quant_recipe(recipe_cases[_i].prec, recipe_cases[_i].arch);
	ck_assert_double_eq(q.elem, recipe_cases[_i].elem);
	ck_assert_double_eq(q.cast, recipe_cases[_i].cast);
	ck_assert_double_eq(q.fused, recipe_cases[_i].fused);
	cs_model_spec m = fx_llama3_70b();
	double T = 8192, h = 8192, tp = 8, f = 28672 / tp, qkv = (h + 2.0 * 1024) / tp;
	double cast = q.cast, fused = q.fused;
	cs_layer_ctx c = ctx(8192, 1, 8, 1);
	c.flash_attention = true;
	c.micro_batches = 4;
	c.precision = recipe_cases[_i].prec;
	c.arch = recipe_cases[_i].arch;
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, MAXOPS);
	ck_assert(rel(bytes_named(ops, n, "fp8_"), fused * (2 * T * h + T * f) + cast * T * h / tp) < 1e-12);
	n = cs_model_block_ops(&m, &c, false, CS_PASS_BWD_INPUT, ops, MAXOPS);
	ck_assert(rel(bytes_named(ops, n, "fp8_"), cast * (2 * T * h + T * qkv) + fused * T * 2 * f) < 1e-12);
	n = cs_model_block_ops(&m, &c, false, CS_PASS_BWD_WEIGHT, ops, MAXOPS);
	double weights = h * qkv + h / tp * h + h * 2 * f + f * h;
	ck_assert(rel(bytes_named(ops, n, "fp8_weight_cast"), cast * weights / 4) < 1e-12);
}
END_TEST

static const cs_layer_op *op_named(const cs_layer_op *ops, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ops[i].name, name) == 0)
			return &ops[i];
	return NULL;
}

/* torch.compile fuses each chain between GEMMs: RoPE one kernel reading
 * and writing q and k, SwiGLU reading gate and up and writing one half (its
 * backward reading three and writing two), a norm writing the 16-bit GEMM
 * input and its backward adding the residual gradient. Llama 3 70B at TP
 * 8 under FSDP's 16-bit stream; eager PyTorch's fp32 stream keeps only the
 * cast of the gradient entering the block. */
START_TEST(test_compile_fuses_the_chains_between_gemms)
{
	cs_model_spec m = fx_llama3_70b();
	double T = 8192, h = 8192, tp = 8, f = 28672 / tp, qk = T * (h + 1024) / tp;
	cs_layer_ctx c = ctx(8192, 1, 8, 1);
	c.flash_attention = true;
	c.framework = CS_FW_FSDP;
	c.compiled = true;
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, MAXOPS);
	const cs_layer_op *o = op_named(ops, n, "rope");
	ck_assert(o && o->bytes == 2 * qk * 2 && o->kernels == 1 && o->mem == CS_MEM_ACT);
	ck_assert_ptr_null(op_named(ops, n, "rope_add"));
	o = op_named(ops, n, "mlp_act");
	ck_assert(o && o->bytes == 3 * T * f * 2 && o->kernels == 1);
	o = op_named(ops, n, "attn_norm");
	ck_assert(o && o->bytes == T * h * (2 + 2) && o->kernels == 1);
	n = cs_model_block_ops(&m, &c, false, CS_PASS_BWD_INPUT, ops, MAXOPS);
	o = op_named(ops, n, "mlp_act_bwd");
	ck_assert(o && o->bytes == 5 * T * f * 2 && o->kernels == 1);
	ck_assert_ptr_null(op_named(ops, n, "swiglu_bwd_mul"));
	ck_assert_ptr_null(op_named(ops, n, "swiglu_bwd_cat"));
	o = op_named(ops, n, "attn_norm_bwd");
	ck_assert(o && o->bytes == T * h * (3 * 2 + 2) && o->kernels == 1);
	ck_assert_ptr_null(op_named(ops, n, "residual_grad_add"));
	/* eager PyTorch's fp32 residual stream: the norms write bf16 themselves */
	c.framework = CS_FW_PYTORCH;
	n = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, MAXOPS);
	o = op_named(ops, n, "attn_norm");
	ck_assert(o && o->bytes == T * h * (4 + 2));
	ck_assert_ptr_null(op_named(ops, n, "attn_norm_cast"));
	n = cs_model_block_ops(&m, &c, false, CS_PASS_BWD_INPUT, ops, MAXOPS);
	o = op_named(ops, n, "mlp_grad_cast");
	ck_assert(o && o->bytes == T * h * (4 + 2));
	ck_assert_ptr_null(op_named(ops, n, "attn_grad_cast"));
	ck_assert_ptr_null(op_named(ops, n, "mlp_norm_cast_bwd"));
	/* the switch is the eager frameworks' alone */
	c.framework = CS_FW_MEGATRON;
	cs_layer_op ref[MAXOPS];
	n = cs_model_block_ops(&m, &c, false, CS_PASS_BWD_INPUT, ops, MAXOPS);
	c.compiled = false;
	ck_assert_int_eq(cs_model_block_ops(&m, &c, false, CS_PASS_BWD_INPUT, ref, MAXOPS), n);
	for (int i = 0; i < n; i++)
		ck_assert(ops[i].bytes == ref[i].bytes && ops[i].kernels == ref[i].kernels);
}
END_TEST

/* A capacity caps the busiest expert's share (imbalance 1.6 kept to 1.25);
 * padded, every expert computes the capacity and each all-to-all sends it
 * (4,096 tokens x 2 copies over 4 local experts of 16 at EP 4). Either
 * way the all-to-all is the busiest rank's: it receives its share, and
 * every rank's exchange ends with its. */
START_TEST(test_capacity_caps_and_pads_the_experts)
{
	cs_model_spec m = fx_moe();
	cs_layer_ctx c = ctx(4096, 1, 1, 1);
	c.ep = 4;
	c.expert_imbalance = 1.6;
	static const struct {
		double cap;
		bool pad;
		double share, sent;
	} cases[] = { { 0, false, 1.6, 1.0 }, { 1.25, false, 1.25, 1.0 }, { 2.0, false, 1.6, 1.0 },
		      { 1.25, true, 1.25, 1.25 }, { 2.0, true, 2.0, 2.0 } };
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		c.moe_capacity = cases[k].cap;
		c.moe_pad = cases[k].pad;
		cs_layer_op ops[MAXOPS];
		int n = cs_model_block_ops(&m, &c, true, CS_PASS_FWD, ops, MAXOPS);
		const cs_layer_op *up = op_named(ops, n, "expert_up");
		ck_assert(up && up->m == (int64_t)ceil(4096.0 * 2 * cases[k].share / 4) && up->batch == 4);
		const cs_layer_op *d = op_named(ops, n, "ep_dispatch");
		ck_assert(d && d->comm_bytes == 4096.0 * 2 * cases[k].share * 2048 * 2);
		const cs_layer_op *perm = op_named(ops, n, "moe_permute"); /* its own sends */
		ck_assert(perm && perm->bytes == 2.0 * 4096.0 * 2 * cases[k].sent * 2048 * 2);
	}
}
END_TEST

START_TEST(test_cp_ring_interleaves_send_recv_with_blocks)
{
	cs_model_spec m = fx_llama3_405b();
	cs_layer_ctx c = ctx(131072, 1, 8, 16);
	c.cp_kind = CS_CP_RING;
	c.flash_attention = true;
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, MAXOPS);
	tally t = count(ops, n);
	ck_assert_int_eq(t.colls[CS_COLL_SEND_RECV][CS_COMM_CP], 15);
	ck_assert_int_eq(t.attn, 16);
	/* each exchange sits right before an attention block */
	for (int i = 0; i < n; i++)
		if (ops[i].cls == CS_OPC_COMM && ops[i].coll == CS_COLL_SEND_RECV) {
			ck_assert(i + 1 < n && ops[i + 1].cls == CS_OPC_ATTN);
			/* K and V of this rank's 8192 tokens, 1 kv head per TP rank */
			ck_assert(fabs(ops[i].comm_bytes - 8192.0 * 2.0 * 1024.0 / 8.0 * 2.0) < 1.0);
		}
	t = block(&m, &c, false, CS_PASS_BWD_INPUT);
	ck_assert_int_eq(t.colls[CS_COLL_SEND_RECV][CS_COMM_CP], 15);

	c.cp_kind = CS_CP_ALLGATHER;
	t = block(&m, &c, false, CS_PASS_FWD);
	ck_assert_int_eq(t.colls[CS_COLL_ALL_GATHER][CS_COMM_CP], 1);
	ck_assert_int_eq(t.colls[CS_COLL_SEND_RECV][CS_COMM_CP], 0);
	t = block(&m, &c, false, CS_PASS_BWD_INPUT);
	ck_assert_int_eq(t.colls[CS_COLL_REDUCE_SCATTER][CS_COMM_CP], 1);
}
END_TEST

static const double imbalance_cases[] = { 1.0, 1.5, 2.0 };

START_TEST(test_moe_all_to_all_and_imbalance)
{
	cs_model_spec m = fx_moe();
	cs_layer_ctx c = ctx(4096, 1, 1, 1);
	c.ep = 8;
	c.flash_attention = true;
	c.expert_imbalance = imbalance_cases[_i];
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, true, CS_PASS_FWD, ops, MAXOPS);
	tally t = count(ops, n);
	/* the tokens each way and the routing probabilities beside the
	 * dispatched tokens (Megatron-Core's token_dispatch sends both), the
	 * backward the same three; the tokens per expert gathered first */
	ck_assert_int_eq(t.colls[CS_COLL_ALL_TO_ALL][CS_COMM_EP], 3);
	ck_assert_int_eq(t.colls[CS_COLL_ALL_GATHER][CS_COMM_EP], 1);
	ck_assert_int_eq(block(&m, &c, true, CS_PASS_BWD_INPUT).colls[CS_COLL_ALL_TO_ALL][CS_COMM_EP], 3);
	double experts = 0.0;
	for (int i = 0; i < n; i++)
		if (strncmp(ops[i].name, "expert_", 7) == 0 && ops[i].cls == CS_OPC_GEMM) {
			ck_assert_int_eq(ops[i].batch, 2);   /* 16 experts over 8 ranks */
			experts += ops[i].flops;
		}
	/* the busiest rank: T * top_k tokens, times the imbalance, 3 matrices */
	double want = 2.0 * 4096.0 * 2.0 * imbalance_cases[_i] * 3.0 * 2048.0 * 1408.0;
	ck_assert(rel(experts, want) < 1e-9);
	ck_assert_int_eq(block(&m, &c, false, CS_PASS_FWD).colls[CS_COLL_ALL_TO_ALL][CS_COMM_EP], 0);
}
END_TEST

/* The experts folded over tp 4 x dp (Megatron-Core's expert mesh), on
 * fx_moe without its shared expert, T = 4096 tokens a micro-batch, SP:
 * each rank routes its T / 4 tokens, sends T / 4 x top-2 copies of h =
 * 2048 bf16 values to the EP group, and with expert TP 2 gathers what it
 * received over the expert-TP group (2 x that) before its 16 / ep experts
 * of width 1408 / 2; no TP gather or reduction surrounds the layer. The
 * busiest rank's expert FLOPs equal the unfolded layer's with the same
 * expert-TP split. */
static const struct { int64_t etp, ep; } fold_cases[] = { { 1, 8 }, { 2, 4 }, { 4, 2 } };

START_TEST(test_moe_folded_experts_by_closed_form)
{
	cs_model_spec m = fx_moe();
	m.shared_experts = 0;
	cs_layer_ctx c = ctx(4096, 1, 4, 1);
	c.sequence_parallel = true;
	c.flash_attention = true;
	c.moe_folded = true;
	c.etp = fold_cases[_i].etp;
	c.ep = fold_cases[_i].ep;
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, true, CS_PASS_FWD, ops, MAXOPS);
	double T = 4096.0, tl = T / 4.0, h = 2048.0, etp = (double)c.etp, local = 16.0 / (double)c.ep;
	const cs_layer_op *router = op_named(ops, n, "router");
	ck_assert_ptr_nonnull(router);
	ck_assert_int_eq(router->m, (int64_t)tl);
	const cs_layer_op *a2a = op_named(ops, n, "ep_dispatch");
	ck_assert_ptr_nonnull(a2a);
	ck_assert(a2a->comm_bytes == tl * 2.0 * h * 2.0);
	ck_assert_ptr_null(op_named(ops, n, "sp_ag_mlp"));
	ck_assert_ptr_null(op_named(ops, n, "tp_rs_mlp"));
	ck_assert_ptr_nonnull(op_named(ops, n, "sp_ag_attn"));
	const cs_layer_op *ag = op_named(ops, n, "etp_ag_dispatch");
	const cs_layer_op *rs = op_named(ops, n, "etp_rs_combine");
	if (c.etp == 1) {
		ck_assert_ptr_null(ag);
		ck_assert_ptr_null(rs);
	} else {
		ck_assert_ptr_nonnull(ag);
		ck_assert_ptr_nonnull(rs);
		ck_assert(ag->expert_tp && rs->expert_tp);
		ck_assert_int_eq(ag->coll, CS_COLL_ALL_GATHER);
		ck_assert(ag->comm_bytes == a2a->comm_bytes * etp);
		ck_assert(rs->comm_bytes == a2a->comm_bytes * etp);
	}
	const cs_layer_op *up = op_named(ops, n, "expert_up");
	ck_assert_ptr_nonnull(up);
	ck_assert_int_eq(up->batch, (int64_t)local);
	ck_assert_int_eq(up->m, (int64_t)(tl * 2.0 * etp / local));
	ck_assert_int_eq(up->n, (int64_t)(2.0 * 1408.0 / etp));
	double experts = 0.0, unfolded = 0.0;
	for (int i = 0; i < n; i++)
		if (strncmp(ops[i].name, "expert_", 7) == 0 && ops[i].cls == CS_OPC_GEMM)
			experts += ops[i].flops;
	ck_assert(rel(experts, 2.0 * tl * 2.0 * etp * 3.0 * h * 1408.0 / etp) < 1e-9);
	/* unfolded on tp = etp with the same ep: T tokens routed a rank */
	cs_layer_ctx u = ctx(4096, 1, c.etp, 1);
	u.sequence_parallel = true;
	u.flash_attention = true;
	u.ep = c.ep;
	cs_layer_op uops[MAXOPS];
	int un = cs_model_block_ops(&m, &u, true, CS_PASS_FWD, uops, MAXOPS);
	for (int i = 0; i < un; i++)
		if (strncmp(uops[i].name, "expert_", 7) == 0 && uops[i].cls == CS_OPC_GEMM)
			unfolded += uops[i].flops;
	ck_assert(rel(experts, unfolded * tl * etp / T) < 1e-9);
	/* the backward mirrors the forward's collectives */
	tally b = block(&m, &c, true, CS_PASS_BWD_INPUT);
	ck_assert_int_eq(b.colls[CS_COLL_ALL_TO_ALL][CS_COMM_EP], 3); /* tokens both ways, probabilities */
	ck_assert_int_eq(b.colls[CS_COLL_ALL_GATHER][CS_COMM_EP], c.etp > 1 ? 1 : 0);
	ck_assert_int_eq(b.colls[CS_COLL_REDUCE_SCATTER][CS_COMM_EP], c.etp > 1 ? 1 : 0);
}
END_TEST

/* The MoE layer's kernels as Megatron-Core launches them (model_block.c):
 * fx_moe on ep 8 (2 local experts), T = 4096 tokens, top-2, each case a
 * router fusion, a permute fusion and padding to capacity. The router
 * launches 15 kernels unfused and 3 fused each way, the permutation 10 or
 * 4, the unpermutation 7 or 1; each grouped GEMM one kernel per local
 * expert; the sort by local expert copies the 2 x T x 2 / 2 tokens it
 * receives, both ways. Dropless, the host waits before the unfused
 * permutation and unpermutation (their masked_selects) or, fused, before
 * the all-to-all; padded, nowhere. Under fp8 each grouped GEMM's input is
 * quantized per local expert. */
static const struct {
	bool router_fused, permute_fused, pad;
	int router, router_bwd, permute, unpermute, sort;
	const char *sync[2]; /* the ops the host waits before, forward */
} moe_kernel_cases[] = {
	{ false, false, false, 15, 10, 10, 7, 2, { "moe_permute", "moe_unpermute" } },
	{ true, false, false, 3, 3, 10, 7, 2, { "moe_permute", "moe_unpermute" } },
	{ false, true, false, 15, 10, 4, 1, 1, { "ep_dispatch", NULL } },
	{ true, true, true, 3, 3, 4, 1, 1, { NULL, NULL } },
	{ false, false, true, 15, 10, 10, 7, 2, { NULL, NULL } },
};

START_TEST(test_moe_layer_kernels_and_host_waits)
{
	cs_model_spec m = fx_moe();
	cs_layer_ctx c = ctx(4096, 1, 1, 1);
	c.ep = 8;
	c.flash_attention = true;
	c.precision = CS_PREC_FP8;
	c.moe_router_fusion = moe_kernel_cases[_i].router_fused;
	c.moe_permute_fusion = moe_kernel_cases[_i].permute_fused;
	if (moe_kernel_cases[_i].pad) {
		c.moe_capacity = 1.0;
		c.moe_pad = true;
	}
	double T = 4096.0, h = 2048.0, local = 2.0, recv = T * 2.0; /* top-2 copies, balanced */
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, true, CS_PASS_FWD, ops, MAXOPS);
	ck_assert_int_eq(op_named(ops, n, "moe_router")->kernels, moe_kernel_cases[_i].router);
	ck_assert_int_eq(op_named(ops, n, "moe_permute")->kernels, moe_kernel_cases[_i].permute);
	ck_assert_int_eq(op_named(ops, n, "moe_unpermute")->kernels, moe_kernel_cases[_i].unpermute);
	const cs_layer_op *sort = op_named(ops, n, "moe_sort_chunks");
	ck_assert_int_eq(sort->kernels, moe_kernel_cases[_i].sort);
	ck_assert(rel(sort->bytes, 2.0 * recv * h * 2.0) < 1e-12);
	ck_assert_int_eq(op_named(ops, n, "expert_up")->kernels, (int)local);
	ck_assert_int_eq(op_named(ops, n, "expert_down")->kernels, (int)local);
	cs_quant q = cs_quant_recipe(CS_PREC_FP8, 0);
	const cs_layer_op *cast = op_named(ops, n, "fp8_cast_expert_in");
	ck_assert_int_eq(cast->kernels, (int)local);
	ck_assert(rel(cast->bytes, q.cast * recv * h) < 1e-12);
	ck_assert(rel(op_named(ops, n, "fp8_cast_expert_act")->bytes, q.cast * recv * 1408.0) < 1e-12);
	int waits = 0;
	for (int i = 0; i < n; i++) {
		if (!ops[i].host_sync)
			continue;
		waits++;
		bool named = false;
		for (int s = 0; s < 2; s++)
			named |= moe_kernel_cases[_i].sync[s] && strcmp(ops[i].name, moe_kernel_cases[_i].sync[s]) == 0;
		ck_assert_msg(named, "the host waits before '%s'", ops[i].name);
	}
	ck_assert_int_eq(waits, (moe_kernel_cases[_i].sync[0] != NULL) + (moe_kernel_cases[_i].sync[1] != NULL));
	ck_assert_int_eq(op_named(ops, n, "ep_counts_ag") != NULL, !moe_kernel_cases[_i].pad);
	/* the backward waits for nothing: every size is known by then */
	n = cs_model_block_ops(&m, &c, true, CS_PASS_BWD_INPUT, ops, MAXOPS);
	ck_assert_int_eq(op_named(ops, n, "moe_router_bwd")->kernels, moe_kernel_cases[_i].router_bwd);
	ck_assert_int_eq(op_named(ops, n, "expert_down_dgrad")->kernels, (int)local);
	ck_assert(rel(op_named(ops, n, "fp8_cast_expert_act_grad")->bytes, q.cast * recv * 2.0 * 1408.0) < 1e-12);
	for (int i = 0; i < n; i++)
		ck_assert(!ops[i].host_sync);
	n = cs_model_block_ops(&m, &c, true, CS_PASS_BWD_WEIGHT, ops, MAXOPS);
	ck_assert_int_eq(op_named(ops, n, "expert_up_wgrad")->kernels, (int)local);
}
END_TEST

/* The busiest expert rank under a routing distribution
 * (cs_moe_busiest_rank). Balanced, or a single rank: 1. One expert a rank
 * under zipf: the most popular expert's share, E / H(E, s), wherever the
 * permutation put it, once the copies are many (4e9: noise below 1e-4).
 * Uniform: the counts are independent Poisson draws less their mean, so
 * the busiest of ep ranks of mean N / ep copies exceeds it by sqrt(N / ep)
 * times the expected maximum of ep standard normals (1.4236 for 8);
 * within a tenth, the 256 draws' own noise. Zipf of skew 0 is uniform,
 * draw for draw; the figure is the seed's. */
START_TEST(test_moe_busiest_rank_by_closed_form)
{
	ck_assert(cs_moe_busiest_rank(CS_ROUTE_BALANCED, 1.0, 64, 8, 1e6, 1) == 1.0);
	ck_assert(cs_moe_busiest_rank(CS_ROUTE_ZIPF, 1.0, 64, 1, 1e6, 1) == 1.0);
	double h = 0.0;
	for (int i = 1; i <= 16; i++)
		h += 1.0 / i;
	double z = cs_moe_busiest_rank(CS_ROUTE_ZIPF, 1.0, 16, 16, 4e9, 7);
	ck_assert_msg(fabs(z - 16.0 / h) < 1e-3, "zipf busiest x%.6f, want %.6f", z, 16.0 / h);
	double n = 8.0 * 8192.0 * 8.0, mean = n / 8.0;
	double u = cs_moe_busiest_rank(CS_ROUTE_UNIFORM, 1.0, 64, 8, n, 1);
	double want = 1.0 + sqrt(mean) * 1.4236 / mean;
	ck_assert_msg(fabs(u - want) < 0.1 * (want - 1.0), "uniform busiest x%.6f, want %.6f", u, want);
	ck_assert(cs_moe_busiest_rank(CS_ROUTE_ZIPF, 0.0, 64, 8, n, 1) == u);
	ck_assert(cs_moe_busiest_rank(CS_ROUTE_UNIFORM, 1.0, 64, 8, n, 1) == u);
	ck_assert(cs_moe_busiest_rank(CS_ROUTE_UNIFORM, 1.0, 64, 8, n, 2) != u);
	/* more skew, a busier rank */
	ck_assert(cs_moe_busiest_rank(CS_ROUTE_ZIPF, 1.2, 64, 8, n, 1) >
		  cs_moe_busiest_rank(CS_ROUTE_ZIPF, 0.6, 64, 8, n, 1));
}
END_TEST

/* ---- recompute, capacity, ends, optimizer -------------------------------- */

START_TEST(test_recompute_reruns_what_it_dropped)
{
	cs_model_spec m = fx_llama3_8b();
	cs_layer_ctx c = ctx(4096, 1, 8, 1);
	c.recompute = CS_RECOMPUTE_NONE;
	ck_assert_int_eq(cs_model_block_ops(&m, &c, false, CS_PASS_RECOMPUTE, NULL, 0), 0);
	c.recompute = CS_RECOMPUTE_FULL;
	tally r = block(&m, &c, false, CS_PASS_RECOMPUTE), f = block(&m, &c, false, CS_PASS_FWD);
	ck_assert_int_eq(r.n, f.n);
	ck_assert(r.flops == f.flops);
	ck_assert_int_eq(r.colls[CS_COLL_ALL_REDUCE][CS_COMM_TP], 2);
	c.recompute = CS_RECOMPUTE_SELECTIVE;
	r = block(&m, &c, false, CS_PASS_RECOMPUTE);
	ck_assert_int_eq(r.n, 3);   /* scores, softmax, context */
	ck_assert(rel(r.flops, 4.0 * 4096.0 * 4096.0 * 4096.0 / 8.0) < 1e-12);
}
END_TEST

/* Megatron-LM's modules and torchtitan's op policy re-run their forward
 * ops; the matmul FLOPs against the closed forms per token (GPT-3 175B's
 * layer: core_attn 4sh, mlp 16h^2, op 12h^2 for wk, wo and w2 with
 * materialised attention's 4sh, layernorm none), each equal to what
 * cs_model_recompute_flops_per_token says. */
START_TEST(test_recompute_modules_rerun_their_ops)
{
	cs_model_spec m = fx_gpt3_175b();
	double s = 2048, h = 12288, T = 2048;
	cs_layer_ctx c = ctx(2048, 1, 1, 1);
	c.recompute = CS_RECOMPUTE_SELECTIVE;
	c.flash_attention = false;
	static const struct {
		unsigned mods;
		double per_token; /* in units of h^2 and sh */
		double hh, sh;
	} cases[] = {
		{ CS_RCM_CORE_ATTN, 0, 0, 4 }, { CS_RCM_MLP, 0, 16, 0 },
		{ CS_RCM_LAYERNORM, 0, 0, 0 }, { CS_RCM_CORE_ATTN | CS_RCM_MLP | CS_RCM_LAYERNORM, 0, 16, 4 },
		{ CS_RCM_OP, 0, 12, 4 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		c.recompute_modules = cases[i].mods;
		tally r = block(&m, &c, false, CS_PASS_RECOMPUTE);
		double want = T * (cases[i].hh * h * h + cases[i].sh * s * h);
		ck_assert_msg(r.n > 0, "modules %#x ran nothing", cases[i].mods);
		ck_assert_msg(want == 0 ? r.flops == 0 : rel(r.flops, want) < 1e-12, "modules %#x: %g vs %g",
			      cases[i].mods, r.flops, want);
		double per = cs_model_recompute_flops_per_token(&m, false, 2048, CS_RECOMPUTE_SELECTIVE,
								cases[i].mods, false);
		ck_assert(want == 0 ? per == 0 : rel(per * T, want) < 1e-12);
	}
	/* mlp leaves an MoE layer alone; none and full as before */
	ck_assert(cs_model_recompute_flops_per_token(&m, true, 2048, CS_RECOMPUTE_SELECTIVE, CS_RCM_MLP, true) == 0);
	ck_assert(cs_model_recompute_flops_per_token(&m, false, 2048, CS_RECOMPUTE_NONE, CS_RCM_MLP, true) == 0);
	ck_assert(rel(cs_model_recompute_flops_per_token(&m, false, 2048, CS_RECOMPUTE_FULL, 0, true),
		      24 * h * h + 4 * s * h) < 1e-12);

	/* the dense MLP re-run with its TP reduction; under sequence
	 * parallelism its all-gather and reduce-scatter */
	c = ctx(2048, 1, 8, 1);
	c.recompute = CS_RECOMPUTE_SELECTIVE;
	c.recompute_modules = CS_RCM_MLP;
	tally r = block(&m, &c, false, CS_PASS_RECOMPUTE);
	ck_assert(rel(r.flops, T * 16 * h * h / 8) < 1e-12);
	ck_assert_int_eq(r.colls[CS_COLL_ALL_REDUCE][CS_COMM_TP], 1);
	c.sequence_parallel = true;
	r = block(&m, &c, false, CS_PASS_RECOMPUTE);
	ck_assert_int_eq(r.colls[CS_COLL_ALL_GATHER][CS_COMM_TP], 1);
	ck_assert_int_eq(r.colls[CS_COLL_REDUCE_SCATTER][CS_COMM_TP], 1);
}
END_TEST

/* An MoE layer: moe re-runs the layer's MLP side whole (router, experts,
 * its two all-to-alls), shared_experts the shared experts' three matmuls,
 * moe_act the experts' activation alone; mla_up_proj latent attention's
 * up projections, 2 (q_lora a (d + r) + kv_lora a (d + v)) per token. */
START_TEST(test_recompute_moe_and_latent_modules)
{
	cs_model_spec m = fx_deepseek_v3();
	double T = 4096, h = 7168, ef = 2048, a = 128;
	cs_layer_ctx c = ctx(4096, 1, 1, 1);
	c.ep = 8;
	c.flash_attention = true;
	c.recompute = CS_RECOMPUTE_SELECTIVE;
	c.recompute_modules = CS_RCM_MOE;
	tally r = block(&m, &c, true, CS_PASS_RECOMPUTE);
	ck_assert_int_eq(r.colls[CS_COLL_ALL_TO_ALL][CS_COMM_EP], 3); /* tokens both ways, probabilities */
	/* the router's and the shared expert's per token, the routed experts'
	 * on the busiest rank (T top_k tokens over 32 local experts, 32 of them) */
	double want = T * (2 * h * 256 + 2 * 3 * h * ef) + 2 * 3 * T * 8 * h * ef;
	ck_assert_msg(rel(r.flops, want) < 1e-12, "%g vs %g", r.flops, want);
	c.recompute_modules = CS_RCM_SHARED;
	r = block(&m, &c, true, CS_PASS_RECOMPUTE);
	ck_assert(rel(r.flops, T * 2 * 3 * h * ef) < 1e-12);
	ck_assert(rel(cs_model_recompute_flops_per_token(&m, true, 4096, CS_RECOMPUTE_SELECTIVE, CS_RCM_SHARED,
							 true),
		      2 * 3 * h * ef) < 1e-12);
	c.recompute_modules = CS_RCM_MOE_ACT;
	r = block(&m, &c, true, CS_PASS_RECOMPUTE);
	ck_assert_int_eq(r.n, 1);
	ck_assert(r.flops == 0);
	c.recompute_modules = CS_RCM_MLA_UP;
	r = block(&m, &c, false, CS_PASS_RECOMPUTE);
	double up = 2 * (1536 * a * (128 + 64) + 512 * a * (128 + 128));
	ck_assert_msg(rel(r.flops, T * up) < 1e-12, "%g vs %g", r.flops, T * up);
	ck_assert(rel(cs_model_recompute_flops_per_token(&m, false, 4096, CS_RECOMPUTE_SELECTIVE, CS_RCM_MLA_UP,
							 true),
		      up) < 1e-12);
}
END_TEST

/* Which layers the policies recompute: Megatron-LM's block method the
 * first N of each model chunk, uniform all; torchtitan's every k-th block
 * of a rank (counted from 1); the hardware FLOPs add those layers' whole
 * forward: GPT-3 175B on pp 8 (12 layers a stage) with block 3 or every 4th
 * recomputes 24 of its 96 layers. */
START_TEST(test_layer_policies_pick_their_layers)
{
	cs_model_spec m = fx_gpt3_175b();
	cs_parallel_spec p = fx_plan(1, 8, 1, CS_SHARD_NONE);
	p.recompute = CS_RECOMPUTE_FULL;
	p.recompute_method = CS_RECOMPUTE_BLOCK;
	p.recompute_layers = 3;
	ck_assert_int_eq(cs_model_layer_recompute(&p, 2, 2), CS_RECOMPUTE_FULL);
	ck_assert_int_eq(cs_model_layer_recompute(&p, 3, 3), CS_RECOMPUTE_NONE);
	double s = 2048, B = 8, h = 12288;
	double whole = 24 * h * h + 4 * s * h, base = cs_model_flops_per_step(&m, 2048, 8);
	ck_assert(rel(cs_model_hw_flops_per_step_p(&m, 2048, 8, &p), base + s * B * 24 * whole) < 1e-12);
	p.recompute = CS_RECOMPUTE_SELECTIVE;
	p.recompute_every = 4;
	ck_assert_int_eq(cs_model_layer_recompute(&p, 3, 3), CS_RECOMPUTE_FULL);
	ck_assert_int_eq(cs_model_layer_recompute(&p, 0, 4), CS_RECOMPUTE_NONE);
	ck_assert_int_eq(cs_model_layer_recompute(&p, 1, 7), CS_RECOMPUTE_FULL);
	ck_assert(rel(cs_model_hw_flops_per_step_p(&m, 2048, 8, &p), base + s * B * 24 * whole) < 1e-12);
	/* the defaults: the granularity alone, as cs_model_hw_flops_per_step */
	p = fx_plan(1, 8, 1, CS_SHARD_NONE);
	for (int rc = 0; rc < 3; rc++) {
		p.recompute = (cs_recompute)rc;
		p.recompute_layers = 1;
		ck_assert(cs_model_hw_flops_per_step_p(&m, 2048, 8, &p) ==
			  cs_model_hw_flops_per_step(&m, 2048, 8, (cs_recompute)rc));
		ck_assert_int_eq(cs_model_layer_recompute(&p, 5, 5), rc);
	}
	ck_assert_int_eq(cs_model_chunk_layers(&p, 96), 12);
}
END_TEST

START_TEST(test_cap_limits_writes_not_count)
{
	cs_model_spec m = fx_llama3_8b();
	cs_layer_ctx c = ctx(4096, 1, 8, 1);
	cs_layer_op ops[4];
	memset(ops, 0x5a, sizeof(ops));
	int total = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, NULL, 0);
	ck_assert_int_gt(total, 3);
	ck_assert_int_eq(cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, 3), total);
	ck_assert_str_eq(ops[0].name, "attn_norm");
	unsigned char *tail = (unsigned char *)&ops[3];
	for (size_t i = 0; i < sizeof(ops[3]); i++)
		ck_assert_int_eq(tail[i], 0x5a);
}
END_TEST

START_TEST(test_embed_and_head_vocab_parallel)
{
	cs_model_spec m = fx_llama3_8b();
	cs_layer_ctx c = ctx(8192, 1, 4, 1);
	cs_layer_op ops[16];
	tally t = count(ops, cs_model_embed_ops(&m, &c, CS_PASS_FWD, ops, 16));
	ck_assert_int_eq(t.colls[CS_COLL_ALL_REDUCE][CS_COMM_TP], 1);
	c.sequence_parallel = true;
	t = count(ops, cs_model_embed_ops(&m, &c, CS_PASS_FWD, ops, 16));
	ck_assert_int_eq(t.colls[CS_COLL_REDUCE_SCATTER][CS_COMM_TP], 1);
	ck_assert_int_eq(t.colls[CS_COLL_ALL_REDUCE][CS_COMM_TP], 0);
	t = count(ops, cs_model_head_ops(&m, &c, CS_PASS_FWD, ops, 16));
	ck_assert(rel(t.flops, 2.0 * 8192.0 * 4096.0 * 128256.0 / 4.0) < 1e-12);
	double w = count(ops, cs_model_head_ops(&m, &c, CS_PASS_BWD_WEIGHT, ops, 16)).flops;
	double i = count(ops, cs_model_head_ops(&m, &c, CS_PASS_BWD_INPUT, ops, 16)).flops;
	ck_assert(rel(w, t.flops) < 1e-12 && rel(i, t.flops) < 1e-12);
}
END_TEST

static const struct { cs_optimizer opt; cs_precision g; cs_state_dtype st; double bytes; } opt_cases[] = {
	{ CS_OPT_ADAM, CS_PREC_BF16, CS_STATE_FP32, 28.0 },       /* g 2, master 8, m 8, v 8, w 2 */
	{ CS_OPT_ADAM, CS_PREC_FP32, CS_STATE_FP32, 30.0 },
	{ CS_OPT_ADAM_8BIT, CS_PREC_BF16, CS_STATE_FP32, 16.0 },
	{ CS_OPT_SGD, CS_PREC_BF16, CS_STATE_FP32, 12.0 },
	{ CS_OPT_SGD_MOMENTUM, CS_PREC_BF16, CS_STATE_FP32, 20.0 },
	{ CS_OPT_LAMB, CS_PREC_BF16, CS_STATE_FP32, 44.0 },       /* Adam's 28, u written 4 and read 8, master 4 */
	{ CS_OPT_ADAFACTOR, CS_PREC_BF16, CS_STATE_FP32, 14.0 },  /* g read twice 4, master 8, w 2 */
	{ CS_OPT_ADAM, CS_PREC_BF16, CS_STATE_BF16, 16.0 },       /* g 2, master 4, m 4, v 4, w 2 */
	{ CS_OPT_SGD_MOMENTUM, CS_PREC_BF16, CS_STATE_BF16, 12.0 },/* g 2, master 4, momentum 4, w 2 */
};

START_TEST(test_optimizer_op_bytes_per_param)
{
	cs_layer_op op = cs_model_optimizer_op(1000, opt_cases[_i].opt, opt_cases[_i].g, opt_cases[_i].st,
					       CS_FW_MEGATRON);
	ck_assert_int_eq(op.cls, CS_OPC_MEMBOUND);
	ck_assert(fabs(op.bytes - 1000.0 * opt_cases[_i].bytes) < 1e-9);
}
END_TEST

/* A separate accumulation kernel touches every local weight gradient of the
 * block once: the GEMM's 16-bit output read, the accumulator read and
 * written (Llama 3's fp32: 10 bytes per element); fused, there is none. */
static const struct { int64_t tp; cs_precision g; double per_elem; } accum_cases[] = {
	{ 1, CS_PREC_FP32, 10.0 }, { 4, CS_PREC_FP32, 10.0 }, { 8, CS_PREC_BF16, 6.0 },
};

static double accum_bytes(const cs_layer_op *ops, int n)
{
	double b = -1.0;
	for (int i = 0; i < n; i++)
		if (strcmp(ops[i].name, "grad_accum") == 0) {
			ck_assert_int_eq(ops[i].cls, CS_OPC_MEMBOUND);
			ck_assert(b < 0.0);  /* one kernel per pass */
			b = ops[i].bytes;
		}
	return b;
}

START_TEST(test_separate_grad_accumulation_reads_and_writes_each_weight_grad)
{
	cs_model_spec m = fx_llama3_8b();
	double h = 4096, kv = 1024, ffn = 14336, V = 128256, tp = (double)accum_cases[_i].tp;
	cs_layer_ctx c = ctx(8192, 1, accum_cases[_i].tp, 1);
	cs_layer_op ops[MAXOPS];
	ck_assert(accum_bytes(ops, cs_model_block_ops(&m, &c, false, CS_PASS_BWD_WEIGHT, ops,
						      MAXOPS)) < 0.0);
	c.grad_accum_bytes = cs_model_grad_accum_bytes(CS_PREC_BF16, accum_cases[_i].g);
	ck_assert(rel(c.grad_accum_bytes, accum_cases[_i].per_elem) < 1e-12);
	/* Q, O: h x h; K, V: h x kv; gate, up, down: h x ffn; all divided by tp */
	double block = (2.0 * h * h + 2.0 * h * kv + 3.0 * h * ffn) / tp;
	double got = accum_bytes(ops, cs_model_block_ops(&m, &c, false, CS_PASS_BWD_WEIGHT, ops,
							 MAXOPS));
	ck_assert_msg(rel(got, block * accum_cases[_i].per_elem) < 1e-12, "block: %.6g bytes, "
		      "want %.6g", got, block * accum_cases[_i].per_elem);
	got = accum_bytes(ops, cs_model_head_ops(&m, &c, CS_PASS_BWD_WEIGHT, ops, MAXOPS));
	ck_assert(rel(got, h * V / tp * accum_cases[_i].per_elem) < 1e-12);
	/* forward and input-gradient passes accumulate nothing */
	ck_assert(accum_bytes(ops, cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops,
						      MAXOPS)) < 0.0);
	ck_assert(accum_bytes(ops, cs_model_block_ops(&m, &c, false, CS_PASS_BWD_INPUT, ops,
						      MAXOPS)) < 0.0);
}
END_TEST

/*
 * The element-wise kernels of one Llama block's forward, per framework,
 * against a hand count. n = T*h, q = T*(h + kv) (the q and k that RoPE
 * touches), f = T*ffn, W the block's weights. Megatron (fused, 16-bit):
 * two norms 2n*2 each, RoPE 2q*2, two residual adds 3n*2 each, SwiGLU
 * 3f*2 = 20n + 4q + 6f. Eager PyTorch (fp32 residual stream, fp32
 * weights): two fp32 norms 8n and their casts 6n, RoPE's mul, neg, cat,
 * mul (6q + 2q + 4q + 6q) and fp32 add 12q, the cast of q and k 6q, two
 * mixed residual adds 10n, SwiGLU 6f, and every weight cast to bf16 (6
 * bytes each) = 48n + 36q + 6f + 6W. FSDP (16-bit, unfused): norms 4n,
 * RoPE (4q + 2q + 4q + 4q) + 6q, residual adds 6n, SwiGLU 6f = 20n + 20q +
 * 6f. The GEMMs' FLOPs are 2*T*W in all three.
 */
static const struct { cs_framework fw; double n, q, f, w; } fw_cases[] = {
	{ CS_FW_MEGATRON, 20.0, 4.0, 6.0, 0.0 },
	{ CS_FW_PYTORCH, 48.0, 36.0, 6.0, 6.0 },
	{ CS_FW_FSDP, 20.0, 20.0, 6.0, 0.0 },
};

START_TEST(test_framework_block_kernels_match_hand_count)
{
	cs_model_spec m = fx_llama("small", 2, 256, 4, 2, 512, 1000);
	double T = 64, h = 256, kv = 128, ffn = 512;
	cs_layer_ctx c = ctx(64, 1, 1, 1);
	c.flash_attention = true;
	c.framework = fw_cases[_i].fw;
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, false, CS_PASS_FWD, ops, MAXOPS);
	double mem = 0.0, gemm = 0.0;
	for (int i = 0; i < n; i++) {
		if (ops[i].cls == CS_OPC_MEMBOUND)
			mem += ops[i].bytes;
		else if (ops[i].cls == CS_OPC_GEMM)
			gemm += ops[i].flops;
	}
	double W = h * (h + 2.0 * kv) + h * h + 3.0 * h * ffn;
	double want = fw_cases[_i].n * T * h + fw_cases[_i].q * T * (h + kv) + fw_cases[_i].f * T * ffn +
		      fw_cases[_i].w * W;
	ck_assert_msg(rel(mem, want) < 1e-12, "element-wise bytes %.6g, want %.6g", mem, want);
	ck_assert(rel(gemm, 2.0 * T * W) < 1e-12);
}
END_TEST

/* Eager PyTorch casts each 16-bit weight gradient to fp32 (an unrolled
 * mixed-precision kernel, charged the measured fp32 += bf16 kernel's 10
 * bytes per element) and adds it into .grad on every micro-batch but the
 * first (12 bytes), charged as (M - 1) / M per micro-batch; the GEMMs write
 * the gradients in TN layout. */
START_TEST(test_eager_weight_gradients_cast_and_accumulate)
{
	cs_model_spec m = fx_llama("small", 2, 256, 4, 2, 512, 1000);
	double h = 256, kv = 128, ffn = 512;
	cs_layer_ctx c = ctx(64, 1, 1, 1);
	c.framework = CS_FW_PYTORCH;
	c.micro_batches = 4;
	cs_layer_op ops[MAXOPS];
	int n = cs_model_block_ops(&m, &c, false, CS_PASS_BWD_WEIGHT, ops, MAXOPS);
	double casts = 0.0, accum = 0.0;
	for (int i = 0; i < n; i++) {
		if (ops[i].cls == CS_OPC_GEMM)
			ck_assert_int_eq(ops[i].layout, CS_GEMM_TN);
		else if (strcmp(ops[i].name, "grad_accum") == 0)
			accum += ops[i].bytes;
		else
			casts += ops[i].bytes;
	}
	double W = h * (h + 2.0 * kv) + h * h + 3.0 * h * ffn;
	ck_assert(rel(casts, 10.0 * W) < 1e-12);
	ck_assert(rel(accum, 12.0 * W * 3.0 / 4.0) < 1e-12);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("param_counts");
	tcase_add_loop_test(tc, test_params_match_published_sizes, 0, N(param_cases));
	tcase_add_test(tc, test_params_llama_closed_form);
	tcase_add_test(tc, test_params_gpt3_counts_biases_and_positions);
	tcase_add_test(tc, test_params_moe_total_and_active);
	tcase_add_test(tc, test_params_deepseek_v3_latent_attention_by_hand);
	tcase_add_test(tc, test_params_mixtral_by_hand);
	tcase_add_test(tc, test_params_qwen3_moe_by_hand);
	suite_add_tcase(s, tc);
	tc = tcase_create("model_flops");
	tcase_add_loop_test(tc, test_flops_equal_megatron_formula, 0, N(flop_cases));
	tcase_add_loop_test(tc, test_hw_flops_full_recompute_equal_megatron_hfu, 0, N(flop_cases));
	tcase_add_loop_test(tc, test_causal_flops_halve_the_attention_square, 0, N(flop_cases));
	tcase_add_test(tc, test_sliding_window_keeps_its_share_of_the_square);
	tcase_add_loop_test(tc, test_parallel_block_halves_the_tp_collectives, 0, N(tp_cases));
	tcase_add_test(tc, test_head_dim_sets_the_attention_width);
	tcase_add_test(tc, test_positions_and_embedding_norm_by_hand);
	tcase_add_test(tc, test_relu_moves_what_gelu_moves);
	tcase_add_test(tc, test_fp8_recipe_casts_by_hand);
	tcase_add_test(tc, test_compile_fuses_the_chains_between_gemms);
	tcase_add_loop_test(tc, test_recipes_cast_by_hand, 0, sizeof recipe_cases / sizeof recipe_cases[0]);
	tcase_add_test(tc, test_flops_llama_gqa_swiglu_closed_form);
	tcase_add_test(tc, test_flops_latent_attention_closed_form);
	suite_add_tcase(s, tc);
	tc = tcase_create("op_flops");
	tcase_add_loop_test(tc, test_fwd_ops_sum_to_model_flops, 0, N(split_cases));
	tcase_add_loop_test(tc, test_bwd_is_twice_fwd, 0, N(split_cases));
	tcase_add_loop_test(tc, test_latent_attention_ops_sum_to_model_flops, 0, N(split_cases));
	suite_add_tcase(s, tc);
	tc = tcase_create("comm_points");
	tcase_add_loop_test(tc, test_tp_comm_points_per_block, 0, N(tp_cases));
	tcase_add_loop_test(tc, test_latent_attention_tp_comm_points, 0, N(tp_cases));
	tcase_add_test(tc, test_fp8_dispatch_halves_the_sends_to_the_experts);
	tcase_add_test(tc, test_capacity_caps_and_pads_the_experts);
	tcase_add_test(tc, test_moe_busiest_rank_by_closed_form);
	tcase_add_loop_test(tc, test_moe_layer_kernels_and_host_waits, 0,
			    (int)(sizeof moe_kernel_cases / sizeof moe_kernel_cases[0]));
	tcase_add_test(tc, test_cp_ring_interleaves_send_recv_with_blocks);
	tcase_add_loop_test(tc, test_moe_all_to_all_and_imbalance, 0, N(imbalance_cases));
	tcase_add_loop_test(tc, test_moe_folded_experts_by_closed_form, 0, sizeof fold_cases / sizeof fold_cases[0]);
	suite_add_tcase(s, tc);
	tc = tcase_create("op_lists");
	tcase_add_test(tc, test_recompute_reruns_what_it_dropped);
	tcase_add_test(tc, test_recompute_modules_rerun_their_ops);
	tcase_add_test(tc, test_recompute_moe_and_latent_modules);
	tcase_add_test(tc, test_layer_policies_pick_their_layers);
	tcase_add_test(tc, test_cap_limits_writes_not_count);
	tcase_add_test(tc, test_embed_and_head_vocab_parallel);
	tcase_add_loop_test(tc, test_optimizer_op_bytes_per_param, 0, N(opt_cases));
	tcase_add_loop_test(tc, test_separate_grad_accumulation_reads_and_writes_each_weight_grad, 0,
			    N(accum_cases));
	suite_add_tcase(s, tc);
	tc = tcase_create("frameworks");
	tcase_add_loop_test(tc, test_framework_block_kernels_match_hand_count, 0, N(fw_cases));
	tcase_add_test(tc, test_eager_weight_gradients_cast_and_accumulate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(model_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
