/*
 * model.h - transformer shapes: parameter counts, the ops of one block with
 * their FLOPs, bytes and collectives, and the model FLOPs of a step.
 *
 * Two families: GPT (LayerNorm with weight and bias, GELU MLP with biases,
 * learned positions) and Llama (RMSNorm weight only, SwiGLU gate/up/down,
 * grouped-query attention, RoPE, no biases). A block is MoE when the model
 * has experts and the layer index is at least dense_layers.
 *
 * Everything here is a pure function of its arguments.
 */
#ifndef CS_MODEL_MODEL_H
#define CS_MODEL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "config/scenario.h"
#include "hw/kprof.h"

typedef struct cs_param_counts {
	int64_t total;  /* all parameters (MoE: all experts) */
	int64_t active; /* per token (MoE: top_k + shared experts) */
	int64_t embedding, unembedding, positions, final_norm;
	int64_t dense_layer, moe_layer; /* per transformer block of each kind */
	int64_t attention, mlp, norms;  /* totals over all layers (mlp: routers and experts too) */
	int64_t experts;                /* routed + shared expert weights over all layers */
	int64_t routed;                 /* of them, the routed experts' (split by ep; the shared
	                                 * ones on every expert-parallel rank) */
} cs_param_counts;

cs_param_counts cs_model_params(const cs_model_spec *m);
bool cs_model_layer_is_moe(const cs_model_spec *m, int64_t layer);
/* Width of one attention head: model.head_dim, else hidden / heads. */
int64_t cs_model_head_dim(const cs_model_spec *m);
/* Multi-head latent attention (kv_lora_rank > 0), and its head widths: a
 * query's and key's (head_dim + the rotary part, 64 unless set), a value's
 * (v_head_dim, else head_dim). Without it: head_dim, head_dim, rotary 0. */
bool cs_model_mla(const cs_model_spec *m);
int64_t cs_model_rope_head_dim(const cs_model_spec *m);
int64_t cs_model_qk_head_dim(const cs_model_spec *m);
int64_t cs_model_v_head_dim(const cs_model_spec *m);

/* Bytes of one element of `p` (bf16 2, fp8 1, fp32 4; mxfp8 and nvfp4
 * with their block scales, 1.03125 and 0.5625). */
double cs_model_dtype_bytes(cs_precision p);

/* HBM bytes per element a Transformer Engine recipe moves to quantize a
 * linear layer's operands; all zero for a precision without a recipe. */
typedef struct cs_quant {
	double elem;         /* a quantized element, its scales included */
	double cast;         /* a 16-bit tensor quantized for both of its uses */
	double fused;        /* the same after a kernel that writes the quantized tensor */
	double weight_ready; /* a weight kept quantized made ready for its other use */
	double param_cast;   /* the optimizer's cast of an updated weight kept quantized */
} cs_quant;
/* The recipe of `p` on a GPU of compute capability `arch` (90 Hopper, 100
 * Blackwell). */
cs_quant cs_quant_recipe(cs_precision p, int arch);
/* Bytes of one element of the optimizer's state (master copy, moments). */
double cs_model_state_bytes(cs_state_dtype s);
/* HBM bytes per weight-gradient element of a separate accumulation kernel:
 * it reads the GEMM's 16-bit (fp32 when training in fp32) gradient and reads
 * and writes the accumulator in `grad_dtype`. */
double cs_model_grad_accum_bytes(cs_precision precision, cs_precision grad_dtype);

typedef enum cs_pass { CS_PASS_FWD, CS_PASS_BWD_INPUT, CS_PASS_BWD_WEIGHT, CS_PASS_RECOMPUTE } cs_pass;
typedef enum cs_op_class { CS_OPC_GEMM, CS_OPC_ATTN, CS_OPC_MEMBOUND, CS_OPC_COMM } cs_op_class;

