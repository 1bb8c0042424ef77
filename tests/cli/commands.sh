#!/bin/sh
# The options and messages of `clustersim memory`, `clustersim plan` and
# the guardrails of `clustersim calibrate`, through the binary (their reports' content is tests/test_memory.c's and
# tests/test_planner.c's): a report for good input, exit status 2 with the
# message for bad input (and nothing on standard output for memory), and
# memory's --help example.
#   tests/cli/commands.sh CLUSTERSIM SOURCE_ROOT
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
lib=$(cd "$(dirname "$0")" && pwd)/lib.sh
root=$2
gpt=$root/scenarios/ddp-gpt-small.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1

fail=0
# shellcheck source=tests/cli/lib.sh
. "$lib"

# bad NEEDLE ARGS...: clustersim ARGS exits 2 with NEEDLE on standard error
bad() {
	needle=$1
	shift
	expect 2 "$@"
	has err.txt "$needle"
}

# ---- memory ----------------------------------------------------------------
expect 0 memory --model llama3-8b --seq-len 8192 --micro-batch=2 --dp 8 --zero 2 --flash --format json
has out.txt '"fits": false' '"params": 8030261248' '"per_gpu_bytes"'
total=$(awk '/"per_gpu_bytes"/ { in_gpu = 1 } in_gpu && /"total": / { sub(/.*"total": /, "");
	printf "%.0f", $0 / 1e9; exit }' out.txt)
[ "$total" = 103 ] || { echo "FAIL: memory's total is '$total' GB, expected 103" >&2; fail=1; }
expect 0 memory --model llama3-8b --seq-len 8192 --micro-batch 1 --dp 8 --zero 2
has out.txt 'GB (1e9 B)' 'GiB (2^30 B)' 'verdict: fits'
# an NVL72 GPU without a scenario: its trays of 4 in the rack's domain (64 GPUs
# in 16 trays), its HBM the capacity
expect 0 memory --gpu gb300-nvl72 --model llama3-70b --tp 8 --pp 2 --dp 4 --zero 1
has out.txt 'verdict: fits' 'of gb300-nvl72)'

# bad_memory NEEDLE ARGS...: bad input, and no report
bad_memory() {
	bad "$@"
	[ -s out.txt ] && { echo "FAIL: clustersim $* wrote a report" >&2; fail=1; }
}
bad_memory "did you mean '--seq-len'?" memory --model llama3-8b --seq-lem 4096
bad_memory "unknown model preset 'llama3-8'; did you mean 'llama3-8b'?" memory --model llama3-8
bad_memory "unknown gpu preset 'h100'" memory --model llama3-8b --gpu h100
bad_memory "bad value '4' for '--zero'" memory --model llama3-8b --zero 4
bad_memory "bad value 'some' for '--recompute'" memory --model llama3-8b --recompute some
bad_memory "option '--tp' needs a value" memory --model llama3-8b --tp
bad_memory "no model" memory --seq-len 4096
bad_memory "bad value 'xml' for '--format'" memory --model llama3-8b --format xml
# recomputation as Megatron-LM and torchtitan configure it
expect 0 memory --model llama3-70b --seq-len 4096 --tp 8 --pp 4 --recompute full --recompute-num-layers 5
has out.txt 'recompute full (uniform, 5 layers a chunk)' 'recompute working set'
expect 0 memory --model llama3-8b --recompute selective --recompute-modules core_attn,mlp
has out.txt 'recompute selective (core_attn, mlp)'
expect 0 memory --model llama3-8b --pp 4 --recompute selective --recompute-every 2 --format json
has out.txt '"activation_bytes_per_layer"'
bad_memory "'parallelism.recompute_method' needs 'parallelism.recompute: full' (got 'none')" \
	memory --model llama3-8b --recompute-method block
bad_memory "unknown value 'foo' for 'parallelism.recompute_modules'" \
	memory --model llama3-8b --recompute selective --recompute-modules foo
bad_memory "'parallelism.recompute_layers' (9) exceeds the 8 layers of a pipeline stage's model chunk" \
	memory --model llama3-8b --pp 4 --recompute full --recompute-num-layers 9
bad_memory "'mla_up_proj' in 'parallelism.recompute_modules' needs latent attention" \
	memory --model llama3-8b --recompute selective --recompute-modules mla_up_proj

