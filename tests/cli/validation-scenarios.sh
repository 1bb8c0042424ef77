#!/bin/sh
# The replay tables and their scenarios (scenarios/validation/): every
# scenario under scenarios/validation, and the clusters of the collective
# checks (tests/data/coll), passes `clustersim validate` (no run: some plans
# are 2,000 GPUs), every row of each published.tsv names a
# scenario that exists and validates, every development-set scenario has a
# row, and tools/replays.py replays the two one-GPU rows (cheap) and reports
# an error for each.
#   tests/cli/validation-scenarios.sh CLUSTERSIM SOURCE_ROOT PYTHON3
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$2
python=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$root" || exit 1

fail=0
n=0
for f in $(find scenarios/validation tests/data/coll -name '*.yaml' | sort); do
	if ! "$bin" validate "$f" >/dev/null 2>"$tmp/err"; then
		echo "FAIL: clustersim validate $f" >&2
		sed 's/^/  /' "$tmp/err" >&2
		fail=1
	fi
	n=$((n + 1))
done
[ "$n" -ge 13 ] || { echo "FAIL: $n scenarios under scenarios/validation and tests/data/coll, expected at least 13" >&2; fail=1; }

rows=0
for tsv in scenarios/validation/dgxc/published.tsv scenarios/validation/published.tsv; do
	dir=$(dirname "$tsv")
	while IFS="$(printf '\t')" read -r file kind published field source; do
		case $file in '#'* | '') continue ;; esac
		rows=$((rows + 1))
		if [ ! -f "$dir/$file" ]; then
			echo "FAIL: $tsv names '$file', which is not in $dir" >&2
			fail=1
		# a replay whose plan reads over the GPU's memory (docs/validation.md
		# says why) is still a valid scenario
		elif ! "$bin" validate "$dir/$file" --allow-oom >/dev/null 2>&1; then
			echo "FAIL: $tsv: '$file' does not validate" >&2
			fail=1
		fi
		[ -n "$source" ] || { echo "FAIL: $tsv: '$file' has no source" >&2; fail=1; }
		case $kind in step_s | tflops | mfu | hfu) ;; *) echo "FAIL: $tsv: '$file': kind '$kind'" >&2; fail=1 ;; esac
		case $published in '' | *[!0-9.]*) echo "FAIL: $tsv: '$file': published '$published'" >&2; fail=1 ;; esac
		[ -n "$field" ] || { echo "FAIL: $tsv: '$file' has no field" >&2; fail=1; }
	done <"$tsv"
done
[ "$rows" -ge 20 ] || { echo "FAIL: $rows rows in the published tables, expected at least 20" >&2; fail=1; }

for f in scenarios/validation/dgxc/*.yaml; do
	b=$(basename "$f")
	grep -q "^$b	" scenarios/validation/dgxc/published.tsv ||
		{ echo "FAIL: $f has no row in scenarios/validation/dgxc/published.tsv" >&2; fail=1; }
done

# the runner, on the cheap rows: the three measured H200 steps, each with a finite error
bindir=$(dirname "$bin")
if ! "$python" tools/replays.py --build "$bindir" --only replays --match h200- --json >"$tmp/out" 2>"$tmp/err"; then
	echo "FAIL: tools/replays.py --only replays --match h200- exited non-zero" >&2
	sed 's/^/  /' "$tmp/err" >&2
	fail=1
elif ! "$python" -c '
import json, math, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert len(rows) == 3, rows
for r in rows:
    assert r["published"] > 0 and r["simulated"] > 0 and math.isfinite(r["error_pct"]), r
    assert abs(r["error_pct"] - 100 * (r["simulated"] - r["published"]) / r["published"]) < 1e-9, r
s = d["sets"]["replays"]
errs = sorted(abs(r["error_pct"]) for r in rows)
assert s["rows"] == 3 and abs(s["max_abs_error_pct"] - errs[2]) < 1e-12, s
assert abs(s["median_abs_error_pct"] - errs[1]) < 1e-12, s
' "$tmp/out"; then
	echo "FAIL: tools/replays.py --json printed a wrong report:" >&2
	sed 's/^/  /' "$tmp/out" >&2
	fail=1
fi

[ "$fail" -eq 0 ] && echo "ok: $n scenarios valid, $rows published rows"
exit "$fail"
