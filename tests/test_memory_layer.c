/*
 * test_memory_layer.c - what one layer saves for backward at the model's
 * own widths (GQA, the MLP's width and gating, dropout, fp8 copies), the
 * optimizer state's dtype, and two configurations that ran: Nemotron-4 340B
 * on 128 H100s and Llama 3 405B at 8K on 8,192. Closed forms in sbh bytes
 * (docs/memory-model.md).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/memory.h"
#include "model/model.h"
#include "model_fixtures.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- activations for the model's own widths ----------------------------- */

static cs_mem_layer_shape shape(int64_t s, int64_t h, int64_t a, int64_t kv, int64_t ffn, bool gated)
{
	int64_t dh = h / a;
	cs_mem_layer_shape d = { .s = s, .b = 1, .h = h, .heads = a, .q_dim = a * dh,
				 .kv_dim = kv * dh, .ffn = ffn, .gated = gated };
	return d;
}

static bool near(double got, double want)
{
	return fabs(got - want) <= 1e-12 * want;
}

/* Llama 3 405B at 8K, TP 8 with SP, flash, no dropout: norms 4, QKV and fc1
 * inputs 4, Q 2, K and V 2 x 2 x 8/128, O 2, gate and up 4 x 3.25, SwiGLU
 * output 2 x 3.25: 31.75 sbh/t, not the 4h GELU layer's 34. */
START_TEST(test_gqa_and_gated_mlp_saved_at_their_widths)
{
	cs_mem_layer_shape d = shape(8192, 16384, 128, 8, 53248, true);
	double sbh = 8192.0 * 16384;
	ck_assert(near(cs_mem_layer_bytes(&d, 8, true, CS_RECOMPUTE_NONE, true), sbh * 31.75 / 8));
	cs_model_spec m = fx_llama3_405b();
	cs_training_spec t = fx_train(8192, 1);
	cs_parallel_spec p = fx_plan(8, 16, 64, CS_SHARD_GRAD_OP);
	p.sequence_parallel = true;
	ck_assert(near(cs_mem_layer_activation_bytes(&m, &t, &p), sbh * 31.75 / 8));
	/* the paper's layer is the special case q = kv = h, ffn = 4h, dropout */
	cs_mem_layer_shape k = shape(4096, 4096, 32, 32, 4 * 4096, false);
	k.dropout = true;
	ck_assert(cs_mem_layer_bytes(&k, 4, false, CS_RECOMPUTE_NONE, false) ==
		  cs_mem_activation_bytes_per_layer(4096, 1, 4096, 32, 4, false, CS_RECOMPUTE_NONE, false));
}
END_TEST

/* DeepSeek-V3's dense layer at 4K, TP 8 with SP, flash: norms 4 and the
 * down projections' and fc1's inputs 4 as any layer (sharded); each latent
 * (1536 + 512) before its norm and after it 2 + 2, sharded as the norms'
 * input; Q and K at 128 heads of 192 2 + 2, V and O at 128 heads of 128
 * 2 + 2; gate, up and the SwiGLU output 6 x ffn. In units of s*b*h/t:
 * (57344 + 8192 + 274432) / 7168. */
START_TEST(test_latent_attention_saves_its_latents_and_wide_heads)
{
	cs_model_spec m = fx_deepseek_v3();
	m.experts = m.top_k = m.shared_experts = 0; /* its dense layers alone */
	cs_training_spec t = fx_train(4096, 1);
	cs_parallel_spec p = fx_plan(8, 16, 16, CS_SHARD_GRAD_OP);
	p.sequence_parallel = true;
	double sbh = 4096.0 * 7168;
	double outside = 4.0 * 7168 + 2.0 * 2 * 7168, lat = 4.0 * (1536 + 512);
	double inside = 2.0 * 24576 + 2.0 * 24576 + 2.0 * 16384 + 2.0 * 16384 + 6.0 * 18432;
	ck_assert_double_eq(outside + lat + inside, 339968.0);
	ck_assert(near(cs_mem_layer_activation_bytes(&m, &t, &p), sbh * (outside + lat + inside) / 7168 / 8));
	/* without sequence parallelism the latents, like the norms' inputs, are
	 * whole on every rank */
	p.sequence_parallel = false;
	ck_assert(near(cs_mem_layer_activation_bytes(&m, &t, &p),
		       sbh * ((outside + lat) / 7168 + inside / 7168 / 8)));
}
END_TEST

