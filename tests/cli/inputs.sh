#!/bin/sh
# Inputs that cannot be true are refused with their place, through the
# binary: nccl-tests' rows and headers for 'calibrate --nccl-tests', and
# calibration factors a fit would write out of their sane range.
#   tests/cli/inputs.sh CLUSTERSIM SOURCE_ROOT
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
lib=$(cd "$(dirname "$0")" && pwd)/lib.sh
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1

fail=0
# shellcheck source=tests/cli/lib.sh
. "$lib"

# unwritten FILE: a refused run wrote no FILE
unwritten() {
	[ ! -e "$1" ] || { echo "FAIL: '$1' was written by a refused run" >&2; fail=1; }
}

# ---- calibrate --nccl-tests: rows, ranks, --op --------------------------------
a100=$root/tests/data/nccl-tests/dgx-a100-4node-all_reduce.txt
mt=$root/scenarios/megatron-1t-3072gpu.yaml
# one row of 1 GiB in 1 ns: a bus bandwidth no link has, refused at its line
awk '$1 == "1073741824" && !done { $6 = "0.001"; done = 1 } { print }' "$a100" >absurd.txt
expect_err 2 "absurd.txt:44: 1073741824 bytes in 0.001 us is a bus bandwidth of 2.08e+09 GB/s, more than 10 times the cluster's fastest link (300 GB/s)" \
	calibrate --nccl-tests absurd.txt "$mt" --out absurd.yaml
unwritten absurd.yaml
# one row impossibly slow against the test's other sizes: refused at its line,
# '--force' or not (a 1 GiB all-reduce 10^100 times slower fitted a bandwidth
# factor of 1.8e-12); the slow row 3 times slower is noise, fitted
h100=$root/tests/data/nccl-tests/h100-nvls-all_reduce.txt
llama=$root/scenarios/3d-llama3-70b-64gpu.yaml
awk '$1 == "1073741824" && !done { $6 = "3.9147e+103"; done = 1 } { print }' "$h100" >slow.txt
expect_err 2 "slow.txt:21: 1073741824 bytes in 3.915e+103 us disagrees by more than 10 times with 3 of the test's 3 other sizes (line 20: 268435456 bytes in 978.7 us): a collective's time neither falls as its size grows nor grows faster than its size" \
	calibrate --nccl-tests slow.txt "$llama" --out slow.yaml --force
unwritten slow.yaml
awk '$1 == "1073741824" && !done { $6 = "117441"; done = 1 } { print }' "$h100" >slow.txt
expect_err 2 "slow.txt:21: 1073741824 bytes in 1.174e+05 us disagrees by more than 10 times with 2 of the test's 3 other sizes" \
	calibrate --nccl-tests slow.txt "$llama" --out slow.yaml
has err.txt "(remove the row, or measure it again; nccl-tests' warm-up, '-w', keeps NCCL's connection setup out of the times)"
unwritten slow.yaml
# the same row of nccl-tests' -J JSON, every time in both places
sed 's/"time":3914.700000/"time":3.9147e103/g' "$root/tests/data/nccl-tests/h100-nvls-all_reduce.json" >slow.json
expect_err 2 "slow.json:1: 1073741824 bytes in 3.915e+103 us disagrees by more than 10 times with 3 of the test's 3 other sizes" \
	calibrate --nccl-tests slow.json "$llama" --out slow.yaml
unwritten slow.yaml
awk '$1 == "1073741824" && !done { $6 = "11744"; done = 1 } { print }' "$h100" >noisy.txt
expect 0 calibrate --nccl-tests noisy.txt "$llama" --out noisy.yaml
has out.txt "1073741824     11744.00"
# the row that disagrees with most sizes is named, also when it is the fast
# one: a 4 MiB row 50 times too fast for the log's slow network, though
# within what the scenario's links allow
two=$root/tests/data/nccl-tests/rtx5090-tagged-mpi-two-tests.txt
awk '/ 4194304 / && !done { $7 = "87.48"; done = 1 } { print }' "$two" >fast.txt
expect_err 2 "fast.txt:22: 4194304 bytes in 87.48 us disagrees by more than 10 times with 7 of the test's 7 other sizes (line 21: 2097152 bytes in 4371 us)" \
	calibrate --nccl-tests fast.txt "$llama" --out fast.yaml --force
