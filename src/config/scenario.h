/*
 * scenario.h - the validated, plain-data description of one simulation.
 *
 * The config module fills a cs_scenario from YAML (plus presets and --set
 * overrides) and validates it; every other module reads it and never writes
 * it. All quantities are in base SI units: bytes, bytes per second, FLOP per
 * second, and integer nanoseconds for times.
 */
#ifndef CS_CONFIG_SCENARIO_H
#define CS_CONFIG_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CS_NAME_MAX 64
#define CS_PATH_MAX 512
#define CS_MAX_PERTURBATIONS 64

/* ---- hardware ----------------------------------------------------------- */

typedef struct cs_gpu_spec {
	char name[CS_NAME_MAX];
	double peak_bf16;              /* FLOP/s, dense */
	double peak_fp8;               /* FLOP/s, dense; 0 when unsupported */
	double peak_fp4;               /* FLOP/s, dense NVFP4; 0 when unsupported */
	double hbm_bytes;              /* capacity */
	double hbm_bandwidth;          /* B/s */
	int sms;                       /* streaming multiprocessors */
	double gemm_efficiency;        /* MAMF / peak: best achievable GEMM fraction */
	double attn_efficiency;        /* FlashAttention fraction of peak */
	double hbm_efficiency;         /* achievable fraction of HBM bandwidth */
	int nvls;                      /* NVLink SHARP (NVSwitch reductions) available */
	int arch;                      /* 80 Ampere, 90 Hopper, 100 Blackwell */
	char profile[CS_PATH_MAX];     /* kernel profile: a built-in name, a file (relative to
	                            * the scenario), or "none" for the flat efficiencies */
	char calibration[CS_PATH_MAX]; /* calibration file (relative to the scenario):
	                                * per-class factors on the profile's op times;
	                                * "" for none */
	int clock;                     /* cs_clock_mode */
	int ici_links;                 /* direct chip-to-chip links (TPU ICI), 0 for a GPU */
	double ici_bandwidth;          /* B/s per link per direction */
	double nvlink_bandwidth;       /* B/s per direction of its server's NVLink; 0: the
	                                * standard server of its arch's */
} cs_gpu_spec;

/* How GEMMs are clocked: by the profile's power-cap model when it has one
 * (auto), as the table measured them (table), or by the model, required
 * (power). */
typedef enum cs_clock_mode { CS_CLOCK_AUTO, CS_CLOCK_TABLE, CS_CLOCK_POWER } cs_clock_mode;

typedef struct cs_link_spec {
	double bandwidth;   /* B/s, per direction */
	int64_t latency_ns; /* one hop */
} cs_link_spec;

typedef enum cs_scale_out_kind { CS_NET_IB, CS_NET_ROCE } cs_scale_out_kind;

/* How the accelerators are joined: GPU servers on a (rail-optimised) fat
 * tree, or chips on a torus of direct links inside each pod, the pods joined
 * by the data-centre network (TPU pods: ICI inside, DCN between). */
typedef enum cs_topology { CS_TOPO_FAT_TREE, CS_TOPO_TORUS } cs_topology;

/* How a fat tree's switches spread flows over their equal-cost uplinks:
 * auto is adaptive on InfiniBand and ECMP on RoCE (NCCL turns adaptive
 * routing on by default on an InfiniBand link layer only); ecmp hashes each
 * connection's queue pairs onto one uplink each; adaptive spreads every
 * flow ideally over all of them (the tier as one aggregate pipe). */
typedef enum cs_routing { CS_ROUTING_AUTO, CS_ROUTING_ECMP, CS_ROUTING_ADAPTIVE } cs_routing;

#define CS_TORUS_MAX_DIMS 3
/* Most links one flow of the flow fidelity crosses. */
#define CS_MAX_ROUTE_LINKS 24

