/*
 * presets.c - built-in GPUs, servers and model shapes.
 *
 * GPU figures are dense (no sparsity) datasheet numbers; gemm_efficiency is
 * the best measured BF16 GEMM over peak (MAMF). Sources, via the project's
 * docs/references.md, Hardware: NVIDIA datasheets as tabulated in stas00/
 * ml-engineering compute/accelerator/README.md (peaks, HBM, SMs, the MAMF
 * table); cudnn-frontend PR #650 (H100 FLOP/clk). attn_efficiency 0.6 sits
 * inside FlashAttention-2's measured 50-73 % of peak (Dao 2023, arXiv
 * 2307.08691). hbm_efficiency 0.8 is an assumption (achievable streaming
 * fraction of HBM bandwidth), documented in docs/scenarios.md.
 *
 * Model shapes: Llama 2 and Llama 3 papers and model cards (as in the
 * seed chapter's TransformerConfig table), GPT-3 (Brown et al. 2020, Table
 * 2.1), Megatron-LM 1T (Narayanan et al. 2021, Table 1), DeepSeek-V3
 * (DeepSeek-AI 2024, arXiv 2412.19437, section 4.2). "deepseek-v3" has the
 * report's multi-head latent attention (MLA); "deepseek-v3-like" keeps the
 * older shape with plain multi-head attention, for the scenarios written
 * against it.
 */
#include <string.h>

#include "config/config.h"

#define TF 1e12
#define MIB 1048576.0

static const cs_gpu_spec gpus[] = {
	/* name, bf16, fp8, fp4 (dense NVFP4), hbm, hbm bw, sms, gemm, attn, hbm eff, nvls, arch, kernel
	 * profile (docs/kernel-profiles.md: the H200's is measured, the others are
	 * derived from it by stated rules), calibration (none), clock (the profile's).
	 * hbm is the memory the driver reports (NVML, nvidia-smi's total), not the
	 * datasheet's round figure, which counts about 2^30 B to its GB: 81,559
	 * MiB (85.5e9 B) on an H100 SXM "80 GB", 81,920 on an A100 SXM 80 GB,
	 * 143,771 on an H200 SXM "141 GB", 183,359 on a B200 "180 GB"
	 * (docs/memory-model.md, "Capacity"). */
	{ "a100-sxm-80g", 312 * TF, 0, 0, 81920 * MIB, 2.0e12, 108, 0.869, 0.6, 0.8, 0, 80, "a100-sxm", "",
	  CS_CLOCK_AUTO, 0, 0, 0 },
	{ "h100-sxm-80g", 989 * TF, 1979 * TF, 0, 81559 * MIB, 3.35e12, 132, 0.80, 0.6, 0.8, 1, 90,
	  "h100-sxm", "", CS_CLOCK_AUTO, 0, 0, 0 },
	/* H800 SXM5 (NVIDIA's export variant, as DeepSeek-V3 trained on it:
	 * arXiv 2412.19437 section 3.1): the H100 SXM's compute and HBM, NVLink
	 * cut to 400 GB/s bidirectional, 200 GB/s per direction; 8 x 400 Gb/s IB */
	{ "h800-sxm-80g", 989 * TF, 1979 * TF, 0, 81559 * MIB, 3.35e12, 132, 0.80, 0.6, 0.8, 1, 90,
	  "h100-sxm", "", CS_CLOCK_AUTO, 0, 0, 200e9 },
	{ "h200-sxm-141g", 989 * TF, 1979 * TF, 0, 143771 * MIB, 4.8e12, 132, 0.80, 0.6, 0.8, 1, 90,
	  "h200-sxm", "", CS_CLOCK_AUTO, 0, 0, 0 },
	{ "b200", 2250 * TF, 4500 * TF, 9000 * TF, 183359 * MIB, 8.0e12, 148, 0.776, 0.6, 0.8, 1, 100, "b200",
	  "", CS_CLOCK_AUTO, 0, 0, 0 },
	/* GB200 and GB300 in an NVL72 rack (docs/references.md, Hardware). Dense
	 * peaks from NVIDIA's rack figures over its 72 GPUs: GB200 2.5 PF bf16,
	 * 5 PF fp8, 10 PF fp4 (its B200 at 1,200 W); GB300 (Blackwell Ultra,
	 * compute capability 10.3) 2.5, 5 and 15 PF. HBM3e at 8 TB/s: the GB200's
	 * 186 GB is 189,471 MiB to the driver (nvidia-smi); no driver figure is
	 * published for the GB300's 288 GB, taken as the GB200's visible share
	 * of its physical 8 x 24 GiB applied to 8 x 36 GiB (284,206 MiB). SMs
	 * 148 and 160. MAMF is the B200's fraction of peak (the gb200 profile's
	 * rule). The rack as their server: cs_preset_server_defaults. */
	{ "gb200-nvl72", 2500 * TF, 5000 * TF, 10000 * TF, 189471 * MIB, 8.0e12, 148, 0.776, 0.6, 0.8, 1, 100,
	  "gb200", "", CS_CLOCK_AUTO, 0, 0, 0 },
	{ "gb300-nvl72", 2500 * TF, 5000 * TF, 15000 * TF, 284206 * MIB, 8.0e12, 160, 0.776, 0.6, 0.8, 1, 103,
	  "gb200", "", CS_CLOCK_AUTO, 0, 0, 0 },
	/* TPU v4 (Cloud TPU v4 documentation; Jouppi et al., ISCA 2023): 275 TFLOP/s
	 * bf16, no fp8, 32 GiB HBM2 at 1,200 GB/s, two TensorCores of four 128x128
	 * MXUs (8 in "sms": the units a GEMM's tiles spread over), six ICI links.
	 * A link's 46.9 GB/s per direction is the pod's 24 TB/s bisection over the
	 * 512 links a cut through a 16x16x16 torus crosses. No measured matmul or
	 * attention fraction exists here for TPU v4: gemm and attention keep the
	 * flat fallbacks (0.8, 0.6), assumptions; no kernel profile. */
	{ "tpu-v4", 275 * TF, 0, 0, 32 * 1073741824.0, 1.2e12, 8, 0.8, 0.6, 0.8, 0, 90, "none", "",
	  CS_CLOCK_AUTO, 6, 24e12 / 512, 0 },
};