has err.txt "(remove the row, or measure it again)"
unwritten fast.yaml
# a normal log fits as before: each test's sizes agree within the factor
expect 0 calibrate --nccl-tests "$h100" "$llama" --out h100.yaml
has out.txt "scale_up_bandwidth   1.05" "rms error            5.11 % before, 1.19 % fitted"
# a negative size is a row, refused (it was dropped as a line of another tool)
awk '$1 == "1073741824" && !done { $1 = "-1073741824"; done = 1 } { print }' "$a100" >negative.txt
expect_err 2 "negative.txt:44:1: a negative size in column 'size': not a measurement" \
	calibrate --nccl-tests negative.txt "$mt" --out negative.yaml
unwritten negative.yaml
# a rank listed twice, and a rank no machine has
awk '{ print } /Rank +3 Group/ { print }' "$a100" >twice.txt
expect_err 2 "twice.txt:12:11: rank 3 is listed twice in this test's '# Rank' lines" \
	calibrate --nccl-tests twice.txt "$mt" --out twice.yaml
sed 's/Rank   3 Group/Rank 10000000000 Group/' "$a100" >huge.txt
expect_err 2 "huge.txt:11:9: expected a rank from 0 to 16777215 after '# Rank', not '10000000000'" \
	calibrate --nccl-tests huge.txt "$mt" --out huge.yaml
# '--op' against the test's own header is refused; the same op is accepted
expect_err 2 "dgx-a100-4node-all_reduce.txt:1: '--op all_gather' contradicts the test's header, which says 'all_reduce_perf' (all_reduce)" \
	calibrate --nccl-tests "$a100" "$mt" --out op.yaml --op all_gather
unwritten op.yaml
expect 0 calibrate --nccl-tests "$a100" "$mt" --out op.yaml --op all_reduce
has out.txt "scale_out_bandwidth  1.02"

# ---- calibrate: factors no fit may write --------------------------------------
# llama's trace against a step of short sequences: its attention factor of
# 50.9 is past what '--force' writes
expect_err 2 "the attention factor 50.94 (trace 65.72 ms a step, simulated 1.29 ms before calibration) is outside 0.05 to 20: no calibration is that far from its profile (outside 0.05 to 20); 'far.yaml' not written, '--force' or not" \
	calibrate "$root/tests/data/trace_llama8l-h4096-s8192.json.gz" "$root/scenarios/h200-gpt125m-s1024-mb8.yaml" \
	--out far.yaml --force --set training.seq_len=128 --set training.micro_batch=1
unwritten far.yaml
# a refit that runs away (the simulated GEMM time stops following its
# factor): refused with exit 1, '--out' never written (the refits read a
# file of their own), and an old calibration there left as it was
expect_err 1 "clustersim calibrate: the refit diverges: its pass 1 would write the gemm factor 0.005274 (trace 34.35 ms a step, simulated 539.78 ms before calibration) is outside 0.05 to 20; 'away.yaml' not written" \
	calibrate "$root/tests/data/kineto/hta/sampled" "$root/scenarios/ddp-gpt-small.yaml" --out away.yaml --force
unwritten away.yaml
printf 'calibration:\n  gemm: 1.1\n' >away.yaml
expect 1 calibrate "$root/tests/data/kineto/hta/sampled" "$root/scenarios/ddp-gpt-small.yaml" --out away.yaml --force
[ "$(cat away.yaml)" = "$(printf 'calibration:\n  gemm: 1.1')" ] ||
	{ echo "FAIL: a refit that diverged changed the old calibration: $(cat away.yaml)" >&2; fail=1; }

# ---- scenario strings: text a report can print -----------------------------
gpt=$root/scenarios/ddp-gpt-small.yaml
expect_err 2 "--set 'name=...' is not valid UTF-8 at byte 9 (0xe9)" \
	run "$gpt" --set "name=$(printf 'caf\351')" --format json
[ -s out.txt ] && { echo "FAIL: a JSON report of a name that is not UTF-8" >&2; fail=1; }
sed 's/^name: .*/name: "a\\u0000b"/' "$gpt" >nul.yaml
expect_err 2 "nul.yaml:3:7: the value of 'name' holds a NUL character" run nul.yaml
expect 0 run "$gpt" --set "name=café" --format json
has out.txt '"name": "café"'