typedef struct cs_cluster_spec {
	cs_gpu_spec gpu;
	int64_t nodes;
	int gpus_per_node;
	int scale_up_domain;    /* GPUs per NVLink/NVSwitch domain */
	cs_link_spec scale_up;  /* per GPU, per direction */
	cs_link_spec scale_out; /* per NIC, per direction */
	cs_scale_out_kind scale_out_kind;
	int nics_per_node;
	cs_link_spec pcie;            /* GPU <-> NIC */
	int64_t leaf_gpus;            /* GPUs under one leaf switch (rail group) */
	double leaf_oversubscription; /* down:up at the leaf tier, >= 1 */
	int64_t pod_gpus;             /* GPUs per pod with full bisection; 0 = one pod */
	double pod_oversubscription;  /* down:up between pods, >= 1 */
	int64_t switch_latency_ns;    /* per switch tier crossed */
	cs_routing routing;           /* over equal-cost uplinks (flow fidelity) */
	double gpu_variation;         /* sigma of log(compute time factor) per GPU, persistent */
	/* torus: chips of a pod along each dimension ("16x16x12", the first
	 * varying fastest with the rank), parsed into torus_dim[0..torus_dims);
	 * ici is one direct link, per direction; scale_out is the DCN between
	 * pods (bandwidth per host NIC). */
	cs_topology topology;
	char torus_shape[CS_NAME_MAX];
	int torus_dims;
	int64_t torus_dim[CS_TORUS_MAX_DIMS];
	bool torus_wrap; /* wrap-around links (a torus, not a mesh) */
	cs_link_spec ici;
} cs_cluster_spec;

/* Whether flows are hashed onto single uplinks (cs_routing). */
static inline bool cs_cluster_ecmp(const cs_cluster_spec *c)
{
	return c->topology == CS_TOPO_FAT_TREE &&
	       (c->routing == CS_ROUTING_ECMP ||
		(c->routing == CS_ROUTING_AUTO && c->scale_out_kind == CS_NET_ROCE));
}

/* What hybrid sharding shards within: a server's GPUs, or on a torus a
 * pod's chips (PaLM: fully sharded inside each pod, replicated across). */
static inline int cs_cluster_shard_unit(const cs_cluster_spec *c)
{
	if (c->topology != CS_TOPO_TORUS || c->torus_dims < 1)
		return c->gpus_per_node;
	int64_t chips = 1;
	for (int d = 0; d < c->torus_dims; d++)
		chips *= c->torus_dim[d];
	return chips < 1 || chips > INT32_MAX ? c->gpus_per_node : (int)chips;
}

/* ---- model -------------------------------------------------------------- */

typedef enum cs_arch_kind { CS_ARCH_GPT, CS_ARCH_LLAMA } cs_arch_kind;
/* The MLP's activation: auto is the arch's (GPT GELU, Llama SwiGLU). */
typedef enum cs_activation { CS_ACT_AUTO, CS_ACT_GELU, CS_ACT_RELU, CS_ACT_SWIGLU } cs_activation;
/* Position information: auto is the arch's (GPT learned, Llama rotary). */
typedef enum cs_positions {
	CS_POS_AUTO,
	CS_POS_LEARNED,
	CS_POS_ROTARY,
	CS_POS_ALIBI,
	CS_POS_NONE
} cs_positions;

typedef struct cs_model_spec {
	char name[CS_NAME_MAX];
	cs_arch_kind arch; /* GPT: LayerNorm, GELU, learned positions; LLAMA: RMSNorm, SwiGLU, RoPE */
	int64_t layers;
	int64_t hidden;
	int64_t heads;
	int64_t kv_heads; /* = heads without GQA */
	int64_t ffn;      /* MLP inner width */
	int64_t vocab;
	int64_t max_positions; /* learned position table (GPT) */
	bool tied_embeddings;
	/* mixture of experts (experts == 0: dense) */
	int64_t experts;
	int64_t top_k;
	int64_t shared_experts;
	int64_t expert_ffn;
	int64_t dense_layers;     /* dense layers before the first MoE layer */
	int64_t attention_window; /* sliding-window attention: keys per query, 0 for all */
	bool parallel_block;      /* attention and MLP side by side on one norm (PaLM, GPT-J) */
	cs_positions positions;
	bool embedding_norm; /* a norm right after the embedding (BLOOM) */
	cs_activation activation;
	int64_t head_dim; /* per attention head; 0 before validation: hidden / heads */
	/* multi-head latent attention (DeepSeek-V2/V3) when kv_lora_rank > 0:
	 * keys and values rebuilt from a kv_lora_rank latent, queries from a
	 * q_lora_rank one (0: projected from the input directly); head_dim is
	 * then the query's and key's part without positions, rope_head_dim the
	 * rotary part (one key part shared by all heads), v_head_dim the value's */
	int64_t q_lora_rank, kv_lora_rank, rope_head_dim, v_head_dim;
} cs_model_spec;