#define NGPUS (sizeof gpus / sizeof gpus[0])

/* A preset names what it has; what it leaves out is 0: no experts, every
 * key attended, the sequential block, the arch's positions and activation,
 * head_dim = hidden / heads, no latent attention. */
#define DENSE(n, a, L, h, H, kv, f, V, pos, tied)                                                     \
	{                                                                                             \
		.name = n, .arch = a, .layers = L, .hidden = h, .heads = H, .kv_heads = kv, .ffn = f, \
		.vocab = V, .max_positions = pos, .tied_embeddings = tied                             \
	}

#define DEEPSEEK_V3                                                                                       \
	.arch = CS_ARCH_LLAMA, .layers = 61, .hidden = 7168, .heads = 128, .kv_heads = 128, .ffn = 18432, \
	.vocab = 129280, .max_positions = 4096, .experts = 256, .top_k = 8, .shared_experts = 1,          \
	.expert_ffn = 2048, .dense_layers = 3

static const cs_model_spec models[] = {
	/* name, arch, layers, hidden, heads, kv heads, ffn, vocab, positions, tied */
	DENSE("llama2-7b", CS_ARCH_LLAMA, 32, 4096, 32, 32, 11008, 32000, 4096, false),
	DENSE("llama3-8b", CS_ARCH_LLAMA, 32, 4096, 32, 8, 14336, 128256, 131072, false),
	DENSE("llama3-70b", CS_ARCH_LLAMA, 80, 8192, 64, 8, 28672, 128256, 131072, false),
	DENSE("llama3-405b", CS_ARCH_LLAMA, 126, 16384, 128, 8, 53248, 128256, 131072, false),
	DENSE("gpt3-175b", CS_ARCH_GPT, 96, 12288, 96, 96, 49152, 50257, 2048, true),
	DENSE("megatron-1t", CS_ARCH_GPT, 128, 25600, 160, 160, 102400, 51200, 2048, true),
	/* DeepSeek-V3 (DeepSeek-AI, arXiv 2412.19437, section 4.2, and its
	 * config.json): 61 layers of width 7,168, the first 3 dense (ffn 18,432),
	 * then 1 shared and 256 routed experts of width 2,048, 8 routed a token;
	 * vocabulary 129,280, untied; its layers and experts with plain
	 * multi-head attention, then with its multi-head latent attention of 128
	 * heads: a 1,536-wide query latent and a 512-wide key/value one, query
	 * and key heads of 128 + 64 rotary, value heads of 128. 671 B
	 * parameters, 37 B active. */
	/* Mixtral 8x7B (Jiang et al. 2024, arXiv 2401.04088, Table 1, and its
	 * config.json): 32 layers of width 4,096, 32 heads with 8 KV heads, 8
	 * experts of width 14,336 in every layer, 2 a token, no shared one;
	 * vocabulary 32,000, untied. 46.7 B parameters, 12.9 B active. */
	{ .name = "mixtral-8x7b",
	  .arch = CS_ARCH_LLAMA,
	  .layers = 32,
	  .hidden = 4096,
	  .heads = 32,
	  .kv_heads = 8,
	  .ffn = 14336,
	  .vocab = 32000,
	  .max_positions = 32768,
	  .experts = 8,
	  .top_k = 2,
	  .expert_ffn = 14336 },
	/* Qwen3 (Qwen Team, arXiv 2505.09388, Table 2, and the models'
	 * config.json): query/key heads of 128 whatever the width, 128 experts
	 * in every layer, 8 a token, no shared one; vocabulary 151,936, untied.
	 * 30B-A3B: 48 layers of width 2,048, 32 heads with 4 KV heads, experts
	 * of width 768 (30.5 B parameters, 3.3 B active). 235B-A22B: 94
	 * layers of width 4,096, 64 heads with 4 KV heads, experts of width
	 * 1,536 (235 B, 22 B active). Their query and key norms are not
	 * modelled. */
	{ .name = "qwen3-30b-a3b",
	  .arch = CS_ARCH_LLAMA,
	  .layers = 48,
	  .hidden = 2048,
	  .heads = 32,
	  .kv_heads = 4,
	  .head_dim = 128,
	  .ffn = 6144,
	  .vocab = 151936,
	  .max_positions = 40960,
	  .experts = 128,
	  .top_k = 8,
	  .expert_ffn = 768 },
	{ .name = "qwen3-235b-a22b",
	  .arch = CS_ARCH_LLAMA,
	  .layers = 94,
	  .hidden = 4096,
	  .heads = 64,
	  .kv_heads = 4,
	  .head_dim = 128,
	  .ffn = 12288,
	  .vocab = 151936,
	  .max_positions = 40960,
	  .experts = 128,
	  .top_k = 8,
	  .expert_ffn = 1536 },
	{ .name = "deepseek-v3-like", DEEPSEEK_V3 },
	{ .name = "deepseek-v3",
	  DEEPSEEK_V3,
	  .head_dim = 128,
	  .q_lora_rank = 1536,
	  .kv_lora_rank = 512,
	  .rope_head_dim = 64,
	  .v_head_dim = 128 },
};

