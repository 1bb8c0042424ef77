#!/bin/sh
# Run the clustersim command under valgrind's memcheck and fail on any
# memory error or definite/indirect leak:
#   - 'validate' and 'run --no-progress' of every scenario in scenarios/;
#     scenarios of more than 1,024 GPUs run with --set simulate.fold=true (one
#     representative rank per role) so that they stay fast under valgrind,
#     and only validate when they have stragglers (which forbid folding);
#   - 'run' with every output file (--trace, --per-rank, --timeline, json);
#   - 'coll', 'memory', 'pipeline' (every schedule), 'sweep' and 'plan'
#     (on two threads), 'compare' on both measured traces;
#   - bad input (exit status 2), which must not leak either.
#
#   tools/check-valgrind.sh
#
# Builds its own plain build in build-valgrind (override with
# VALGRIND_BUILD); the logs go to build-valgrind/valgrind/.
set -eu
cd "$(dirname "$0")/.."

build=${VALGRIND_BUILD:-build-valgrind}
for tool in valgrind meson ninja; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "check-valgrind: '$tool' is missing (apt-get install valgrind)" >&2
		exit 1
	fi
done
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" --buildtype=debugoptimized -Dtests=disabled -Dmpi=disabled >/dev/null
fi
ninja -C "$build" clustersim >/dev/null

bin=$build/clustersim
logs=$build/valgrind
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rm -rf "$logs"
mkdir -p "$logs"

n=0
failed=0
# check EXPECTED_STATUS NAME ARGS...: run clustersim ARGS under memcheck.
check() {
	want=$1
	name=$2
	shift 2
	n=$((n + 1))
	log=$logs/$(printf '%03d' $n)-$name.log
	set +e
	valgrind --quiet --error-exitcode=1 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
		--track-origins=yes --log-file="$log" "$bin" "$@" >"$out/stdout" 2>"$out/stderr"
	got=$?
	set -e
	if [ "$got" -ne "$want" ] || [ -s "$log" ]; then
		failed=$((failed + 1))
		echo "FAIL (exit $got, expected $want): $bin $*" >&2
		sed 's/^/  | /' "$log" | head -40 >&2
		[ "$got" -ne "$want" ] && sed 's/^/  stderr: /' "$out/stderr" | tail -5 >&2
	else
		echo "ok   $name: $*"
	fi
}

for f in scenarios/*.yaml; do
	s=$(basename "$f" .yaml)
	check 0 "validate-$s" validate "$f" --allow-oom
	gpus=$("$bin" validate "$f" --allow-oom | sed -n 's/.*: \([0-9][0-9]*\) GPUs .*/\1/p')
	if [ "${gpus:-0}" -gt 1024 ]; then
		if ! grep -q '^stragglers:' "$f"; then
			check 0 "run-$s" run --no-progress "$f" --set simulate.fold=true
		else
			# Stragglers forbid folding, and every rank of a large cluster
			# under valgrind takes too long; run-stragglers below covers
			# the perturbed run on a small cluster.
			echo "skip run-$s: $gpus GPUs with stragglers cannot be folded"
		fi
	else
		check 0 "run-$s" run --no-progress "$f"
	fi
done

small=scenarios/ddp-gpt-small.yaml
pp=scenarios/3d-llama3-70b-64gpu.yaml
check 0 run-outputs run --no-progress "$pp" --format json --per-rank "$out/ranks.csv" \
	--trace "$out/trace.json" --trace-ranks 0,4-7 --timeline "$out/timeline.svg" --critical-path
check 0 run-set run --no-progress "$small" --set parallelism.data_parallel.overlap=false \
	--set 'cluster.scale_out.bandwidth=200 Gb/s' --set collectives.fidelity=flow
cat >"$out/stragglers.yaml" <<'YAML'
name: stragglers
cluster: {gpu: h100-sxm-80g, nodes: 4, fabric: {leaf_gpus: 16}}
model: {preset: llama3-8b, layers: 8}
training: {seq_len: 2048, micro_batch: 1, global_batch: 16}
parallelism: {tp: 2, pp: 2, data_parallel: {sharding: zero1}}
stragglers:
  - {gpu: 3, compute: 1.25}
  - {node: 1, compute: 1.1}
  - {link: nic, gpu: 17, bandwidth: 0.5, latency: 10 us}
  - {tier: leaf, bandwidth: 0.5}
  - {random: {fraction: 0.1, distribution: lognormal, mu: 0, sigma: 0.1}, seed: 7, per_step: true}
