#!/bin/sh
# Figures that cannot be true are never printed with exit 0, through the
# binary: absurd inputs refused with their place and exit 2, a run that
# cannot finish with exit 1, and reports that stay within what a figure
# can be (fractions in [0, 1], MFU below 100 %, infinities said).
#   tests/cli/figures.sh CLUSTERSIM SOURCE_ROOT
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

# lacks FILE NEEDLE: no line of FILE holds NEEDLE
lacks() {
	if grep -qF -e "$2" "$1"; then
		echo "FAIL: '$2' in $1:" >&2
		sed 's/^/  /' "$1" >&2
		fail=1
	fi
}

# ---- the host's figures in a calibration file ------------------------------
printf 'host: {kernel_gap_us: 1e300}\n' >gap.yaml
expect 2 run "$gpt" --set cluster.gpu.calibration="$tmp/gap.yaml"
has err.txt "gap.yaml:1:23: 'kernel_gap_us' must be at most 1e+06, not '1e300'"
[ -s out.txt ] && { echo "FAIL: a report for a gap of 1e300 us" >&2; fail=1; }

# ---- coll: counts, sizes ------------------------------------------------------
expect 2 coll --gpus-per-node 4294967304
has err.txt "clustersim coll: '--gpus-per-node' needs a whole number from 1 to 1024, got '4294967304'"
expect 2 coll --nodes 99999999999
has err.txt "clustersim coll: '--nodes' needs a whole number from 1 to 10000000, got '99999999999'"
expect 2 coll --gpus 0
has err.txt "clustersim coll: '--gpus' needs a whole number from 1 to 10000000, got '0'"
expect 2 coll --collective all_gather -b 1 -e 7
has err.txt "clustersim coll: no size from '--minbytes' 1 to '--maxbytes' 7 holds one float per rank: all_gather on 8 ranks needs at least 32 bytes"
[ -s out.txt ] && { echo "FAIL: coll printed a table without a row" >&2; fail=1; }
expect 2 coll --collective all_reduce -b 1 -e 3
has err.txt "all_reduce needs at least 4 bytes"
expect 0 coll --collective all_gather -b 32 -e 32
has out.txt "          32             1     float"

# ---- goodput --------------------------------------------------------------------
# no failure rates: all is kept, exactly; the MTBF and Young/Daly never come
expect 0 goodput "$gpt" --days 2 --runs 20 --no-progress
has out.txt "job MTBF           never fails" "(Young/Daly: never, without failures)" \
	"effective training   100.00 % (99 % CI 100.00 - 100.00)"
expect 0 goodput "$gpt" --days 2 --runs 20 --no-progress --format json
has out.txt '"mtbf_h": null,' '"young_daly_interval_s": null,' '"mean": 1,'
lacks out.txt '1.0000000000000002'
# a checkpoint longer than its interval, failures every 6 minutes and planned
# stops every quarter hour: nothing below 0 or past 100 %
expect 0 goodput "$gpt" --set reliability.software_rate=10 --set reliability.planned_per_day=100 \
	--set reliability.checkpoint.size=100TB --set reliability.checkpoint.interval=1h \
	--runs 100 --days 5 --no-progress --format json
lacks out.txt '": -'
expect 0 goodput "$gpt" --set reliability.software_rate=10 --set reliability.planned_per_day=100 \
	--set reliability.checkpoint.size=100TB --set reliability.checkpoint.interval=1h \
	--runs 100 --days 5 --no-progress
has out.txt "first order 0.00 %"
grep -Eq ' -[0-9]' out.txt && { echo "FAIL: a negative figure:" >&2; cat out.txt >&2; fail=1; }
# a shape whose gaps crowd under a nanosecond, and work of hours
expect 2 goodput "$gpt" --set reliability.distribution=weibull --set reliability.weibull_shape=0.05
has err.txt "--set 'reliability.weibull_shape=0.05': 'reliability.weibull_shape' must be at least 0.1, got '0.05'"
expect 2 goodput "$gpt" --set reliability.preset=llama3 --set reliability.checkpoint.interval=1s \
	--days 36500 --no-progress
has err.txt "--set 'reliability.checkpoint.interval=1s': 1000 runs of 36500 days at 8.64e+04 events a day" \
	"more than the 1e+11 a study takes (hours of work)"

# ---- MFU of GPUs drawn faster than the profile ------------------------------------
{ cat "$gpt"; printf 'stragglers:\n  - {random: {fraction: 1, distribution: uniform, low: 0.2, high: 0.25}}\n'; } >fast.yaml
expect 0 run fast.yaml --set fleet.preset=ideal
has out.txt "of the fastest GPU's peak, x"
mfu=$(awk '/^  MFU / { sub(/^  MFU */, ""); print $1 + 0; exit }' out.txt)
awk -v m="$mfu" 'BEGIN { exit !(m > 0 && m <= 100) }' ||
	{ echo "FAIL: MFU of faster GPUs is '$mfu' %" >&2; cat out.txt >&2; fail=1; }

# ---- run-chakra -----------------------------------------------------------------
expect 0 export-chakra "$gpt" --out et --prefix p
# another model's scenario: no MFU from the scenario's model against the trace's time
expect 0 run-chakra et --cluster "$gpt" --set model.layers=96 --set model.hidden=12288 --no-progress
has err.txt "note: the traces compute 1.123e+15 FLOPs a step, the scenario's model"
has out.txt "traces without a model"
lacks out.txt "MFU"
# an H200's traces on the scenario's A100s: faster than the A100's peak
expect 0 export-chakra "$gpt" --set cluster.gpu=h200-sxm-141g --out et200 --prefix p
expect 0 run-chakra et200 --cluster "$gpt" --no-progress
has err.txt "note: the traces run the scenario's model above the GPUs' peak (MFU"
lacks out.txt "MFU"
# the scenario's own traces keep its report
expect 0 run-chakra et --cluster "$gpt" --no-progress
has out.txt "  MFU              49.4 %"
lacks err.txt "note:"
# traces that take no time: no step, no 'inf' tokens/s
mkdir empty
for r in 0 1 2 3 4 5 6 7; do printf '\000' >empty/e.$r.et; done
expect 2 run-chakra empty --cluster "$gpt" --no-progress
has err.txt "clustersim run-chakra: the traces take no time (no node of theirs lasts): there is no step to report"
[ -s out.txt ] && { echo "FAIL: a report of traces that take no time" >&2; fail=1; }

exit $fail