#undef DENSE
#undef DEEPSEEK_V3
#define NMODELS (sizeof models / sizeof models[0])

const cs_gpu_spec *cs_preset_gpu(const char *name)
{
	for (size_t i = 0; name && i < NGPUS; i++)
		if (strcmp(gpus[i].name, name) == 0)
			return &gpus[i];
	return NULL;
}

const cs_model_spec *cs_preset_model(const char *name)
{
	for (size_t i = 0; name && i < NMODELS; i++)
		if (strcmp(models[i].name, name) == 0)
			return &models[i];
	return NULL;
}

const char *cs_preset_gpu_name(size_t i) { return i < NGPUS ? gpus[i].name : NULL; }

const char *cs_preset_model_name(size_t i) { return i < NMODELS ? models[i].name : NULL; }

/*
 * Rack-scale servers: NVL72, 18 compute trays of 4 GPUs (2 Grace CPUs, 4
 * Blackwell GPUs a tray) in one 72-GPU NVLink 5 domain through the rack's
 * NVLink switch trays (900 GB/s per direction per GPU), one scale-out NIC
 * per GPU: ConnectX-7 400 Gb/s on GB200, ConnectX-8 800 Gb/s on GB300; the
 * NIC on PCIe Gen5 x16 (GB200) or Gen6 x16 (GB300, ConnectX-8's own PCIe
 * Gen6), 63 and 126 GB/s per direction. docs/references.md, Hardware.
 */
