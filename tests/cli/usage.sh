#!/bin/sh
# The commands a new user meets, through the binary: validate's memory
# verdict (a plan that does not fit exits 1 unless --allow-oom) over every
# shipped scenario and the docs' word on each that does not fit; a shipped
# scenario given by its name (found in ./scenarios, else the build's
# folder: the source tree's for this uninstalled binary), with the file
# read said, and `list scenarios`' file column; standard error of a
# command that is not a terminal: no progress line for a short run, a
# "wrote FILE" line for each file written, neither with --no-progress, and
# both options taken by every long command; --jobs wherever a parallel
# count is taken (run's --threads its alias); the pictures: a pipeline
# timeline's bubble in percent and zb-v's two chunks in two shades, a
# goodput timeline's restarts and checkpoints visible, each SVG rendered by
# rsvg-convert where it is installed.
#   tests/cli/usage.sh CLUSTERSIM SOURCE_ROOT
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

# ---- validate: the plan must fit in memory --------------------------------
refused=0
for f in "$root"/scenarios/*.yaml; do
	s=$(basename "$f" .yaml)
	"$bin" validate "$f" >out.txt 2>err.txt
	rc=$?
	case $rc in
	0) ;;
	1)
		refused=$((refused + 1))
		has err.txt "clustersim validate: $f: the plan needs " "(--allow-oom accepts it)"
		[ -s out.txt ] && { echo "FAIL: validate $s refused the plan and printed 'ok'" >&2; fail=1; }
		expect 0 validate "$f" --allow-oom
		has out.txt "ok: $f: "
		has err.txt "warning: the plan needs "
		# a shipped scenario that does not fit is one the docs say does not fit
		grep -F "| \`$s.yaml\` |" "$root/docs/scenarios.md" | grep -qF 'does not fit' ||
			{ echo "FAIL: docs/scenarios.md does not say that $s does not fit" >&2; fail=1; }
		;;
	*) echo "FAIL: validate $s exited $rc" >&2; sed 's/^/  /' err.txt >&2; fail=1 ;;
	esac
done
[ "$refused" -ge 1 ] || { echo "FAIL: no shipped scenario exercises the memory verdict" >&2; fail=1; }
# what the docs say does not fit, validate refuses
for s in $(sed -n 's/^| `\([a-z0-9-]*\)\.yaml` |.*does not fit.*/\1/p' "$root/docs/scenarios.md"); do
	expect 1 validate "$root/scenarios/$s.yaml"
done
# run --help suggests only scenarios that fit
"$bin" run --help | sed -n 's/^  clustersim run \([^ ]*\).*/\1/p' | sort -u >suggested.txt
[ -s suggested.txt ] || { echo "FAIL: run --help suggests no scenario" >&2; fail=1; }
while read -r s; do
	(cd "$root" && "$bin" validate "$s") >/dev/null 2>err.txt ||
		{ echo "FAIL: run --help suggests '$s', which validate refuses:" >&2; cat err.txt >&2; fail=1; }
done <suggested.txt
# an override that makes a plan fit passes; one that breaks it fails
expect 0 validate "$gpt"
expect_err 1 "the plan needs " validate "$gpt" --set training.micro_batch=64 --set training.global_batch=512

# ---- a shipped scenario by name -------------------------------------------
# from a folder without scenarios/: the source tree's (this binary is its build's)
expect_err 0 "clustersim validate: scenario 'ddp-gpt-small': reading $gpt" validate ddp-gpt-small
has out.txt "ok: $gpt: 8 GPUs"
expect_err 0 "scenario 'ddp-gpt-small.yaml': reading $gpt" validate ddp-gpt-small.yaml
expect_err 0 "reading $root/scenarios/validation/dgxc/" validate validation/dgxc/dgxc-gpt3-175b-bf16-128gpu
expect_err 0 "clustersim run: scenario 'ddp-gpt-small': reading $gpt" run ddp-gpt-small --format csv
grep -q '^ddp-gpt-small,' out.txt || { echo "FAIL: run ddp-gpt-small:" >&2; cat out.txt >&2; fail=1; }
expect_err 0 "clustersim memory: scenario 'ddp-gpt-small': reading $gpt" memory ddp-gpt-small
expect_err 0 "clustersim plan: scenario 'ddp-gpt-small'" plan ddp-gpt-small --gpus 2 --top 1 --jobs 2
expect_err 0 "clustersim sweep: scenario 'ddp-gpt-small'" sweep ddp-gpt-small --vary training.micro_batch=1,2 \
	--out by-name.csv --jobs 2