/* DeepSeek-V3's MoE layer at 4K, no TP, flash: besides attention and the
 * latents, each of a token's 8 routed copies and its shared expert save a
 * gated MLP's 6 x 2048 bytes a token's h; each copy as dispatched (2) and
 * as its expert returned it (2); the router's fp32 probabilities, 4 x 256;
 * in units of s*b*h: (57344 + 8192 + 163840 + 110592 + 32 x 7168 + 1024) /
 * 7168. The layer figure is the mean over 3 dense and 58 MoE layers. */
START_TEST(test_moe_layer_saves_each_token_copy)
{
	cs_model_spec m = fx_deepseek_v3();
	cs_training_spec t = fx_train(4096, 1);
	cs_parallel_spec p = fx_plan(1, 16, 128, CS_SHARD_ZERO1);
	double sbh = 4096.0 * 7168;
	double attn = 4.0 * 7168 + 2.0 * 2 * 7168 + 4.0 * (1536 + 512) + 2.0 * 24576 + 2.0 * 24576 +
		      2.0 * 16384 + 2.0 * 16384;
	double dense = attn + 6.0 * 18432, moe = attn + 6.0 * 9 * 2048 + 32.0 * 7168 + 4.0 * 256;
	double want = sbh * (3 * dense + 58 * moe) / 61 / 7168;
	ck_assert_msg(near(cs_mem_layer_activation_bytes(&m, &t, &p), want), "%g vs %g",
		      cs_mem_layer_activation_bytes(&m, &t, &p), want);
	/* padded to a capacity of 1.5, each expert holds 1.5 times its copies:
	 * 12 of them; a capacity without padding keeps the 8 */
	p.moe_capacity = 1.5;
	ck_assert(near(cs_mem_layer_activation_bytes(&m, &t, &p), want));
	p.moe_pad = true;
	moe = attn + 6.0 * 13 * 2048 + 48.0 * 7168 + 4.0 * 256;
	want = sbh * (3 * dense + 58 * moe) / 61 / 7168;
	ck_assert(near(cs_mem_layer_activation_bytes(&m, &t, &p), want));
}
END_TEST

/* Dropout keeps two 1-byte masks (sbh each, in the region sequence
 * parallelism shards) and, with the scores materialised, the softmax's mask
 * and output (3as^2 of its 5as^2). */
START_TEST(test_dropout_masks_only_with_dropout)
{
	cs_mem_layer_shape off = shape(4096, 8192, 64, 8, 28672, true), on = off;
	on.dropout = true;
	double sbh = 4096.0 * 8192, scores3 = 3.0 * 64 * 4096 / 8192;
	struct { int64_t tp; bool sp; cs_recompute rc; bool flash; double diff; } v[] = {
		{ 8, true, CS_RECOMPUTE_SELECTIVE, false, sbh * 2 / 8 },
		{ 8, false, CS_RECOMPUTE_SELECTIVE, false, sbh * 2 },
		{ 1, false, CS_RECOMPUTE_NONE, true, sbh * 2 },
		{ 8, true, CS_RECOMPUTE_NONE, false, sbh * (2 + scores3) / 8 },
		{ 8, true, CS_RECOMPUTE_FULL, false, 0 },
	};
	for (int i = 0; i < N(v); i++) {
		double d = cs_mem_layer_bytes(&on, v[i].tp, v[i].sp, v[i].rc, v[i].flash) -
			   cs_mem_layer_bytes(&off, v[i].tp, v[i].sp, v[i].rc, v[i].flash);
		ck_assert_msg(fabs(d - v[i].diff) <= 1e-9 * sbh, "case %d: %g vs %g", i, d, v[i].diff);
	}
}
END_TEST