static const struct rack {
	const char *gpu;
	int gpus_per_node, domain;
	double nic, pcie; /* B/s per direction */
} racks[] = {
	{ "gb200-nvl72", 4, 72, 400e9 / 8, 63e9 },
	{ "gb300-nvl72", 4, 72, 800e9 / 8, 126e9 },
};

static const struct rack *rack_of(const cs_gpu_spec *gpu)
{
	for (size_t i = 0; gpu && i < sizeof racks / sizeof racks[0]; i++)
		if (strcmp(racks[i].gpu, gpu->name) == 0)
			return &racks[i];
	return NULL;
}

/*
 * Standard servers (docs/references.md, Hardware): DGX A100 with NVLink 3 (600
 * GB/s bidirectional = 300 GB/s per direction), 8 HDR 200 Gb/s NICs, PCIe
 * Gen4 x16; DGX H100/H200 with NVLink 4 (450 GB/s per direction), 8 NDR
 * 400 Gb/s, PCIe Gen5 x16; B200 with NVLink 5 (900 GB/s per direction), 8
 * XDR 800 Gb/s, PCIe Gen5. Latencies follow the seed chapter's alpha: 2 us
 * per NVLink hop, 5 us per network message, 1 us across PCIe (assumption).
 * An NVL72 GPU has its rack's tray and domain instead (racks above).
 */
void cs_preset_server_defaults(const cs_gpu_spec *gpu, cs_cluster_spec *c)
{
	int arch = gpu ? gpu->arch : 90;
	const struct rack *r = rack_of(gpu);

	c->ici.bandwidth = gpu ? gpu->ici_bandwidth : 0;
	c->gpus_per_node = 8;
	c->scale_up_domain = 8;
	c->nics_per_node = 8;
	c->scale_out_kind = CS_NET_IB;
	c->scale_up.latency_ns = 2000;
	c->scale_out.latency_ns = 5000;
	c->pcie.latency_ns = 1000;
	if (arch < 90) {
		c->scale_up.bandwidth = 300e9;
		c->scale_out.bandwidth = 200e9 / 8;
		c->pcie.bandwidth = 31e9;
	} else if (arch < 100) {
		c->scale_up.bandwidth = 450e9;
		c->scale_out.bandwidth = 400e9 / 8;
		c->pcie.bandwidth = 63e9;
	} else {
		c->scale_up.bandwidth = 900e9;
		c->scale_out.bandwidth = 800e9 / 8;
		c->pcie.bandwidth = 63e9;
	}
	if (r) {
		c->gpus_per_node = r->gpus_per_node;
		c->scale_up_domain = r->domain;
		c->nics_per_node = r->gpus_per_node;
		c->scale_out.bandwidth = r->nic;
		c->pcie.bandwidth = r->pcie;
	}
	if (gpu && gpu->nvlink_bandwidth > 0)
		c->scale_up.bandwidth = gpu->nvlink_bandwidth;
}

/* Production values of the fleet's effects (docs/references.md, "The fleet"):
 * the spread a same-SKU fleet keeps per GPU, MegaScale's slow machines,
 * Llama 3's diurnal swing, ByteDance's unsynchronised GC pauses. */
void cs_fleet_resolve(const cs_fleet_spec *in, cs_fleet_spec *out)
{
	bool ideal = in->preset == CS_FLEET_IDEAL;

	*out = *in;
	if (out->spread < 0)
		out->spread = ideal ? 0 : 0.01;
	if (out->slow_machines < 0)
		out->slow_machines = ideal ? 0 : 0.005;
	if (out->slow_factor < 0)
		out->slow_factor = 1.10;
	if (out->diurnal < 0)
		out->diurnal = ideal ? 0 : 0.01;
	if (out->gc_pause_ns < 0)
		out->gc_pause_ns = ideal ? 0 : INT64_C(100000000);
	if (out->gc_interval < 0)
		out->gc_interval = 500;
	if (out->gc_sync < 0)
		out->gc_sync = 0;
}
