#!/bin/sh
# Memory and time of reading a large profiler trace: the measured Llama
# step's trace (tests/data, 3.9 MB of JSON, one step) repeated STEPS times
# with its timestamps shifted step by step into one trace of about
# 3.9 MB x STEPS, then `clustersim compare` on it under /usr/bin/time.
#
#   tools/bench-trace.sh [BUILD_DIR] [STEPS]    (defaults: build-release, 256)
#
# Prints the trace's size, the command's wall time and its peak resident
# memory. The generated trace is written to a temporary directory and
# removed afterwards (needs about 1 GB of disk for 256 steps).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-release}
steps=${2:-256}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
python3 - "$steps" "$tmp/big.json" <<'PY'
import gzip, json, sys
steps, out = int(sys.argv[1]), sys.argv[2]
events = json.load(gzip.open("tests/data/trace_llama8l-h4096-s8192.json.gz"))["traceEvents"]
timed = [e for e in events if "ts" in e]
t0 = min(float(e["ts"]) for e in timed)
t1 = max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed)
period = t1 - t0 + 1000.0
with open(out, "w") as f:
    f.write('{"schemaVersion": 1, "traceEvents": [\n')
    sep = ""
    for s in range(steps):
        shift = s * period
        f.write(sep + '{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", '
                '"ts": %.3f, "dur": %.3f}' % (s, t0 + shift, period - 1000.0))
        sep = ",\n"
        for e in events:
            if "ts" in e:
                e = dict(e, ts=float(e["ts"]) + shift)
            f.write(sep + json.dumps(e))
    f.write("\n]}\n")
PY
size=$(stat -c %s "$tmp/big.json")
echo "trace: $steps steps, $((size / 1048576)) MiB"
/usr/bin/time -o "$tmp/time.txt" -f "wall %e s, peak resident %M KiB" \
	"$build/clustersim" compare "$tmp/big.json" \
	scenarios/h200-llama8l-h4096-s8192.yaml >"$tmp/out.txt"
grep -E '^(gemm|step) ' "$tmp/out.txt"
cat "$tmp/time.txt"
