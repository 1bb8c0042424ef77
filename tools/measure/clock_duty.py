"""GEMM throughput, SM clock and board power against the mix of work on one GPU.

What the clock model (docs/compute-model.md, "Clocks under the power cap")
needs and the shared measurements do not hold:

  mem      board power and SM clock of memory-bound kernels alone (fp32 += bf16
           accumulation, bf16 copy, RMSNorm), back to back for 1.5 s each;
  duty     GEMMs interleaved with fp32 accumulation kernels at GEMM duty
           d = 1.0 ... 0.3 and period 2 ms and 20 ms, 2 s each: GEMM TF/s
           (CUDA events around every GEMM), SM MHz, W;
  step     the controller's response: 1.5 s idle, then GEMMs back to back;
           each GEMM's TF/s and the time it started, for 1.5 s.

Usage: python3 tools/measure/clock_duty.py   (writes $OUT/clock_duty.json)
Needs torch and pynvml; runs in about 60 s on an H100 or H200.
"""
import json
import os
import threading
import time

import pynvml as nv
import torch

nv.nvmlInit()
HANDLE = nv.nvmlDeviceGetHandleByIndex(0)
SAMPLES = []


def monitor():
    while True:
        SAMPLES.append((time.time(),
                        nv.nvmlDeviceGetClockInfo(HANDLE, nv.NVML_CLOCK_SM),
                        nv.nvmlDeviceGetPowerUsage(HANDLE) / 1e3))
        time.sleep(0.01)


def window(t0, t1):
    """Mean SM MHz and W sampled in [t0, t1]."""
    v = [s for s in SAMPLES if t0 <= s[0] <= t1] or SAMPLES[-1:]
    return [round(sum(x[1] for x in v) / len(v)), round(sum(x[2] for x in v) / len(v), 1)]


threading.Thread(target=monitor, daemon=True).start()
dev, bf16 = "cuda", torch.bfloat16
event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731

# One Llama 3 405B TP8 MLP-up GEMM at 8,192 tokens: 8192 x 13312 x 16384.
M, N, K = 8192, 13312, 16384
a = torch.randn(M, K, device=dev, dtype=bf16)
b = torch.randn(K, N, device=dev, dtype=bf16) * 0.02
flops = 2 * M * N * K
acc = torch.zeros(10 ** 8, device=dev)
grad = torch.randn(10 ** 8, device=dev, dtype=bf16)
src = torch.randn(2 ** 29, device=dev, dtype=bf16)
dst = torch.empty_like(src)
norm_in = torch.randn(16384, 16384, device=dev, dtype=bf16)
norm_w = torch.ones(16384, device=dev, dtype=bf16)

R = {"gpu": [nv.nvmlDeviceGetName(HANDLE), nv.nvmlDeviceGetMaxClockInfo(HANDLE, nv.NVML_CLOCK_SM),
             nv.nvmlDeviceGetEnforcedPowerLimit(HANDLE) / 1e3],
     "torch": torch.__version__, "gemm": [M, N, K],
     "fields": {"mem": "[GB/s, SM MHz, W]", "duty": "[duty, period ms, GEMM TF/s, SM MHz, W]",
                "step": "[ms since the first GEMM started, TF/s] per GEMM"}}


def gemm_ms():
    torch.cuda.synchronize()
    s, e = event(), event()
    s.record()
    a @ b
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


def accumulate():
    acc.add_(grad)


# Memory-bound kernels alone.
R["mem"] = {}
for name, fn, nbytes in (("gradacc", accumulate, 10 * 10 ** 8),
                         ("copy", lambda: dst.copy_(src), 4 * 2 ** 29),
                         ("rmsnorm", lambda: torch.nn.functional.rms_norm(norm_in, (16384,), norm_w),
                          4 * 16384 * 16384)):
    fn()
    torch.cuda.synchronize()
    t0, n, s = time.time(), 0, event()
    s.record()
    while time.time() - t0 < 1.5:
        for _ in range(20):
            fn()
        n += 20
        torch.cuda.synchronize()
    e = event()
    e.record()
    e.synchronize()
    R["mem"][name] = [round(nbytes * n / (s.elapsed_time(e) * 1e-3) / 1e9)] + window(t0 + 0.5, time.time())
    print(json.dumps(R["mem"]), flush=True)

# GEMM duty cycles.
t_gemm = sum(gemm_ms() for _ in range(20)) / 20
t_acc = 10 * 10 ** 8 / 3.0e12 * 1e3        # ~ms per accumulation kernel at ~3 TB/s
R["duty"] = []
for period in (2.0, 20.0):
    for duty in (1.0, 0.9, 0.75, 0.6, 0.45, 0.3):
        n_gemm = max(1, round(duty * period / t_gemm))
        n_acc = round((1 - duty) * period / t_acc)
        torch.cuda.synchronize()
        time.sleep(0.5)
        t0, marks = time.time(), []
        while time.time() - t0 < 2.0:
            for _ in range(4):
                s, e = event(), event()
                s.record()
                for _ in range(n_gemm):
                    a @ b
                e.record()
                marks.append((s, e, n_gemm))
                for _ in range(n_acc):
                    accumulate()
            torch.cuda.synchronize()
        t1 = time.time()
        gemm_s = sum(s.elapsed_time(e) for s, e, _ in marks[len(marks) // 4:]) * 1e-3
        n = sum(k for _, _, k in marks[len(marks) // 4:])
        R["duty"].append([duty, period, round(flops * n / gemm_s / 1e12, 1)] + window(t0 + 0.5, t1))
        print(json.dumps(R["duty"][-1]), flush=True)

# The controller's step response.
torch.cuda.synchronize()
time.sleep(1.5)
marks = []
for _ in range(int(1500 / t_gemm)):
    s, e = event(), event()
    s.record()
    a @ b
    e.record()
    marks.append((s, e))
torch.cuda.synchronize()
first = marks[0][0]
R["step"] = [[round(first.elapsed_time(s), 2), round(flops / (s.elapsed_time(e) * 1e-3) / 1e12, 1)]
             for s, e in marks]

with open(os.path.join(os.environ.get("OUT", "/tmp"), "clock_duty.json"), "w") as f:
    json.dump(R, f)
print(json.dumps({k: R[k] for k in ("mem", "duty")}), flush=True)
