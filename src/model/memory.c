/*
 * memory.c - the training-memory accounting of one GPU.
 *
 * Persistent state: parameters are divided by the model-parallel degree
 * (tp x pp; expert weights also by ep), then weights, gradients and the
 * optimizer state (fp32 master + moments) by the data-parallel group as the
 * sharding says. The data-parallel group of the dense weights is dp x cp
 * (the ranks that hold the same dense shard: Megatron shards its
 * distributed optimizer over data x context parallel ranks; dp counts the
 * expert-parallel ranks, which replicate the dense part); of the expert
 * weights (dp / ep) x cp, the expert-data-parallel group.
 *
 * Activations: Korthikanti et al.'s saved tensors of one layer for the
 * model's widths (GQA's K and V, the MLP's width and gating), its dropout
 * and fp8 recipe, divided by cp, times the layers of one stage, times the
 * stages' worth of micro-batches in flight on the first stage (see
 * cs_mem_stages_in_flight).
 */
#include "model/memory.h"

#include "model/model.h"

static int64_t deg(int64_t x) { return x > 0 ? x : 1; }

double cs_mem_bytes_per_param(cs_precision weights, cs_precision grads, cs_optimizer opt,
			      cs_state_dtype state, double *w, double *g, double *master, double *moments)
{
	double wb = cs_model_dtype_bytes(weights);
	double gb = cs_model_dtype_bytes(grads);
	double sb = cs_model_state_bytes(state);
	/* fp32 weights are their own master; a bf16 state still keeps its copy
	 * (Apex DistributedFusedAdam's store_params) */
	double mb = weights == CS_PREC_FP32 ? 0.0 : sb;
	double ob = 0.0;
	switch (opt) {
	case CS_OPT_ADAM: ob = 2.0 * sb; break;   /* m and v */
	case CS_OPT_ADAM_8BIT: ob = 2.0; break;   /* m and v in 8 bits */
	case CS_OPT_SGD_MOMENTUM: ob = sb; break; /* one buffer */
	case CS_OPT_LAMB: ob = 2.0 * sb; break;   /* Adam's m and v */
	case CS_OPT_SGD:
	case CS_OPT_ADAFACTOR:
		break; /* a row and a column per matrix: (r + c)
	                                             * floats against r x c parameters */
	}
	if (w)
		*w = wb;
	if (g)
		*g = gb;
	if (master)
		*master = mb;
	if (moments)
		*moments = ob;
	return wb + gb + mb + ob;
}

/*
 * Korthikanti et al. §4.1, tensor by tensor, in units of sbh bytes (t = 1):
 * outside the tensor-parallel region (sharded only with sequence
 * parallelism) the two norm inputs (2 + 2), the QKV and fc1 GEMM inputs
 * (2 + 2) and the two dropout masks (1 + 1); inside it Q, K and V, the
 * output projection's input O, the MLP's first GEMM output (the activation's
 * input) and the second GEMM's input. The attention scores add 5as/h (softmax
 * output 2, dropout mask 1, dropout output 2; 2 without dropout) unless flash
 * or selective recompute removes them. Transformer Engine's recipes save
 * each GEMM input as a quantized copy for the weight gradient (fp8 1 byte,
 * mxfp8 1.03125, nvfp4 0.5625) (QKV and fc1
 * inputs, O, the second GEMM's input); flash attention without recompute
 * keeps its own 16-bit O beside that copy.
 */
/*
 * Selective recomputation drops what its modules rebuild in the backward
 * (Megatron-LM's transformer_layer.py and the modules' own checkpoints):
 * core_attn the scores (and flash's own 16-bit O under fp8); layernorm the
 * two norm outputs, the QKV and fc1 GEMM inputs; mla_up_proj Q, K and V; mlp
 * a dense layer's MLP inside (its input stays, the checkpoint's); moe an
 * MoE layer's token copies, router probabilities and experts; moe_act the
 * routed experts' activation outputs (their down projections' inputs);
 * shared_experts the shared experts' MLP inside. torchtitan's op policy
 * keeps the block's input and the saved list's outputs: Q and V (the odd
 * matmuls wq and wv), the attention's O with its fp32 log-sum-exp (4a/h),
 * the first MLP projection's output, with gating the down projection's
 * (a partial sum on every TP rank: whole), and with sequence parallelism
 * the two reduce-scatters' outputs.
 */