/* ---- training ----------------------------------------------------------- */

/* CS_PREC_FP8 is Transformer Engine's delayed-scaling recipe: the linear
 * layers' GEMMs in fp8 with their casts, everything else in bf16;
 * CS_PREC_FP8_ALL every GEMM in fp8, no casts (an upper bound);
 * CS_PREC_FP8_CURRENT per-tensor scaling from each tensor's own amax
 * (TE's Float8CurrentScaling, torchao's tensorwise float8). The
 * Blackwell recipes quantize the same GEMMs in blocks: CS_PREC_MXFP8 fp8
 * with an 8-bit power-of-two scale per 32 elements, CS_PREC_NVFP4 4-bit
 * values with an fp8 scale per 16 and one fp32 scale per tensor. */
typedef enum cs_precision {
	CS_PREC_BF16,
	CS_PREC_FP16,
	CS_PREC_FP8,
	CS_PREC_FP32,
	CS_PREC_FP8_ALL,
	CS_PREC_MXFP8,
	CS_PREC_NVFP4,
	CS_PREC_FP8_CURRENT
} cs_precision;

static inline bool cs_prec_is_fp8(cs_precision p) { return p == CS_PREC_FP8 || p == CS_PREC_FP8_ALL; }
/* A Transformer Engine recipe: the linear layers' GEMMs quantized, with
 * their casts. */
static inline bool cs_prec_is_recipe(cs_precision p)
{
	return p == CS_PREC_FP8 || p == CS_PREC_FP8_CURRENT || p == CS_PREC_MXFP8 || p == CS_PREC_NVFP4;
}
/* GEMMs below 16 bits; activations, weights and gradients stay 16-bit. */
static inline bool cs_prec_is_low(cs_precision p) { return cs_prec_is_recipe(p) || p == CS_PREC_FP8_ALL; }
/* The dtype of the optimizer's state: the master copy of the weights and the
 * moments (Apex DistributedFusedAdam's `dtype`). */
typedef enum cs_state_dtype { CS_STATE_FP32, CS_STATE_BF16 } cs_state_dtype;

typedef enum cs_optimizer {
	CS_OPT_ADAM,
	CS_OPT_ADAM_8BIT,
	CS_OPT_SGD,
	CS_OPT_SGD_MOMENTUM,
	CS_OPT_LAMB,     /* Adam's moments and a per-tensor trust ratio (You et al. 2019) */
	CS_OPT_ADAFACTOR /* factored second moment, no first (Shazeer and Stern 2018) */
} cs_optimizer;

/* How each micro-batch's weight gradients reach the gradient buffer. */
typedef enum cs_grad_accum {
	CS_GRAD_ACCUM_FUSED,   /* inside the weight-gradient GEMM (Megatron's fusion) */
	CS_GRAD_ACCUM_SEPARATE /* a kernel of its own (PyTorch's AccumulateGrad) */
} cs_grad_accum;

/* The training software, which decides the kernels around the GEMMs. */
typedef enum cs_framework {
	CS_FW_MEGATRON, /* Megatron-LM + Transformer Engine: fused norms, RoPE, SwiGLU,
	                 * bias-dropout-add; bf16 weights, fp32 main gradients */
	CS_FW_PYTORCH,  /* eager PyTorch + autocast: fp32 weights cast per GEMM, fp32
	                 * residual stream, RoPE and SwiGLU as separate kernels */
	CS_FW_FSDP      /* eager PyTorch under FSDP mixed precision: bf16 compute
	                 * weights and residual stream, unfused element-wise kernels */
} cs_framework;

typedef enum cs_attn_kernel { CS_ATTNK_CUDNN, CS_ATTNK_FLASH2 } cs_attn_kernel;

/* How document lengths are drawn when sequences pack documents. */
typedef enum cs_doc_dist { CS_DOCS_EXPONENTIAL, CS_DOCS_LOGNORMAL, CS_DOCS_FIXED } cs_doc_dist;

/* Delayed scaling's amax bookkeeping: reduced over the amax group (TE's
 * reduce_amax), kept local, or not modelled. */
typedef enum cs_fp8_amax { CS_AMAX_REDUCED, CS_AMAX_LOCAL, CS_AMAX_OFF } cs_fp8_amax;

