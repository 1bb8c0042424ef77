"""GEMMs between idle stretches of the lengths a training step has: how much
of an idle gap the power controller hands to the next GEMMs.

  gaps     GEMM bursts (8192 x 13312 x 16384) alternating with a gap of
           length L: an idle GPU (a one-thread spin kernel, as while waiting
           for a peer) or a collective-like kernel (tools/measure/hog.cu on
           16 SMs copying memory, as NCCL's channels do), 2 s each after 0.5 s
           idle: [gap kind, burst ms, gap ms, realized GEMM duty, GEMM TF/s,
           SM MHz, W];
  sustained  the same GEMM back to back for 1 s: [TF/s, SM MHz, W].

Usage: python3 tools/measure/clock_idle.py   (writes $OUT/clock_idle.json)
Needs torch, cupy and pynvml; about 50 s of GPU time.
"""
import json
import os
import time

import cupy as cp
import torch

from nvml_watch import gpu, window

OUT = os.path.join(os.environ.get("OUT", "/tmp"), "clock_idle.json")

dev, bf16 = "cuda", torch.bfloat16
event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
R = {"gpu": gpu(),
     "torch": torch.__version__,
     "fields": {"gaps": "[gap kind, burst ms, gap ms, realized GEMM duty, GEMM TF/s, SM MHz, W]",
                "sustained": "[TF/s, SM MHz, W]"}}

M, N, K = 8192, 13312, 16384
a = torch.randn(M, K, device=dev, dtype=bf16)
b = torch.randn(K, N, device=dev, dtype=bf16) * 0.02
FLOPS = 2 * M * N * K
HOG = cp.RawKernel(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hog.cu")).read(), "hog")
HOG.max_dynamic_shared_size_bytes = 200 * 1024
n4 = 2 ** 22
src = cp.ones(n4 * 4, dtype=cp.float32)
dst = cp.zeros_like(src)
cnt = cp.zeros(1, dtype=cp.int32)
stream = torch.cuda.current_stream()


def gemm():
    a @ b


def gap(kind, ms):
    if kind == "idle":
        torch.cuda._sleep(int(ms * 1.98e6))   # cycles at up to 1980 MHz
    else:
        with cp.cuda.ExternalStream(stream.cuda_stream):
            HOG((16,), (640,), (src, dst, cp.int64(n4), cp.uint64(int(ms * 1e6)), cp.int32(1), cnt),
                shared_mem=200 * 1024)


def save():
    with open(OUT, "w") as f:
        json.dump(R, f)


gemm()
torch.cuda.synchronize()
s, e = event(), event()
s.record()
for _ in range(10):
    gemm()
e.record()
e.synchronize()
t_gemm = s.elapsed_time(e) / 10
time.sleep(0.5)
t0, n = time.time(), 0
s.record()
while time.time() - t0 < 1.0:
    for _ in range(10):
        gemm()
    n += 10
    torch.cuda.synchronize()
e.record()
e.synchronize()
R["sustained"] = [round(FLOPS * n / (s.elapsed_time(e) * 1e-3) / 1e12, 1)] + window(t0 + 0.4, time.time())
print("sustained", R["sustained"], flush=True)

R["gaps"] = []
for kind in ("idle", "comm"):
    for burst, gap_ms in ((20, 1), (20, 3.5), (20, 10), (20, 20), (80, 5), (80, 20), (80, 80)):
        n_gemm = max(1, round(burst / t_gemm))
        torch.cuda.synchronize()
        time.sleep(0.5)
        t0, cycles = time.time(), []
        while time.time() - t0 < 2.0:
            for _ in range(max(1, int(60 / (burst + gap_ms)))):
                m = [event() for _ in range(3)]
                m[0].record()
                for _ in range(n_gemm):
                    gemm()
                m[1].record()
                gap(kind, gap_ms)
                m[2].record()
                cycles.append(m)
            torch.cuda.synchronize()
        keep = cycles[len(cycles) // 4:]
        g = sum(c[0].elapsed_time(c[1]) for c in keep)
        span = keep[0][0].elapsed_time(keep[-1][2])
        row = [kind, burst, gap_ms, round(g / span, 3), round(FLOPS * n_gemm * len(keep) / (g * 1e-3) / 1e12, 1)]
        R["gaps"].append(row + window(t0 + 0.5, time.time()))
        print(R["gaps"][-1], flush=True)
        save()
save()
print(json.dumps(R), flush=True)