/* Nemotron-4 340B (h 18432, 96 heads, 8 KV, squared-ReLU MLP of 4h), TP 8 +
 * SP, selective recompute, no dropout. 16 bits: 4 + 4 + Q 2 + K V 1/3 + O 2
 * + 8 + 8 = 28 1/3 sbh/t. fp8 saves the four GEMM inputs as 1-byte copies:
 * 4 + 2 + 2 + 1/3 + 1 + 8 + 4 = 21 1/3; flash without recompute keeps its
 * 16-bit O beside O's copy: 23 1/3. */
START_TEST(test_fp8_saves_gemm_inputs_in_one_byte)
{
	cs_mem_layer_shape d = shape(4096, 18432, 96, 8, 73728, false);
	double sbh = 4096.0 * 18432;
	ck_assert(near(cs_mem_layer_bytes(&d, 8, true, CS_RECOMPUTE_SELECTIVE, true), sbh * (85.0 / 3) / 8));
	ck_assert(near(cs_mem_layer_bytes(&d, 8, true, CS_RECOMPUTE_NONE, true), sbh * (85.0 / 3) / 8));
	d.fp8 = true;
	ck_assert(near(cs_mem_layer_bytes(&d, 8, true, CS_RECOMPUTE_SELECTIVE, true), sbh * (64.0 / 3) / 8));
	ck_assert(near(cs_mem_layer_bytes(&d, 8, true, CS_RECOMPUTE_NONE, true), sbh * (70.0 / 3) / 8));
	ck_assert(cs_mem_layer_bytes(&d, 8, true, CS_RECOMPUTE_FULL, true) == 2 * sbh);
}
END_TEST

/* The block-scaled recipes save the same four inputs with their scales:
 * the layer above is 14 1/3 + 7 gi sbh/t for a saved input of gi bytes,
 * MXFP8's 33/32 and NVFP4's 9/16. */
START_TEST(test_block_scaled_recipes_save_their_scales)
{
	cs_mem_layer_shape d = shape(4096, 18432, 96, 8, 73728, false);
	double sbh = 4096.0 * 18432;
	static const double gi[] = { 33.0 / 32, 9.0 / 16 };
	d.fp8 = true;
	for (int i = 0; i < 2; i++) {
		d.quant = gi[i];
		ck_assert(near(cs_mem_layer_bytes(&d, 8, true, CS_RECOMPUTE_SELECTIVE, true),
			       sbh * (43.0 / 3 + 7 * gi[i]) / 8));
	}
}
END_TEST

/* A bf16 optimizer state (Apex DistributedFusedAdam with dtype bf16): the
 * master copy and each moment in 2 bytes. Adam: 2 + 2 + 2 + 4 = 10; with
 * fp32 weights the weights are the master: 4 + 4 + 4 = 12; SGD with
 * momentum 2 + 2 + 2 + 2 = 8; 8-bit Adam keeps its 2. */