/* What Transformer Engine's fp8 recipe does beside its GEMMs and casts
 * (training.fp8; docs/compute-model.md, "FP8 as Transformer Engine runs
 * it"). Read under CS_PREC_FP8 only. */
typedef struct cs_fp8_spec {
	cs_fp8_amax amax;     /* per autocast region, forward and backward */
	int64_t amax_history; /* entries of each tensor's amax history */
	bool params;          /* weights kept in fp8 (fp8_model_init): transposed, not
	                       * cast, once per step; fp8 parameter all-gathers */
	bool weight_cache;    /* a weight's fp8 copy made on a step's first micro-batch
	                       * only (TE's is_first_microbatch) */
	bool comm;            /* sequence-parallel all-gathers of fp8 tensors in fp8 */
} cs_fp8_spec;

typedef struct cs_training_spec {
	int64_t seq_len;
	int64_t global_batch;    /* sequences per optimizer step */
	int64_t micro_batch;     /* sequences per micro-batch */
	cs_precision precision;  /* matmul precision */
	cs_precision grad_dtype; /* bf16 (16 B/param with Adam) or fp32 (18) */
	cs_grad_accum grad_accum;
	cs_optimizer optimizer;
	cs_state_dtype optimizer_dtype;
	bool dropout;
	cs_framework framework;
	bool compile;                    /* torch.compile (Inductor) over each block: its
	                                  * element-wise chains fused (pytorch, fsdp) */
	cs_attn_kernel attention_kernel; /* fused attention implementation */
	bool cuda_graphs;                /* kernels launched from CUDA graphs, not eagerly */
	bool step_edges;                 /* the work around forward and backward: gradient
	                           * zeroing, loss reduction, host synchronisations */
	bool grad_clip;                  /* the gradient norm and clipping before the update */
	cs_fp8_spec fp8;                 /* Transformer Engine's fp8 recipe as it runs (precision fp8) */
	int64_t doc_mean;                /* mean document length in tokens under a document
	                           * mask; 0: one document per sequence */
	cs_doc_dist doc_dist;
	double doc_sigma; /* lognormal: sigma of log(length) */
} cs_training_spec;

/* ---- parallel plan ------------------------------------------------------ */

typedef enum cs_schedule {
	CS_SCHED_GPIPE,
	CS_SCHED_1F1B,
	CS_SCHED_INTERLEAVED,
	CS_SCHED_ZB_H1,
	CS_SCHED_ZB_V
} cs_schedule;

typedef enum cs_sharding {
	CS_SHARD_NONE,    /* DDP */
	CS_SHARD_ZERO1,   /* distributed optimizer: optimizer states */
	CS_SHARD_ZERO2,   /* + gradients */
	CS_SHARD_ZERO3,   /* + parameters (FSDP FULL_SHARD) */
	CS_SHARD_GRAD_OP, /* FSDP SHARD_GRAD_OP: params gathered once, kept fwd->bwd */
	CS_SHARD_HYBRID   /* FSDP HYBRID_SHARD: full shard in a node, all-reduce across */
} cs_sharding;

typedef enum cs_prefetch { CS_PREFETCH_NONE, CS_PREFETCH_PRE, CS_PREFETCH_POST } cs_prefetch;
typedef enum cs_recompute { CS_RECOMPUTE_NONE, CS_RECOMPUTE_SELECTIVE, CS_RECOMPUTE_FULL } cs_recompute;
/* Which layers full recomputation covers (Megatron-LM's --recompute-method):
 * chunks of recompute_layers layers, each keeping only its input; or the
 * first recompute_layers layers of each model chunk, the rest none. */
typedef enum cs_recompute_method { CS_RECOMPUTE_UNIFORM, CS_RECOMPUTE_BLOCK } cs_recompute_method;
/* Selective recomputation's modules (Megatron-LM's --recompute-modules), a
 * bit each in cs_parallel_spec.recompute_modules; CS_RCM_OP is torchtitan's
 * op policy (every op recomputed but the saved list, of whose matmuls every
 * second one). */
