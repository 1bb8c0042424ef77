#!/bin/sh
# Every example in every command's --help runs and exits 0 (the Llama 3
# 405B ones are left to the benchmarks: they take seconds each). Also: no
# arguments and an unknown command exit 2, --version exits 0, and --progress
# reports the share of ops done and the simulated and elapsed time.
#   tests/cli/help-examples.sh CLUSTERSIM SOURCE_ROOT
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
ln -s "$root/scenarios" "$tmp/scenarios"
cd "$tmp" || exit 1

fail=0
expect() {
	want=$1
	shift
	"$bin" "$@" >out.txt 2>err.txt
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: clustersim $* exited $got, expected $want" >&2
		sed 's/^/  /' err.txt >&2
		fail=1
	fi
}

expect 2
expect 2 runn
expect 0 --version
expect 0 --help
n=0
for cmd in "" run validate coll memory pipeline sweep plan; do
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
# a kernel profile that cannot be read is bad input, with its location
expect 2 run scenarios/ddp-gpt-small.yaml --set cluster.gpu.profile=no-such-profile.yaml
grep -q "^--set 'cluster.gpu.profile': cannot open kernel profile" err.txt ||
	{ echo "FAIL: no location for the missing profile:" >&2; cat err.txt >&2; fail=1; }
printf 'name: x\ngpu: y\nderived: maybe\n' >bad-profile.yaml
expect 2 validate scenarios/ddp-gpt-small.yaml --set cluster.gpu.profile="$tmp/bad-profile.yaml"
grep -q "bad-profile.yaml:3:10: " err.txt ||
	{ echo "FAIL: no file:line:col for the malformed profile:" >&2; cat err.txt >&2; fail=1; }
# progress lines start after 2^20 events; the folded 1T run has about 1.2 M
expect 0 run scenarios/megatron-1t-3072gpu.yaml --set simulate.fold=true --progress
tr '\r' '\n' <err.txt | grep -Eq '^  simulating: +[0-9.]+ % of [0-9]+ ops, [0-9.]+ s simulated, [0-9.]+ s elapsed$' ||
	{ echo "FAIL: no progress line on stderr:" >&2; tr '\r' '\n' <err.txt | head -3 >&2; fail=1; }
echo "$n examples from --help ran"
[ "$n" -ge 8 ] || { echo "FAIL: only $n examples found" >&2; fail=1; }
if [ "$fail" -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit "$fail"
