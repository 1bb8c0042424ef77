#!/bin/sh
# Every example in every command's --help runs and exits 0 (the Llama 3
# 405B ones are left to the benchmarks: they take seconds each). Also: no
# arguments and an unknown command exit 2, --version exits 0, and --progress
# reports the share of ops done and the simulated and elapsed time.
#   tests/cli/help-examples.sh CLUSTERSIM SOURCE_ROOT
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
lib=$(cd "$(dirname "$0")" && pwd)/lib.sh
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
ln -s "$root/scenarios" "$tmp/scenarios"
ln -s "$root/tests" "$tmp/tests"
cd "$tmp" || exit 1

fail=0
# shellcheck source=tests/cli/lib.sh
. "$lib"

expect 2
expect 2 runn
expect 0 --version
expect 0 --help
n=0
for cmd in "" run validate coll memory pipeline sweep plan compare calibrate goodput list \
	export-chakra run-chakra; do
	# shellcheck disable=SC2086
	"$bin" $cmd --help >help.txt 2>&1 || { echo "FAIL: clustersim $cmd --help" >&2; fail=1; }
	# examples: lines starting with "clustersim ", backslash continuations joined
	awk '/^ *clustersim / { line = $0; while (line ~ /\\$/ && (getline nxt) > 0) { sub(/\\$/, "", line); line = line " " nxt } print line }' help.txt |
		grep -v -e 'llama3-405b' -e '--version |' >examples.txt
	while IFS= read -r ex; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		set -- $ex
		shift
		expect 0 "$@"
	done <examples.txt
done
# a standard output that cannot take the report is an error, not a silent
# truncation (reading /dev/full's "disk full"; nothing is written to a device)
if [ -w /dev/full ]; then
	for args in "--help" "--version" "validate scenarios/ddp-gpt-small.yaml" \
		"run scenarios/ddp-gpt-small.yaml --format json" "run --help" \
		"coll all_reduce_perf --gpu h100-sxm-80g --nodes 1 --min 8B --max 1MB" \
		"memory --model llama3-8b --seq-len 8192 --micro-batch 2 --dp 8 --zero 2" \
		"pipeline --schedule 1f1b --stages 4 --micro-batches 8"; do
		# shellcheck disable=SC2086
		if "$bin" $args >/dev/full 2>err.txt; then
			echo "FAIL: clustersim $args exited 0 with its standard output full" >&2
			fail=1
		fi
		grep -q "cannot write the standard output" err.txt ||
			{ echo "FAIL: clustersim $args: no message for the full output" >&2; fail=1; }
	done
fi
# --threads: the same report on any number of threads, and a bad count is
# bad input
expect 0 run scenarios/3d-llama3-70b-64gpu.yaml --format json --threads 1 --per-rank one.csv
grep -v sim_wall_s out.txt >one.txt
expect 0 run scenarios/3d-llama3-70b-64gpu.yaml --format json --threads 3 --per-rank three.csv
grep -v sim_wall_s out.txt >three.txt
cmp -s one.txt three.txt || { echo "FAIL: --threads 3 reports otherwise than --threads 1" >&2; fail=1; }
cmp -s one.csv three.csv || { echo "FAIL: --threads 3 gives other per-rank rows than --threads 1" >&2; fail=1; }
[ "$(wc -l <three.csv)" -eq 65 ] || { echo "FAIL: --per-rank: not 64 ranks" >&2; fail=1; }
grep -q '"step_time_s": 4.13' one.txt || { echo "FAIL: --threads 1: no step time" >&2; fail=1; }
# --no-critical-path: a straggler's run without the path, the same step
{ cat scenarios/3d-llama3-70b-64gpu.yaml; printf 'stragglers:\n  - {gpu: 3, compute: 1.3}\n'; } >slow.yaml
expect 0 run slow.yaml --format json --no-progress
grep -q '"critical_path"' out.txt || { echo "FAIL: a straggler's run traces no critical path" >&2; fail=1; }
grep '"step_time_s"' out.txt >traced.txt
expect 0 run slow.yaml --format json --no-progress --no-critical-path
if grep -q '"critical_path"' out.txt; then
	echo "FAIL: --no-critical-path: the report has a critical path" >&2
	fail=1
fi
grep '"step_time_s"' out.txt >untraced.txt
cmp -s traced.txt untraced.txt || { echo "FAIL: --no-critical-path changes the step time" >&2; fail=1; }
for bad in 0 257 two; do
	expect 2 run scenarios/ddp-gpt-small.yaml --threads "$bad"
	grep -q "'--threads' needs a whole number from 1 to 256 (got '$bad')" err.txt ||
		{ echo "FAIL: --threads $bad: no message" >&2; cat err.txt >&2; fail=1; }
done
# coll: a cluster past the scenarios' GPU limit is bad input with a message,
# not an allocation failure
# (past the limit of GPUs: the cluster's message; past the limit of nodes: the option's)
expect 2 coll all_reduce_perf --nodes 1250001 --min 8 --max 8
grep -q "^clustersim coll: 1250001 nodes of 8 GPUs is more than the limit of 10000000 GPUs" err.txt ||
	{ echo "FAIL: coll --nodes 1250001: no message" >&2; cat err.txt >&2; fail=1; }