START_TEST(test_bf16_optimizer_state)
{
	double w, g, ma, mo;
	ck_assert(cs_mem_bytes_per_param(CS_PREC_BF16, CS_PREC_BF16, CS_OPT_ADAM, CS_STATE_BF16,
					 &w, &g, &ma, &mo) == 10.0);
	ck_assert(w == 2.0 && g == 2.0 && ma == 2.0 && mo == 4.0);
	ck_assert(cs_mem_bytes_per_param(CS_PREC_FP32, CS_PREC_FP32, CS_OPT_ADAM, CS_STATE_BF16,
					 NULL, NULL, NULL, NULL) == 12.0);
	ck_assert(cs_mem_bytes_per_param(CS_PREC_BF16, CS_PREC_BF16, CS_OPT_SGD_MOMENTUM, CS_STATE_BF16,
					 NULL, NULL, NULL, NULL) == 8.0);
	ck_assert(cs_mem_bytes_per_param(CS_PREC_BF16, CS_PREC_BF16, CS_OPT_ADAM_8BIT, CS_STATE_BF16,
					 NULL, NULL, &ma, &mo) == 8.0);
	ck_assert(ma == 2.0 && mo == 2.0);
}
END_TEST

/* a tp x pp x dp plan with sequence parallelism and v virtual stages */
static cs_parallel_spec interleaved_sp(int64_t tp, int64_t pp, int64_t dp, cs_sharding sh, int64_t v)
{
	cs_parallel_spec p = fx_plan(tp, pp, dp, sh);
	p.sequence_parallel = true;
	p.schedule = CS_SCHED_INTERLEAVED;
	p.virtual_stages = v;
	return p;
}

/* Nemotron-4 340B on 128 GPUs (TP 8, PP 8, VP 12, DP 2, 16 micro-batches;
 * Apex DistributedFusedAdam with a bf16 state): per GPU P/64 parameters
 * with 2 + 2 + (2 + 2 + 2)/2 bytes each, and 103 one-layer chunks in flight
 * on the first stage, each 28 1/3 sbh/8 (16-bit) or 21 1/3 sbh/8 (fp8). */
START_TEST(test_nemotron4_340b_128_gpus)
{
	cs_model_spec m = fx_llama("nemotron4-340b", 96, 18432, 96, 8, 73728, 256000);
	m.arch = CS_ARCH_GPT;
	cs_training_spec t = fx_train(4096, 1);
	t.global_batch = 32;
	t.optimizer_dtype = CS_STATE_BF16;
	cs_parallel_spec p = interleaved_sp(8, 8, 2, CS_SHARD_ZERO1, 12);
	p.recompute = CS_RECOMPUTE_SELECTIVE;
	cs_gpu_spec g = fx_h100();
	cs_mem_breakdown r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	double P = (double)cs_model_params(&m).total / 64.0, sbh = 4096.0 * 18432;
	ck_assert(near(r.weights, 2 * P) && near(r.grads, 2 * P) && near(r.optimizer, 3 * P));
	ck_assert(near(r.layers_in_flight, 103));
	ck_assert(near(r.activations, 103 * sbh * (85.0 / 3) / 8));
	ck_assert(r.fits);
	t.precision = CS_PREC_FP8;
	r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	ck_assert(near(r.activations, 103 * sbh * (64.0 / 3) / 8));
	/* with the usual fp32 state the optimizer is 6P: 80.8 GB, over the
	 * datasheet's 80e9 B but inside the 85.5e9 the driver reports */
	t.precision = CS_PREC_BF16;
	t.optimizer_dtype = CS_STATE_FP32;
	r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	ck_assert(near(r.optimizer, 6 * P));
	ck_assert(r.total > 80e9 && r.fits);
}
END_TEST

/* Llama 3 405B at 8K on 8,192 H100s (the Llama 3 paper's Table 4: TP 8, PP
 * 16 with 8 virtual stages, DP 64 of FSDP without resharding after forward,
 * fp32 gradients, 32 micro-batches of one sequence), item by item: P/128
 * parameters per GPU with their bf16 weights whole (2), the fp32 gradients
 * (4) and the fp32 master and moments (12) over the 64 DP ranks; rank 0's
 * 2(16 - 1) + 7 x 16 + 1 = 143 chunk forwards of 126/128 layers each, at
 * 31.75 sbh/8 per layer. 82.1 GB: over the datasheet's 80e9 B, inside the
 * 81,559 MiB (85.5e9 B) an H100 has. */
