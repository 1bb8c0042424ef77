/*
 * aliases.c - other tools' spellings of the scenario's keys and values:
 * Megatron-LM's and torchtitan's flag names (recomputation's too),
 * PyTorch's FSDP sharding strategies, torchtitan's and PyTorch's schedule
 * classes. A value alias is
 * accepted as its canonical value; a key alias is only suggested ("did
 * you mean"), since its meaning may differ in detail.
 */
#include <ctype.h>
#include <string.h>

#include "config/config_int.h"

static const struct {
	const char *key, *alias, *value;
} value_aliases[] = {
	/* torch.distributed.pipelining's schedule classes, torchtitan's names */
	{ "parallelism.pipeline.schedule", "GPipe", "gpipe" },
	{ "parallelism.pipeline.schedule", "ScheduleGPipe", "gpipe" },
	{ "parallelism.pipeline.schedule", "Schedule1F1B", "1f1b" },
	{ "parallelism.pipeline.schedule", "Interleaved1F1B", "interleaved" },
	{ "parallelism.pipeline.schedule", "ScheduleInterleaved1F1B", "interleaved" },
	{ "parallelism.pipeline.schedule", "ZBVZeroBubble", "zb-v" },
	{ "parallelism.pipeline.schedule", "ScheduleZBVZeroBubble", "zb-v" },
	/* torch.distributed.fsdp.ShardingStrategy */
	{ "parallelism.data_parallel.sharding", "NO_SHARD", "none" },
	{ "parallelism.data_parallel.sharding", "FULL_SHARD", "zero3" },
	{ "parallelism.data_parallel.sharding", "HYBRID_SHARD", "hybrid" },
	/* Megatron-LM's name for the MoE layer's recompute (the deprecation
	 * message of --moe-layer-recompute) */
	{ "parallelism.recompute_modules", "moe_layer", "moe" },
	/* torch dtypes */
	{ "training.precision", "bfloat16", "bf16" },
	{ "training.precision", "float16", "fp16" },
	{ "training.precision", "float32", "fp32" },
	/* Transformer Engine's recipes (common/recipe/__init__.py) */
	{ "training.precision", "DelayedScaling", "fp8" },
	{ "training.precision", "Float8CurrentScaling", "fp8-current" },
	{ "training.precision", "tensorwise", "fp8-current" }, /* Megatron-LM, torchao */
	{ "training.precision", "MXFP8BlockScaling", "mxfp8" },
	{ "training.precision", "NVFP4BlockScaling", "nvfp4" },
	{ "training.grad_dtype", "bfloat16", "bf16" },
	{ "training.grad_dtype", "float32", "fp32" },
};

static const struct {
	const char *alias, *key;
} key_aliases[] = {
	/* Megatron-LM's arguments (megatron/training/arguments.py) */
	{ "tensor_model_parallel_size", "parallelism.tp" },
	{ "pipeline_model_parallel_size", "parallelism.pp" },
	{ "context_parallel_size", "parallelism.cp" },
	{ "expert_model_parallel_size", "parallelism.ep" },
	{ "expert_tensor_parallel_size", "parallelism.etp" },
	{ "data_parallel_size", "parallelism.dp" },
	{ "num_layers_per_virtual_pipeline_stage", "parallelism.pipeline.virtual_stages" },
	{ "virtual_pipeline_model_parallel_size", "parallelism.pipeline.virtual_stages" },
	{ "micro_batch_size", "training.micro_batch" },
	{ "global_batch_size", "training.global_batch" },
	{ "seq_length", "training.seq_len" },
	{ "num_layers", "model.layers" },
	{ "hidden_size", "model.hidden" },
	{ "num_attention_heads", "model.heads" },
	{ "num_query_groups", "model.kv_heads" },
	{ "ffn_hidden_size", "model.ffn" },
	{ "num_experts", "model.experts" },
	{ "moe_router_topk", "model.top_k" },
	{ "recompute_granularity", "parallelism.recompute" },
	{ "recompute_activations", "parallelism.recompute" },
	{ "recompute_method", "parallelism.recompute_method" },
	{ "recompute_num_layers", "parallelism.recompute_layers" },
	{ "recompute_modules", "parallelism.recompute_modules" },
	{ "use_distributed_optimizer", "parallelism.data_parallel.sharding" },
	/* torchtitan's job config ([parallelism]) */
	{ "tensor_parallel_degree", "parallelism.tp" },
	{ "pipeline_parallel_degree", "parallelism.pp" },
	{ "context_parallel_degree", "parallelism.cp" },
	{ "data_parallel_shard_degree", "parallelism.dp" },
	{ "pipeline_parallel_schedule", "parallelism.pipeline.schedule" },
	{ "enable_async_tensor_parallel", "parallelism.tp_overlap" },
	/* ([activation_checkpoint]): an integer option is recompute_every, "op"
	 * is recompute_modules: [op] */
	{ "selective_ac_option", "parallelism.recompute_every" },
};

/* Equal but for case, '-' against '_', and dashes, underscores or
 * dots left out ("ZBVZeroBubble" and "zbv_zero_bubble" alike). */
bool cs__config_loose_eq(const char *a, const char *b)
{
	for (;;) {
		while (*a == '-' || *a == '_' || *a == '.' || *a == ' ')
			a++;
		while (*b == '-' || *b == '_' || *b == '.' || *b == ' ')
			b++;
		if (!*a || !*b)
			return *a == *b;
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
		a++;
		b++;
	}
}

const char *cs__config_value_alias(const char *key, const char *text)
{
	for (size_t i = 0; i < sizeof value_aliases / sizeof value_aliases[0]; i++)
		if (strcmp(value_aliases[i].key, key) == 0 &&
		    cs__config_loose_eq(value_aliases[i].alias, text))
			return value_aliases[i].value;
	return NULL;
}

const char *cs__config_key_alias(const char *name)
{
	const char *last = strrchr(name, '.');
	last = last ? last + 1 : name;
	for (size_t i = 0; i < sizeof key_aliases / sizeof key_aliases[0]; i++)
		if (cs__config_loose_eq(key_aliases[i].alias, last))
			return key_aliases[i].key;
	return NULL;
}