static double op_policy_bytes(const cs_mem_layer_shape *d, double t, bool sp)
{
	double h = (double)d->h, sbh = (double)d->s * (double)d->b * h;
	double qf = (double)d->q_dim / h, f = (double)d->ffn / h;
	double vf = (double)(d->v_dim > 0 ? d->v_dim : d->kv_dim) / h;
	double of = (double)(d->o_dim > 0 ? d->o_dim : d->q_dim) / h;
	double outside = 2.0 + (sp && t > 1.0 ? 4.0 : 0.0);
	double inside = 2.0 * qf + 2.0 * vf + 2.0 * of + 4.0 * (double)d->heads / h + 2.0 * f;
	double whole = d->gated ? 2.0 : 0.0;
	bool all_sharded = sp || t == 1.0;
	return sbh * (outside / (all_sharded ? t : 1.0) + inside / t + whole);
}

double cs_mem_layer_bytes_modules(const cs_mem_layer_shape *d, int64_t tp, bool sp, cs_recompute rc,
				  unsigned modules, bool flash)
{
	double h = (double)d->h;
	double sbh = (double)d->s * (double)d->b * h;
	double t = (double)deg(tp);
	if (rc == CS_RECOMPUTE_FULL)
		return 2.0 * sbh; /* the layer input only */
	unsigned x = rc == CS_RECOMPUTE_NONE ? 0u : modules ? modules : CS_RCM_CORE_ATTN;
	if (x & CS_RCM_OP)
		return op_policy_bytes(d, t, sp);
	double gi = d->fp8 ? (d->quant > 0.0 ? d->quant : 1.0) : 2.0; /* a saved GEMM input */
	double qf = (double)d->q_dim / h, kf = (double)d->kv_dim / h, f = (double)d->ffn / h;
	double vf = (double)(d->v_dim > 0 ? d->v_dim : d->kv_dim) / h;
	double of = (double)(d->o_dim > 0 ? d->o_dim : d->q_dim) / h;
	double outside = 4.0 + 2.0 * gi + (d->dropout ? 2.0 : 0.0);
	if (x & CS_RCM_LAYERNORM)
		outside -= 2.0 * gi;
	bool core = (x & CS_RCM_CORE_ATTN) != 0;
	double o = d->fp8 && flash && !core ? 2.0 + gi : gi;
	double inside = (x & CS_RCM_MLA_UP) ? 0.0 : 2.0 * qf + 2.0 * kf + 2.0 * vf;
	inside += o * of;
	double moe = 0.0; /* an MoE layer's token copies, sharded as the norms' input is */
	if (d->experts > 0) {
		/* every routed copy and the shared experts save what a dense MLP
		 * saves at the expert's width; each copy as dispatched (its up
		 * projections' input) and as its expert returned it (for the
		 * weighted combine's backward); the router's fp32 probabilities */
		double copies = (double)d->top_k * (d->padded > 0.0 ? d->padded : 1.0);
		double ef = (double)d->expert_ffn / h;
		double shared = (x & CS_RCM_SHARED) ? 0.0 : (double)d->shared;
		f = (x & CS_RCM_MOE) ? 0.0 : (copies + shared) * ef;
		if (!(x & CS_RCM_MOE))
			moe = gi * copies + 2.0 * copies + 4.0 * (double)d->experts / h;
		if ((x & CS_RCM_MOE_ACT) && !(x & CS_RCM_MOE))
			inside -= gi * copies * ef;
	} else if (x & CS_RCM_MLP) {
		f = 0.0;
	}
	inside += (d->gated ? 4.0 : 2.0) * f + gi * f;
	/* latent attention: each latent before its norm (16 bits) and after it
	 * (a GEMM input), sharded as the norms' input is */
	double lat = (2.0 + gi) * (double)d->latent / h;
	if (!core && !flash)
		inside += (d->dropout ? 5.0 : 2.0) * (double)d->heads * (double)d->s / h;
	bool all_sharded = sp || t == 1.0;
	return sbh * ((outside + lat + moe) / (all_sharded ? t : 1.0) + inside / t);
}