START_TEST(test_llama3_405b_8k_fits_an_h100)
{
	cs_model_spec m = fx_llama3_405b();
	cs_training_spec t = fx_train(8192, 1);
	t.global_batch = 2048;
	t.grad_dtype = CS_PREC_FP32;
	cs_parallel_spec p = interleaved_sp(8, 16, 64, CS_SHARD_GRAD_OP, 8);
	cs_gpu_spec g = fx_h100();
	cs_mem_breakdown r = cs_mem_per_gpu(&m, &t, &p, &g, 8);
	double P = (double)cs_model_params(&m).total / 128.0, sbh = 8192.0 * 16384;
	ck_assert(near(r.weights, 2 * P));
	ck_assert(near(r.grads, 4 * P / 64));
	ck_assert(near(r.optimizer, 12 * P / 64));
	ck_assert(near(r.layers_in_flight, 126.0 / 16 * 143 / 8));
	ck_assert(near(r.activations, 126.0 / 16 * 143 / 8 * 31.75 * sbh / 8));
	ck_assert(near(r.total, r.weights + r.grads + r.optimizer + r.activations));
	ck_assert(r.capacity == 81559 * 1048576.0);
	ck_assert(r.total > 80e9 && r.fits);
}
END_TEST

/* ---- recomputation as the frameworks configure it ------------------------ */

/* The paper's layer (4096 wide, 32 heads, GELU 4h, dropout, 16 bits, the
 * scores materialised: 5as/h = 160), t = 1, in sbh: none 34 + 160,
 * core_attn 34 (Korthikanti et al.'s selective), layernorm drops the two
 * norm outputs (4), mlp fc1's output and the activation's (16), all three
 * 14, full 2; torchtitan's op policy keeps the input, Q, V, O with its
 * fp32 log-sum-exp and w1's output: 2 + 2 + 2 + 2 + 4a/h + 8. With t = 4,
 * no sequence parallelism, core_attn + layernorm + mlp: 6 + 8/4. */
START_TEST(test_recompute_modules_drop_their_tensors)
{
	cs_mem_layer_shape d = shape(4096, 4096, 32, 32, 4 * 4096, false);
	d.dropout = true;
	double sbh = 4096.0 * 4096;
	static const struct {
		cs_recompute rc;
		unsigned mods;
		double want;
	} cases[] = {
		{ CS_RECOMPUTE_NONE, CS_RCM_MLP, 34 + 160 },
		{ CS_RECOMPUTE_SELECTIVE, CS_RCM_CORE_ATTN, 34 },
		{ CS_RECOMPUTE_SELECTIVE, 0, 34 },
		{ CS_RECOMPUTE_SELECTIVE, CS_RCM_LAYERNORM, 30 + 160 },
		{ CS_RECOMPUTE_SELECTIVE, CS_RCM_MLP, 18 + 160 },
		{ CS_RECOMPUTE_SELECTIVE, CS_RCM_CORE_ATTN | CS_RCM_LAYERNORM | CS_RCM_MLP, 14 },
		{ CS_RECOMPUTE_FULL, CS_RCM_MLP, 2 },
		{ CS_RECOMPUTE_SELECTIVE, CS_RCM_OP, 16 + 4.0 * 32 / 4096 },
	};
	for (int i = 0; i < N(cases); i++) {
		double got = cs_mem_layer_bytes_modules(&d, 1, false, cases[i].rc, cases[i].mods, false);
		ck_assert_msg(near(got, sbh * cases[i].want), "case %d: %g vs %g", i, got / sbh, cases[i].want);
	}
	ck_assert(near(cs_mem_layer_bytes_modules(&d, 4, false, CS_RECOMPUTE_SELECTIVE,
						  CS_RCM_CORE_ATTN | CS_RCM_LAYERNORM | CS_RCM_MLP, false),
		       sbh * (6 + 8.0 / 4)));
	/* the default module is the old selective, exactly */
	ck_assert(cs_mem_layer_bytes_modules(&d, 4, true, CS_RECOMPUTE_SELECTIVE, CS_RCM_CORE_ATTN, true) ==
		  cs_mem_layer_bytes(&d, 4, true, CS_RECOMPUTE_SELECTIVE, true));
	/* gated, with sequence parallelism at t = 8: the op policy's w2 output
	 * is a partial sum on every rank (2, whole), the reduce-scatters' 2 + 2
	 * sharded with the input's 2: (6)/8 + (2 + 2 + 2 + 4a/h + 2f)/8 + 2 */
	cs_mem_layer_shape g = shape(4096, 4096, 32, 8, 14336, true);
	double f = 14336.0 / 4096;
	double op = 6.0 / 8 + (2 + 2 * 0.25 + 2 + 4.0 * 32 / 4096 + 2 * f) / 8 + 2;
	ck_assert(near(cs_mem_layer_bytes_modules(&g, 8, true, CS_RECOMPUTE_SELECTIVE, CS_RCM_OP, true), sbh * op));
}
END_TEST

