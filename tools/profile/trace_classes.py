#!/usr/bin/env python3
"""Kernel time by class in a PyTorch profiler (Kineto) Chrome trace.

Usage: trace_classes.py TRACE.json[.gz] [--steps N]

Prints the GPU kernel time of the trace's kernels, grouped as clustersim
reports compute (gemm, attention, memory_bound, optimizer), the kernel
count, the span from the first kernel's start to the last one's end, and
the GPU idle time inside that span, divided by --steps (the traces in
tools/measure/h200 hold one step). Used for docs/validation.md.
"""
import gzip
import json
import sys


def classify(name):
    n = name.lower()
    if "multi_tensor_apply" in n and ("adam" in n or "fusedoptimizer" in n):
        return "optimizer"
    if any(k in n for k in ("sdpa", "fmha", "flash", "cudnn::fusion", "attention")):
        return "attention"
    if any(k in n for k in ("nvjet", "gemm", "cutlass", "xmma", "cublas")):
        return "gemm"
    return "memory_bound"


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    steps = 1
    if "--steps" in args:
        i = args.index("--steps")
        steps = int(args[i + 1])
        del args[i:i + 2]
    path = args[0]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        ev = json.load(f)["traceEvents"]
    kern = sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    by = {"gemm": [0.0, 0], "attention": [0.0, 0], "memory_bound": [0.0, 0], "optimizer": [0.0, 0]}
    for e in kern:
        c = by[classify(e["name"])]
        c[0] += e["dur"]
        c[1] += 1
    span = kern[-1]["ts"] + kern[-1]["dur"] - kern[0]["ts"]
    busy = sum(v[0] for v in by.values())
    print("class          ms/step  kernels")
    for k, (t, n) in by.items():
        print("%-13s %8.2f %8d" % (k, t / 1e3 / steps, n // steps))
    print("%-13s %8.2f %8d" % ("busy", busy / 1e3 / steps, len(kern) // steps))
    print("%-13s %8.2f" % ("span", span / 1e3 / steps))
    print("%-13s %8.2f" % ("gpu_idle", (span - busy) / 1e3 / steps))


if __name__ == "__main__":
    main()