enum {
	CS_RCM_CORE_ATTN = 1u << 0,
	CS_RCM_MLP = 1u << 1,
	CS_RCM_MOE_ACT = 1u << 2,
	CS_RCM_LAYERNORM = 1u << 3,
	CS_RCM_MOE = 1u << 4,
	CS_RCM_SHARED = 1u << 5,
	CS_RCM_MLA_UP = 1u << 6,
	CS_RCM_OP = 1u << 7
};
typedef enum cs_cp_kind { CS_CP_ALLGATHER, CS_CP_RING } cs_cp_kind;
/* How `tp_overlap` overlaps the TP collectives: Transformer Engine's
 * userbuffers (chunked GEMMs, docs/compute-model.md), or NCCL collectives
 * beside the next compute segment. */
typedef enum cs_tp_overlap_model { CS_TPO_USERBUFFERS, CS_TPO_NCCL } cs_tp_overlap_model;
/* The userbuffers layer configuration (program/build_ubuf.c holds each). */
typedef enum cs_ub_config {
	CS_UB_TE_DEFAULT,
	CS_UB_NEMO_H12288_TP4,
	CS_UB_NEMO_H8192_TP4,
	CS_UB_NEMO_H16384_TP8_CP2,
	CS_UB_DGXC_GPT3_175B,
	CS_UB_CONFIGS
} cs_ub_config;

/* How MoE tokens reach their experts' ranks: NCCL's all-to-all, or
 * DeepEP's kernels (one network copy a node, forwarded over NVLink). */
typedef enum cs_moe_dispatcher { CS_MOE_ALLTOALL, CS_MOE_DEEPEP } cs_moe_dispatcher;
/* How tokens choose their experts (model/routing.h). */
typedef enum cs_moe_routing { CS_ROUTE_BALANCED, CS_ROUTE_UNIFORM, CS_ROUTE_ZIPF } cs_moe_routing;

/* Mesh axes, innermost first in cs_parallel_spec.order. */
typedef enum cs_axis { CS_AXIS_TP, CS_AXIS_CP, CS_AXIS_EP, CS_AXIS_PP, CS_AXIS_DP, CS_AXIS_COUNT } cs_axis;

typedef struct cs_parallel_spec {
	int64_t tp, pp, dp, cp, ep;
	int64_t etp; /* expert tensor parallel degree; 0: the experts split over tp, ep inside dp */
	int order[CS_AXIS_COUNT]; /* axis ids, innermost first; default tp, cp, ep, pp, dp */
	bool sequence_parallel;
	bool tp_overlap; /* overlap TP collectives with neighbouring GEMMs */
	cs_tp_overlap_model tp_overlap_model;
	cs_ub_config tp_overlap_config;
	bool tp_overlap_fp8_buf; /* userbuffers' pipelined forward reduce-scatters in fp8
	                            * buffers under the fp8 recipe (TE's fp8_buf) */
	cs_schedule schedule;
	int64_t virtual_stages; /* interleaved / zb-v chunks per stage */
	bool account_embedding; /* split layers as if the embedding were one more */
	bool account_loss;      /* ... and the LM head and loss one more */
	cs_sharding sharding;
	double bucket_bytes;       /* DDP / distributed optimizer bucket cap */
	double first_bucket_bytes; /* DDP's small first bucket */
	bool overlap_grad_reduce;  /* `overlap`: gradient sync overlapped with backward */
	bool overlap_param_gather;
	cs_prefetch backward_prefetch;
	bool forward_prefetch;
	int64_t max_inflight_gathers;
	cs_recompute recompute;
	cs_recompute_method recompute_method; /* full: uniform | block */
	int64_t recompute_layers;             /* full: layers a chunk (uniform), recomputed (block) */
	unsigned recompute_modules;           /* selective: CS_RCM_ bits */
	int64_t recompute_every;              /* selective: every k-th block fully (torchtitan) */
	bool flash_attention;
	cs_cp_kind cp_kind;
	double expert_imbalance;    /* busiest expert rank's load / mean, >= 1 */
	cs_moe_routing moe_routing; /* balanced: expert_imbalance as given; else drawn */
	double moe_routing_skew;    /* zipf: the exponent of the experts' popularity */
	cs_moe_dispatcher moe_dispatcher;
	int64_t moe_node_limit;  /* deepep: nodes a token's experts lie on, 0 any */
	double moe_capacity;     /* an expert's tokens at most this times the mean, the rest
	                         * dropped; 0 dropless */
	bool moe_pad;            /* every expert's input padded to its capacity */
	bool moe_router_fusion;  /* the router's top-k, softmax and aux loss in fused kernels */
	bool moe_permute_fusion; /* the token permutations in fused kernels */
	bool moe_a2a_overlap;    /* a forward and a backward of different micro-batches run
	                          * together, each one's all-to-alls under the other's compute */
} cs_parallel_spec;