expect 0 memory --help
grep -A1 '^example:$' out.txt | grep -q '^  clustersim memory --model' ||
	{ echo "FAIL: memory --help shows no example" >&2; fail=1; }

# ---- plan ------------------------------------------------------------------
expect 0 plan "$gpt" --gpus 4 --format csv --jobs 2 --max-sims 1000 --out plans.csv
has plans.csv 'rank,tp,cp,pp,virtual_stages,dp,'
# 243 plans for 4 GPUs (tests/test_planner.c counts them), and the header
[ "$(wc -l <plans.csv)" -eq 244 ] || { echo "FAIL: plan --format csv: not 243 rows" >&2; fail=1; }
expect 0 plan "$gpt" --gpus 2 --format json --top 3 --out plans.json
has plans.json '"plans": [' '"rank": 3' '"search": {' '"heuristic_rank": ' '"considered": '
grep -qF '"rank": 4' plans.json && { echo "FAIL: plan --top 3 wrote a fourth plan" >&2; fail=1; }
expect 0 plan "$gpt" --gpus 2 --top 2 --out plans.txt
has plans.txt 'searched ' ' rank    step s' 'heuristic choice (smallest tp x pp' 'simulated'

bad "did you mean '--gpus'?" plan "$gpt" --gpu 4
bad "did you mean '--jobs'?" plan "$gpt" --job 4
bad "'--gpus' (3) must be a multiple" plan "$gpt" --gpus 3
bad "'--gpus' needs a whole number" plan "$gpt" --gpus four
bad "'--top' needs a whole number" plan "$gpt" --top 0
bad "unknown format 'xml'" plan "$gpt" --format xml
bad "'--headroom' needs a fraction" plan "$gpt" --headroom 1.5
bad "parallelism.tq" plan "$gpt" --set parallelism.tq=2
bad "such.yaml" plan "$root/no/such.yaml"
bad "no scenario file given" plan

# ---- calibrate's guardrails --------------------------------------------------
llama_trace=$root/tests/data/trace_llama8l-h4096-s8192.json.gz
# the trace of its own job: written, with the rms before and after
expect 0 calibrate "$llama_trace" "$root/scenarios/h200-llama8l-h4096-s8192.yaml" --out own.yaml
has out.txt 'rms error      5.04 % before, 0.03 % after'
# (its standard error says only which file it wrote)
[ "$(cat err.txt)" = "wrote own.yaml" ] || { echo "FAIL: calibrate on its own trace warned:" >&2; cat err.txt >&2; fail=1; }
# the trace of another job: warned, refused with the factors named, nothing written
bad "trace_llama8l-h4096-s8192.json.gz: the gemm factor 7.017 (trace 295.38 ms a step, simulated" \
	calibrate "$llama_trace" "$root/scenarios/h200-gpt125m-s1024-mb8.yaml" --out other.yaml
has err.txt 'warning: ' 'the trace and the scenario cannot be the same job: 1504 compute kernels a step' \
	"'other.yaml' not written ('--force' writes it)"
[ -e other.yaml ] && { echo "FAIL: calibrate wrote a refused calibration" >&2; fail=1; }
# --force writes it, and says so
expect 0 calibrate "$llama_trace" "$root/scenarios/h200-gpt125m-s1024-mb8.yaml" --out other.yaml --force
has err.txt 'written for '"'"'--force'"'"
[ -s other.yaml ] || { echo "FAIL: calibrate --force wrote nothing" >&2; fail=1; }
# a trace of another GPU is warned of: the H200's trace against an A100 scenario
expect 0 calibrate "$llama_trace" "$root/scenarios/h200-llama8l-h4096-s8192.yaml" --out a100.yaml \
	--set cluster.gpu=a100-sxm-80g
has err.txt "warning: $llama_trace: the trace was measured on 'NVIDIA H200', sm90 (Hopper), and the scenario's GPU 'a100-sxm-80g' is sm80 (Ampere)"
# compare warns of another job and of another GPU, and of nothing on its own
expect 0 compare "$llama_trace" "$root/scenarios/h200-llama8l-h4096-s8192.yaml"
[ -s err.txt ] && { echo "FAIL: compare of a trace with its own job warned:" >&2; cat err.txt >&2; fail=1; }
expect 0 compare "$llama_trace" "$root/scenarios/h200-gpt125m-s1024-mb8.yaml"
has err.txt "clustersim compare: warning: $llama_trace: the trace and the scenario cannot be the same job: 1504 compute kernels a step"
expect 0 compare "$llama_trace" "$root/scenarios/h200-llama8l-h4096-s8192.yaml" --set cluster.gpu=a100-sxm-80g
has err.txt "clustersim compare: warning: $llama_trace: the trace was measured on 'NVIDIA H200', sm90 (Hopper), and the scenario's GPU 'a100-sxm-80g' is sm80 (Ampere)"
# compare --kernels: the trace's kernels by name, the most time first
expect 0 compare "$llama_trace" "$root/scenarios/h200-llama8l-h4096-s8192.yaml" --kernels
has out.txt '51 kernel names, the most time first' \
	'      77.763      50.0  gemm           nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT'
