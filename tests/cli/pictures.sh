#!/bin/sh
# Every picture the command line can write, rendered: each command's
# --plot or --timeline run on a small input, the SVG turned into a PNG by
# librsvg's rsvg-convert at its default size (the exit status checked, the
# PNG's size the SVG's), and the SVG searched for its title and axis
# labels. The list of pictures is checked against the commands' --help, so
# a new picture option without a render here fails. Without rsvg-convert
# (tools/setup.sh --test installs it), setup is tried; the test is skipped,
# saying so, only where that cannot install it either.
#   tests/cli/pictures.sh CLUSTERSIM SOURCE_ROOT
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
lib=$(cd "$(dirname "$0")" && pwd)/lib.sh
root=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1

fail=0
# shellcheck source=tests/cli/lib.sh
. "$lib"

if ! command -v rsvg-convert >/dev/null 2>&1; then
	"$root/tools/setup.sh" --test >setup.txt 2>&1
	if ! command -v rsvg-convert >/dev/null 2>&1; then
		echo "SKIP: rsvg-convert is not installed and 'tools/setup.sh --test' could not install it:" >&2
		sed 's/^/  /' setup.txt >&2
		exit 77
	fi
fi

gpt=$root/scenarios/ddp-gpt-small.yaml
covered=""

# picture CMD OPTION FILE NEEDLE...: FILE (written by the command just run
# with OPTION) renders, and each needle is a text of it
picture() {
	cmd=$1 opt=$2 svg=$3
	shift 3
	covered="$covered$cmd $opt
"
	[ -s "$svg" ] || { echo "FAIL: clustersim $cmd $opt wrote no '$svg'" >&2; fail=1; return; }
	if ! rsvg-convert -o "$svg.png" "$svg" 2>render.txt; then
		echo "FAIL: rsvg-convert cannot render $svg ($cmd $opt):" >&2
		sed 's/^/  /' render.txt >&2
		fail=1
		return
	fi
	# the PNG's width and height (IHDR, bytes 16-23) are the SVG's
	size=$(od -An -tu1 -j16 -N8 "$svg.png" | awk '{ print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8 }')
	want=$(sed -n 's/.*<svg [^>]*width="\([0-9.]*\)" height="\([0-9.]*\)".*/\1x\2/p' "$svg" | head -1)
	[ -n "$want" ] && [ "$size" = "$want" ] ||
		{ echo "FAIL: $svg rendered at $size, not its size '$want'" >&2; fail=1; }
	for needle in "$@"; do
		grep -qF -e ">$needle" "$svg" ||
			{ echo "FAIL: $svg ($cmd $opt) has no text '$needle'" >&2; fail=1; }
	done
}

expect 0 pipeline --schedule zb-v --stages 4 --micro-batches 8 --timeline pipe.svg
picture pipeline --timeline pipe.svg "zb-v: 4 stages, 8 micro-batches" "time (" "stage 0" "F forward"

expect 0 run "$gpt" --timeline run.svg
picture run --timeline run.svg "time (" "stage 0" "F forward"

expect 0 sweep "$gpt" --vary cluster.scale_out.bandwidth=100Gb/s,400Gb/s \
	--vary parallelism.data_parallel.bucket=1MiB,25MiB --out sweep.csv --plot sweep.svg --jobs 2
picture sweep --plot sweep.svg "step time against bandwidth per NIC per direction" \
	"bandwidth per NIC per direction (Gb/s)" "step time (s)" "gradient bucket cap"

expect 0 goodput "$root/scenarios/llama3-405b-16k-goodput.yaml" --set simulate.fold=true \
	--runs 4 --days 2 --plot goodput.svg --jobs 2
picture goodput --plot goodput.svg "llama3-405b-16k-goodput: one sampled run" "days" "restart"

expect 0 coll all_reduce_perf --gpu h100-sxm-80g --nodes 2 -b 1K -e 1G -f 4 --plot coll.svg
picture coll --plot coll.svg "all_reduce bus bandwidth on 16 GPUs" "bus bandwidth (GB/s)" \
	"message size (bytes, log scale)" "algorithm, protocol" "1 KiB"

expect_err 2 "'one.svg' is given for two outputs" coll -b 1K -e 1M --plot one.svg -J one.svg
expect_err 2 "'--plot' needs a file name" coll -b 1K -e 1M --plot ""

