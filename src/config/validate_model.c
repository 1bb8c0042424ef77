/*
 * validate_model.c - the checks of a model's shape (its attention, latent
 * attention, experts, positions and precision against the sequence and
 * the GPU), and the message every check fails with, at the key's place.
 */
#include <stdarg.h>
#include <stdio.h>

#include "config/config_int.h"

/* The key's entry when it has a place (file or --set), else NULL. */
const cs_config_key *cs__config_placed(const cs__checker *c, const char *key)
{
	const cs_config_key *k = key ? cs_config_key_find(key) : NULL;
	return k && c->sc->where[cs__config_key_index(k)].line != 0 ? k : NULL;
}

/* Report at the location of key1 (or key2, or the file). */
cs_status cs__config_fail(const cs__checker *c, const char *key1, const char *key2, const char *fmt, ...)
{
	const cs_config_key *k = cs__config_placed(c, key1);
	char body[768], where[400];
	va_list ap;

	if (!k)
		k = cs__config_placed(c, key2);
	va_start(ap, fmt);
	vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	if (!c->diag)
		return CS_ERR_INPUT;
	cs__config_where(c->sc, k, where, sizeof where);
	snprintf(c->diag->msg, sizeof c->diag->msg, "%.330s: %.680s", where, body);
	return CS_ERR_INPUT;
}

/* The precision needs its tensor cores: fp8 an fp8 peak; Transformer
 * Engine's MXFP8 and NVFP4 recipes Blackwell's block-scaled MMA (sm_100 and
 * later), NVFP4 an fp4 peak too. A recipe quantizes GEMMs, not gradients. */
static cs_status check_precision(const cs__checker *c)
{
	const cs_gpu_spec *g = &c->sc->cluster.gpu;
	cs_precision p = c->sc->training.precision;
	const char *name = cs_precision_name(p);
	if (c->sc->training.grad_dtype == CS_PREC_MXFP8 || c->sc->training.grad_dtype == CS_PREC_NVFP4)
		return cs__config_fail(c, "training.grad_dtype", NULL,
				       "'training.grad_dtype' %s is a GEMM recipe, not a gradient dtype "
				       "(bf16, fp16 or fp32)",
				       cs_precision_name(c->sc->training.grad_dtype));
	if (cs_prec_is_low(p) && g->peak_fp8 <= 0)
		return cs__config_fail(c, "training.precision", NULL,
				       "'training.precision' %s needs a GPU with an fp8 peak ('%s' has none)",
				       name, g->name);
	if ((p == CS_PREC_MXFP8 || p == CS_PREC_NVFP4) && g->arch < 100)
		return cs__config_fail(c, "training.precision", NULL,
				       "'training.precision' %s needs Blackwell's block-scaled tensor cores "
				       "(sm_100 or later; '%s' is sm_%d)",
				       name, g->name, g->arch);
	if (p == CS_PREC_NVFP4 && g->peak_fp4 <= 0)
		return cs__config_fail(c, "training.precision", "cluster.gpu.peak_fp4",
				       "'training.precision' nvfp4 needs a GPU with an fp4 peak ('%s' has "
				       "none)",
				       g->name);
	return CS_OK;
}