/* DeepSeek-V3's MoE layer at 4K without TP (flash, no dropout): moe_act
 * drops the routed copies' activation outputs, 2 x 8 x 2048/h;
 * shared_experts the shared expert's inside, 6 x 2048/h; moe the token
 * copies, probabilities and every expert, 2 x 8 + 2 x 8 + 4 x 256/h +
 * 6 x 9 x 2048/h; mla_up_proj Q, K and V, 2 (24576 + 24576 + 16384)/h. */
START_TEST(test_recompute_moe_and_latent_modules_drop_theirs)
{
	double h = 7168, sbh = 4096.0 * h;
	cs_mem_layer_shape d = { .s = 4096, .b = 1, .h = 7168, .heads = 128, .q_dim = 24576, .kv_dim = 24576,
				 .v_dim = 16384, .o_dim = 16384, .latent = 2048, .ffn = 18432, .gated = true,
				 .experts = 256, .top_k = 8, .expert_ffn = 2048, .shared = 1 };
	double none = cs_mem_layer_bytes_modules(&d, 1, false, CS_RECOMPUTE_NONE, 0, true);
	static const struct {
		unsigned mods;
		double drop;
	} cases[] = {
		{ CS_RCM_MOE_ACT, 2.0 * 8 * 2048 },
		{ CS_RCM_SHARED, 6.0 * 2048 },
		{ CS_RCM_MOE, 16 * 7168 + 16 * 7168 + 4.0 * 256 + 6.0 * 9 * 2048 },
		{ CS_RCM_MLA_UP, 2.0 * (24576 + 24576 + 16384) },
		{ CS_RCM_MOE | CS_RCM_MOE_ACT | CS_RCM_SHARED, 16 * 7168 + 16 * 7168 + 4.0 * 256 + 6.0 * 9 * 2048 },
	};
	for (int i = 0; i < N(cases); i++) {
		double got = cs_mem_layer_bytes_modules(&d, 1, false, CS_RECOMPUTE_SELECTIVE, cases[i].mods, true);
		ck_assert_msg(near(none - got, sbh * cases[i].drop / h), "case %d: %g vs %g", i, (none - got) / sbh,
			      cases[i].drop / h);
	}
}
END_TEST

/* The stage's figure under the layer policies, Llama 3 8B on pp 2 (16
 * layers a stage), A the layer without recomputation, 2sbh the layer input:
 * block 4 keeps (4 x 2sbh + 12 A)/16 a layer; uniform 4 one input a chunk,
 * 2sbh/4 a layer, and while a chunk's backward runs its 3 layers beyond
 * the seed's one (3 A); uniform 5 ceil(16/5) = 4 inputs and 4 A;
 * torchtitan's every 3rd block recomputes 5 (the 3rd, 6th, ... 15th). */