typedef struct cs_layer_ctx {         /* what divides one micro-batch's work on one rank */
	int64_t seq_len, micro_batch; /* full sequence length; the op lists divide by cp themselves */
	int64_t tp, cp, ep;
	int64_t etp;     /* the experts' tensor-parallel degree (tp unless folded) */
	bool moe_folded; /* the experts fold over tp x cp x dp (cs_parallel_folded) */
	bool sequence_parallel;
	cs_recompute recompute;     /* this layer's: full, selective (of recompute_modules) or none */
	unsigned recompute_modules; /* selective: CS_RCM_ bits (0: core_attn, the default) */
	bool flash_attention;
	cs_cp_kind cp_kind;
	cs_precision precision;
	double expert_imbalance;
	double moe_capacity;     /* the experts' capacity over their mean share, 0 dropless */
	bool moe_pad;            /* every expert's input padded to its capacity */
	bool moe_router_fusion;  /* the router's kernels fused (Megatron-Core's --moe-router-fusion) */
	bool moe_permute_fusion; /* the permutations' kernels fused (--moe-permute-fusion) */
	bool moe_deepep;         /* DeepEP's dispatch and combine (Megatron-Core's flex dispatcher) */
	bool moe_fp8_dispatch;   /* tokens to their experts, and the gradients before the expert
	                        * down projections back, sent in fp8 (DeepEP; DeepSeek-V3
	                        * section 3.3.4); the combines in 16 bits */
	bool dropout;
	double grad_accum_bytes; /* HBM bytes per weight-gradient element of a separate
	                           * accumulation kernel after the weight-gradient GEMMs
	                           * (0: accumulated inside them) */
	cs_framework framework;  /* which kernels the software runs around the GEMMs */
	bool compiled;           /* its element-wise chains fused by torch.compile */
	int64_t micro_batches;   /* per step (eager accumulation skips the first) */
	int arch;                /* the GPU's compute capability (cs_gpu_spec.arch), 0 for Hopper's rules */
	/* Transformer Engine's recipes (cs_prec_is_recipe; their casts cs_quant_recipe) */
	bool fp8_gather; /* sequence-parallel all-gathers of quantized inputs move them quantized */
	bool fp8_params; /* weights kept in fp8: transposed once, not cast */
	bool fp8_recast; /* the weight cast (or transpose) on every micro-batch */
} cs_layer_ctx;

typedef struct cs_layer_op {
	const char *name; /* static string: "qkv", "attn_core", "out_proj", "mlp_up", ... */
	cs_op_class cls;
	double flops;           /* per rank, this micro-batch */
	double bytes;           /* HBM bytes read + written, per rank */
	int64_t m, n, k, batch; /* GEMM shape per rank (batch: independent GEMMs, 1 usually) */
	int kernels;            /* kernels launched (host launch costs); 0 counts as 1 */
	uint8_t layout;         /* GEMM: cs_gemm_layout */
	uint8_t mem;            /* MEMBOUND: cs_mem_kind, whose measured bandwidth times it */
	bool attn_bwd;          /* ATTN: the backward kernel */
	bool linear;            /* GEMM: a linear layer's (fp8 under Transformer Engine's recipe) */
	bool host_sync;         /* the host waits for the GPU's queue to drain before issuing
	                         * this op (a device-to-host read of the routing's counts) */
	int head_dim;           /* ATTN */
	double attn_seq;        /* ATTN: tokens per sequence the kernel sees */
	double attn_bh;         /* ATTN: sequences x query heads on this rank */
	/* cls == CS_OPC_COMM: a collective this layer needs at this point of the pass */
	int comm_kind;     /* cs_comm_kind: CS_COMM_TP, CS_COMM_CP, CS_COMM_EP */
	bool expert_tp;    /* CS_COMM_EP over the experts' TP group (CS_GROUP_ETP), not EP's */
	int coll;          /* cs_coll_op (coll/coll_op.h) */
	double comm_bytes; /* buffer per rank as nccl-tests counts it (all-reduce: the
	                       * tensor; reduce-scatter: the input; all-gather: the output;
	                       * all-to-all: the send buffer, the busiest rank's for the
	                       * experts' exchanges; send-recv: the message) */
} cs_layer_op;

/*
 * Ops of one transformer block (MoE block when `moe`) for `pass`, in
 * execution order. Writes at most `cap` ops to `out` and returns how many
 * there are (call with cap 0 to size).
 *
 * FWD carries the TP comm points (an all-reduce after the attention output
 * projection and after the MLP down projection; with sequence parallelism a
 * reduce-scatter there and an all-gather before QKV and before MLP-up), the
 * CP comm (all-gather of K/V; or, for ring, cp-1 K/V send-recvs each listed
 * just before the attention block it overlaps, the block after it consuming
 * what it delivers) and the EP all-to-all dispatch and combine. BWD_INPUT:
 * the input-gradient GEMMs, attention backward and the mirrored comm points.
 * BWD_WEIGHT: the weight-gradient GEMMs only. RECOMPUTE: full -> the block's
 * whole forward with its comm; selective -> the forward ops of the modules
 * in c->recompute_modules, in forward order (core_attn: the attention core
 * with its CP comm; layernorm: both norms; mla_up_proj: the latent up
 * projections and RoPE; mlp, moe: the dense MLP or the MoE layer with their
 * TP and EP comm; moe_act: the experts' activation; shared_experts: their
 * MLP; op: torchtitan's op policy, every op but the saved list's: the norms,
 * the all-gathers, RoPE, the activation, the residuals and every second
 * matmul, K's, the output projection's and the gate's, or without gating
 * the down projection's); none -> nothing.
 */