/*
 * The experts' mesh. With `etp` set the experts fold over a stage's
 * tp x cp x dp ranks as Megatron-Core's expert rank generator lays them out
 * (expert TP innermost, then EP, then expert DP): the EP group covers the
 * attention TP ranks beyond the first etp, the CP ranks and ep / (tp / etp
 * x cp) of the DP ranks, the mesh's ep axis. Without it EP lies inside DP,
 * every expert is split over the whole TP group, and the experts' gradients
 * are reduced over (dp / ep) x cp ranks.
 */
static inline bool cs_parallel_folded(const cs_parallel_spec *p) { return p->etp > 0; }

static inline int64_t cs_parallel_etp(const cs_parallel_spec *p) { return p->etp > 0 ? p->etp : p->tp; }

/* The EP group's ranks along the mesh's ep axis (the inner part of dp). */
static inline int64_t cs_parallel_ep_dp(const cs_parallel_spec *p)
{
	int64_t ep = p->ep > 0 ? p->ep : 1;
	if (!cs_parallel_folded(p))
		return ep;
	int64_t in = p->tp / p->etp * p->cp;
	return in > 0 && ep % in == 0 ? ep / in : 1;
}

/* Ranks of an expert-data-parallel group (holding the same experts). */
static inline int64_t cs_parallel_edp(const cs_parallel_spec *p)
{
	int64_t e = cs_parallel_ep_dp(p), d = p->dp / (e > 0 ? e : 1);
	return cs_parallel_folded(p) ? d : d * p->cp;
}

/* An expert-parallel group's ranks in each scale-up domain of c (its
 * gpus_per_node when unset) and the domains it spans: its ranks lie the
 * product of the axes inside ep (in p->order) apart, or, folded, etp
 * apart. */
static inline void cs_parallel_ep_span(const cs_parallel_spec *p, const cs_cluster_spec *c, int64_t *per,
				       int64_t *domains)
{
	int64_t domain = c->scale_up_domain > 0 ? c->scale_up_domain : c->gpus_per_node;
	int64_t stride = 1, ep = p->ep > 0 ? p->ep : 1, ep_dp = cs_parallel_ep_dp(p);
	for (int i = 0; i < CS_AXIS_COUNT && p->order[i] != CS_AXIS_EP; i++) {
		int a = p->order[i];
		stride *= a == CS_AXIS_TP   ? p->tp
			  : a == CS_AXIS_CP ? p->cp
			  : a == CS_AXIS_PP ? p->pp
					    : p->dp / ep_dp;
	}
	if (cs_parallel_folded(p))
		stride = p->etp; /* the order begins tp, cp, ep (validated) */
	*per = stride >= domain ? 1 : domain / stride < ep ? domain / stride : ep;
	if (*per < 1)
		*per = 1;
	*domains = (ep + *per - 1) / *per;
}

/* ---- collectives and simulation ----------------------------------------- */

typedef enum cs_coll_algo {
	CS_ALGO_AUTO,
	CS_ALGO_RING,
	CS_ALGO_TREE,
	CS_ALGO_NVLS,
	CS_ALGO_NVLS_TREE,
	CS_ALGO_HIER,
	CS_ALGO_TORUS, /* on a torus: bidirectional rings along every dimension at once */
	CS_ALGO_COUNT
} cs_coll_algo;
typedef enum cs_coll_proto {
	CS_PROTO_AUTO,
	CS_PROTO_LL,
	CS_PROTO_LL128,
	CS_PROTO_SIMPLE,
	CS_PROTO_COUNT
} cs_coll_proto;
typedef enum cs_fidelity { CS_FIDELITY_ANALYTIC, CS_FIDELITY_FLOW } cs_fidelity;