double cs_mem_layer_bytes(const cs_mem_layer_shape *d, int64_t tp, bool sp, cs_recompute rc, bool flash)
{
	return cs_mem_layer_bytes_modules(d, tp, sp, rc, CS_RCM_CORE_ATTN, flash);
}

double cs_mem_activation_bytes_per_layer(int64_t s, int64_t b, int64_t h, int64_t a, int64_t tp, bool sp,
					 cs_recompute rc, bool flash)
{
	cs_mem_layer_shape d = { .s = s,
				 .b = b,
				 .h = h,
				 .heads = a,
				 .q_dim = h,
				 .kv_dim = h,
				 .ffn = 4 * h,
				 .gated = false,
				 .dropout = true,
				 .fp8 = false };
	return cs_mem_layer_bytes(&d, tp, sp, rc, flash);
}

double cs_mem_parallel_block_saving(int64_t s, int64_t b, int64_t h, int64_t tp, bool sp, cs_recompute rc)
{
	double t = (double)deg(tp);
	if (rc == CS_RECOMPUTE_FULL)
		return 0.0;
	return 2.0 * (double)s * (double)b * (double)h / (sp || t == 1.0 ? t : 1.0);
}

/* One layer's bytes under recomputation `rc` (selective: p's modules). */
static double layer_bytes_rc(const cs_model_spec *m, const cs_training_spec *t, const cs_parallel_spec *p,
			     cs_recompute rc)
{
	int64_t b = deg(t->micro_batch), dh = cs_model_qk_head_dim(m), dv = cs_model_v_head_dim(m);
	int64_t kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
	unsigned mods = p->recompute_modules;
	cs_mem_layer_shape d = { .s = t->seq_len,
				 .b = b,
				 .h = m->hidden,
				 .heads = m->heads,
				 .q_dim = m->heads * dh,
				 .kv_dim = kv * dh,
				 .v_dim = kv * dv,
				 .o_dim = m->heads * dv,
				 .latent = cs_model_mla(m) ? m->q_lora_rank + m->kv_lora_rank : 0,
				 .ffn = m->ffn,
				 .gated = m->arch == CS_ARCH_LLAMA,
				 .dropout = t->dropout,
				 .fp8 = cs_prec_is_low(t->precision),
				 .quant = cs_model_dtype_bytes(t->precision) };
	double bytes =
		cs_mem_layer_bytes_modules(&d, p->tp, p->sequence_parallel, rc, mods, p->flash_attention);
	if (m->experts > 0 && m->layers > m->dense_layers) {
		d.experts = m->experts;
		d.top_k = m->top_k;
		d.padded = p->moe_pad ? p->moe_capacity : 0.0;
		d.expert_ffn = m->expert_ffn;
		d.shared = m->shared_experts;
		double moe = cs_mem_layer_bytes_modules(&d, p->tp, p->sequence_parallel, rc, mods,
							p->flash_attention);
		double nd = (double)(m->dense_layers > 0 ? m->dense_layers : 0);
		bytes = (nd * bytes + ((double)m->layers - nd) * moe) / (double)m->layers;
	}
	bool op = rc == CS_RECOMPUTE_SELECTIVE && (mods & CS_RCM_OP);
	if (m->parallel_block && !op)
		bytes -= cs_mem_parallel_block_saving(t->seq_len, b, m->hidden, p->tp, p->sequence_parallel,
						      rc);
	return bytes / (double)deg(p->cp);
}