expect_err 0 "clustersim goodput: scenario 'llama3-405b-16k-goodput'" goodput llama3-405b-16k-goodput \
	--runs 4 --days 1 --jobs 2 --set simulate.fold=true
expect_err 0 "clustersim compare: scenario 'h200-llama8l-h4096-s8192'" compare \
	"$root/tests/data/trace_llama8l-h4096-s8192.json.gz" h200-llama8l-h4096-s8192
expect_err 0 "clustersim calibrate: scenario 'megatron-1t-3072gpu'" calibrate --nccl-tests \
	"$root/tests/data/nccl-tests/dgx-a100-4node-all_reduce.txt" megatron-1t-3072gpu --out net.yaml
expect_err 0 "clustersim export-chakra: scenario 'ddp-gpt-small'" export-chakra ddp-gpt-small --out et
# a file of that name comes first, and ./scenarios before the build's folder
cp "$gpt" ddp-gpt-small
expect 0 validate ddp-gpt-small
has out.txt "ok: ddp-gpt-small: "
grep -q 'reading' err.txt && { echo "FAIL: a file named like a scenario was looked up" >&2; fail=1; }
rm ddp-gpt-small
mkdir scenarios
sed 's/^name: .*/name: mine/' "$gpt" >scenarios/ddp-gpt-small.yaml
expect_err 0 "scenario 'ddp-gpt-small': reading scenarios/ddp-gpt-small.yaml" validate ddp-gpt-small
expect_err 0 "reading $root/scenarios/3d-llama3-70b-64gpu.yaml" validate 3d-llama3-70b-64gpu
rm -r scenarios
# a name that is no file and no shipped scenario is bad input, said once
expect_err 2 "clustersim run: no file 'ddp-gpt-smal' and no shipped scenario of that name in $root/scenarios (see 'clustersim list scenarios')" \
	run ddp-gpt-smal
expect_err 2 "clustersim memory: no file 'nothing' and no shipped scenario" memory nothing
# a path or a NAME.yaml that is not there is the loader's to name
expect_err 2 "cannot open 'missing.yaml'" validate missing.yaml
expect_err 2 "cannot open 'no/such.yaml'" validate no/such.yaml
# list scenarios: each scenario's file, which exists and validates as it is named
expect 0 list scenarios
has out.txt "$gpt"
tail -n +2 out.txt | awk '{ print $NF }' >files.txt
[ "$(wc -l <files.txt)" -eq "$(ls "$root"/scenarios/*.yaml | wc -l)" ] ||
	{ echo "FAIL: list scenarios: not one line per scenario" >&2; fail=1; }
while read -r f; do
	[ -f "$f" ] || { echo "FAIL: list scenarios names '$f', which is no file" >&2; fail=1; }
done <files.txt
head -1 out.txt | grep -q ' file$' || { echo "FAIL: list scenarios: no file column" >&2; head -1 out.txt >&2; fail=1; }

# ---- progress and the files written, on a standard error that is a file ----
# a short run prints no progress line (the first comes after 10 s), and one
# "wrote FILE" line for each file written
expect 0 run "$gpt" --per-rank ranks.csv --trace t.json --timeline tl.svg
sort err.txt >sorted.txt
printf 'wrote ranks.csv\nwrote t.json\nwrote tl.svg\n' >want.txt
cmp -s sorted.txt want.txt || { echo "FAIL: run's standard error:" >&2; cat err.txt >&2; fail=1; }
expect 0 run "$gpt" --per-rank ranks.csv --no-progress
[ -s err.txt ] && { echo "FAIL: run --no-progress wrote to standard error:" >&2; cat err.txt >&2; fail=1; }
expect 0 run "$gpt" --no-progress --progress --per-rank ranks.csv
has err.txt "wrote ranks.csv"
expect 0 sweep "$gpt" --vary training.micro_batch=1,2 --out bw.csv --plot bw.svg --jobs 2
[ "$(cat err.txt)" = "$(printf 'wrote bw.csv\nwrote bw.svg')" ] ||
	{ echo "FAIL: sweep's standard error:" >&2; cat err.txt >&2; fail=1; }
