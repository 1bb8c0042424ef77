/*
 * keys.c - the table of scenario keys: path, kind, field, limits, default
 * and description. The loader, the overrides, the documentation check and
 * the command line's key listing all read this one table.
 */
#include <stdio.h>
#include <string.h>

#include "config/config_int.h"

static const char *const net_names[] = { "ib", "roce", NULL };
static const char *const arch_names[] = { "gpt", "llama", NULL };
static const char *const prec_names[] = { "bf16",  "fp16",  "fp8",         "fp32", "fp8-all",
					  "mxfp8", "nvfp4", "fp8-current", NULL };
static const char *const opt_names[] = {
	"adam", "adam-8bit", "sgd", "sgd-momentum", "lamb", "adafactor", NULL
};
static const char *const sched_names[] = { "gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", NULL };
static const char *const shard_names[] = {
	"none", "zero1", "zero2", "zero3", "shard-grad-op", "hybrid", NULL
};
static const char *const prefetch_names[] = { "none", "pre", "post", NULL };
static const char *const fold_names[] = { "auto", "false", "true", NULL };
static const char *const auto_names[] = { "auto", NULL };
static const char *const recompute_names[] = { "none", "selective", "full", NULL };
static const char *const recompute_method_names[] = { "uniform", "block", NULL };
/* in CS_RCM_ bit order */
static const char *const recompute_module_names[] = { "core_attn",   "mlp", "moe_act",
						      "layernorm",   "moe", "shared_experts",
						      "mla_up_proj", "op",  NULL };
static const char *const accum_names[] = { "fused", "separate", NULL };
static const char *const state_dtype_names[] = { "fp32", "bf16", NULL };
static const char *const fw_names[] = { "megatron", "pytorch", "fsdp", NULL };
static const char *const attn_kernel_names[] = { "cudnn", "flash2", NULL };
static const char *const act_names[] = { "auto", "gelu", "relu", "swiglu", NULL };
static const char *const doc_names[] = { "exponential", "lognormal", "fixed", NULL };
static const char *const cp_names[] = { "all-gather", "ring", NULL };
static const char *const dispatcher_names[] = { "alltoall", "deepep", NULL };
static const char *const moe_routing_names[] = { "balanced", "uniform", "zipf", NULL };
static const char *const tpo_model_names[] = { "userbuffers", "nccl", NULL };
static const char *const ub_config_names[] = { "te-default",
					       "nemo-h100-h12288-tp4-mbs1-seqlen2048",
					       "nemo-h100-h8192-tp4-mbs1-seqlen8192",
					       "nemo-h100-h16384-tp8-cp2-mbs1-seqlen8192",
					       "dgxc-gpt3-175b",
					       NULL };
static const char *const algo_names[] = { "auto",      "ring",         "tree",  "nvls",
					  "nvls_tree", "hierarchical", "torus", NULL };
static const char *const proto_names[] = { "auto", "ll", "ll128", "simple", NULL };
static const char *const fidelity_names[] = { "analytic", "flow", NULL };
static const char *const fail_dist_names[] = { "exponential", "weibull", NULL };
static const char *const reliab_preset_names[] = { "none", "llama3", NULL };
static const char *const clock_names[] = { "auto", "table", "power", NULL };
static const char *const pos_names[] = { "auto", "learned", "rotary", "alibi", "none", NULL };
static const char *const topo_names[] = { "fat-tree", "torus", NULL };
static const char *const fleet_names[] = { "production", "ideal", NULL };
static const char *const amax_names[] = { "reduced", "local", "off", NULL };
static const char *const routing_names[] = { "auto", "ecmp", "adaptive", NULL };

/* The tables above are the only spelling of their enums: read by the key
 * table (which also accepts '-' for '_'), printed by everyone else. */
static const char *enum_name(const char *const *names, int v)
{
	for (int i = 0; names[i]; i++)
		if (i == v)
			return names[i];
	return "?";
}

const char *cs_coll_algo_name(cs_coll_algo a) { return enum_name(algo_names, (int)a); }
const char *cs_coll_proto_name(cs_coll_proto p) { return enum_name(proto_names, (int)p); }
const char *cs_sched_name(cs_schedule s) { return enum_name(sched_names, (int)s); }
const char *cs_sharding_name(cs_sharding s) { return enum_name(shard_names, (int)s); }
const char *cs_recompute_name(cs_recompute r) { return enum_name(recompute_names, (int)r); }
const char *cs_recompute_method_name(cs_recompute_method r)
{
	return enum_name(recompute_method_names, (int)r);
}
const char *cs_recompute_module_name(unsigned bit)
{
	for (int i = 0; recompute_module_names[i]; i++)
		if (bit == 1u << i)
			return recompute_module_names[i];
	return "?";
}
const char *cs_arch_name(cs_arch_kind a) { return enum_name(arch_names, (int)a); }
const char *cs_activation_name(cs_activation a) { return enum_name(act_names, (int)a); }
const char *cs_precision_name(cs_precision p) { return enum_name(prec_names, (int)p); }

#define FLD(m) offsetof(cs_scenario, m), sizeof(((cs_scenario *)0)->m)
#define BIG 1e18
/* an initializer, not a block */
/* clang-format off */
#define K(path, kind, m, lo, hi, open, names, def, desc) \
	{path, kind, FLD(m), lo, hi, open, names, def, desc}
/* clang-format on */