cs_mem_recompute_split cs_mem_recompute_layers(const cs_parallel_spec *p, int64_t n)
{
	cs_mem_recompute_split r = { 0 };
	int64_t v = deg(p->virtual_stages);
	for (int64_t k = 0; k < v; k++)
		for (int64_t i = 0; i < n; i++)
			r.layers[cs_model_layer_recompute(p, i, k * n + i)] += 1;
	r.chunk = p->recompute == CS_RECOMPUTE_FULL && p->recompute_method == CS_RECOMPUTE_UNIFORM
			  ? (p->recompute_layers < n ? deg(p->recompute_layers) : n)
			  : 1;
	/* a uniform chunk keeps one input for its layers, the last chunk of a
	 * model chunk whatever it holds */
	r.inputs = r.chunk > 1 ? (double)v * (double)((n + r.chunk - 1) / r.chunk) : (double)r.layers[2];
	return r;
}

double cs_mem_layer_activation_bytes(const cs_model_spec *m, const cs_training_spec *t,
				     const cs_parallel_spec *p)
{
	cs_mem_recompute_split r = cs_mem_recompute_layers(p, cs_model_chunk_layers(p, m->layers));
	double all = (double)(r.layers[0] + r.layers[1] + r.layers[2]);
	for (int rc = 0; rc < 3; rc++)
		if ((double)r.layers[rc] == all && r.chunk == 1)
			return layer_bytes_rc(m, t, p, (cs_recompute)rc);
	double bytes = 0.0;
	for (int rc = 0; rc < 2; rc++)
		if (r.layers[rc] > 0)
			bytes += (double)r.layers[rc] * layer_bytes_rc(m, t, p, (cs_recompute)rc);
	if (r.layers[2] > 0)
		bytes += r.inputs * layer_bytes_rc(m, t, p, CS_RECOMPUTE_FULL);
	return bytes / all;
}

double cs_mem_recompute_working_bytes(const cs_model_spec *m, const cs_training_spec *t,
				      const cs_parallel_spec *p)
{
	cs_mem_recompute_split r = cs_mem_recompute_layers(p, cs_model_chunk_layers(p, m->layers));
	if (r.chunk <= 1)
		return 0.0;
	return (double)(r.chunk - 1) * layer_bytes_rc(m, t, p, CS_RECOMPUTE_NONE);
}

void cs_mem_shard_factors(cs_sharding sh, int64_t dp, int64_t node_dp, double *w, double *g, double *o)
{
	double d = (double)deg(dp), nd = (double)deg(node_dp);
	if (nd > d)
		nd = d;
	*w = *g = *o = 1.0;
	switch (sh) {
	case CS_SHARD_NONE: break;
	case CS_SHARD_ZERO1: *o = d; break;
	case CS_SHARD_ZERO2:
	case CS_SHARD_GRAD_OP: *g = *o = d; break; /* GRAD_OP: full params from forward to backward */
	case CS_SHARD_ZERO3: *w = *g = *o = d; break;
	case CS_SHARD_HYBRID: *w = *g = *o = nd; break;
	}
}

double cs_mem_stages_in_flight(const cs_parallel_spec *p, int64_t micro_batches)
{
	double pp = (double)deg(p->pp);
	double mb = micro_batches > 0 ? (double)micro_batches : 1e300;
	double v = (double)deg(p->virtual_stages);
	switch (p->schedule) {
	case CS_SCHED_GPIPE: return micro_batches > 0 ? mb : pp;
	case CS_SCHED_INTERLEAVED:
		if (v > 1.0) {
			/* Megatron: warm-up (p-1)*2 + (v-1)*p chunk forwards, plus the
			 * one in steady state; each chunk is 1/v of a stage. */
			double chunks = (pp - 1.0) * 2.0 + (v - 1.0) * pp + 1.0;
			if (chunks > mb * v)
				chunks = mb * v;
			return chunks / v;
		}
		break;
	case CS_SCHED_1F1B:
	case CS_SCHED_ZB_H1:
	case CS_SCHED_ZB_V: break;
	}
	return pp < mb ? pp : mb;
}