typedef struct cs_coll_spec {
	cs_coll_algo algorithm;
	cs_coll_proto protocol;
	cs_fidelity fidelity;
	int channels;      /* 0: NCCL's default for the topology */
	int qps;           /* queue pairs per network connection
	                           * (NCCL_IB_QPS_PER_CONNECTION) */
	double contention; /* scale of the measured compute slowdown while
	                           * communication kernels hold SMs (0: none) */
	/* factors on the tuner's NVLink bus bandwidth, NIC rate and latencies,
	 * from a calibration file's 'network' (0 or 1: as derived) */
	double scale_up_bw, scale_out_bw, latency;
} cs_coll_spec;

/* simulate.fold: where the scenario proves folding exact, every rank, or
 * folded (refused where it cannot fold) */
typedef enum cs_fold_mode { CS_FOLD_AUTO, CS_FOLD_OFF, CS_FOLD_ON } cs_fold_mode;

typedef struct cs_sim_spec {
	int64_t steps;
	int fold; /* cs_fold_mode */
	uint64_t seed;
	int64_t threads; /* to run the parts of one simulation on; 0 the machine's cores */
	int64_t parts;   /* most parts to split a run into, 0 the runner's choice, 1 whole;
	                    * no key: the result is the same, only the cost differs (tests
	                    * and benchmarks set it) */
} cs_sim_spec;

/* ---- reliability: failures, checkpoints, restarts over a run ------------ */

/* Classes of failure, each a rate per unit per hour of its unit: a GPU
 * (gpu, hbm), a node (host, network: the node's links and its share of the
 * switches), a NIC (one per GPU, rail-optimised) or the job (software). */
typedef enum cs_fail_class {
	CS_FAIL_GPU,
	CS_FAIL_HBM,
	CS_FAIL_HOST,
	CS_FAIL_NIC,
	CS_FAIL_NETWORK,
	CS_FAIL_SOFTWARE,
	CS_FAIL_CLASSES
} cs_fail_class;
typedef enum cs_fail_dist { CS_FAIL_EXPONENTIAL, CS_FAIL_WEIBULL } cs_fail_dist;
typedef enum cs_reliab_preset { CS_RELIAB_NONE, CS_RELIAB_LLAMA3 } cs_reliab_preset;

typedef struct cs_reliability_spec {
	cs_reliab_preset preset;      /* fills the rates left unset (< 0) */
	double rate[CS_FAIL_CLASSES]; /* per unit per hour; < 0: unset (the preset's, else 0) */
	double planned_per_day;       /* planned maintenance interruptions of the job; < 0 unset */
	cs_fail_dist distribution;    /* of each class's gaps between failures */
	double weibull_shape;
	int64_t checkpoint_interval_ns; /* of training time between checkpoints; 0: none */
	double checkpoint_bytes;        /* whole job; 0: weights + optimizer state (memory model) */
	double node_write_bw;           /* bytes/s each node writes to storage */
	double storage_bw;              /* bytes/s the shared storage takes in all (and reads back) */
	double storage_capacity;        /* bytes; 0: unlimited */
	bool async_checkpoint;          /* snapshot to host memory, write in the background */
	double snapshot_bw;             /* bytes/s per GPU of that snapshot (device to host) */
	int64_t restart_ns;             /* scheduler, process start, communicator set-up */
	int64_t spares;                 /* hot spare nodes */
	int64_t repair_ns;              /* until a failed node is back in the spare pool */
	bool elastic;                   /* without a spare, go on with fewer data-parallel replicas */
} cs_reliability_spec;

/* ---- perturbations ------------------------------------------------------ */

/* The fabric's classes of links, from the GPU out. A link tier is what a
 * straggler entry degrades ('tier: leaf', 'link: nic'); a transfer's or a
 * group's tier is the highest it crosses. One table of names serves the
 * scenario and the reports (cs_tier_name): "nvlink", "nic", "leaf", "pod". */
typedef enum cs_tier {
	CS_TIER_NVLINK, /* the scale-up links, inside one domain */
	CS_TIER_NIC,    /* the NICs: between domains under one leaf switch */
	CS_TIER_LEAF,   /* the leaves' uplinks: between leaves of one pod */
	CS_TIER_POD,    /* the pods' uplinks: between pods */
	CS_TIERS
} cs_tier;