static const cs_config_key keys[] = {
	K("name", CS_KIND_STRING, name, 0, 0, false, NULL, "file name without .yaml",
	  "label used in reports"),

	K("cluster.gpu.preset", CS_KIND_GPU_PRESET, cluster.gpu, 0, 0, false, NULL, "required",
	  "GPU preset; `cluster.gpu: NAME` is short for it"),
	K("cluster.gpu.peak_bf16", CS_KIND_FLOPS, cluster.gpu.peak_bf16, 0, BIG, true, NULL, "from preset",
	  "dense BF16 peak"),
	K("cluster.gpu.peak_fp8", CS_KIND_FLOPS, cluster.gpu.peak_fp8, 0, BIG, false, NULL,
	  "from preset, else 0", "dense FP8 peak; 0 = unsupported"),
	K("cluster.gpu.peak_fp4", CS_KIND_FLOPS, cluster.gpu.peak_fp4, 0, BIG, false, NULL,
	  "from preset, else 0", "dense FP4 (NVFP4) peak; 0 = unsupported"),
	K("cluster.gpu.hbm", CS_KIND_SIZE, cluster.gpu.hbm_bytes, 0, BIG, true, NULL, "from preset",
	  "HBM capacity"),
	K("cluster.gpu.hbm_bandwidth", CS_KIND_BANDWIDTH, cluster.gpu.hbm_bandwidth, 0, BIG, true, NULL,
	  "from preset", "HBM bandwidth"),
	K("cluster.gpu.sms", CS_KIND_INT, cluster.gpu.sms, 1, 100000, false, NULL, "from preset",
	  "streaming multiprocessors"),
	K("cluster.gpu.gemm_efficiency", CS_KIND_RATIO, cluster.gpu.gemm_efficiency, 0, 1, true, NULL,
	  "from preset, else 0.8", "best achievable GEMM fraction of peak (MAMF)"),
	K("cluster.gpu.attn_efficiency", CS_KIND_RATIO, cluster.gpu.attn_efficiency, 0, 1, true, NULL, "0.6",
	  "FlashAttention fraction of peak"),
	K("cluster.gpu.hbm_efficiency", CS_KIND_RATIO, cluster.gpu.hbm_efficiency, 0, 1, true, NULL, "0.8",
	  "achievable fraction of HBM bandwidth (assumption)"),
	K("cluster.gpu.profile", CS_KIND_STRING, cluster.gpu.profile, 0, 0, false, NULL,
	  "from preset, else none",
	  "kernel profile: a built-in name (h200-sxm, h100-sxm, "
	  "a100-sxm, b200, gb200), a YAML file relative to the scenario, or none for the flat "
	  "efficiencies"),
	K("cluster.gpu.calibration", CS_KIND_STRING, cluster.gpu.calibration, 0, 0, false, NULL, "none",
	  "calibration file (from clustersim calibrate), relative to the scenario: "
	  "per-class factors on the kernel profile's op times"),
	K("cluster.gpu.clock", CS_KIND_ENUM, cluster.gpu.clock, 0, 0, false, clock_names, "auto",
	  "GEMM clock under the power cap: power (the kernel profile's model: faster beside "
	  "memory-bound work and idle, slower in long GEMM chains), table (as the table "
	  "measured), auto (power where the profile has a clock model)"),
	K("cluster.gpu.nvls", CS_KIND_BOOL, cluster.gpu.nvls, 0, 0, false, NULL, "from preset, else false",
	  "NVLink SHARP reductions in the NVSwitch"),
	K("cluster.gpu.arch", CS_KIND_INT, cluster.gpu.arch, 1, 1000, false, NULL, "from preset, else 90",
	  "compute capability x10: 80 Ampere, 90 Hopper, 100 Blackwell"),
	K("cluster.nodes", CS_KIND_INT, cluster.nodes, 1, CS_CONFIG_MAX_GPUS, false, NULL, "1", "servers"),
	K("cluster.gpus_per_node", CS_KIND_INT, cluster.gpus_per_node, 1, 1024, false, NULL,
	  "8; 4 for an NVL72 GPU", "GPUs per server (an NVL72 rack's compute tray)"),
	K("cluster.scale_up.bandwidth", CS_KIND_BANDWIDTH, cluster.scale_up.bandwidth, 0, BIG, true, NULL,
	  "server of the GPU", "NVLink bandwidth per GPU per direction"),
	K("cluster.scale_up.latency", CS_KIND_TIME, cluster.scale_up.latency_ns, 0, 1e15, false, NULL, "2 us",
	  "NVLink latency per hop"),
	K("cluster.scale_up.domain", CS_KIND_INT, cluster.scale_up_domain, 1, CS_CONFIG_MAX_GPUS, false, NULL,
	  "gpus_per_node; 72 (or the GPUs, if fewer) for an NVL72 GPU",
	  "GPUs per NVLink/NVSwitch domain (several servers' for an NVL72 rack)"),
	K("cluster.scale_out.kind", CS_KIND_ENUM, cluster.scale_out_kind, 0, 0, false, net_names, "ib",
	  "network: ib | roce"),
	K("cluster.scale_out.nics_per_node", CS_KIND_INT, cluster.nics_per_node, 1, 1024, false, NULL,
	  "gpus_per_node", "NICs per server (one per GPU on rail-optimised servers)"),
	K("cluster.scale_out.bandwidth", CS_KIND_BANDWIDTH, cluster.scale_out.bandwidth, 0, BIG, true, NULL,
	  "server of the GPU", "bandwidth per NIC per direction"),
	K("cluster.scale_out.latency", CS_KIND_TIME, cluster.scale_out.latency_ns, 0, 1e15, false, NULL,
	  "5 us", "network message latency"),
	K("cluster.pcie.bandwidth", CS_KIND_BANDWIDTH, cluster.pcie.bandwidth, 0, BIG, true, NULL,
	  "server of the GPU", "GPU to NIC PCIe bandwidth per direction"),
	K("cluster.pcie.latency", CS_KIND_TIME, cluster.pcie.latency_ns, 0, 1e15, false, NULL, "1 us",
	  "PCIe latency"),
	K("cluster.fabric.leaf_gpus", CS_KIND_INT, cluster.leaf_gpus, 0, CS_CONFIG_MAX_GPUS, false, NULL,
	  "256", "GPUs under one leaf group (rail group); 0 = all"),
	K("cluster.fabric.leaf_oversubscription", CS_KIND_FLOAT, cluster.leaf_oversubscription, 1, 1000,
	  false, NULL, "1", "down:up bandwidth ratio at the leaf tier"),
	K("cluster.fabric.pod_gpus", CS_KIND_INT, cluster.pod_gpus, 0, CS_CONFIG_MAX_GPUS, false, NULL, "0",
	  "GPUs per full-bisection pod; 0 = one pod"),
	K("cluster.fabric.pod_oversubscription", CS_KIND_FLOAT, cluster.pod_oversubscription, 1, 1000, false,
	  NULL, "1", "down:up bandwidth ratio between pods"),
	K("cluster.fabric.switch_latency", CS_KIND_TIME, cluster.switch_latency_ns, 0, 1e15, false, NULL,
	  "1 us", "latency per switch tier crossed (assumption)"),
	K("cluster.fabric.routing", CS_KIND_ENUM, cluster.routing, 0, 0, false, routing_names, "auto",
	  "how flows spread over equal-cost uplinks in flow fidelity: auto (adaptive on ib, "
	  "ecmp on roce, as NCCL enables adaptive routing) | ecmp (each connection's queue pairs "
	  "hashed onto one uplink each) | adaptive (every flow spread ideally over all)"),
	K("cluster.topology", CS_KIND_ENUM, cluster.topology, 0, 0, false, topo_names, "fat-tree",
	  "fat-tree (GPU servers: NVLink domains, NICs, leaf/spine/core switches) | torus (chips "
	  "joined by direct links in a pod, pods by the data-centre network: cluster.torus, with "
	  "cluster.scale_out as the DCN)"),
	K("cluster.torus.shape", CS_KIND_STRING, cluster.torus_shape, 0, 0, false, NULL,
	  "required with a torus",
	  "chips of one pod along each dimension, \"AxB\" or \"AxBxC\" "
	  "(the first varies fastest with the rank); pods = chips / (A*B*C)"),
	K("cluster.torus.wrap", CS_KIND_BOOL, cluster.torus_wrap, 0, 0, false, NULL, "true",
	  "wrap-around links on every dimension (a torus); false: a mesh"),
	K("cluster.torus.bandwidth", CS_KIND_BANDWIDTH, cluster.ici.bandwidth, 0, BIG, true, NULL,
	  "the chip's (tpu-v4: 46.9 GB/s), else required", "one torus link, per direction"),
	K("cluster.torus.latency", CS_KIND_TIME, cluster.ici.latency_ns, 0, 1e15, false, NULL, "1 us",
	  "per hop on the torus (assumption)"),
	K("cluster.gpu_variation", CS_KIND_RATIO, cluster.gpu_variation, 0, 1, false, NULL, "0",
	  "sigma of the log of each GPU's persistent compute time factor (lognormal, median 1, "
	  "drawn from simulate.seed); 0 = identical GPUs"),

	K("model.preset", CS_KIND_MODEL_PRESET, model, 0, 0, false, NULL, "required",
	  "model preset; `model: NAME` is short for it"),
	K("model.arch", CS_KIND_ENUM, model.arch, 0, 0, false, arch_names, "llama",
	  "gpt (LayerNorm, GELU, learned positions) | llama (RMSNorm, SwiGLU, RoPE)"),
	K("model.layers", CS_KIND_INT, model.layers, 1, 1e6, false, NULL, "required", "transformer blocks"),
	K("model.hidden", CS_KIND_INT, model.hidden, 1, 1e8, false, NULL, "required", "model width"),
	K("model.heads", CS_KIND_INT, model.heads, 1, 1e6, false, NULL, "required", "attention heads"),
	K("model.head_dim", CS_KIND_INT, model.head_dim, 1, 1e6, false, NULL, "hidden / heads",
	  "width of one attention head (PaLM: 256 with 48 heads on a width of 18,432)"),
	K("model.kv_heads", CS_KIND_INT, model.kv_heads, 1, 1e6, false, NULL, "heads",
	  "key/value heads (GQA)"),
	K("model.ffn", CS_KIND_INT, model.ffn, 1, 1e9, false, NULL, "required", "MLP inner width"),
	K("model.vocab", CS_KIND_INT, model.vocab, 1, 1e9, false, NULL, "required", "vocabulary size"),
	K("model.max_positions", CS_KIND_INT, model.max_positions, 1, 1e9, false, NULL, "training.seq_len",
	  "learned position table length (gpt)"),
	K("model.tied_embeddings", CS_KIND_BOOL, model.tied_embeddings, 0, 0, false, NULL, "false",
	  "LM head shares the embedding matrix"),
	K("model.experts", CS_KIND_INT, model.experts, 0, 1e6, false, NULL, "0",
	  "routed experts per MoE layer; 0 = dense"),
	K("model.top_k", CS_KIND_INT, model.top_k, 0, 1e6, false, NULL, "0",
	  "experts each token is routed to"),
	K("model.shared_experts", CS_KIND_INT, model.shared_experts, 0, 1e6, false, NULL, "0",
	  "always-active experts per MoE layer"),
	K("model.expert_ffn", CS_KIND_INT, model.expert_ffn, 1, 1e9, false, NULL, "ffn",
	  "inner width of one expert"),
	K("model.kv_lora_rank", CS_KIND_INT, model.kv_lora_rank, 0, 1e6, false, NULL, "0",
	  "multi-head latent attention (DeepSeek-V2/V3): keys and values rebuilt per head from one "
	  "latent of this width (0: ordinary multi-head or grouped-query attention); head_dim is "
	  "then the query and key width without positions"),
	K("model.q_lora_rank", CS_KIND_INT, model.q_lora_rank, 0, 1e6, false, NULL, "0",
	  "with kv_lora_rank: queries rebuilt from a latent of this width (0: projected from the "
	  "input directly)"),
	K("model.rope_head_dim", CS_KIND_INT, model.rope_head_dim, 0, 1e6, false, NULL,
	  "64 with kv_lora_rank",
	  "with kv_lora_rank: the rotary part of each query and key head, "
	  "the key's shared by all heads"),
	K("model.v_head_dim", CS_KIND_INT, model.v_head_dim, 0, 1e6, false, NULL, "head_dim",
	  "with kv_lora_rank: the width of one value head"),
	K("model.attention_window", CS_KIND_INT, model.attention_window, 0, 1e9, false, NULL, "0",
	  "sliding-window attention (Mistral, MegaScale): each token attends to itself and the "
	  "window - 1 tokens before it; 0 for the whole causal context"),
	K("model.positions", CS_KIND_ENUM, model.positions, 0, 0, false, pos_names, "auto",
	  "position information: learned (a table of max_positions rows added to the embedding), "
	  "rotary (RoPE kernels on q and k), alibi (a bias inside the attention kernel: no "
	  "kernels, no parameters), none; auto: learned for gpt, rotary for llama"),
	K("model.activation", CS_KIND_ENUM, model.activation, 0, 0, false, act_names, "auto",
	  "the MLP's activation: gelu or relu (OPT) for gpt, swiglu for llama; auto: the arch's"),
	K("model.embedding_norm", CS_KIND_BOOL, model.embedding_norm, 0, 0, false, NULL, "false",
	  "a norm right after the embedding (BLOOM)"),
	K("model.parallel_block", CS_KIND_BOOL, model.parallel_block, 0, 0, false, NULL, "false",
	  "attention and MLP side by side on one norm, x + attn(norm(x)) + mlp(norm(x)) (PaLM, "
	  "GPT-J): one norm per layer, one TP reduction per pass"),
	K("model.dense_layers", CS_KIND_INT, model.dense_layers, 0, 1e6, false, NULL, "0",
	  "dense layers before the first MoE layer"),

	K("training.seq_len", CS_KIND_INT, training.seq_len, 1, 1e9, false, NULL, "2048",
	  "tokens per sequence"),
	K("training.global_batch", CS_KIND_INT, training.global_batch, 1, 1e12, false, NULL,
	  "dp x micro_batch", "sequences per optimizer step"),
	K("training.micro_batch", CS_KIND_INT, training.micro_batch, 1, 1e9, false, NULL, "1",
	  "sequences per micro-batch"),
	K("training.precision", CS_KIND_ENUM, training.precision, 0, 0, false, prec_names, "bf16",
	  "matmul precision: bf16 | fp16 | fp8 | fp32 | fp8-all | mxfp8 | nvfp4 | fp8-current"),
	K("training.grad_dtype", CS_KIND_ENUM, training.grad_dtype, 0, 0, false, prec_names, "bf16",
	  "gradient precision"),
	K("training.grad_accumulation", CS_KIND_ENUM, training.grad_accum, 0, 0, false, accum_names, "fused",
	  "fused | separate: weight gradients accumulate in the GEMM, or in a kernel of "
	  "their own"),
	K("training.optimizer", CS_KIND_ENUM, training.optimizer, 0, 0, false, opt_names, "adam",
	  "adam | adam-8bit | sgd | sgd-momentum | lamb (Adam's state, a trust ratio per tensor) | "
	  "adafactor (factored second moment, no first: no state per parameter)"),
	K("training.optimizer_dtype", CS_KIND_ENUM, training.optimizer_dtype, 0, 0, false, state_dtype_names,
	  "fp32",
	  "fp32 | bf16: the dtype of the optimizer's master weights and "
	  "moments"),
	K("training.dropout", CS_KIND_BOOL, training.dropout, 0, 0, false, NULL, "false",
	  "dropout masks kept as activations"),
	K("training.framework", CS_KIND_ENUM, training.framework, 0, 0, false, fw_names, "megatron",
	  "megatron | pytorch | fsdp: the kernels the software runs around the GEMMs"),
	K("training.compile", CS_KIND_BOOL, training.compile, 0, 0, false, NULL, "false",
	  "torch.compile with Inductor over each transformer block (pytorch and fsdp frameworks): "
	  "the element-wise chains between GEMMs fused, each kernel timed by its bytes"),
	K("training.attention_kernel", CS_KIND_ENUM, training.attention_kernel, 0, 0, false,
	  attn_kernel_names, "cudnn", "cudnn | flash2: the fused attention implementation"),
	K("training.documents.mean", CS_KIND_INT, training.doc_mean, 0, 1e9, false, NULL, "0",
	  "mean document length, tokens, when sequences pack documents under a document mask "
	  "(each micro-batch's attention work drawn from the seed); 0 = one document per "
	  "sequence"),
	K("training.documents.distribution", CS_KIND_ENUM, training.doc_dist, 0, 0, false, doc_names,
	  "exponential", "exponential | lognormal | fixed: the document lengths"),
	K("training.documents.sigma", CS_KIND_FLOAT, training.doc_sigma, 0, 10, false, NULL, "1",
	  "lognormal: sigma of the log of a document's length"),
	K("training.cuda_graphs", CS_KIND_BOOL, training.cuda_graphs, 0, 0, false, NULL, "false",
	  "kernels launched from CUDA graphs (host cost per kernel) rather than eagerly"),
	K("training.step_edges", CS_KIND_BOOL, training.step_edges, 0, 0, false, NULL, "true",
	  "the work the framework does around forward and backward: gradient buffers zeroed, "
	  "the loss reduced, the host's synchronisations"),
	K("training.grad_clip", CS_KIND_BOOL, training.grad_clip, 0, 0, false, NULL, "true",
	  "the gradient norm (a kernel over the local gradients, an all-reduce) and clipping "
	  "before the optimizer update"),
	K("training.fp8.amax", CS_KIND_ENUM, training.fp8.amax, 0, 0, false, amax_names, "reduced",
	  "reduced | local | off: delayed scaling's amax bookkeeping after each virtual stage's "
	  "forward and backward, its amaxes all-reduced over the stage's ranks (reduced), or "
	  "not (local); off leaves it out"),
	K("training.fp8.amax_history", CS_KIND_INT, training.fp8.amax_history, 1, 1e6, false, NULL, "1024",
	  "entries of each fp8 tensor's amax history (the update kernel reads and "
	  "rolls it)"),
	K("training.fp8.params", CS_KIND_BOOL, training.fp8.params, 0, 0, false, NULL, "false",
	  "weights kept in fp8 (NeMo's fp8_params, Megatron's --fp8-param-gather): the "
	  "optimizer casts its shard, parameters are all-gathered in fp8, each weight is "
	  "transposed rather than cast"),
	K("training.fp8.weight_cache", CS_KIND_BOOL, training.fp8.weight_cache, 0, 0, false, NULL, "true",
	  "each weight's fp8 copy (or transpose) made on a step's first micro-batch and "
	  "kept (TE's is_first_microbatch); false: on every micro-batch"),
	K("training.fp8.comm", CS_KIND_BOOL, training.fp8.comm, 0, 0, false, NULL, "true",
	  "the sequence-parallel all-gathers before the fp8 GEMMs move fp8, one byte per "
	  "element"),

	K("parallelism.tp", CS_KIND_INT, parallel.tp, 1, CS_CONFIG_MAX_GPUS, false, NULL, "1",
	  "tensor-parallel degree"),
	K("parallelism.pp", CS_KIND_INT, parallel.pp, 1, CS_CONFIG_MAX_GPUS, false, NULL, "1",
	  "pipeline stages"),
	K("parallelism.dp", CS_KIND_INT, parallel.dp, 1, CS_CONFIG_MAX_GPUS, false, NULL,
	  "gpus / (tp x pp x cp)", "data-parallel degree"),
	K("parallelism.cp", CS_KIND_INT, parallel.cp, 1, CS_CONFIG_MAX_GPUS, false, NULL, "1",
	  "context-parallel degree"),
	K("parallelism.ep", CS_KIND_INT, parallel.ep, 1, CS_CONFIG_MAX_GPUS, false, NULL, "1",
	  "expert-parallel degree (within the DP group, or with etp over tp x cp x dp)"),
	K("parallelism.etp", CS_KIND_INT, parallel.etp, 1, CS_CONFIG_MAX_GPUS, false, NULL, "unset",
	  "expert tensor-parallel degree: the experts fold over the stage's tp x cp x dp ranks "
	  "(Megatron-Core's expert_tensor_parallel_size); unset, they split over tp with ep inside dp"),
	K("parallelism.order", CS_KIND_ORDER, parallel.order, 0, 0, false, NULL, "tp-cp-ep-pp-dp",
	  "mesh axes, innermost (fastest-varying rank) first"),
	K("parallelism.sequence_parallel", CS_KIND_BOOL, parallel.sequence_parallel, 0, 0, false, NULL,
	  "false", "Megatron sequence parallelism with TP"),
	K("parallelism.tp_overlap", CS_KIND_BOOL, parallel.tp_overlap, 0, 0, false, NULL, "false",
	  "overlap TP collectives with neighbouring GEMMs"),
	K("parallelism.tp_overlap_model", CS_KIND_ENUM, parallel.tp_overlap_model, 0, 0, false,
	  tpo_model_names, "userbuffers", "how tp_overlap overlaps: userbuffers | nccl"),
	K("parallelism.tp_overlap_config", CS_KIND_ENUM, parallel.tp_overlap_config, 0, 0, false,
	  ub_config_names, "te-default",
	  "userbuffers layer config: te-default | "
	  "nemo-h100-h12288-tp4-mbs1-seqlen2048 | nemo-h100-h8192-tp4-mbs1-seqlen8192 | "
	  "nemo-h100-h16384-tp8-cp2-mbs1-seqlen8192 | dgxc-gpt3-175b"),
	K("parallelism.tp_overlap_fp8_buf", CS_KIND_BOOL, parallel.tp_overlap_fp8_buf, 0, 0, false, NULL,
	  "false",
	  "under fp8, the pipelined reduce-scatters of the forward (out-projection, "
	  "MLP down) in fp8 buffers (TE's fp8_buf, as NeMo's fp8 configs set it)"),
	K("parallelism.pipeline.schedule", CS_KIND_ENUM, parallel.schedule, 0, 0, false, sched_names, "1f1b",
	  "gpipe | 1f1b | interleaved | zb-h1 | zb-v"),
	K("parallelism.pipeline.virtual_stages", CS_KIND_INT, parallel.virtual_stages, 1, 1e6, false, NULL,
	  "2 for interleaved and zb-v, else 1", "model chunks per pipeline stage"),
	K("parallelism.pipeline.account_for_embedding", CS_KIND_BOOL, parallel.account_embedding, 0, 0, false,
	  NULL, "false",
	  "count the embedding as a layer when splitting layers over "
	  "virtual stages"),
	K("parallelism.pipeline.account_for_loss", CS_KIND_BOOL, parallel.account_loss, 0, 0, false, NULL,
	  "false",
	  "count the LM head and loss as a layer when splitting layers over "
	  "virtual stages"),
	K("parallelism.data_parallel.sharding", CS_KIND_ENUM, parallel.sharding, 0, 0, false, shard_names,
	  "none", "none | zero1 | zero2 | zero3 | shard-grad-op | hybrid"),
	K("parallelism.data_parallel.bucket", CS_KIND_SIZE, parallel.bucket_bytes, 0, BIG, true, NULL,
	  "25 MiB", "gradient bucket cap"),
	K("parallelism.data_parallel.first_bucket", CS_KIND_SIZE, parallel.first_bucket_bytes, 0, BIG, true,
	  NULL, "1 MiB", "size of DDP's first bucket"),
	K("parallelism.data_parallel.overlap", CS_KIND_BOOL, parallel.overlap_grad_reduce, 0, 0, false, NULL,
	  "true", "overlap gradient reduction with backward"),
	K("parallelism.data_parallel.overlap_param_gather", CS_KIND_BOOL, parallel.overlap_param_gather, 0, 0,
	  false, NULL, "true", "overlap parameter all-gathers with compute"),
	K("parallelism.data_parallel.backward_prefetch", CS_KIND_ENUM, parallel.backward_prefetch, 0, 0,
	  false, prefetch_names, "pre", "FSDP backward prefetch: none | pre | post"),
	K("parallelism.data_parallel.forward_prefetch", CS_KIND_BOOL, parallel.forward_prefetch, 0, 0, false,
	  NULL, "false",
	  "FSDP forward prefetch (the simulator assumes the CPU runs ahead of the GPU, so the next "
	  "all-gather is issued early either way)"),
	K("parallelism.data_parallel.max_inflight_gathers", CS_KIND_INT, parallel.max_inflight_gathers, 1,
	  1024, false, NULL, "2", "all-gathers in flight at once (FSDP limit_all_gathers)"),
	K("parallelism.recompute", CS_KIND_ENUM, parallel.recompute, 0, 0, false, recompute_names, "none",
	  "activation recomputation: none | selective | full (Megatron-LM's --recompute-granularity, "
	  "torchtitan's activation_checkpoint.mode)"),
	K("parallelism.recompute_method", CS_KIND_ENUM, parallel.recompute_method, 0, 0, false,
	  recompute_method_names, "uniform",
	  "with recompute full: uniform (chunks of recompute_layers layers, each keeping its input) | "
	  "block (the first recompute_layers layers of each model chunk, the rest not recomputed)"),
	K("parallelism.recompute_layers", CS_KIND_INT, parallel.recompute_layers, 1, 1e6, false, NULL, "1",
	  "with recompute full: layers a uniform chunk holds, or block's layers per model chunk "
	  "(Megatron-LM's --recompute-num-layers)"),
	K("parallelism.recompute_modules", CS_KIND_SET, parallel.recompute_modules, 0, 0, false,
	  recompute_module_names, "[core_attn]",
	  "with recompute selective: the modules whose outputs are recomputed, a list of core_attn, mlp, "
	  "moe_act, layernorm, moe, shared_experts, mla_up_proj (Megatron-LM's --recompute-modules); "
	  "or [op], torchtitan's op policy"),
	K("parallelism.recompute_every", CS_KIND_INT, parallel.recompute_every, 0, 1e6, false, NULL, "0",
	  "with recompute selective: every k-th block of a rank fully recomputed, the others not "
	  "(torchtitan's integer selective_ac_option); 0 for the modules' policy"),
	K("parallelism.flash_attention", CS_KIND_BOOL, parallel.flash_attention, 0, 0, false, NULL, "true",
	  "fused attention without the score matrix in memory"),
	K("parallelism.context_parallel.kind", CS_KIND_ENUM, parallel.cp_kind, 0, 0, false, cp_names,
	  "all-gather", "K/V exchange: all-gather | ring"),
	K("parallelism.expert_imbalance", CS_KIND_FLOAT, parallel.expert_imbalance, 1, 1e6, false, NULL, "1",
	  "busiest expert rank's load over the mean"),
	K("parallelism.moe_routing", CS_KIND_ENUM, parallel.moe_routing, 0, 0, false, moe_routing_names,
	  "balanced",
	  "how tokens choose their experts: balanced (the busiest rank takes expert_imbalance x the "
	  "mean) | uniform (each copy an expert at random) | zipf (popularity 1 / rank^skew): the "
	  "busiest rank's load then drawn from the seed"),
	K("parallelism.moe_routing_skew", CS_KIND_FLOAT, parallel.moe_routing_skew, 0, 10, false, NULL, "1",
	  "with moe_routing zipf: the exponent of the experts' popularity"),
	K("parallelism.moe_dispatcher", CS_KIND_ENUM, parallel.moe_dispatcher, 0, 0, false, dispatcher_names,
	  "alltoall",
	  "how MoE tokens reach their experts: alltoall (NCCL's all-to-all, every copy sent) | deepep "
	  "(DeepSeek's kernels: one copy a remote node over the network, forwarded over NVLink, "
	  "on 20 SMs; fp8 dispatch under the fp8 recipe)"),
	K("parallelism.moe_node_limit", CS_KIND_INT, parallel.moe_node_limit, 0, 1e6, false, NULL, "0",
	  "with moe_dispatcher deepep: nodes a token's experts may lie on (DeepSeek-V3: 4); 0 for any"),
	K("parallelism.moe_capacity_factor", CS_KIND_FLOAT, parallel.moe_capacity, 0, 1e3, false, NULL, "0",
	  "an expert takes at most this times its mean share of a rank's tokens and drops the rest "
	  "(Megatron-LM's --moe-expert-capacity-factor); 0 for dropless"),
	K("parallelism.moe_pad_to_capacity", CS_KIND_BOOL, parallel.moe_pad, 0, 0, false, NULL, "false",
	  "every expert's input padded to its capacity (--moe-pad-expert-input-to-capacity): "
	  "each expert computes, and each all-to-all sends, the capacity"),
	K("parallelism.moe_router_fusion", CS_KIND_BOOL, parallel.moe_router_fusion, 0, 0, false, NULL,
	  "false",
	  "the router's score function, top-k and auxiliary loss in Transformer Engine's fused "
	  "kernels (--moe-router-fusion), not PyTorch's"),
	K("parallelism.moe_permute_fusion", CS_KIND_BOOL, parallel.moe_permute_fusion, 0, 0, false, NULL,
	  "false",
	  "the tokens' permutations around the experts in Transformer Engine's fused kernels "
	  "(--moe-permute-fusion), not PyTorch's masked_select and scatter_add"),
	K("parallelism.moe_a2a_overlap", CS_KIND_BOOL, parallel.moe_a2a_overlap, 0, 0, false, NULL, "false",
	  "a forward and a backward of different micro-batches run together layer by layer, each "
	  "one's expert all-to-alls under the other's compute (Megatron-Core's "
	  "--overlap-moe-expert-parallel-comm)"),

	K("collectives.algorithm", CS_KIND_ENUM, coll.algorithm, 0, 0, false, algo_names, "auto",
	  "auto | ring | tree | nvls | nvls_tree | hierarchical | torus (on a torus: rings "
	  "along every dimension at once)"),
	K("collectives.protocol", CS_KIND_ENUM, coll.protocol, 0, 0, false, proto_names, "auto",
	  "auto | ll | ll128 | simple"),
	K("collectives.fidelity", CS_KIND_ENUM, coll.fidelity, 0, 0, false, fidelity_names, "analytic",
	  "analytic | flow"),
	K("collectives.channels", CS_KIND_INT, coll.channels, 0, 1024, false, NULL, "0",
	  "NCCL channels; 0 = NCCL's default"),
	K("collectives.qps_per_connection", CS_KIND_INT, coll.qps, 1, 128, false, NULL, "1",
	  "queue pairs per network connection (NCCL_IB_QPS_PER_CONNECTION), each carrying an "
	  "equal share and hashed onto its own uplink under ecmp routing"),
	K("collectives.contention", CS_KIND_FLOAT, coll.contention, 0, 4, false, NULL, "1",
	  "scale of the measured compute slowdown while communication kernels hold SMs: 1 the "
	  "kernel profile's, 0 none"),

	K("simulate.steps", CS_KIND_INT, sim.steps, 1, 1e6, false, NULL, "1", "training steps simulated"),
	K("simulate.fold", CS_KIND_ENUM, sim.fold, 0, 0, false, fold_names, "auto",
	  "auto | false | true: simulate one representative rank per pipeline stage, and whole "
	  "the data-parallel replicas a straggler or a degraded port touches (exact: the others "
	  "stay copies); auto folds where the scenario proves it exact and nothing asked for "
	  "needs every rank, false runs every rank, true folds or refuses"),
	K("simulate.threads", CS_KIND_INT, sim.threads, 1, 256, false, auto_names, "auto",
	  "threads to simulate one run on (the data-parallel replicas in parts); auto: the "
	  "machine's cores, capped by the parts; the result is the same for every count"),
	K("fleet.preset", CS_KIND_ENUM, fleet.preset, 0, 0, false, fleet_names, "production",
	  "production | ideal: the effects below at their production values, or all off; "
	  "`fleet: ideal` is short for it; a value given here overrides it"),
	K("fleet.spread", CS_KIND_RATIO, fleet.spread, 0, 1, false, NULL, "0.01; ideal 0",
	  "sigma of the log of each GPU's persistent compute time factor (median 1), laid out "
	  "as the distribution's quantiles; 0 = off"),
	K("fleet.slow_machines", CS_KIND_RATIO, fleet.slow_machines, 0, 1, false, NULL, "0.005; ideal 0",
	  "fraction of machines (nodes) whose GPUs all compute slower; 0 = off"),
	K("fleet.slow_factor", CS_KIND_FLOAT, fleet.slow_factor, 1, 10, false, NULL, "1.10",
	  "compute time factor of a slow machine"),
	K("fleet.diurnal", CS_KIND_RATIO, fleet.diurnal, 0, 1, false, NULL, "0.01; ideal 0",
	  "peak-to-trough swing of compute time over a day (its mean, half of it, applies); 0 = off"),
	K("fleet.gc_pause", CS_KIND_TIME, fleet.gc_pause_ns, 0, 1e13, false, NULL, "100 ms; ideal 0",
	  "one Python garbage collection on the forward path; 0 s = off"),
	K("fleet.gc_interval", CS_KIND_INT, fleet.gc_interval, 1, 1e9, false, NULL, "500",
	  "training steps between one rank's collections"),
	K("fleet.gc_sync", CS_KIND_BOOL, fleet.gc_sync, 0, 0, false, NULL, "false",
	  "every rank collects at the same step (Megatron-LM manual_gc, torchtitan gc_freq); "
	  "false: each at its own step"),
	K("reliability.preset", CS_KIND_ENUM, reliability.preset, 0, 0, false, reliab_preset_names, "none",
	  "none | llama3: failure rates per unit derived from Llama 3 405B's 54-day "
	  "interruption log (docs/goodput.md); rates given here override it"),
	K("reliability.gpu_rate", CS_KIND_FLOAT, reliability.rate[CS_FAIL_GPU], 0, 1, false, NULL,
	  "the preset's, else 0", "GPU failures (not HBM) per GPU per hour"),
	K("reliability.hbm_rate", CS_KIND_FLOAT, reliability.rate[CS_FAIL_HBM], 0, 1, false, NULL,
	  "the preset's, else 0", "HBM failures per GPU per hour"),
	K("reliability.host_rate", CS_KIND_FLOAT, reliability.rate[CS_FAIL_HOST], 0, 1, false, NULL,
	  "the preset's, else 0",
	  "host failures (CPU, memory, power, disks, unplanned "
	  "maintenance) per node per hour"),
	K("reliability.nic_rate", CS_KIND_FLOAT, reliability.rate[CS_FAIL_NIC], 0, 1, false, NULL,
	  "the preset's, else 0", "NIC failures per NIC (one per GPU) per hour"),
	K("reliability.network_rate", CS_KIND_FLOAT, reliability.rate[CS_FAIL_NETWORK], 0, 1, false, NULL,
	  "the preset's, else 0", "switch and cable failures per node per hour"),
	K("reliability.software_rate", CS_KIND_FLOAT, reliability.rate[CS_FAIL_SOFTWARE], 0, 100, false, NULL,
	  "the preset's, else 0", "software failures of the job per hour"),
	K("reliability.planned_per_day", CS_KIND_FLOAT, reliability.planned_per_day, 0, 1000, false, NULL,
	  "the preset's, else 0",
	  "planned maintenance interruptions per day (a checkpoint "
	  "is taken first: no work lost)"),
	K("reliability.distribution", CS_KIND_ENUM, reliability.distribution, 0, 0, false, fail_dist_names,
	  "exponential", "exponential | weibull: gaps between one class's failures"),
	K("reliability.weibull_shape", CS_KIND_FLOAT, reliability.weibull_shape, 0.1, 100, false, NULL, "1",
	  "Weibull shape k (1 is exponential, < 1 infant mortality)"),
	K("reliability.checkpoint.interval", CS_KIND_TIME, reliability.checkpoint_interval_ns, 0, 9e18, false,
	  NULL, "0", "training time between checkpoints (e.g. 30 min); 0 = none"),
	K("reliability.checkpoint.size", CS_KIND_SIZE, reliability.checkpoint_bytes, 0, BIG, false, NULL,
	  "weights + optimizer state", "the whole job's checkpoint"),
	K("reliability.checkpoint.node_bandwidth", CS_KIND_BANDWIDTH, reliability.node_write_bw, 0, BIG, true,
	  NULL, "25 GB/s", "what each node writes to (and reads from) storage"),
	K("reliability.checkpoint.storage_bandwidth", CS_KIND_BANDWIDTH, reliability.storage_bw, 0, BIG, true,
	  NULL, "2 TB/s", "what the shared storage takes in all"),
	K("reliability.checkpoint.storage_capacity", CS_KIND_SIZE, reliability.storage_capacity, 0, BIG,
	  false, NULL, "0", "storage for checkpoints; 0 = unlimited"),
	K("reliability.checkpoint.async", CS_KIND_BOOL, reliability.async_checkpoint, 0, 0, false, NULL,
	  "false", "snapshot to host memory, then write while training goes on"),
	K("reliability.checkpoint.snapshot_bandwidth", CS_KIND_BANDWIDTH, reliability.snapshot_bw, 0, BIG,
	  true, NULL, "25 GB/s", "device-to-host copy per GPU of an async snapshot"),
	K("reliability.restart_time", CS_KIND_TIME, reliability.restart_ns, 0, 9e18, false, NULL, "10 min",
	  "from a failure to training again: detection, scheduling, process start, "
	  "communicator set-up (the checkpoint load is added)"),
	K("reliability.spares", CS_KIND_INT, reliability.spares, 0, 1e9, false, NULL, "0",
	  "hot spare nodes; a hardware failure takes one"),
	K("reliability.repair_time", CS_KIND_TIME, reliability.repair_ns, 0, 9e18, false, NULL, "2 h",
	  "until a failed node is back (as a spare); without a spare the job waits, or "
	  "goes on smaller when elastic"),
	K("reliability.elastic", CS_KIND_BOOL, reliability.elastic, 0, 0, false, NULL, "false",
	  "without a spare, go on with one data-parallel replica fewer per missing node"),

	K("simulate.seed", CS_KIND_INT, sim.seed, 0, 9.2e18, false, NULL, "1", "seed of random draws"),
};

