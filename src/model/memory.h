/*
 * memory.h - per-GPU training memory: the persistent state per parameter
 * (weights, gradients, fp32 master and optimizer moments) sharded by the
 * ZeRO/FSDP stage, plus Korthikanti et al.'s activations for the pipeline's
 * in-flight micro-batches. All figures in bytes.
 */
#ifndef CS_MODEL_MEMORY_H
#define CS_MODEL_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "config/scenario.h"

typedef struct cs_mem_breakdown {
	double weights, grads, optimizer, activations, total; /* bytes per GPU */
	double activation_bytes_per_layer;                    /* one micro-batch, after tp and cp */
	double state_bytes_per_param;                         /* before sharding */
	int64_t params;                                       /* whole model */
	double layers_in_flight;                              /* layer-micro-batches the worst stage holds */
	double recompute_working; /* a uniform chunk's layers beyond the first, live while its
	                           * backward runs (full recompute of more than one layer a chunk) */
	double capacity;          /* the GPU's HBM bytes */
	bool fits;
} cs_mem_breakdown;

/* Bytes per parameter of training state; the parts go to the non-NULL outs
 * (w: weight, g: gradient, master: fp32 copy, moments: optimizer). */
double cs_mem_bytes_per_param(cs_precision weights, cs_precision grads, cs_optimizer opt,
			      cs_state_dtype state, double *w, double *g, double *master, double *moments);

/* The tensors one layer saves for backward depend on these: widths of Q
 * (heads x d_head), of K and of V (kv_heads x d_head each), the MLP's inner
 * width and whether it is gated (gate and up projections), dropout masks,
 * and whether the GEMM inputs are saved as quantized copies (Transformer
 * Engine's recipes; `quant` bytes an element with the scales, 0 for fp8's 1). */
typedef struct cs_mem_layer_shape {
	int64_t s, b, h, heads;
	int64_t q_dim, kv_dim, ffn; /* queries, keys (and values unless v_dim) */
	int64_t v_dim, o_dim;       /* values, attention output: 0 for kv_dim, q_dim */
	int64_t latent;             /* latent attention's q and kv latents, whole on every TP rank
	                             * without sequence parallelism; 0 without */
	/* an MoE layer's MLP (experts > 0): top_k routed copies of each token
	 * through experts of expert_ffn, and `shared` experts every token */
	int64_t experts, top_k, expert_ffn, shared;
	double padded; /* each expert's input padded to this times its mean share; 0 for none */
	bool gated, dropout, fp8;
	double quant;
} cs_mem_layer_shape;

/* Korthikanti et al. (2022) bytes saved by one layer for backward, tensor by
 * tensor, for the shape `d`, TP degree `tp`, sequence parallelism `sp`. */
double cs_mem_layer_bytes(const cs_mem_layer_shape *d, int64_t tp, bool sp, cs_recompute rc, bool flash);

/* cs_mem_layer_bytes under selective recomputation of `modules` (CS_RCM_
 * bits; 0 for core_attn, the default): the tensors the modules rebuild in
 * the backward are not kept; torchtitan's op policy (CS_RCM_OP) keeps its
 * saved list's outputs. rc none and full ignore the modules. */
double cs_mem_layer_bytes_modules(const cs_mem_layer_shape *d, int64_t tp, bool sp, cs_recompute rc,
				  unsigned modules, bool flash);

/* The layers of one stage by their recomputation (index: cs_recompute), for
 * model chunks of `n` layers (virtual_stages of them); a uniform chunk's
 * layers (1 unless full recomputation groups more) and the layer inputs
 * full recomputation keeps (one a uniform chunk). */
typedef struct cs_mem_recompute_split {
	int64_t layers[3];
	int64_t chunk;
	double inputs;
} cs_mem_recompute_split;
cs_mem_recompute_split cs_mem_recompute_layers(const cs_parallel_spec *p, int64_t n);

/* What a uniform chunk of c layers holds beyond the seed's one layer while
 * its backward runs: (c - 1) layers saved whole. 0 for chunks of one. */
double cs_mem_recompute_working_bytes(const cs_model_spec *m, const cs_training_spec *t,
				      const cs_parallel_spec *p);

/* The paper's own layer: q = k = v = h wide, a GELU MLP of 4h, dropout, 16
 * bits: sbh(34 + 5as/h) without parallelism. */
double cs_mem_activation_bytes_per_layer(int64_t s, int64_t b, int64_t h, int64_t a, int64_t tp, bool sp,
					 cs_recompute rc, bool flash);

/* What a parallel block (attention and MLP on one norm) saves of that: the
 * second norm's 16-bit input, sharded as the formula shards it (by tp with
 * sequence parallelism or tp 1), nothing under full recomputation. */
double cs_mem_parallel_block_saving(int64_t s, int64_t b, int64_t h, int64_t tp, bool sp, cs_recompute rc);

/* Bytes one layer of `m` keeps for backward per rank under `t` and `p`:
 * cs_mem_layer_bytes for the model's shape, its dropout and fp8 recipe, less
 * the parallel block's saving, over the cp ranks; for a model with experts
 * the mean over its dense and MoE layers; where the layers of a stage are
 * recomputed unlike (block method, torchtitan's layer policy, uniform
 * chunks of several layers) the mean over the stage's layers, a uniform
 * chunk's input counted once for its layers. */
double cs_mem_layer_activation_bytes(const cs_model_spec *m, const cs_training_spec *t,
				     const cs_parallel_spec *p);

/* Sharding divisors of weights, gradients and optimizer state for `p`'s
 * sharding over a data-parallel group of `dp` ranks (`node_dp` of them in one
 * node, for HYBRID). */
void cs_mem_shard_factors(cs_sharding sh, int64_t dp, int64_t node_dp, double *w, double *g, double *o);

/* Micro-batches' worth of whole-stage activations the first pipeline stage
 * holds under `p`'s schedule with `micro_batches` per step (<= 0: unknown). */
double cs_mem_stages_in_flight(const cs_parallel_spec *p, int64_t micro_batches);

/* Per GPU, the worst rank (the first pipeline stage). */
cs_mem_breakdown cs_mem_per_gpu(const cs_model_spec *m, const cs_training_spec *t, const cs_parallel_spec *p,
				const cs_gpu_spec *gpu, int gpus_per_node);

/* cs_mem_per_gpu with `layer_bytes` of activations per layer and micro-batch
 * (after tp and cp) in place of the model's own figure: the seed's heuristic
 * sizes its plans with the paper's layer, as the seed does. */
cs_mem_breakdown cs_mem_per_gpu_with(const cs_model_spec *m, const cs_training_spec *t,
				     const cs_parallel_spec *p, const cs_gpu_spec *gpu, int gpus_per_node,
				     double layer_bytes);

/* KV cache per token: 2 (K and V) x layers x kv_heads x d_head x bytes;
 * with latent attention, layers x (kv_lora_rank + rope_head_dim) x bytes. */
double cs_mem_kv_cache_bytes_per_token(const cs_model_spec *m, cs_precision dtype);

#endif