expect 2 coll all_reduce_perf --nodes 99999999999 --min 8 --max 8
grep -q "^clustersim coll: '--nodes' needs a whole number from 1 to 10000000, got '99999999999'" err.txt ||
	{ echo "FAIL: coll --nodes 99999999999: no message" >&2; cat err.txt >&2; fail=1; }
# a kernel profile that cannot be read is bad input, with its location
expect 2 run scenarios/ddp-gpt-small.yaml --set cluster.gpu.profile=no-such-profile.yaml
grep -q "^--set 'cluster.gpu.profile=no-such-profile.yaml': cannot open kernel profile" err.txt ||
	{ echo "FAIL: no location for the missing profile:" >&2; cat err.txt >&2; fail=1; }
printf 'name: x\ngpu: y\nderived: maybe\n' >bad-profile.yaml
expect 2 validate scenarios/ddp-gpt-small.yaml --set cluster.gpu.profile="$tmp/bad-profile.yaml"
grep -q "bad-profile.yaml:3:10: " err.txt ||
	{ echo "FAIL: no file:line:col for the malformed profile:" >&2; cat err.txt >&2; fail=1; }
# compare: the measured traces against their scenarios, and bad input with
# its place, exit status 2
llama="tests/data/trace_llama8l-h4096-s8192.json.gz scenarios/h200-llama8l-h4096-s8192.yaml"
# shellcheck disable=SC2086
expect 0 compare $llama
grep -Eq '^gemm +295\.38 +198 +[0-9.]+ +198 ' out.txt ||
	{ echo "FAIL: compare printed no gemm row of the Llama trace:" >&2; cat out.txt >&2; fail=1; }
# shellcheck disable=SC2086
expect 0 compare $llama --format csv --steps 2
grep -q '^optimizer,0\.0121526675,67,' out.txt ||
	{ echo "FAIL: compare --format csv --steps 2:" >&2; cat out.txt >&2; fail=1; }
printf 'not json\n' >bad.json
expect_err 2 "bad.json:1:3: not JSON: " compare bad.json scenarios/h200-llama8l-h4096-s8192.yaml
head -c 1000 "$root/tests/data/trace_gpt-h5120-8l-s2048-mb4.json.gz" >cut.json.gz
expect_err 2 "'cut.json.gz': truncated gzip data at byte 1000" \
	compare cut.json.gz scenarios/h200-llama8l-h4096-s8192.yaml
printf '{"traceEvents": [{"cat": "cpu_op", "name": "x", "ts": 1, "dur": 1}]}' >nokernels.json
expect_err 2 "'nokernels.json': no GPU kernels" compare nokernels.json scenarios/h200-llama8l-h4096-s8192.yaml
printf '{"events": []}' >noevents.json
expect_err 2 "'noevents.json': no 'traceEvents' array" \
	compare noevents.json scenarios/h200-llama8l-h4096-s8192.yaml
expect_err 2 "cannot open 'missing.json'" compare missing.json scenarios/h200-llama8l-h4096-s8192.yaml
# shellcheck disable=SC2086
expect_err 2 "--set 'training.seq_len=banana': expected an integer" compare $llama --set training.seq_len=banana
expect_err 2 "no scenario file given" compare tests/data/trace_llama8l-h4096-s8192.json.gz
# calibrate --nccl-tests: the fit, the file it writes, and bad input with its place
expect 0 calibrate --nccl-tests tests/data/nccl-tests/dgx-a100-4node-all_reduce.txt \
	scenarios/megatron-1t-3072gpu.yaml --out net.yaml
grep -Eq '^scale_out_bandwidth +1\.02' out.txt && grep -q '^  scale_out_bandwidth: 1.02' net.yaml ||
	{ echo "FAIL: calibrate --nccl-tests:" >&2; cat out.txt net.yaml >&2; fail=1; }
expect 0 coll scenarios/megatron-1t-3072gpu.yaml --gpus 32 --min 1GB --max 1GB
expect 0 run scenarios/ddp-gpt-small.yaml --set cluster.gpu.calibration="$tmp/net.yaml"
# nccl-tests' -J JSON reads as its text and fits the same factors
expect 0 calibrate --nccl-tests tests/data/nccl-tests/h100-nvls-all_reduce.json \
	scenarios/3d-llama3-70b-64gpu.yaml --out json.yaml
grep -Eq '^scale_up_bandwidth +1\.05' out.txt && grep -Eq '^rms error +5\.11 % before, 1\.19 % fitted' out.txt ||
	{ echo "FAIL: calibrate --nccl-tests from -J JSON:" >&2; cat out.txt >&2; fail=1; }
# another GPU's test is warned of; a tagged log of two MPI tests on a shared
# GPU is read, test by test, and its absurd factors are refused without --force
expect_err 2 "warning: tests/data/nccl-tests/dgx-a100-4node-all_reduce.txt:1: the test ran on 'NVIDIA A100-SXM4-80GB', the scenario's GPU is 'h100-sxm-80g'" \
	calibrate --nccl-tests tests/data/nccl-tests/dgx-a100-4node-all_reduce.txt \
	scenarios/3d-llama3-70b-64gpu.yaml --out a100.yaml
