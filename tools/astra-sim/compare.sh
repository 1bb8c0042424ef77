#!/bin/sh
# Run the same Chakra traces in clustersim (run-chakra) and in ASTRA-sim's
# analytical congestion-unaware backend, and print a markdown row per
# workload: NPUs, then wall time, peak RSS and simulated step of each.
#
#   tools/astra-sim/compare.sh ASTRA_SIM_DIR [BUILD_DIR] [WORK_DIR]
#
# ASTRA_SIM_DIR is an ASTRA-sim checkout built with
# build/astra_analytical/build.sh (see tools/astra-sim/README.md); BUILD_DIR
# defaults to build-release, WORK_DIR (traces, logs) to /tmp/cs-astra.
# Run from the repository root. Needs /usr/bin/time and python3 (and
# Debian's python3-protobuf for ASTRA-sim's microbenchmark generator).
set -eu
astra_dir=${1:?usage: tools/astra-sim/compare.sh ASTRA_SIM_DIR [BUILD_DIR] [WORK_DIR]}
build=${2:-build-release}
work=${3:-/tmp/cs-astra}
cs=$(pwd)/$build/clustersim
astra=$astra_dir/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware
cfg=$(pwd)/tools/astra-sim
[ -x "$cs" ] || { echo "compare: no clustersim at $cs" >&2; exit 1; }
[ -x "$astra" ] || { echo "compare: no ASTRA-sim binary at $astra" >&2; exit 1; }
mkdir -p "$work"

# seconds and KB of the last timed command, from /usr/bin/time -o
timed() { out=$1; shift; /usr/bin/time -f "%e %M" -o "$out.time" "$@" >"$out" 2>"$out.err"; }
wall() { cut -d' ' -f1 "$1.time"; }
rss_mb() { awk '{ printf "%.0f", $2 / 1024 }' "$1.time"; }

# compare NAME NPUS TRACES(DIR/PREFIX) SCENARIO NETWORK SYSTEM [--set K=V]...
compare() {
	name=$1 npus=$2 traces=$3 scenario=$4 network=$5 system=$6
	shift 6
	groups=empty
	[ -e "$traces.comm_group.json" ] && groups=$traces.comm_group.json
	timed "$work/$name.cs" "$cs" run-chakra "$traces" --cluster "$scenario" "$@" --format json \
		--no-progress
	cs_step=$(python3 -c 'import json, sys; print("%.6f" % json.load(open(sys.argv[1]))["step_time_s"])' \
		"$work/$name.cs")
	(cd "$work" && timed "$work/$name.astra" "$astra" --workload-configuration="$traces" \
		--comm-group-configuration="$groups" --system-configuration="$cfg/$system" \
		--network-configuration="$cfg/$network" \
		--remote-memory-configuration="$cfg/remote_memory.json") ||
		{ echo "compare: ASTRA-sim failed on $name, see $work/$name.astra" >&2; tail -3 "$work/$name.astra.err" >&2; }
	astra_step=$(sed -n 's/.*sys\[[0-9]*\] finished, \([0-9]*\) cycles.*/\1/p' "$work/$name.astra" |
		sort -n | tail -1 | awk '{ if ($1 != "") printf "%.6f", $1 / 1e9 }')
	echo "| $name | $npus | $(wall "$work/$name.cs") | $(rss_mb "$work/$name.cs") | $cs_step |" \
	     "$(wall "$work/$name.astra") | $(rss_mb "$work/$name.astra") | ${astra_step:-failed} |"
}

echo "| workload | NPUs | clustersim wall (s) | clustersim peak RSS (MB) | clustersim step (s) |" \
     "ASTRA-sim wall (s) | ASTRA-sim peak RSS (MB) | ASTRA-sim step (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for s in ddp-gpt-small:8:a100-1x8.yml:system-1d.json fsdp-llama3-8b-16gpu:16:h100-2x8.yml:system-2d.json \
	3d-llama3-70b-64gpu:64:h100-8x8.yml:system-2d.json moe-deepseek-ep:256:h100-32x8.yml:system-2d.json; do
	IFS=: read -r name npus network system <<EOF
$s
EOF
	"$cs" export-chakra "scenarios/$name.yaml" --out "$work/$name" --astra-sim >/dev/null
	compare "$name" "$npus" "$work/$name/$name" "scenarios/$name.yaml" "$network" "$system"
done
# ASTRA-sim's own microbenchmark generator: one 1 GiB collective per NPU,
# no process group; clustersim runs it as data parallel over all 64
for op in all_reduce all_gather; do
	(cd "$work" && PYTHONPATH=$astra_dir /usr/bin/python3 \
		"$astra_dir/examples/workload/microbenchmarks/generator_scripts/$op.py" \
		--npus-count 64 --coll-size 1024)
	compare "$op-1GiB" 64 "$work/$op/64npus_1024MB/$op" scenarios/3d-llama3-70b-64gpu.yaml \
		h100-8x8.yml system-2d.json --set parallelism.tp=1 --set parallelism.pp=1 \
		--set parallelism.dp=64
done