expect 0 compare "$llama_trace" "$root/scenarios/h200-llama8l-h4096-s8192.yaml" --kernels --format csv
has out.txt 'name,class,kernels_per_step,time_per_step_s' 'nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT,gemm,50,0.077763185'
[ "$(wc -l <out.txt)" -eq 52 ] || { echo "FAIL: compare --kernels --format csv: not 51 rows" >&2; fail=1; }
# --kernel-classes: the user's rules first, and a bad rules file refused with its place
printf '# mine\nmemory_bound  nvjet_sm90_tst_256x128\n' >classes.txt
expect 0 compare "$llama_trace" "$root/scenarios/h200-llama8l-h4096-s8192.yaml" --kernels \
	--kernel-classes classes.txt
has out.txt '      77.763      50.0  memory_bound   nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT'
printf 'gemm nvjet\nmatmul x\n' >bad.txt
bad "bad.txt:2:1: unknown class 'matmul' (gemm, attention, memory_bound, optimizer or communication)" \
	compare "$llama_trace" "$root/scenarios/h200-llama8l-h4096-s8192.yaml" --kernel-classes bad.txt
bad "'--kernel-classes' is for a profiler trace, not '--nccl-tests'" \
	calibrate --nccl-tests "$root/tests/data/nccl-tests/dgx-a100-4node-all_reduce.txt" \
	"$root/scenarios/megatron-1t-3072gpu.yaml" --out k.yaml --kernel-classes classes.txt
# a folder of one job's traces, one per GPU (HolisticTraceAnalysis's two
# sampled ranks): their mean, a line per GPU and the slowest; the figures
# are each file's span, idle and kernels over its 2 steps
hta="$root/tests/data/kineto/hta"
expect 0 compare "$hta/sampled" "$root/scenarios/ddp-gpt-small.yaml"
has out.txt "trace      $hta/sampled: 2 GPUs' traces (their mean), 2 steps (ProfilerStep annotations), 2258 kernels" \
	'rank 0              105.16      198.10      337.76      611.41       577  sampled_rank-0.json.gz' \
	'rank 1              135.99      189.53      327.84      615.59       552  sampled_rank-1.json.gz' \
	"slowest        sampled_rank-1.json.gz: a step 615.59 ms, +0.3 % against the GPUs' mean"
expect 0 compare "$hta/sampled" "$root/scenarios/ddp-gpt-small.yaml" --format json
has out.txt '"ranks": 2,' '"file": "sampled_rank-1.json.gz",' '"step_s": 0.615591,'
# a ROCm trace against a Hopper scenario is warned of
expect 0 compare "$hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz" "$root/scenarios/h200-gpt125m-s1024-mb8.yaml"
has err.txt "the trace was measured on 'AMD Radeon Graphics', ROCm (AMD), and the scenario's GPU 'h200-sxm-141g' is sm90 (Hopper)"
# calibrate reads a folder too: the mean GPU's kernels (against a job near
# the folder's size: the refit against ddp-gpt-small diverges, tests/cli/inputs.sh)
expect 0 calibrate "$hta/sampled" "$root/scenarios/h200-gpt125m-s1024-mb8.yaml" --set training.seq_len=512 \
	--out hta.yaml --force
[ -s hta.yaml ] || { echo "FAIL: calibrate of a folder wrote nothing" >&2; fail=1; }
# the network fit: the rms before and after
expect 0 calibrate --nccl-tests "$root/tests/data/nccl-tests/dgx-a100-4node-all_reduce.txt" \
	"$root/scenarios/megatron-1t-3072gpu.yaml" --out net.yaml
has out.txt 'rms error            ' '% before, ' '% fitted (root mean square of ln(model / measured))'

exit $fail