cs_status cs__config_check_model(cs__checker *c)
{
	const cs_model_spec *m = &c->sc->model;

	if (m->head_dim == 0 && m->hidden % m->heads != 0)
		return cs__config_fail(c, "model.heads", "model.hidden",
				       "'model.hidden' (%lld) must be divisible "
				       "by heads (%lld)",
				       (long long)m->hidden, (long long)m->heads);
	if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
		return cs__config_fail(c, "model.kv_heads", NULL,
				       "'model.kv_heads' (%lld) must divide heads "
				       "(%lld)",
				       (long long)m->kv_heads, (long long)m->heads);
	bool mla = m->kv_lora_rank > 0;
	if (!mla && (m->q_lora_rank || m->rope_head_dim || m->v_head_dim))
		return cs__config_fail(c,
				       m->q_lora_rank     ? "model.q_lora_rank"
				       : m->rope_head_dim ? "model.rope_head_dim"
							  : "model.v_head_dim",
				       NULL,
				       "'model.q_lora_rank', 'rope_head_dim' and 'v_head_dim' are "
				       "multi-head latent attention's: they need 'model.kv_lora_rank' > 0");
	if (mla && m->kv_heads != m->heads)
		return cs__config_fail(c, "model.kv_heads", "model.kv_lora_rank",
				       "'model.kv_heads' (%lld) with 'model.kv_lora_rank': latent attention "
				       "rebuilds keys and values for every one of the %lld heads",
				       (long long)m->kv_heads, (long long)m->heads);
	if (mla && m->parallel_block)
		return cs__config_fail(c, "model.parallel_block", "model.kv_lora_rank",
				       "'model.parallel_block' with 'model.kv_lora_rank': latent attention "
				       "is modelled in the sequential block only");
	if (mla && m->arch != CS_ARCH_LLAMA)
		return cs__config_fail(c, "model.kv_lora_rank", "model.arch",
				       "'model.kv_lora_rank' needs 'model.arch: llama' (latent attention's "
				       "RMSNorms and rotary positions)");
	if (mla && m->positions != CS_POS_AUTO && m->positions != CS_POS_ROTARY)
		return cs__config_fail(c, "model.positions", "model.kv_lora_rank",
				       "'model.positions' must be rotary with 'model.kv_lora_rank': latent "
				       "attention's positions are its rotary head part");
	if (m->experts == 0 && (m->top_k || m->shared_experts))
		return cs__config_fail(c, "model.top_k", "model.shared_experts",
				       "'model.top_k' and "
				       "'model.shared_experts' need 'model.experts' > 0");
	if (m->experts > 0 && (m->top_k < 1 || m->top_k > m->experts))
		return cs__config_fail(c, "model.top_k", "model.experts",
				       "'model.top_k' (%lld) must be between 1 "
				       "and experts (%lld)",
				       (long long)m->top_k, (long long)m->experts);
	if (m->experts > 0 && m->dense_layers >= m->layers)
		return cs__config_fail(c, "model.dense_layers", NULL,
				       "'model.dense_layers' (%lld) must be less "
				       "than layers (%lld)",
				       (long long)m->dense_layers, (long long)m->layers);
	if ((m->arch == CS_ARCH_GPT && m->activation == CS_ACT_SWIGLU) ||
	    (m->arch == CS_ARCH_LLAMA && (m->activation == CS_ACT_GELU || m->activation == CS_ACT_RELU)))
		return cs__config_fail(c, "model.activation", "model.arch",
				       "'model.activation' %s does not go with "
				       "'model.arch' %s (gpt: gelu or relu; llama: swiglu)",
				       cs_activation_name(m->activation), cs_arch_name(m->arch));
	bool learned =
		m->positions == CS_POS_LEARNED || (m->positions == CS_POS_AUTO && m->arch == CS_ARCH_GPT);
	if (learned && c->sc->training.seq_len > m->max_positions)
		return cs__config_fail(c, "training.seq_len", "model.max_positions",
				       "'training.seq_len' (%lld) "
				       "exceeds the model's %lld learned positions",
				       (long long)c->sc->training.seq_len, (long long)m->max_positions);
	if (m->attention_window > c->sc->training.seq_len)
		return cs__config_fail(c, "model.attention_window", "training.seq_len",
				       "'model.attention_window' "
				       "(%lld) is longer than the sequence ('training.seq_len' %lld)",
				       (long long)m->attention_window, (long long)c->sc->training.seq_len);
	if (m->attention_window > 0 && c->sc->parallel.cp > 1 && c->sc->parallel.cp_kind == CS_CP_RING)
		return cs__config_fail(
			c, "model.attention_window", "parallelism.context_parallel.kind",
			"'model.attention_window' with ring context parallelism is not modelled (the "
			"ring would skip the blocks outside the window); use kind all-gather");
	if (c->sc->training.compile && c->sc->training.framework == CS_FW_MEGATRON)
		return cs__config_fail(c, "training.compile", "training.framework",
				       "'training.compile' applies to the pytorch and fsdp frameworks "
				       "(Megatron-LM's kernels are fused already)");
	return check_precision(c);
}

/* The experts folded over a stage's tp x cp x dp ranks (parallelism.etp):
 * Megatron-Core's expert mesh, with the checks its parallel_state and
 * MoE layer make. */
cs_status cs__config_check_expert_fold(cs__checker *c)
{
	const cs_parallel_spec *p = &c->sc->parallel;
	const cs_model_spec *m = &c->sc->model;
	if (m->experts == 0)
		return cs__config_fail(c, "parallelism.etp", NULL,
				       "'parallelism.etp' needs a model with experts");
	if (p->tp % p->etp != 0)
		return cs__config_fail(c, "parallelism.etp", "parallelism.tp",
				       "'parallelism.etp' (%lld) must divide tp (%lld)", (long long)p->etp,
				       (long long)p->tp);
	if (m->expert_ffn % p->etp != 0)
		return cs__config_fail(c, "parallelism.etp", "model.expert_ffn",
				       "'parallelism.etp' (%lld) must divide the experts' width (%lld)",
				       (long long)p->etp, (long long)m->expert_ffn);
	int64_t in = p->tp / p->etp * p->cp;
	if (p->ep % in != 0 || p->dp % (p->ep / in) != 0)
		return cs__config_fail(c, "parallelism.ep", "parallelism.etp",
				       "'parallelism.ep' (%lld) must be tp / etp x cp = %lld times a "
				       "divisor of dp (%lld): the experts fold over the attention "
				       "tensor-parallel ranks beyond etp and the context-parallel ranks "
				       "first",
				       (long long)p->ep, (long long)in, (long long)p->dp);
	if (p->order[0] != CS_AXIS_TP || p->order[1] != CS_AXIS_CP || p->order[2] != CS_AXIS_EP)
		return cs__config_fail(c, "parallelism.order", "parallelism.etp",
				       "'parallelism.etp' needs the order to begin tp-cp-ep (the experts "
				       "fold over the innermost ranks)");
	if (p->tp > 1 && !p->sequence_parallel)
		return cs__config_fail(c, "parallelism.etp", "parallelism.sequence_parallel",
				       "'parallelism.etp' with tp %lld needs "
				       "'parallelism.sequence_parallel' (Megatron-Core requires it for "
				       "experts with tensor parallelism)",
				       (long long)p->tp);
	if (m->parallel_block)
		return cs__config_fail(c, "parallelism.etp", "model.parallel_block",
				       "'parallelism.etp' cannot fold the experts of a parallel block");
	return CS_OK;
}