simulate: {steps: 2}
YAML
check 0 run-stragglers run --no-progress "$out/stragglers.yaml" --format json

check 0 coll-all-reduce coll all_reduce_perf --gpu h100-sxm-80g --nodes 2 -b 8 -e 8G
check 0 coll-scenario coll all_gather_perf scenarios/ddp-llama2-7b-2node.yaml --algo ring \
	--proto simple --max 64MB --format json
check 0 coll-all-to-all coll alltoall_perf --gpu a100-sxm-80g --nodes 4 --factor 4
check 0 memory-flags memory --model llama3-8b --seq-len 8192 --micro-batch 2 --dp 8 --zero 2
check 0 memory-scenario memory "$pp" --recompute selective --sequence-parallel --format json
for sch in gpipe 1f1b zb-h1; do
	check 0 "pipeline-$sch" pipeline --schedule $sch --stages 4 --micro-batches 8
done
check 0 pipeline-interleaved pipeline --schedule interleaved --stages 4 --micro-batches 8 \
	--virtual-stages 2 --format json
check 0 pipeline-zb-v pipeline --schedule zb-v --stages 4 --micro-batches 16 \
	--timeline "$out/zbv.svg"
check 0 sweep sweep "$small" --out "$out/sweep.csv" --plot "$out/sweep.svg" --jobs 2 \
	--no-progress --vary parallelism.data_parallel.bucket=1MiB,25MiB \
	--vary parallelism.data_parallel.overlap=true,false
check 0 plan plan "$small" --top 3 --jobs 2 --max-sims 20
check 0 plan-csv plan scenarios/ddp-llama2-7b-2node.yaml --format csv --out "$out/plans.csv" \
	--jobs 2 --max-sims 10
check 0 compare compare tests/data/trace_llama8l-h4096-s8192.json.gz \
	scenarios/h200-llama8l-h4096-s8192.yaml
check 0 compare-json compare tests/data/trace_gpt-h5120-8l-s2048-mb4.json.gz \
	scenarios/h200-gpt-h5120-8l-s2048-mb4.yaml --format json

# Chakra traces out and back in (two stages, so sends and receives too)
sm2="--set model.layers=2 --set parallelism.tp=2 --set parallelism.pp=2 --set parallelism.dp=2"
sm2="$sm2 --set training.global_batch=8 --set training.micro_batch=1"
# shellcheck disable=SC2086
check 0 export-chakra export-chakra "$small" --out "$out/et" $sm2
# shellcheck disable=SC2086
check 0 run-chakra run-chakra "$out/et" --cluster "$small" --no-progress $sm2

# Bad input: exit status 2, and still no leak.
printf 'cluster: {gpu: h100-sxm-80g, nodes: 2}\nmodel: {preset: llama3-8b}\n' >"$out/ok.yaml"
printf 'cluster:\n  gpu: h100-sxm-80g\n  nodez: 2\nmodel: {preset: llama3-8b}\n' >"$out/typo.yaml"
printf 'cluster: [1, 2\n' >"$out/broken.yaml"
check 2 bad-key validate "$out/typo.yaml"
check 2 bad-yaml run --no-progress "$out/broken.yaml"
check 2 bad-set run --no-progress "$out/ok.yaml" --set cluster.nodes=-1
check 2 bad-plan validate "$out/ok.yaml" --set parallelism.tp=3
check 2 bad-file validate "$out/missing.yaml"
check 2 bad-option run "$out/ok.yaml" --frobnicate
check 2 bad-command frobnicate
head -c 5000 tests/data/trace_llama8l-h4096-s8192.json.gz >"$out/cut.json.gz"
check 2 bad-trace-gzip compare "$out/cut.json.gz" "$small"
head -c 3000 "$out/et/ddp-gpt-small.1.et" >"$out/et/ddp-gpt-small.0.et"
# shellcheck disable=SC2086
check 2 bad-chakra run-chakra "$out/et" --cluster "$small" --no-progress $sm2
printf '{"traceEvents": [{"cat": "kernel", "name": "k", "ts": 1}' >"$out/cut.json"
check 2 bad-trace-json compare "$out/cut.json" "$small"

echo "check-valgrind: $n commands, $failed failed (logs in $logs)"
[ "$failed" -eq 0 ]