# ---- defaults that change nothing, said or used -------------------------------
# an algorithm no collective can use: run says so once, as coll does
expect 0 run "$gpt" --set collectives.algorithm=nvls
has err.txt "warning: 'collectives.algorithm: nvls' is not available on this cluster (the GPU has no NVLink SHARP); every collective uses what NCCL uses instead"
[ "$(grep -c 'collectives.algorithm' err.txt)" -eq 1 ] || { echo "FAIL: the nvls warning not once:" >&2; cat err.txt >&2; fail=1; }
expect 0 run "$gpt" --set collectives.algorithm=torus
has err.txt "'collectives.algorithm: torus' is not available on this cluster (the cluster is no torus)"
expect 0 run "$gpt" --set collectives.algorithm=ring
[ -s err.txt ] && { echo "FAIL: run warned of ring:" >&2; cat err.txt >&2; fail=1; }
# an algorithm some of the plan's collectives cannot use: run names them
threed=$root/scenarios/3d-llama3-70b-64gpu.yaml
expect 0 validate "$threed" --set collectives.algorithm=tree
has err.txt "warning: 'collectives.algorithm: tree' does not apply to reduce_scatter, all_gather; those collectives use what NCCL uses instead"
# (unsharded, the plan does not fit: --allow-oom, the warnings are what is checked)
expect 0 validate "$threed" --set collectives.algorithm=tree --set parallelism.sequence_parallel=false \
	--set parallelism.data_parallel.sharding=none --allow-oom
grep -q collectives.algorithm err.txt && { echo "FAIL: tree warned with only all-reduces:" >&2; cat err.txt >&2; fail=1; }
# the network's latency enters NCCL's steps: 1 ms a message is a longer step
ddp=$root/scenarios/ddp-llama2-7b-2node.yaml
expect 0 run "$ddp" --set "cluster.scale_out.latency=5 us"
grep 'step time' out.txt >fast.txt
expect 0 run "$ddp" --set "cluster.scale_out.latency=1 ms"
grep 'step time' out.txt >slow.txt
cmp -s fast.txt slow.txt && { echo "FAIL: a 1 ms network latency changed no step:" >&2; cat fast.txt >&2; fail=1; }

# ---- an NVL72 rack: trays that fill no domain ---------------------------------
# the rack's 72-GPU domain, derived, over 20 trays of 4; one given that is
# no multiple of the tray; and the same through --set
nvl=$root/scenarios/gb200-nvl72-llama3-70b.yaml
at=$(grep -n '^  nodes: 16$' "$nvl" | cut -d: -f1)
sed 's/^  nodes: 16$/  nodes: 20/' "$nvl" >trays.yaml
expect_err 2 "trays.yaml:$at:10: the 80 GPUs (20 nodes of 4) fill no whole 72-GPU NVLink domains of 'gb200-nvl72'" \
	validate trays.yaml
sed 's/^  nodes: 16$/  nodes: 18\n  scale_up: {domain: 70}/' "$nvl" >domain.yaml
expect_err 2 "domain.yaml:$((at + 1)):22: 'cluster.scale_up.domain' (70) must divide gpus_per_node (4)" \
	validate domain.yaml
expect_err 2 "--set 'cluster.nodes=19': the 76 GPUs (19 nodes of 4) fill no whole 72-GPU NVLink domains" \
	run "$nvl" --set cluster.nodes=19

# ---- a gzip bomb of kernel events ---------------------------------------------
# 80 MB of one repeated event compressed some 300 times: refused once it has
# expanded past 64 MiB at more than 100 times (it read for minutes before)
python3 -c "
import gzip, sys
ev = b'{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"pid\":0,\"tid\":7},'
body = b'{\"traceEvents\":[' + ev * (80 * 1000 * 1000 // len(ev)) + b'{}]}'
open('bomb.json.gz', 'wb').write(gzip.compress(body, 1))
" || fail=1
expect_err 2 "'bomb.json.gz': its gzip data expands more than 100 times" \
	compare bomb.json.gz "$root/scenarios/h200-gpt125m-s1024-mb8.yaml"

exit $fail