#define NKEYS (sizeof keys / sizeof keys[0])

size_t cs_config_key_count(void) { return NKEYS; }

const cs_config_key *cs_config_key_at(size_t i) { return i < NKEYS ? &keys[i] : NULL; }

size_t cs__config_key_index(const cs_config_key *k) { return (size_t)(k - keys); }

const cs_config_key *cs_config_key_find(const char *path)
{
	if (!path)
		return NULL;
	if (strcmp(path, "cluster.gpu") == 0)
		path = "cluster.gpu.preset";
	else if (strcmp(path, "model") == 0)
		path = "model.preset";
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].path, path) == 0)
			return &keys[i];
	return NULL;
}

bool cs__config_is_section(const char *path)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < NKEYS; i++)
		if (strncmp(keys[i].path, path, len) == 0 && keys[i].path[len] == '.')
			return true;
	return false;
}

size_t cs__config_children(const char *section, const char **names, char (*buf)[48], size_t max)
{
	size_t len = section ? strlen(section) : 0, count = 0;

	for (size_t i = 0; i < NKEYS && count < max; i++) {
		const char *rest = keys[i].path, *dot;
		size_t w;
		bool seen = false;
		if (len) {
			if (strncmp(rest, section, len) != 0 || rest[len] != '.')
				continue;
			rest += len + 1;
		}
		dot = strchr(rest, '.');
		w = dot ? (size_t)(dot - rest) : strlen(rest);
		if (w >= sizeof buf[0])
			continue;
		for (size_t j = 0; j < count && !seen; j++)
			seen = strlen(names[j]) == w && strncmp(names[j], rest, w) == 0;
		if (seen)
			continue;
		memcpy(buf[count], rest, w);
		buf[count][w] = '\0';
		names[count] = buf[count];
		count++;
	}
	if (!len && count < max) { /* the list lives outside the table */
		names[count++] = "stragglers";
	}
	return count;
}

const char *cs_config_kind_name(cs_config_kind kind)
{
	static const char *const names[] = { "int",          "float",        "bool",       "string",
					     "enum",         "size",         "bandwidth",  "time",
					     "flop rate",    "ratio",        "axis order", "gpu preset",
					     "model preset", "list of names" };
	return (size_t)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

const char *cs_config_kind_example(cs_config_kind kind)
{
	static const char *const ex[] = { "8",
					  "1.5",
					  "true",
					  "text",
					  "name",
					  "25 MiB",
					  "400 Gb/s",
					  "5 us",
					  "989 TFLOPS",
					  "0.8",
					  "tp-cp-ep-pp-dp",
					  "h100-sxm-80g",
					  "llama3-8b",
					  "[core_attn, mlp]" };
	return (size_t)kind < sizeof ex / sizeof ex[0] ? ex[kind] : "?";
}