expect 0 plan "$gpt" --gpus 2 --top 1 --out plans.txt --jobs 2
[ "$(cat err.txt)" = "wrote plans.txt" ] || { echo "FAIL: plan's standard error:" >&2; cat err.txt >&2; fail=1; }
expect 0 plan "$gpt" --gpus 2 --top 1 --jobs 2
[ -s err.txt ] && { echo "FAIL: plan to standard output said it wrote a file:" >&2; cat err.txt >&2; fail=1; }
# (the goodput scenario's step folded: one rank a stage, seconds less under the sanitizers)
gp=$root/scenarios/llama3-405b-16k-goodput.yaml
fold="--set simulate.fold=true"
# shellcheck disable=SC2086
expect 0 goodput "$gp" $fold --runs 4 --days 1 --out gp.txt --plot gp.svg --jobs 2
[ "$(cat err.txt)" = "$(printf 'wrote gp.txt\nwrote gp.svg')" ] ||
	{ echo "FAIL: goodput's standard error:" >&2; cat err.txt >&2; fail=1; }
expect 0 calibrate --nccl-tests "$root/tests/data/nccl-tests/dgx-a100-4node-all_reduce.txt" \
	"$root/scenarios/megatron-1t-3072gpu.yaml" --out net.yaml
[ "$(cat err.txt)" = "wrote net.yaml" ] || { echo "FAIL: calibrate's standard error:" >&2; cat err.txt >&2; fail=1; }
# every long command takes both options
llama="$root/tests/data/trace_llama8l-h4096-s8192.json.gz $root/scenarios/h200-llama8l-h4096-s8192.yaml"
for opt in --progress --no-progress; do
	expect 0 run "$gpt" $opt
	expect 0 sweep "$gpt" --vary training.micro_batch=1 --out s.csv $opt
	expect 0 plan "$gpt" --gpus 2 --top 1 $opt
	# shellcheck disable=SC2086
	expect 0 goodput "$gp" $fold --runs 2 --days 1 $opt
	# shellcheck disable=SC2086
	expect 0 compare $llama $opt
	# shellcheck disable=SC2086
	expect 0 calibrate $llama --out c.yaml $opt
done
# shellcheck disable=SC2086
expect 0 calibrate $llama --out c.yaml --no-progress
[ -s err.txt ] && { echo "FAIL: calibrate --no-progress wrote to standard error:" >&2; cat err.txt >&2; fail=1; }
expect_err 2 "option '--no-progress' takes no value" compare $llama --no-progress=1

# ---- --jobs ---------------------------------------------------------------
# run --jobs is simulate.threads, as --threads is: the same report on any count
threed=$root/scenarios/3d-llama3-70b-64gpu.yaml
expect 0 run "$threed" --format json --jobs 1
grep -v sim_wall_s out.txt >one.txt
expect 0 run "$threed" --format json --jobs 3
grep -v sim_wall_s out.txt >three.txt
expect 0 run "$threed" --format json --threads 3
grep -v sim_wall_s out.txt >alias.txt
cmp -s one.txt three.txt && cmp -s three.txt alias.txt ||
	{ echo "FAIL: run --jobs 3 / --threads 3 report otherwise than --jobs 1" >&2; fail=1; }
grep -q '"step_time_s": 4.13' one.txt || { echo "FAIL: run --jobs 1: no step time" >&2; fail=1; }
for bad in 0 257 two; do
	expect_err 2 "'--jobs' needs a whole number from 1 to 256 (got '$bad')" run "$gpt" --jobs "$bad"
