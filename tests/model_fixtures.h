/*
 * model_fixtures.h - model and GPU specs shared by the model, compute and
 * memory suites (published shapes; hardware of docs/references.md).
 */
#ifndef CS_TESTS_MODEL_FIXTURES_H
#define CS_TESTS_MODEL_FIXTURES_H

#include <string.h>

#include "config/scenario.h"

static inline cs_model_spec fx_llama(const char *name, int64_t L, int64_t h, int64_t a, int64_t kv,
                                     int64_t ffn, int64_t V)
{
	cs_model_spec m;
	memset(&m, 0, sizeof(m));
	strncpy(m.name, name, sizeof(m.name) - 1);
	m.arch = CS_ARCH_LLAMA;
	m.layers = L;
	m.hidden = h;
	m.heads = a;
	m.kv_heads = kv;
	m.ffn = ffn;
	m.vocab = V;
	return m;
}

static inline cs_model_spec fx_llama2_7b(void) { return fx_llama("llama2-7b", 32, 4096, 32, 32, 11008, 32000); }
static inline cs_model_spec fx_llama3_8b(void) { return fx_llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256); }
static inline cs_model_spec fx_llama3_70b(void) { return fx_llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256); }
static inline cs_model_spec fx_llama3_405b(void) { return fx_llama("llama3-405b", 126, 16384, 128, 8, 53248, 128256); }

static inline cs_model_spec fx_gpt3_175b(void)
{
	cs_model_spec m = fx_llama("gpt3-175b", 96, 12288, 96, 96, 4 * 12288, 50257);
	m.arch = CS_ARCH_GPT;
	m.max_positions = 2048;
	return m;
}

/* A small MoE: 4 dense layers then 12 MoE layers of 16 experts, top-2, one shared. */
static inline cs_model_spec fx_moe(void)
{
	cs_model_spec m = fx_llama("moe-test", 16, 2048, 16, 4, 8192, 32000);
	m.experts = 16;
	m.top_k = 2;
	m.shared_experts = 1;
	m.expert_ffn = 1408;
	m.dense_layers = 4;
	return m;
}

/* DeepSeek-V3 (arXiv 2412.19437, section 4.2 and its config.json): 61
 * layers, the first 3 dense; multi-head latent attention with a 1536-wide
 * query latent, a 512-wide key/value latent, heads of 128 + 64 rotary for
 * queries and keys and 128 for values; 1 shared and 256 routed experts of
 * width 2048, top-8. */
static inline cs_model_spec fx_deepseek_v3(void)
{
	cs_model_spec m = fx_llama("deepseek-v3", 61, 7168, 128, 128, 18432, 129280);
	m.head_dim = 128;
	m.q_lora_rank = 1536;
	m.kv_lora_rank = 512;
	m.rope_head_dim = 64;
	m.v_head_dim = 128;
	m.experts = 256;
	m.top_k = 8;
	m.shared_experts = 1;
	m.expert_ffn = 2048;
	m.dense_layers = 3;
	return m;
}

static inline cs_gpu_spec fx_h100(void)
{
	cs_gpu_spec g;
	memset(&g, 0, sizeof(g));
	strncpy(g.name, "h100-sxm-80g", sizeof(g.name) - 1);
	g.peak_bf16 = 989e12;
	g.peak_fp8 = 1979e12;
	g.hbm_bytes = 81559 * 1048576.0;   /* the driver's total, 81,559 MiB */
	g.hbm_bandwidth = 3.35e12;
	g.sms = 132;
	g.gemm_efficiency = 0.80;
	g.attn_efficiency = 0.60;
	g.hbm_efficiency = 0.90;
	g.arch = 90;
	return g;
}

/* bf16 training with Adam at sequence s and micro-batch b */
static inline cs_training_spec fx_train(int64_t s, int64_t b)
{
	cs_training_spec t;
	memset(&t, 0, sizeof(t));
	t.seq_len = s;
	t.micro_batch = b;
	t.precision = CS_PREC_BF16;
	t.grad_dtype = CS_PREC_BF16;
	t.optimizer = CS_OPT_ADAM;
	return t;
}

/* a tp x pp x dp plan with 1F1B and flash attention, no CP or EP */
static inline cs_parallel_spec fx_plan(int64_t tp, int64_t pp, int64_t dp, cs_sharding sh)
{
	cs_parallel_spec p;
	memset(&p, 0, sizeof(p));
	p.tp = tp;
	p.pp = pp;
	p.dp = dp;
	p.cp = 1;
	p.ep = 1;
	p.sharding = sh;
	p.schedule = CS_SCHED_1F1B;
	p.flash_attention = true;
	return p;
}

#endif