two=tests/data/nccl-tests/rtx5090-tagged-mpi-two-tests.txt
expect_err 2 "$two: the fitted 'scale_up_bandwidth' factor 0.007731 is outside 0.2 to 5" \
	calibrate --nccl-tests $two scenarios/3d-llama3-70b-64gpu.yaml --out two.yaml
grep -qF "$two:42: the test ran on 'NVIDIA GeForce RTX 5090'" err.txt &&
	grep -qF "$two:9: the test ran 2 ranks per host, the scenario's nodes have 8 GPUs" err.txt &&
	[ ! -e two.yaml ] || { echo "FAIL: calibrate of two tagged tests:" >&2; cat err.txt >&2; fail=1; }
expect_err 0 "the fit leaves 26.6 % rms error" calibrate --nccl-tests $two \
	scenarios/3d-llama3-70b-64gpu.yaml --out two.yaml --force
grep -q '^all_reduce_perf_mpi (line 9)$' out.txt && grep -q '^all_gather_perf_mpi (line 42)$' out.txt &&
	[ "$(grep -c '^rms error ' out.txt)" -eq 3 ] && [ -e two.yaml ] ||
	{ echo "FAIL: calibrate --force of two tagged tests:" >&2; cat out.txt >&2; fail=1; }
printf '# size count type redop root time algbw busbw\n8 2 float sum -1 x 0 0\n' >bad-nccl.txt
expect_err 2 "bad-nccl.txt:2:18: expected a positive number of microseconds in column 'time'" \
	calibrate --nccl-tests bad-nccl.txt scenarios/ddp-gpt-small.yaml --out x.yaml
printf '{"traceEvents": []}\n' >trace-not-nccl.json
expect_err 2 "trace-not-nccl.json:1:1: not nccl-tests output: no column header" \
	calibrate --nccl-tests trace-not-nccl.json scenarios/ddp-gpt-small.yaml --out x.yaml
printf 'network:\n  latncy: 2\n' >bad-net.yaml
expect_err 2 "bad-net.yaml:2:3: unknown key 'latncy' in 'network' (did you mean 'latency'?)" \
	run scenarios/ddp-gpt-small.yaml --set cluster.gpu.calibration="$tmp/bad-net.yaml"
expect_err 2 "'--op' is for '--nccl-tests'" calibrate $llama --op all_reduce --out x.yaml
[ ! -e x.yaml ] || { echo "FAIL: a calibration was written from bad input" >&2; fail=1; }
# outputs: checked before the work, never an input, links and modes kept
expect_err 2 "cannot open '/nonexistent/x.csv'" sweep scenarios/ddp-gpt-small.yaml \
	--out /nonexistent/x.csv --vary training.micro_batch=1,2
cp scenarios/ddp-gpt-small.yaml in.yaml
expect_err 2 "cannot write 'in.yaml': it is the input 'in.yaml'" run in.yaml --per-rank in.yaml
expect_err 2 "'twice.csv' is given for two outputs" run in.yaml --per-rank twice.csv --trace twice.csv
mkdir adir
expect_err 2 "cannot write 'adir': it is a directory" run in.yaml --trace adir
printf 'old\n' >ro.csv
chmod 444 ro.csv
expect_err 2 "cannot write 'ro.csv': the file is read-only (mode 444)" plan in.yaml --out ro.csv
grep -qx old ro.csv || { echo "FAIL: a read-only output was replaced" >&2; fail=1; }
printf 'old\n' >real.csv
chmod 640 real.csv
ln -s real.csv link.csv
expect 0 run in.yaml --per-rank link.csv
if [ ! -L link.csv ] || ! grep -q '^rank,' real.csv || [ "$(stat -c %a real.csv)" != 640 ]; then
	echo "FAIL: --per-rank through a symlink: the link replaced or the mode lost" >&2
	fail=1