nccl=$root/tests/data/nccl-tests
expect 0 calibrate --nccl-tests "$nccl/dgx-a100-4node-all_reduce.txt" "$root/scenarios/megatron-1t-3072gpu.yaml" \
	--out net.yaml --plot calibrate.svg
picture calibrate --plot calibrate.svg "megatron-1t-3072gpu: the network fitted to dgx-a100-4node-all_reduce.txt" \
	"bus bandwidth (GB/s)" "message size (bytes, log scale)" "measured" "before the fit" "after the fit" \
	"all_reduce on 32 ranks"
# two tests of one file: a line each, both in the legend
expect 0 calibrate --nccl-tests "$nccl/rtx5090-tagged-mpi-two-tests.txt" "$root/scenarios/3d-llama3-70b-64gpu.yaml" \
	--out two.yaml --plot two.svg --force
[ "$(grep -c '<polyline' two.svg)" -eq 4 ] || { echo "FAIL: calibrate --plot of two tests: not two lines each" >&2; fail=1; }
has two.svg ">all_reduce on 2 ranks," ">all_gather on 2 ranks,"

trace=$root/tests/data/trace_llama8l-h4096-s8192.json.gz
h200=$root/scenarios/h200-llama8l-h4096-s8192.yaml
expect 0 compare "$trace" "$h200" --plot compare.svg
picture compare --plot compare.svg \
	"trace_llama8l-h4096-s8192.json.gz beside h200-llama8l-h4096-s8192: kernel time per step by class" \
	"time per step (ms)" "trace (measured)" "simulated" "gemm" "step" "not simulated"
# a bar of each side per class, the simulated ones with their error
[ "$(grep -c '<rect [^>]*fill="#1f77b4"><title>simulated:' compare.svg)" -eq 7 ] ||
	{ echo "FAIL: compare --plot: not one simulated bar per simulated row" >&2; fail=1; }
grep -q '>+[0-9.]* %</text>' compare.svg || { echo "FAIL: compare --plot: no error beside a bar" >&2; fail=1; }
# calibrate from the trace: a third bar, after the fit
expect 0 calibrate "$trace" "$h200" --out trace.yaml --plot fit.svg
picture calibrate --plot fit.svg "time per step (ms)" "simulated before calibration" "simulated after calibration"
[ "$(grep -c '<title>simulated after calibration:' fit.svg)" -eq 7 ] ||
	{ echo "FAIL: calibrate --plot: not one bar after the fit per simulated row" >&2; fail=1; }
expect_err 2 "'--plot' needs a file name" compare "$trace" "$h200" --plot -
expect_err 2 "'same.svg' is given for two outputs" calibrate "$trace" "$h200" --out same.svg --plot same.svg

expect 0 plan "$root/scenarios/ddp-llama2-7b-2node.yaml" --top 12 --plot plan.svg --jobs 2
picture plan --plot plan.svg "ddp-llama2-7b-2node: the 12 best of" "step time (s)" "memory per GPU (GB)" "HBM" \
	"budget 90 %" "the chosen plan (the fastest)" "1. tp 1 cp 1 pp 1 dp 16"
# a row per plan, the first (chosen) and the heuristic's (its rank in the text) marked
[ "$(grep -c '<title>step ' plan.svg)" -eq 12 ] || { echo "FAIL: plan --plot: not a bar per plan" >&2; fail=1; }
grep -q 'fill="#d62728"><title>step ' plan.svg && grep -q '>[0-9.]* s, chosen</text>' plan.svg ||
	{ echo "FAIL: plan --plot: the chosen plan is not marked" >&2; fail=1; }
expect 0 plan "$root/scenarios/ddp-llama2-7b-2node.yaml" --top 12 --jobs 2
rank=$(sed -n 's/^ *rank \([0-9]*\) of .*/\1/p' out.txt)
[ -n "$rank" ] && [ "$rank" -le 12 ] && grep -q ">$rank\. .*</text>" plan.svg &&
	grep -q '>[0-9.]* s, heuristic</text>' plan.svg ||
	{ echo "FAIL: plan --plot: the heuristic's plan (rank '$rank') is not marked" >&2; fail=1; }

# every picture option a command's --help names is rendered above
for cmd in $("$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'); do
	for opt in $("$bin" "$cmd" --help 2>/dev/null | grep -oE -- '--(plot|timeline) ' | sort -u); do
		printf '%s' "$covered" | grep -qxF "$cmd $opt" ||
			{ echo "FAIL: clustersim $cmd $opt draws a picture this test does not render" >&2; fail=1; }
	done
done

exit $fail
