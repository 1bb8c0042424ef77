#!/usr/bin/env python3
"""The host side of measured training steps, from their PyTorch profiler
(Kineto) traces: what the host spends per kernel launch and per op, how
many kernels an op launches, and where the GPU waits for the host.

Reads the trace_*.json.gz of tools/measure/h200/ (made by
train_step.py: one step of plain eager PyTorch, CPU and CUDA activities
recorded) and writes host_trace.json under $OUT (default: the current
directory), printing one line per trace.

  python3 tools/measure/host_trace.py [TRACE ...]

Per trace:
  launch_us        cudaLaunchKernel calls: count, mean and median duration
  ops              top-level CPU ops (an aten op not inside another on its
                   thread): count, mean host time, kernels per op; the same
                   on the main thread (forward, optimizer) and the autograd
                   engine's (backward)
  gpu_ms           the step's span from its first kernel to its last end,
                   the kernels' union, and the GPU idle between them
  host_bound_ms    of that idle, what the host caused: a gap before a
                   kernel whose launch call ended after the previous kernel
                   had finished, counted from that kernel's end to the
                   launch's end (or the gap, if shorter)
  optimizer        Optimizer.step's host time and the GPU idle from the
                   last backward kernel to the first optimizer kernel
  start_ms         host time from the step's first CPU op to its first kernel

The profiler's own cost inflates every host figure (the gpt125m step ran
0.1055 s unprofiled, 0.1875 s in its trace), so these are upper bounds of
the host's work; the profile's launch costs come from kernel_table.py's
unprofiled loops.
"""
import gzip
import json
import os
import statistics
import sys

DEFAULT = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "h200", "trace_%s.json.gz" % n)
           for n in ("gpt125m-s1024-mb8", "gpt-h5120-8l-s2048-mb4", "llama8l-h4096-s8192")]


def top_level(ops):
    """Ops not nested inside another op of the same thread."""
    out = []
    by_tid = {}
    for e in ops:
        by_tid.setdefault(e.get("tid"), []).append(e)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        end = -1.0
        for e in evs:
            if e["ts"] >= end:
                out.append(e)
                end = e["ts"] + e["dur"]
    return out


def analyse(path):
    t = json.load(gzip.open(path))
    ev = [e for e in t["traceEvents"] if e.get("ph") == "X"]
    kernels = sorted((e for e in ev if e.get("cat") in ("kernel", "gpu_memset")), key=lambda e: e["ts"])
    runtime = [e for e in ev if e.get("cat") == "cuda_runtime"]
    cpu = [e for e in ev if e.get("cat") == "cpu_op"]
    launches = [e for e in runtime if e["name"] == "cudaLaunchKernel"]
    by_corr = {e["args"].get("correlation"): e for e in runtime if "args" in e}

    ld = [e["dur"] for e in launches]
    main_tid = min(cpu, key=lambda e: e["ts"])["tid"]
    tops = top_level(cpu)
    fwd = [e for e in tops if e["tid"] == main_tid]
    bwd = [e for e in tops if e["tid"] != main_tid]
    t0 = kernels[0]["ts"]
    busy, idle, host_idle, last = 0.0, 0.0, 0.0, kernels[0]["ts"]
    for k in kernels:
        if k["ts"] > last:
            gap = k["ts"] - last
            idle += gap
            r = by_corr.get(k.get("args", {}).get("correlation"))
            if r is not None:
                late = r["ts"] + r["dur"] - last
                host_idle += min(gap, max(0.0, late))
            busy += k["dur"]
            last = k["ts"] + k["dur"]
        elif k["ts"] + k["dur"] > last:
            busy += k["ts"] + k["dur"] - last
            last = k["ts"] + k["dur"]
    span = last - t0

    opt = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("Optimizer.step")]
    opt_host = opt[0]["dur"] if opt else 0.0
    opt_idle = 0.0
    if opt:
        first = [k for k in kernels if k["ts"] >= opt[0]["ts"]]
        before = [k for k in kernels if k["ts"] + k["dur"] <= opt[0]["ts"] + opt[0]["dur"]
                  and k["ts"] < (first[0]["ts"] if first else 0)]
        if first and before:
            opt_idle = max(0.0, first[0]["ts"] - max(k["ts"] + k["dur"] for k in before))
    first_cpu = min(e["ts"] for e in cpu)
    return {
        "trace": os.path.basename(path),
        "launch_us": {"count": len(ld), "mean": round(statistics.mean(ld), 2),
                      "median": round(statistics.median(ld), 2)},
        "ops": {"count": len(tops), "mean_host_us": round(statistics.mean(e["dur"] for e in tops), 2),
                "kernels_per_op": round(len(kernels) / len(tops), 3),
                "main_thread": {"count": len(fwd), "mean_host_us": round(statistics.mean(e["dur"] for e in fwd), 2)},
                "autograd_thread": {"count": len(bwd),
                                    "mean_host_us": round(statistics.mean(e["dur"] for e in bwd), 2) if bwd else 0}},
        "kernels": len(kernels),
        "gpu_ms": {"span": round(span / 1e3, 3), "busy": round(busy / 1e3, 3), "idle": round(idle / 1e3, 3)},
        "host_bound_ms": round(host_idle / 1e3, 3),
        "optimizer": {"host_ms": round(opt_host / 1e3, 3), "gpu_idle_ms": round(opt_idle / 1e3, 3)},
        "start_ms": round((t0 - first_cpu) / 1e3, 3),
    }


def main(argv):
    paths = argv[1:] or DEFAULT
    rows = []
    for p in paths:
        r = analyse(p)
        rows.append(r)
        print("%s: launch %.2f us (median %.2f) x %d; %d ops, %.2f us host each (main thread %.2f, "
              "autograd %.2f), %.3f kernels per op; "
              "GPU span %.1f ms, busy %.1f, idle %.1f, host-bound %.1f; optimizer host %.2f ms, GPU idle "
              "before it %.2f ms; start %.2f ms" % (
                  r["trace"], r["launch_us"]["mean"], r["launch_us"]["median"], r["launch_us"]["count"],
                  r["ops"]["count"], r["ops"]["mean_host_us"], r["ops"]["main_thread"]["mean_host_us"],
                  r["ops"]["autograd_thread"]["mean_host_us"], r["ops"]["kernels_per_op"],
                  r["gpu_ms"]["span"], r["gpu_ms"]["busy"], r["gpu_ms"]["idle"], r["host_bound_ms"],
                  r["optimizer"]["host_ms"], r["optimizer"]["gpu_idle_ms"], r["start_ms"]), flush=True)
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "host_trace.json"), "w") as f:
        json.dump({"traces": rows}, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