typedef enum cs_pert_target {
	CS_PERT_GPU,
	CS_PERT_NODE,
	CS_PERT_RANKS,
	CS_PERT_LINK,
	CS_PERT_TIER,
	CS_PERT_RANDOM
} cs_pert_target;
typedef enum cs_dist {
	CS_DIST_NONE,
	CS_DIST_NORMAL,
	CS_DIST_LOGNORMAL,
	CS_DIST_GAMMA,
	CS_DIST_UNIFORM,
	CS_DIST_EXPONENTIAL
} cs_dist;

typedef struct cs_perturbation {
	cs_pert_target target;
	int64_t first, last; /* GPU, node or rank range (inclusive) */
	double compute;      /* compute time factor, > 0 (1.25 = 25 % slower) */
	double bandwidth;    /* fraction of bandwidth kept, (0, 1] */
	int64_t extra_latency_ns;
	cs_tier tier;    /* CS_PERT_TIER: every link of the tier; CS_PERT_LINK: the
	                           * GPU's own port of it (CS_TIER_NVLINK or CS_TIER_NIC) */
	cs_dist dist;    /* CS_PERT_RANDOM */
	double fraction; /* of GPUs drawn */
	double p1, p2;   /* distribution parameters (mean/sigma, shape/scale, lo/hi) */
	bool per_step;   /* redrawn every step */
	int64_t start_step;
	uint64_t seed;
	int line, col; /* where it was declared, for messages */
} cs_perturbation;

/* ---- the scenario ------------------------------------------------------- */

/* Where a key's value came from, the one record every message about it
 * reads (validation when loading, and again after cs_config_apply_override):
 * 1-based line and column in the file; line 0 when defaulted or derived;
 * line -1 when an override (--set) gave it, col then the offset of its
 * assignment in the scenario's set_text (-1 when that was full). Indexed like
 * the key table. */
#define CS_SCENARIO_MAX_KEYS 256
#define CS_SCENARIO_SET_TEXT 4096
typedef struct cs_key_pos {
	int32_t line, col;
} cs_key_pos;

/* ---- the fleet: what a production cluster's GPUs and hosts add ---------- */

/* Each effect's value < 0 is unset: the preset's (production values,
 * cs_fleet_resolve in config.h; 'ideal': every effect off). 0 turns one off. */
typedef enum cs_fleet_preset { CS_FLEET_PRODUCTION, CS_FLEET_IDEAL } cs_fleet_preset;
typedef struct cs_fleet_spec {
	cs_fleet_preset preset;
	double spread;        /* sigma of log(compute factor) across GPUs, persistent */
	double slow_machines; /* fraction of machines that compute slower */
	double slow_factor;   /* their compute time factor (> 1) */
	double diurnal;       /* peak-to-trough swing of compute time over a day */
	int64_t gc_pause_ns;  /* one Python garbage collection on the forward path */
	int64_t gc_interval;  /* steps between one rank's collections */
	int gc_sync;          /* < 0 unset; 1: every rank collects at the same step */
	int exact;            /* no key: per-GPU factors as drawn, not shared by the
	                         * tensor-parallel group (tests compare the two) */
} cs_fleet_spec;

typedef struct cs_scenario {
	char name[CS_NAME_MAX];
	char path[CS_PATH_MAX]; /* file it came from ("" for built-in) */
	cs_cluster_spec cluster;
	cs_model_spec model;
	cs_training_spec training;
	cs_parallel_spec parallel;
	cs_coll_spec coll;
	cs_sim_spec sim;
	cs_reliability_spec reliability;
	cs_fleet_spec fleet;
	int n_perturbations;
	cs_perturbation perturbations[CS_MAX_PERTURBATIONS];
	unsigned derived; /* config bookkeeping: values cs_config_validate
	                           * derived (CS_DERIVED_* in config/config.h), so
	                           * a later override derives them again */
	cs_key_pos where[CS_SCENARIO_MAX_KEYS];
	char set_text[CS_SCENARIO_SET_TEXT]; /* the overrides' assignments, each ended by NUL */
	int32_t set_used;
} cs_scenario;

/* Derived quantities every module needs; cheap, so not stored. */
static inline int64_t cs_scenario_gpus(const cs_scenario *sc)
{
	return sc->cluster.nodes * sc->cluster.gpus_per_node;
}

static inline int64_t cs_scenario_micro_batches(const cs_scenario *sc)
{
	/* sequences per DP replica per step, in micro-batches */
	return sc->training.global_batch / (sc->parallel.dp * sc->training.micro_batch);
}

#endif