cs_mem_breakdown cs_mem_per_gpu(const cs_model_spec *m, const cs_training_spec *t, const cs_parallel_spec *p,
				const cs_gpu_spec *gpu, int gpus_per_node)
{
	return cs_mem_per_gpu_with(m, t, p, gpu, gpus_per_node, cs_mem_layer_activation_bytes(m, t, p));
}

cs_mem_breakdown cs_mem_per_gpu_with(const cs_model_spec *m, const cs_training_spec *t,
				     const cs_parallel_spec *p, const cs_gpu_spec *gpu, int gpus_per_node,
				     double layer_bytes)
{
	cs_mem_breakdown r = { 0 };
	cs_param_counts pc = cs_model_params(m);
	int64_t tp = deg(p->tp), pp = deg(p->pp), dp = deg(p->dp), cp = deg(p->cp), ep = deg(p->ep);
	double bw, bg, bm, bo;
	r.state_bytes_per_param =
		cs_mem_bytes_per_param(t->precision == CS_PREC_FP32 ? CS_PREC_FP32 : CS_PREC_BF16,
				       t->grad_dtype, t->optimizer, t->optimizer_dtype, &bw, &bg, &bm, &bo);
	r.params = pc.total;

	/* the routed experts split by ep; the shared ones, like the dense
	 * weights, on every expert-parallel rank */
	double routed = (double)pc.routed;
	double dense = ((double)pc.total - routed) / (double)(tp * pp);
	double expert = routed / (double)(deg(cs_parallel_etp(p)) * pp * ep);
	int64_t node_dp = gpus_per_node > 0 ? gpus_per_node / tp : 1;
	double dw, dg, dopt, ew, eg, eopt;
	cs_mem_shard_factors(p->sharding, dp * cp, node_dp, &dw, &dg, &dopt);
	cs_mem_shard_factors(p->sharding, deg(cs_parallel_edp(p)), node_dp, &ew, &eg, &eopt);
	r.weights = dense * bw / dw + expert * bw / ew;
	r.grads = dense * bg / dg + expert * bg / eg;
	r.optimizer = dense * (bm + bo) / dopt + expert * (bm + bo) / eopt;

	r.activation_bytes_per_layer = layer_bytes;
	int64_t mbs = t->global_batch > 0 ? t->global_batch / (dp * deg(t->micro_batch)) : 0;
	r.layers_in_flight = (double)m->layers / (double)pp * cs_mem_stages_in_flight(p, mbs);
	r.activations = r.activation_bytes_per_layer * r.layers_in_flight;
	r.recompute_working = cs_mem_recompute_working_bytes(m, t, p);

	r.total = r.weights + r.grads + r.optimizer + r.activations;
	if (r.recompute_working > 0.0)
		r.total += r.recompute_working;
	r.capacity = gpu ? gpu->hbm_bytes : 0.0;
	r.fits = r.total <= r.capacity;
	return r;
}

double cs_mem_kv_cache_bytes_per_token(const cs_model_spec *m, cs_precision dtype)
{
	if (cs_model_mla(m)) /* the latent and the shared rotary key (DeepSeek-V2 section 2.1.2) */
		return (double)m->layers * (double)(m->kv_lora_rank + cs_model_rope_head_dim(m)) *
		       cs_model_dtype_bytes(dtype);
	int64_t kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
	double d_head = (double)cs_model_head_dim(m);
	return 2.0 * (double)m->layers * (double)kvh * d_head * cs_model_dtype_bytes(dtype);
}