int cs_model_block_ops(const cs_model_spec *m, const cs_layer_ctx *c, bool moe, cs_pass pass,
		       cs_layer_op *out, int cap);
/* Embedding (+ learned positions) on the first stage; final norm, LM head
 * and loss on the last. Vocab-parallel under TP. */
int cs_model_embed_ops(const cs_model_spec *m, const cs_layer_ctx *c, cs_pass pass, cs_layer_op *out,
		       int cap);
int cs_model_head_ops(const cs_model_spec *m, const cs_layer_ctx *c, cs_pass pass, cs_layer_op *out, int cap);
/* The optimizer update of `params` parameters held by this rank (bandwidth
 * bound; a fused multi-tensor kernel, or PyTorch's foreach kernels). */
cs_layer_op cs_model_optimizer_op(int64_t params, cs_optimizer opt, cs_precision grad_dtype,
				  cs_state_dtype state, cs_framework fw);
/* The step's edges over `params` local gradients (fp32 under eager PyTorch,
 * else grad_dtype): the gradient norm, a reduction reading each once; the
 * clipping, a scale reading and writing each; Megatron's zeroing of its
 * gradient buffer at the step's start, each written once. */
cs_layer_op cs_model_grad_norm_op(int64_t params, cs_precision grad_dtype, cs_framework fw);
cs_layer_op cs_model_grad_scale_op(int64_t params, cs_precision grad_dtype, cs_framework fw);
cs_layer_op cs_model_grad_zero_op(int64_t params, cs_precision grad_dtype);

/*
 * Model FLOPs of one step over the whole job (the MFU numerator): every
 * matmul of the forward, times 3 for forward + backward, including the
 * attention scores and context over the full s x s square (Megatron's
 * convention, no causal halving) and the LM head; norms, biases and
 * element-wise work are not counted.
 */
double cs_model_flops_per_step(const cs_model_spec *m, int64_t seq_len, int64_t global_batch);
/* The same count with causal masking: the attention scores and context over
 * the lower triangle only (s^2/2), the convention of reports that count the
 * work a causal kernel does rather than Megatron's full square. */
double cs_model_causal_flops_per_step(const cs_model_spec *m, int64_t seq_len, int64_t global_batch);
/* The share of the causal s x s/2 score square a sliding window of
 * m->attention_window keys keeps at sequence length s: 2w/s - (w/s)^2 for
 * 0 < w < s (each query sees min(i, w) keys, continuous), else 1. */
double cs_model_window_fraction(const cs_model_spec *m, int64_t s);
/* m->positions with auto resolved: learned for GPT, rotary for Llama. */
cs_positions cs_model_positions(const cs_model_spec *m);
/* Hardware FLOPs: model FLOPs plus the forward work recompute repeats. */
double cs_model_hw_flops_per_step(const cs_model_spec *m, int64_t seq_len, int64_t global_batch,
				  cs_recompute rc);
/* The same under `p`'s whole policy: each layer's recomputation as
 * cs_model_layer_recompute gives it (model chunks of layers / (pp x
 * virtual_stages) layers), selective's by its modules. */
double cs_model_hw_flops_per_step_p(const cs_model_spec *m, int64_t seq_len, int64_t global_batch,
				    const cs_parallel_spec *p);
/* Matmul FLOPs per token that recomputing one layer (MoE when `moe`) of
 * sequence length s repeats: the whole forward for full, the modules'
 * GEMMs for selective (`modules`, 0 for core_attn), nothing for none. */
double cs_model_recompute_flops_per_token(const cs_model_spec *m, bool moe, int64_t s, cs_recompute rc,
					  unsigned modules, bool flash);
/*
 * How layer `i` (0-based) of a model chunk, the rank's `r`-th block counted
 * over its chunks in order, is recomputed under `p`:
 * Megatron-LM's full granularity recomputes every layer with the uniform
 * method (chunks of recompute_layers, megatron/core/recompute.py
 * checkpointed_forward) and the first recompute_layers layers with block;
 * torchtitan's layer policy (recompute_every k) the blocks whose count from
 * 1 is a multiple of k (_apply_layer_sac), the others none; selective
 * otherwise recomputes its modules in every layer.
 */
cs_recompute cs_model_layer_recompute(const cs_parallel_spec *p, int64_t i, int64_t r);
/* Layers of one model chunk under `p` for a model of `layers` layers:
 * layers / (pp x virtual_stages), at least 1. */
int64_t cs_model_chunk_layers(const cs_parallel_spec *p, int64_t layers);

#endif