START_TEST(test_recompute_layer_policies_memory)
{
	cs_model_spec m = fx_llama3_8b();
	cs_training_spec t = fx_train(4096, 1);
	cs_parallel_spec p = fx_plan(1, 2, 8, CS_SHARD_NONE);
	double sbh = 4096.0 * 4096, in = 2 * sbh;
	double A = cs_mem_layer_activation_bytes(&m, &t, &p);
	p.recompute = CS_RECOMPUTE_FULL;
	p.recompute_layers = 1;
	ck_assert(cs_mem_layer_activation_bytes(&m, &t, &p) == in);
	ck_assert(cs_mem_recompute_working_bytes(&m, &t, &p) == 0);
	p.recompute_method = CS_RECOMPUTE_BLOCK;
	p.recompute_layers = 4;
	ck_assert(near(cs_mem_layer_activation_bytes(&m, &t, &p), (4 * in + 12 * A) / 16));
	ck_assert(cs_mem_recompute_working_bytes(&m, &t, &p) == 0);
	p.recompute_method = CS_RECOMPUTE_UNIFORM;
	ck_assert(near(cs_mem_layer_activation_bytes(&m, &t, &p), in / 4));
	ck_assert(near(cs_mem_recompute_working_bytes(&m, &t, &p), 3 * A));
	p.recompute_layers = 5;
	ck_assert(near(cs_mem_layer_activation_bytes(&m, &t, &p), 4 * in / 16));
	ck_assert(near(cs_mem_recompute_working_bytes(&m, &t, &p), 4 * A));
	cs_gpu_spec gpu = fx_h100();
	cs_mem_breakdown r = cs_mem_per_gpu(&m, &t, &p, &gpu, 8);
	ck_assert(near(r.recompute_working, 4 * A));
	ck_assert(near(r.total, r.weights + r.grads + r.optimizer + r.activations + 4 * A));
	p.recompute = CS_RECOMPUTE_SELECTIVE;
	p.recompute_layers = 1;
	p.recompute_every = 3;
	ck_assert(near(cs_mem_layer_activation_bytes(&m, &t, &p), (5 * in + 11 * A) / 16));
	/* two virtual stages of 8: the count runs on over the rank's chunks */
	p.virtual_stages = 2;
	cs_mem_recompute_split x = cs_mem_recompute_layers(&p, 8);
	ck_assert_int_eq(x.layers[CS_RECOMPUTE_FULL], 5);
	ck_assert_int_eq(x.layers[CS_RECOMPUTE_NONE], 11);
}
END_TEST

static Suite *memory_layer_suite(void)
{
	Suite *s = suite_create("memory_layer");
	TCase *tc = tcase_create("layer");
	tcase_add_test(tc, test_gqa_and_gated_mlp_saved_at_their_widths);
	tcase_add_test(tc, test_latent_attention_saves_its_latents_and_wide_heads);
	tcase_add_test(tc, test_moe_layer_saves_each_token_copy);
	tcase_add_test(tc, test_dropout_masks_only_with_dropout);
	tcase_add_test(tc, test_fp8_saves_gemm_inputs_in_one_byte);
	tcase_add_test(tc, test_block_scaled_recipes_save_their_scales);
	tcase_add_test(tc, test_recompute_modules_drop_their_tensors);
	tcase_add_test(tc, test_recompute_moe_and_latent_modules_drop_theirs);
	tcase_add_test(tc, test_recompute_layer_policies_memory);
	suite_add_tcase(s, tc);
	tc = tcase_create("state");
	tcase_add_test(tc, test_bf16_optimizer_state);
	suite_add_tcase(s, tc);
	tc = tcase_create("per_gpu");
	tcase_add_test(tc, test_nemotron4_340b_128_gpus);
	tcase_add_test(tc, test_llama3_405b_8k_fits_an_h100);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(memory_layer_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