fi
ls ./*.tmp.* >/dev/null 2>&1 && { echo "FAIL: temporary files left behind" >&2; fail=1; }
# time that would overflow int64 fails the run with a message (exit 1), never an abort
horizon="simulated time exceeds 2^61 ns (73 years)"
for set in cluster.gpu.peak_bf16=989FLOPS cluster.gpu.hbm_bandwidth=1B/s \
	cluster.scale_up.bandwidth=1e-300B/s; do
	expect_err 1 "$horizon" run scenarios/ddp-gpt-small.yaml --set "$set"
done
expect_err 1 "$horizon" run scenarios/ddp-llama2-7b-2node.yaml --set collectives.fidelity=flow \
	--set cluster.scale_out.bandwidth=1e-300B/s
printf 'stragglers:\n  - {gpu: 1, compute: 1e300}\n' | cat scenarios/ddp-gpt-small.yaml - >huge.yaml
expect_err 1 "$horizon" run huge.yaml
printf 'stragglers:\n  - {random: {fraction: 0.5, distribution: lognormal, mu: 0, sigma: 30}, seed: 7}\n' |
	cat scenarios/ddp-gpt-small.yaml - >wild.yaml
expect_err 1 "$horizon" run wild.yaml
# sizes and row counts that would overflow or flood
expect_err 2 "'--maxbytes' must be at most 1 PiB" coll --min 1000000TB --max 1000000TB
expect_err 2 "more than 10000 rows" coll --factor 1.000001 --max 1GB
expect_err 1 "no plan could be simulated" plan scenarios/ddp-gpt-small.yaml --headroom 0.0001
# input that would exhaust: deep nesting and huge mappings stop at once; a pipe
# without a writer is refused rather than waited on; '-' reads standard input
python3 -c "import sys; d=30000; sys.stdout.write('name: x\\nmodel: ' + '[' * d + ']' * d + '\\n')" >deep.yaml
expect_err 2 "deep.yaml:2:39: nesting deeper than 32 levels" validate deep.yaml
python3 -c "import sys; sys.stdout.write('name: x\\nmodel:\\n' + ''.join('  k%d: 1\\n' % i for i in range(1500)))" >wide.yaml
expect_err 2 "wide.yaml:1003:3: more than 1000 keys in one mapping" validate wide.yaml
python3 -c "import sys; sys.stdout.write('name: x\\nstragglers:\\n' + '  - [1, 2, 3, 4, 5, 6, 7, 8]\\n' * 40000)" >huge.yaml
expect_err 2 "more than 200000 yaml nodes: not a scenario" validate huge.yaml
mkfifo pipe.yaml
expect_err 2 "cannot read 'pipe.yaml': not a regular file" validate pipe.yaml
"$bin" validate - <scenarios/ddp-gpt-small.yaml >out.txt 2>err.txt || { echo "FAIL: validate -" >&2; fail=1; }
printf 'name: x\nclusterr: {}\n' | "$bin" validate - >out.txt 2>err.txt
grep -qF -- "-:2:1: unknown key 'clusterr' (did you mean 'cluster'?)" err.txt ||
	{ echo "FAIL: validate - with an unknown key:" >&2; cat err.txt >&2; fail=1; }
# validate runs every check run does before simulating; a plan that does not
# fit in memory fails it (exit 1) unless --allow-oom accepts it, with the warning
expect_err 2 "the programs would hold about 3.58e+07 ops" validate scenarios/ddp-gpt-small.yaml \
	--set training.global_batch=3200000
expect_err 1 "clustersim validate: scenarios/ddp-llama2-7b-2node.yaml: the plan needs 125.1 GB per GPU, more than the 85.5 GB the GPU has (--allow-oom accepts it)" \
	validate scenarios/ddp-llama2-7b-2node.yaml
[ -s out.txt ] && { echo "FAIL: validate of a plan that does not fit printed 'ok'" >&2; fail=1; }
expect_err 0 "warning: the plan needs 125.1 GB per GPU, more than the 85.5 GB" validate \
	scenarios/ddp-llama2-7b-2node.yaml --allow-oom
grep -q '^ok: scenarios/ddp-llama2-7b-2node.yaml: 16 GPUs' out.txt ||
	{ echo "FAIL: validate --allow-oom:" >&2; cat out.txt >&2; fail=1; }
expect_err 2 "option '--allow-oom' takes no value" validate scenarios/ddp-gpt-small.yaml --allow-oom=yes
# run simulates a plan that does not fit, and says so
expect_err 0 "warning: the plan needs 125.1 GB per GPU, more than the 85.5 GB the GPU has; simulated anyway" \
	run scenarios/ddp-llama2-7b-2node.yaml --format csv
# the timeline's title gives the run's bubble in percent, as the report does
# (it counted merged spans once);
# without the step's edges, whose checks on the last stage make it the
# critical rank, less idle than the stages' mean the timeline counts
expect 0 run scenarios/3d-llama3-70b-64gpu.yaml --timeline tl.svg --format json \
	--set training.step_edges=false
python3 -c "
import json, re, sys
m = json.load(open('out.txt'))
svg = float(re.search(r'bubble ([0-9.]+) %', open('tl.svg').read()).group(1))
sys.exit(0 if abs(svg / 100 - m['bubble_fraction']) < 0.02 else 1)" ||
	{ echo "FAIL: the timeline's bubble is not the run's" >&2; fail=1; }
# a NIC at 25 % slows a flow-fidelity run whose NVLink domain spans two nodes
printf 'stragglers:\n  - {link: nic, gpu: 3, bandwidth: 0.25}\n' |
	cat scenarios/ddp-llama2-7b-2node.yaml - >nic.yaml
nic_set="--set cluster.nodes=4 --set parallelism.dp=32 --set training.global_batch=64
	--set collectives.fidelity=flow --set cluster.scale_up.domain=16 --format json"
# shellcheck disable=SC2086
"$bin" run scenarios/ddp-llama2-7b-2node.yaml $nic_set >healthy.json 2>err.txt
# shellcheck disable=SC2086
"$bin" run nic.yaml $nic_set >slow.json 2>>err.txt
python3 -c "
import json, sys
a = json.load(open('healthy.json'))['step_time_s']; b = json.load(open('slow.json'))['step_time_s']
sys.exit(0 if b > a * 1.005 else 1)" || { echo "FAIL: a slow NIC costs nothing under flow" >&2; fail=1; }
# outputs bounded before the work: trace metadata once per rank and stream,
# traces and timelines over their limits refused up front
expect 0 run scenarios/3d-llama3-70b-64gpu.yaml --trace t.json
python3 -c "
import json, sys
ev = json.load(open('t.json'))['traceEvents']
meta = [e for e in ev if e['ph'] == 'M']; ranks = {e['pid'] for e in ev if e['ph'] == 'X'}
sys.exit(0 if len(meta) == len(ranks) * 8 else 1)" ||
	{ echo "FAIL: trace metadata not once per rank and stream" >&2; fail=1; }
expect_err 2 "more than the limit of 2 GB: trace fewer ranks" run scenarios/llama3-405b-16k.yaml \
	--trace big.json --trace-ranks 0-4095 --set training.global_batch=4096
[ ! -e big.json ] || { echo "FAIL: a refused trace was written" >&2; fail=1; }
expect_err 2 "more than the limit of 256 MB: draw fewer stages" pipeline --schedule 1f1b \
	--stages 1000 --micro-batches 10000 --timeline x.svg
# a folded run's per-rank rows are the full run's, not zeros for the folded ranks
# (identical GPUs: a folded run leaves the fleet's per-GPU effects out)
expect 0 run scenarios/3d-llama3-70b-64gpu.yaml --per-rank full.csv --set fleet=ideal
expect 0 run scenarios/3d-llama3-70b-64gpu.yaml --per-rank fold.csv --set simulate.fold=true \
	--set fleet=ideal
cmp -s full.csv fold.csv || { echo "FAIL: folded per-rank rows differ from the full run's" >&2; fail=1; }
# coll speaks nccl-tests: its output, from known network factors, is read back
# by calibrate --nccl-tests, which recovers them
printf 'network:\n  scale_up_bandwidth: 0.8\n  latency: 1.4\n' >truth.yaml
"$bin" coll scenarios/3d-llama3-70b-64gpu.yaml -g 8 -b 8 -e 8G -f 2 \
	--set cluster.gpu.calibration="$tmp/truth.yaml" >coll.txt 2>err.txt ||
	{ echo "FAIL: coll with a calibration" >&2; fail=1; }
grep -q '^# Collective test starting: all_reduce_perf$' coll.txt &&
	grep -q '^# Avg bus bandwidth    : ' coll.txt ||
	{ echo "FAIL: coll printed no nccl-tests header or footer" >&2; fail=1; }
expect 0 calibrate --nccl-tests coll.txt scenarios/3d-llama3-70b-64gpu.yaml --out fit.yaml
grep -q '^  scale_up_bandwidth: 0.8$' fit.yaml && grep -q '^  latency: 1.4$' fit.yaml ||
	{ echo "FAIL: coll's output did not calibrate back:" >&2; cat fit.yaml >&2; fail=1; }
# and a parser written the way scripts read nccl-tests output (header fields
# by name, data rows by column position, the footer's average) reads it
# unchanged: 13 columns per row, busbw = algbw x 2(n-1)/n for all_reduce,
# the average is the mean of every busbw column
awk '
	/^# nThread/ { for (i = 2; i < NF; i++) if ($i == "nGpus") n = $(i + 1) }
	/^# Avg bus bandwidth/ { avg = $NF }
	/^ *[0-9]/ {
		rows++
		if ($1 != $2 * 4 || $3 != "float" || $4 != "sum" || $9 != "N/A" || $13 != "N/A") bad++
		for (c = 7; c <= 11; c += 4) {
			f = $c * 2 * (n - 1) / n
			if ($(c + 1) - f > 0.011 || f - $(c + 1) > 0.011) bad++
			sum += $(c + 1); cnt++
		}
	}
	END {
		if (n != 8 || rows != 31 || bad || cnt == 0) exit 1
		m = sum / cnt
		exit (m - avg > 0.01 * avg + 0.01 || avg - m > 0.01 * avg + 0.01)
	}' coll.txt || { echo "FAIL: an nccl-tests parser could not read coll's output:" >&2; cat coll.txt >&2; fail=1; }
# nccl-tests' JSON (-J) of the same run calibrates back to the same factors
"$bin" coll scenarios/3d-llama3-70b-64gpu.yaml -g 8 -b 8 -e 8G -f 2 -J coll.json \
	--set cluster.gpu.calibration="$tmp/truth.yaml" >coll2.txt 2>err.txt && cmp -s coll.txt coll2.txt ||
	{ echo "FAIL: coll -J changed the text or failed" >&2; cat err.txt >&2; fail=1; }
expect 0 calibrate --nccl-tests coll.json scenarios/3d-llama3-70b-64gpu.yaml --out fitj.yaml
grep -q '^  scale_up_bandwidth: 0.8$' fitj.yaml && grep -q '^  latency: 1.4$' fitj.yaml ||
	{ echo "FAIL: coll -J's JSON did not calibrate back:" >&2; cat fitj.yaml >&2; fail=1; }
# nccl-tests' line-by-line rules (tests/cli/nccl-tests-rules.awk) hold for
# nccl-tests' own output (the public tagged log, its tags cut) and for coll's
rules=$root/tests/cli/nccl-tests-rules.awk
sed 's/^\[1,[01]\]<std[a-z]*>://' tests/data/nccl-tests/rtx5090-tagged-mpi-two-tests.txt >untagged.txt
sed -n 1,33p untagged.txt >real1.txt
sed -n 34,66p untagged.txt >real2.txt
for f in real1.txt real2.txt coll.txt; do
	awk -f "$rules" "$f" || { echo "FAIL: $f breaks nccl-tests' rules" >&2; fail=1; }
done
r=0
while read -r args; do
	r=$((r + 1))
	# shellcheck disable=SC2086
	"$bin" coll $args >rules$r.txt 2>err.txt && awk -f "$rules" rules$r.txt ||
		{ echo "FAIL: coll $args breaks nccl-tests' rules:" >&2; cat err.txt >&2; fail=1; }
done <<'ARGS'
--nodes 16 -b 8 -e 16G -f 4
all_gather_perf --nodes 2 -b 1K -e 1G -f 8 -d bfloat16
reduce_scatter_perf -g 8 -b 1M -e 64M -f 4 -o all -d all -C 1
broadcast_perf --nodes 2 -b 64M -e 256M -r all --gpus 4
alltoall_perf --gpu a100-sxm-80g --nodes 4 -b 1M -e 8M -i 1M -N 2
./build/sendrecv_perf_mpi --gpus 2 -b 8 -e 1M -f 16
reduce_perf -t 2 -g 4 -b 1K -e 1M -f 32 -r 3 -z 3 -p 1 -G 1 -m 2 -u 1 -c 1
ARGS
# nccl-tests' options with their meanings, short and long, echoed in the header
expect 0 coll -n 50 -w 5 -m 2 -c 1 -G 3 -u 1 -b 1M -e 1M -t 2 -g 4
grep -q '^# nThread 2 nGpus 4 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 50 agg iters: 2 validation: 1 graph: 3 unalign: 1$' out.txt &&
	[ "$(grep -c '^#  Rank ' out.txt)" -eq 8 ] ||
	{ echo "FAIL: coll -n -w -m -c -G -u -t -g not echoed:" >&2; cat out.txt >&2; fail=1; }
expect 0 coll --minbytes 1M --maxbytes 4M --stepfactor 2 --ngpus 8 --datatype bfloat16 --op avg \
	--iters 5 --warmup_iters 2 --check 1 --agg_iters 1 --run_cycles 1 --average 1 --timeout 60 \
	--local_register 1 --cta_policy 1 --memory 1 --report_timestamps 0 --per_iter_timing 0 \
	--stream_null 0 --device_implementation 0 --device_cta_count 16 --per_iter_skip 0 \
	--cudagraph 0 --blocking 0 --parallel_init 0 --unalign 0 --report_cputime 0 --nthreads 1
grep -q '^     2097152       1048576  bfloat16     avg      -1 ' out.txt ||
	{ echo "FAIL: coll's long options:" >&2; cat out.txt >&2; fail=1; }
expect 0 coll -a 1 -R 2 -T 10 -y 0 -x 1 -D 0 -V 16 -M 1 -S 0 -I 0 -K 0 -b 1G -e 1G
expect 0 coll all_reduce_perf_mpi -b 1G -e 1G
grep -q '^# Collective test starting: all_reduce_perf$' out.txt ||
	{ echo "FAIL: coll all_reduce_perf_mpi" >&2; fail=1; }
expect_err 2 "'--op all_gather': '--op' is the reduction, as in nccl-tests (sum, prod, max, min, avg, mulsum or all); name the collective as nccl-tests does ('clustersim coll all_gather_perf') or with '--collective'" \
	coll --op all_gather
expect_err 2 "unknown reduction 'summ'; did you mean 'sum'?" coll -o summ
expect_err 2 "'hypercube_perf' is an nccl-tests test clustersim has no model for" coll hypercube_perf
expect_err 2 "'all_gather_perf': the collective is already chosen" coll --collective all_reduce all_gather_perf
expect_err 2 "'--run_cycles 0' runs for ever in nccl-tests" coll -N 0
expect_err 2 "'--blocking' needs a whole number from 0 to 3, got '4'" coll -z 4
expect_err 2 "'--ngpus' needs a whole number from 1 to 1024, got 'x'" coll -g x
expect_err 2 "a process's -t x -g = 16 GPUs are more than a node has (8)" coll -g 16 --nodes 2
expect_err 2 "'--gpus 12' is not a whole number of processes of -t x -g = 8 GPUs" coll --gpus 12 -g 8 --nodes 2
expect_err 2 "'--root 8' is not one of the 8 ranks" coll broadcast_perf -r 8
expect_err 2 "'--stepbytes' must be at least 1 byte" coll -i 0
expect_err 2 "'--output_file' needs a file name" coll -J ''
expect_err 2 "cannot open '/nonexistent/x.json'" coll -J /nonexistent/x.json
expect 0 coll alltoall_perf -b 1M -e 4M -d half -o max
grep -q '^     1048576         65536      half    none      -1 ' out.txt ||
	{ echo "FAIL: coll alltoall -d half:" >&2; cat out.txt >&2; fail=1; }
expect_err 0 "warning: nvls is not available for all_gather" coll all_gather_perf --algo nvls -b 1G -e 1G
# goodput: a report, its JSON, a timeline; bad reliability values at their place
gp=scenarios/llama3-405b-16k-goodput.yaml
expect 0 goodput $gp --runs 50 --days 10
grep -q '^effective training   9[0-9]\.[0-9][0-9] % (99 % CI' out.txt ||
	{ echo "FAIL: goodput text:" >&2; cat out.txt >&2; fail=1; }
expect 0 goodput $gp --runs 50 --days 10 --format json --plot tl.svg --tokens 1e12
python3 -c "import json, sys; d = json.load(open('out.txt')); sys.exit(0 if d['runs'] == 50 and 0.9 < d['effective_training']['mean'] < 1 and d['time_to_train_days']['mean'] > 0 else 1)" ||
	{ echo "FAIL: goodput json:" >&2; cat out.txt >&2; fail=1; }
grep -q '<svg' tl.svg && grep -q 'effective training' tl.svg || { echo "FAIL: goodput --plot" >&2; fail=1; }
printf 'name: x\ncluster: {gpu: h100-sxm-80g, nodes: 2}\nmodel: {preset: llama2-7b}\nreliability:\n  gpu_rate: -1e-5\n' >neg-rate.yaml
expect_err 2 "neg-rate.yaml:5:13: " goodput neg-rate.yaml
expect_err 2 "--set 'reliability.checkpoint.interval=1s': a checkpoint every 1 s is shorter than a step" \
	goodput $gp --set reliability.checkpoint.interval=1s
expect_err 2 "a checkpoint of 5682 GB does not fit the storage's 1000 GB" \
	goodput $gp --set reliability.checkpoint.storage_capacity=1TB
expect_err 2 "'--days' needs a number in (0, 36500] (got '0')" goodput $gp --days 0
expect_err 2 "needs dp >= 2" goodput scenarios/ddp-gpt-small.yaml --set parallelism.dp=1 \
	--set cluster.nodes=1 --set cluster.gpus_per_node=1 --set reliability.elastic=true
# list: presets and scenarios, and an unknown list with a suggestion
expect 0 list gpus
grep -q '^h100-sxm-80g  *989 ' out.txt || { echo "FAIL: list gpus:" >&2; cat out.txt >&2; fail=1; }
expect 0 list models
grep -q '^llama3-405b  *llama  *126 ' out.txt || { echo "FAIL: list models:" >&2; cat out.txt >&2; fail=1; }
expect 0 list scenarios
[ "$(tail -n +2 out.txt | wc -l)" -eq "$(ls scenarios/*.yaml | wc -l)" ] ||
	{ echo "FAIL: list scenarios misses some" >&2; fail=1; }
expect_err 2 "unknown list 'gpu' (did you mean 'gpus'?)" list gpu
# run --format csv: one header and one row, the sweep's columns
expect 0 run scenarios/ddp-gpt-small.yaml --format csv
[ "$(wc -l <out.txt)" -eq 2 ] && head -1 out.txt | grep -q '^scenario,step_time_s,' &&
	tail -1 out.txt | grep -q '^ddp-gpt-small,[0-9.]*,' ||
	{ echo "FAIL: run --format csv:" >&2; cat out.txt >&2; fail=1; }
# every name a report prints is accepted back: '-' and '_' alike
expect 0 validate scenarios/ddp-gpt-small.yaml --set collectives.algorithm=nvls_tree
expect 0 validate scenarios/ddp-gpt-small.yaml --set collectives.algorithm=nvls-tree
expect 0 coll --algo nvls-tree -b 1G -e 1G --nodes 2
# Chakra traces that are not there, not Chakra, or one short: bad input, exit 2
expect_err 2 "cannot open trace directory 'no-such-dir'" \
	run-chakra no-such-dir/x --cluster scenarios/ddp-gpt-small.yaml
mkdir -p bad-et && printf 'not a trace' >bad-et/x.0.et
expect_err 2 "bad-et/x.0.et: malformed trace: message at byte 0" \
	run-chakra bad-et --cluster scenarios/ddp-gpt-small.yaml
expect 0 export-chakra scenarios/ddp-gpt-small.yaml --out et8 --prefix p
rm et8/p.7.et
expect_err 2 "'et8/p.7.et' is missing: the manifest 'et8/p.manifest' lists it" \
	run-chakra et8 --cluster scenarios/ddp-gpt-small.yaml
rm et8/p.manifest
expect_err 2 "missing trace 'et8/p.7.et' of rank 7 (the scenario has 8 ranks)" \
	run-chakra et8 --cluster scenarios/ddp-gpt-small.yaml
# other tools' Chakra files: ASTRA-sim's examples on their own network and
# system, reported without a model; what cannot map is bad input with its place
astra=tests/data/chakra/astra-sim
expect 0 run-chakra $astra/all_reduce_8npus_1MB --astra-network $astra/HGX-H100-validated.yml \
	--astra-system $astra/HGX-H100-validated.json
grep -q '^HGX-H100-validated: 8 GPUs, communication only, 1 step simulated' out.txt &&
	grep -Eq '^  collective time  [0-9.]+ us$' out.txt &&
	grep -Eq '^  collectives      1 per rank \(all_reduce\), 1.049 MB; bus bandwidth [0-9.]+ GB/s' out.txt &&
	! grep -q -e MFU -e memory out.txt ||
	{ echo "FAIL: run-chakra of a lone all-reduce:" >&2; cat out.txt >&2; fail=1; }
expect 0 run-chakra $astra/custom_ring_allreduce_8npus_1MB --astra-network $astra/Ring_8npus.yml \
	--astra-system $astra/custom_collective.json --format csv
grep -q '^Ring_8npus,8,0,' out.txt && grep -q 'all-reduce-implementation-custom' err.txt ||
	{ echo "FAIL: run-chakra of the custom ring all-reduce:" >&2; cat out.txt err.txt >&2; fail=1; }
expect_err 2 "$astra/hgx_h100_16gpu.yml:4:21: 'Ring' between servers" \
	run-chakra $astra/all_reduce_8npus_1MB --astra-network $astra/hgx_h100_16gpu.yml
expect_err 2 "is a PyTorch execution trace (JSON), not a Chakra trace: convert each rank's with" \
	run-chakra tests/data/chakra/pytorch-et --cluster scenarios/ddp-gpt-small.yaml
expect 0 run-chakra tests/data/chakra/feeder --cluster scenarios/ddp-gpt-small.yaml \
	--set parallelism.dp=1 --set cluster.gpus_per_node=1
grep -q "^note: skipped 4 CPU-side communication nodes .* in 1 trace: c10d::broadcast_$" err.txt ||
	{ echo "FAIL: run-chakra of the feeder trace: no note" >&2; cat err.txt >&2; fail=1; }
# bash completion: commands, a command's options, enum values, lists
complete_with() {
	PATH=$(dirname "$bin"):$PATH bash -c '. "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
		_clustersim; echo "${COMPREPLY[*]}"' "$root/tools/completion/clustersim.bash" "$@"
}
for c in "run run-chakra:clustersim ru" "all_gather:clustersim coll --collective all_g" \
	"mulsum:clustersim coll --op mu" "all_gather:clustersim calibrate --op all_g" \
	"all_gather_perf:clustersim coll all_gather_p" "--warmup-iters --warmup_iters:clustersim coll --warmup" \
	"--algo:clustersim coll --al" \
	"scenarios:clustersim list sc" "h100-sxm-80g:clustersim coll --gpu h1"; do
	want=${c%%:*}
	# shellcheck disable=SC2086
	got=$(complete_with ${c#*:})
	[ "$got" = "$want" ] || { echo "FAIL: completing '${c#*:}' gave '$got', not '$want'" >&2; fail=1; }
done
# memory checks its plan as run does
expect_err 2 "'parallelism.tp' (3) must divide the model's 32 heads" memory --model llama3-8b --tp 3
expect_err 2 "pp x virtual_stages = 64 exceeds the model's 32 layers" memory --model llama3-8b --pp 64
expect 0 memory --model llama3-8b --tp 2 --dp 3
# plan --format megatron: each plan as the command line that runs it
expect 0 plan scenarios/ddp-llama2-7b-2node.yaml --format megatron --top 2
grep -q '^torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py' out.txt &&
	grep -q -- '--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1' out.txt ||
	{ echo "FAIL: plan --format megatron:" >&2; cat out.txt >&2; fail=1; }
# control characters in a message are escaped, never sent to the terminal
printf 'name: x\n"bad\\e[31mkey": 1\n' >esc.yaml  # YAML's \e: an escape character
expect_err 2 "esc.yaml:2:1: unknown key 'bad\x1b[31mkey'" validate esc.yaml
# progress lines start after 2^20 events; the folded 1T run has about 1.2 M
expect 0 run scenarios/megatron-1t-3072gpu.yaml --set simulate.fold=true --progress
tr '\r' '\n' <err.txt | grep -Eq '^  simulating: +[0-9.]+ % of [0-9]+ ops, [0-9.]+ s simulated, [0-9.]+ s elapsed$' ||
	{ echo "FAIL: no progress line on stderr:" >&2; tr '\r' '\n' <err.txt | head -3 >&2; fail=1; }
echo "$n examples from --help ran"
[ "$n" -ge 8 ] || { echo "FAIL: only $n examples found" >&2; fail=1; }
if [ "$fail" -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit "$fail"
