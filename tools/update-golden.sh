#!/bin/sh
# Rewrite the golden results of tests/test_plan.c after an intended change
# of the model; review the diff before committing it.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
ninja -C "$build" clustersim >/dev/null
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
	>tests/golden/3d-llama3-70b-64gpu.json
NO_COLOR=1 "$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --no-progress \
	>tests/golden/3d-llama3-70b-64gpu.txt
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format csv --no-progress \
	>tests/golden/3d-llama3-70b-64gpu.csv
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
	--set fleet=ideal >tests/golden/3d-llama3-70b-64gpu-ideal.json
"$build"/clustersim run scenarios/ddp-gpt-small.yaml --no-progress \
	--trace tests/golden/ddp-gpt-small.trace.json >/dev/null
"$build"/clustersim run scenarios/llama3-405b-16k.yaml --set simulate.fold=true --format json \
	--no-progress >tests/golden/llama3-405b-16k-folded.json
"$build"/clustersim run scenarios/h200-llama8l-h4096-s8192.yaml --format json --no-progress \
	>tests/golden/h200-llama8l-h4096-s8192.json
"$build"/clustersim run scenarios/h200-llama8l-h4096-s8192.yaml --format json --no-progress \
	--set model.attention_window=4096 >tests/golden/h200-llama8l-window4096.json
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
	--set model.parallel_block=true >tests/golden/3d-llama3-70b-64gpu-parallel-block.json
for set in positions=alibi embedding_norm=true; do
	name=$(echo "$set" | sed 's/positions=//; s/_norm=true/-norm/; s/_/-/g')
	"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
		--set "model.$set" >"tests/golden/3d-llama3-70b-64gpu-$name.json"
done
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
	--set training.optimizer=adafactor >tests/golden/3d-llama3-70b-64gpu-adafactor.json
"$build"/clustersim run scenarios/h200-llama8l-h4096-s8192.yaml --format json --no-progress \
	--set training.precision=fp8 >tests/golden/h200-llama8l-fp8.json
"$build"/clustersim run scenarios/palm-540b-6144tpu.yaml --format json --no-progress \
	--set simulate.fold=true >tests/golden/palm-540b-6144tpu-folded.json
"$build"/clustersim run scenarios/eos-gpt3-175b-fp8.yaml --format json --no-progress \
	>tests/golden/eos-gpt3-175b-fp8.json
"$build"/clustersim run scenarios/validation/dgxc/dgxc-llama31-70b-fp8-64gpu.yaml --format json \
	--no-progress --set fleet=ideal >tests/golden/dgxc-llama31-70b-fp8-64gpu-ideal.json
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
	--set model.kv_heads=64 --set model.kv_lora_rank=512 --set model.q_lora_rank=1536 \
	>tests/golden/3d-llama3-70b-64gpu-mla.json
"$build"/clustersim run scenarios/moe-qwen3-235b-256gpu.yaml --format json --no-progress \
	>tests/golden/moe-qwen3-235b-256gpu.json
"$build"/clustersim run scenarios/moe-deepseek-ep.yaml --format json --no-progress \
	--set parallelism.tp=2 --set parallelism.sequence_parallel=true --set parallelism.ep=16 \
	--set parallelism.etp=2 \
	>tests/golden/moe-deepseek-ep-etp2.json
"$build"/clustersim run scenarios/moe-deepseek-ep.yaml --format json --no-progress \
	--set parallelism.moe_dispatcher=deepep --set parallelism.moe_node_limit=2 \
	>tests/golden/moe-deepseek-ep-deepep.json
"$build"/clustersim run scenarios/moe-deepseek-ep.yaml --format json --no-progress \
	--set parallelism.moe_capacity_factor=1.25 --set parallelism.moe_pad_to_capacity=true \
	--set parallelism.moe_router_fusion=true --set parallelism.moe_permute_fusion=true \
	>tests/golden/moe-deepseek-ep-pad-fused.json
"$build"/clustersim run scenarios/moe-deepseek-ep.yaml --format json --no-progress \
	--set parallelism.pipeline.schedule=interleaved --set parallelism.pipeline.virtual_stages=2 \
	--set parallelism.moe_a2a_overlap=true >tests/golden/moe-deepseek-ep-a2a-overlap.json
"$build"/clustersim run scenarios/moe-deepseek-ep.yaml --format json --no-progress \
	--set parallelism.expert_imbalance=1 --set parallelism.moe_routing=zipf \
	--set parallelism.moe_routing_skew=0.8 >tests/golden/moe-deepseek-ep-zipf.json
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
	--set collectives.fidelity=flow --set cluster.fabric.leaf_gpus=32 \
	--set cluster.fabric.routing=ecmp >tests/golden/3d-llama3-70b-64gpu-flow-ecmp.json
for p in mxfp8 nvfp4; do
	"$build"/clustersim run scenarios/validation/nemo/nemo2502-llama3-8b-fp8-b200-8gpu.yaml --format json \
		--no-progress --set training.precision=$p --set fleet=ideal >"tests/golden/nemo-b200-llama3-8b-$p.json"
done
"$build"/clustersim run scenarios/h200-llama8l-h4096-s8192.yaml --format json --no-progress \
	--set training.precision=fp8-current >tests/golden/h200-llama8l-fp8-current.json
"$build"/clustersim run scenarios/h200-llama8l-h4096-s8192.yaml --format json --no-progress \
	--set training.compile=true >tests/golden/h200-llama8l-compile.json
"$build"/clustersim run scenarios/gb200-nvl72-llama3-70b.yaml --format json --no-progress \
	>tests/golden/gb200-nvl72-llama3-70b.json
"$build"/clustersim run scenarios/gb200-nvl72-llama3-70b.yaml --format json --no-progress \
	--set cluster.nodes=36 --set training.global_batch=144 --set parallelism.dp=9 \
	>tests/golden/gb200-nvl72-llama3-70b-2racks.json
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
	--set parallelism.recompute=full --set parallelism.recompute_method=block \
	--set parallelism.recompute_layers=10 >tests/golden/3d-llama3-70b-64gpu-recompute-block.json
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
	--set parallelism.recompute=selective --set parallelism.recompute_modules=core_attn,layernorm,mlp \
	>tests/golden/3d-llama3-70b-64gpu-recompute-modules.json
"$build"/clustersim run scenarios/fsdp-llama3-8b-16gpu.yaml --format json --no-progress \
	--set parallelism.recompute=selective --set parallelism.recompute_modules=op \
	>tests/golden/fsdp-llama3-8b-16gpu-recompute-op.json
git diff --stat -- tests/golden
