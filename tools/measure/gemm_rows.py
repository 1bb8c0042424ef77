#!/usr/bin/env python3
"""GEMMs of few rows: the bf16 NN grid of kernel_table.py below its fewest rows.

    OUT=dir python3 tools/measure/gemm_rows.py        # about 60 s on an H200

kernel_table.py measures M from 1,024, so the model times a GEMM of fewer
rows by a rule (the time of 1,024 rows per wave of 128 x 256 output tiles,
docs/compute-model.md "Op time"). The chunks of tensor-parallel overlap
(userbuffers splits a GEMM into tp chunks of M/tp rows: 512 for GPT-3 175B
at TP 4) and small micro-batches are such GEMMs. This script measures them:
M in {128, 256, 512} against the same N and K as the table, NN, plus the
NT and TN layouts of the layer shapes the chunks have, the same way
(a back-to-back loop of at least 20 ms after warm-up, clocks and power from
NVML), and writes $OUT/gemm_rows.json with kernels.json's `gemm_fields`,
M = 1024 repeated so that the two tables can be put side by side. The same
layer shapes in fp8 (`torch._scaled_mm`, e4m3, as kernels.json's
`gemm_fp8`) at 512 to 8,192 rows go in `gemm_fp8`: the fp8 table has 8
large shapes, and an fp8 GEMM elsewhere is timed by the bf16 grid times the
nearest point's ratio, which small shapes may not keep.
"""
import json
import os
import threading
import time

import torch

OUT = os.environ.get("OUT", "/tmp")
DIMS = [256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768]
ROWS = [128, 256, 512, 1024]
# (N, K) of the chunked GEMMs of the development set's tensor-parallel layers
LAYER = [(9216, 12288), (12288, 3072), (12288, 12288), (3072, 12288), (2560, 8192),
         (8192, 2048), (14336, 8192), (8192, 7168), (2304, 16384), (16384, 2048)]

S = []
try:
    import pynvml as N

    N.nvmlInit()
    H = N.nvmlDeviceGetHandleByIndex(0)

    def watch():
        while True:
            S.append((time.time(), N.nvmlDeviceGetClockInfo(H, N.NVML_CLOCK_SM),
                      N.nvmlDeviceGetPowerUsage(H) / 1e3))
            time.sleep(0.01)

    threading.Thread(target=watch, daemon=True).start()
except Exception:  # noqa: BLE001  (no NVML: clocks read 0)
    pass


def clocks(t0, t1):
    v = [s for s in S if t0 <= s[0] <= t1]
    if not v:
        return [0, 0]
    return [round(sum(x[1] for x in v) / len(v)), round(sum(x[2] for x in v) / len(v))]


dev, bf = "cuda", torch.bfloat16
E = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731


def bench(fn, min_ms=20.0, max_reps=5000):
    fn(); fn()
    torch.cuda.synchronize()
    a, b = E(), E()
    a.record(); fn(); b.record(); b.synchronize()
    reps = int(min(max_reps, max(3, min_ms / max(a.elapsed_time(b), 1e-3))))
    t0 = time.time()
    a.record()
    for _ in range(reps):
        fn()
    b.record(); b.synchronize()
    return a.elapsed_time(b) / reps, clocks(t0, time.time())


def case(layout, m, n, k):
    a = torch.randn((m, k) if layout[0] == "N" else (k, m), device=dev, dtype=bf)
    b = torch.randn((k, n) if layout[1] == "N" else (n, k), device=dev, dtype=bf)
    A = a if layout[0] == "N" else a.t()
    B = b if layout[1] == "N" else b.t()
    c = torch.empty(m, n, device=dev, dtype=bf)
    ms, ck = bench(lambda: torch.mm(A, B, out=c))
    return [layout, "bf16", m, n, k, round(ms, 4), round(2 * m * n * k / ms / 1e9, 1)] + ck


def case_fp8(m, n, k):
    a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=dev)
    ms, ck = bench(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=bf))
    return ["NT", "fp8e4m3", m, n, k, round(ms, 4), round(2 * m * n * k / ms / 1e9, 1)] + ck


def main():
    x = torch.randn(8192, 8192, device=dev, dtype=bf)
    end = time.time() + 3  # the sustained state the table was measured in
    while time.time() < end:
        for _ in range(20):
            x @ x
        torch.cuda.synchronize()
    rows = []
    for m in ROWS:
        for n in DIMS:
            for k in DIMS:
                rows.append(case("NN", m, n, k))
        for n, k in LAYER:
            for layout in ("NT", "TN"):
                rows.append(case(layout, m, n, k))
        print("rows", m, "done", flush=True)
    f8 = [case_fp8(m, n, k) for m in (512, 1024, 2048, 4096, 8192) for n, k in LAYER]
    out = {"env": {"name": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "cuda": torch.version.cuda,
                   "sms": torch.cuda.get_device_properties(0).multi_processor_count},
           "gemm_fields": ["layout", "dtype", "M", "N", "K", "ms", "tflops", "sm_mhz", "power_w"],
           "gemm": rows, "gemm_fp8": f8}
    with open(os.path.join(OUT, "gemm_rows.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