done
# one wording for every command
expect_err 2 "'--jobs' needs a whole number from 1 to 256 (got '0')" plan "$gpt" --jobs 0
expect_err 2 "'--jobs' needs a whole number from 1 to 1024 (got 'x')" sweep "$gpt" --vary training.micro_batch=1 \
	--out s.csv --jobs x
expect_err 2 "'--jobs' needs a whole number from 1 to 256 (got '300')" goodput "$gp" --jobs 300
# ten million runs of nothing read for 80 s: a million is the most sampled
expect_err 2 "'--runs' needs a whole number from 1 to 1000000 (got '10000000')" goodput "$gp" --runs 10000000

# ---- pictures -------------------------------------------------------------
# the pipeline timeline's title: the bubble in percent, the report's figure
expect 0 pipeline --schedule zb-v --stages 4 --micro-batches 8 --timeline zbv.svg --format json
python3 -c "
import json, re, sys
m = json.load(open('out.txt'))
svg = float(re.search(r'bubble ([0-9.]+) %</text>', open('zbv.svg').read()).group(1))
sys.exit(0 if abs(svg - 100 * m['bubble_fraction']) < 0.05 else 1)" ||
	{ echo "FAIL: the pipeline timeline's bubble is not the report's in percent" >&2; fail=1; }
# zb-v's two chunks in two shades of each kind, and the legend says which
grep -q 'fill="#4e79a7" [^>]*><title>F0 chunk 0:' zbv.svg && grep -q 'fill="#a0cbe8" [^>]*><title>F0 chunk 1:' zbv.svg &&
	grep -q 'fill="#8cd17d" [^>]*><title>W0 chunk 1:' zbv.svg && grep -q 'light: chunks 1, 3' zbv.svg ||
	{ echo "FAIL: zb-v's chunks are not told apart in the timeline" >&2; fail=1; }
expect 0 pipeline --schedule 1f1b --stages 4 --micro-batches 8 --timeline 1f1b.svg
grep -q 'a0cbe8\|chunks 1, 3' 1f1b.svg && { echo "FAIL: a one-chunk timeline has a second shade" >&2; fail=1; }
# the goodput timeline: every restart a visible mark (one of 10 minutes is
# 7 px of a day's 940), checkpoints (2.8 s every 5 min) drawn at least 3 px high
# shellcheck disable=SC2086
expect 0 goodput "$gp" $fold --runs 4 --days 1 --plot day.svg --jobs 2
cat >marks.py <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
rects = re.findall(r'<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="(#[0-9a-f]+)"/>', svg)
bar = [r for r in rects if float(r[1]) < 90]
restart = [r for r in bar if r[4] == '#d62728']
ckpt = [r for r in bar if r[4] == '#1f77b4']
ticks = svg.count('stroke-width="0.5"><title>')
ok = ticks >= 1 and len(restart) >= ticks and all(float(r[2]) >= 1 and float(r[3]) >= 3 for r in restart + ckpt)
# a checkpoint every 5 minutes: 288 a day, less those a restart takes the place of
sys.exit(0 if ok and len(ckpt) >= 250 else 1)
PY
python3 marks.py day.svg || { echo "FAIL: goodput --plot: restarts or checkpoints not drawn" >&2; fail=1; }
# shellcheck disable=SC2086
expect 0 goodput "$gp" $fold --runs 4 --days 54 --plot days.svg --jobs 2
[ "$(grep -c '<rect' days.svg)" -lt 6000 ] || { echo "FAIL: goodput --plot of 54 days: too many boxes" >&2; fail=1; }
if command -v rsvg-convert >/dev/null 2>&1; then
	for svg in zbv.svg 1f1b.svg day.svg days.svg tl.svg bw.svg gp.svg; do
		rsvg-convert -o "$svg.png" "$svg" 2>err.txt && [ -s "$svg.png" ] ||
			{ echo "FAIL: rsvg-convert cannot render $svg:" >&2; cat err.txt >&2; fail=1; }
	done
fi

exit $fail
