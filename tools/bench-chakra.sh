#!/bin/sh
# Time of importing many identical Chakra traces: RANKS copies (hard links)
# of one data-parallel trace (2,000 compute nodes of 100 us, an all-reduce
# of 25 MiB without a process group after every tenth), encoded here from
# Chakra's field numbers, then `clustersim run-chakra` on the 16,384-GPU
# Llama 3 scenario's cluster made pure data parallel, under /usr/bin/time.
# Identical rank-free traces are decoded once, so the import line should
# read "1 decoded" and take about the time of reading the files.
#
#   tools/bench-chakra.sh [BUILD_DIR] [RANKS]    (defaults: build-release, 16384)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-release}
ranks=${2:-16384}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
python3 - "$tmp" "$ranks" <<'PY'
import os, sys
def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)
def fv(f, v): return varint(f << 3) + varint(v)
def fb(f, b): return varint(f << 3 | 2) + varint(len(b)) + b
def attr(name, v): return fb(10, fb(1, name.encode()) + fv(9, v))
def node(i, typ, dur, deps, attrs=b""):
    b = fv(1, i) + fv(3, typ) + (fb(5, b"".join(varint(d) for d in deps)) if deps else b"")
    return varint(len(b + fv(7, dur) + attrs)) + b + fv(7, dur) + attrs
out, prev, coll, nid = bytearray(varint(0)), None, None, 0
for k in range(2000):
    out += node(nid, 4, 100, [prev] if prev is not None else [])   # COMP_NODE
    prev, nid = nid, nid + 1
    if k % 10 == 9:                                                 # COMM_COLL_NODE
        out += node(nid, 7, 0, [prev], attr("comm_type", 0) + attr("comm_size", 25 << 20))
        coll, nid = nid, nid + 1
out += node(nid, 4, 1000, [prev, coll])
d, n = sys.argv[1], int(sys.argv[2])
open(os.path.join(d, "w.0.et"), "wb").write(out)
for r in range(1, n):
    os.link(os.path.join(d, "w.0.et"), os.path.join(d, "w.%d.et" % r))
print("%d traces of %d bytes, %d nodes each" % (n, len(out), nid + 1))
PY
/usr/bin/time -f "wall %e s, peak %M KB" "$build/clustersim" run-chakra "$tmp" \
	--cluster scenarios/llama3-405b-16k.yaml --set "cluster.nodes=$(((ranks + 7) / 8))" \
	--set parallelism.tp=1 --set parallelism.pp=1 --set "parallelism.dp=$ranks" \
	--set "training.global_batch=$ranks" --set parallelism.pipeline.schedule=1f1b \
	--set parallelism.pipeline.virtual_stages=1 --format csv 2>&1 | grep -v '^[a-z0-9-]*,'
