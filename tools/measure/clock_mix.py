"""GEMM clock response per shape, and power of the other things a step does.

Companion of clock_duty.py; what the clock model still needs:

  boost    per GEMM shape, 0.4 s idle, then the first GEMMs (at the full clock,
           inside the controller's reaction time) and a 0.3 s back-to-back loop
           (at the cap): [M, N, K, boost TF/s, sustained TF/s, sustained SM MHz];
  idle     GEMMs alternating with an idle GPU (a one-thread spin kernel, as
           while waiting for a peer) at 20 ms period: [target, realized duty,
           GEMM TF/s, SM MHz, W], and the spin kernel alone [SM MHz, W];
  attn     GEMMs alternating with flash attention fwd+bwd, 20 ms period:
           [realized GEMM share, GEMM TF/s, attention TF/s, SM MHz, W];
  copy     a collective-like kernel alone: k SMs (one CTA of 640 threads each)
           copying memory, or spinning: [k, copying, GB/s, SM MHz, W].

Usage: python3 tools/measure/clock_mix.py   (writes $OUT/clock_mix.json)
Needs torch, cupy and pynvml; about 50 s of GPU time.
"""
import json
import os
import time

import cupy as cp
import torch

from nvml_watch import boost_then_sustained, gpu, window

OUT = os.path.join(os.environ.get("OUT", "/tmp"), "clock_mix.json")

dev, bf16 = "cuda", torch.bfloat16
event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
R = {"gpu": gpu(),
     "torch": torch.__version__}


def save():
    with open(OUT, "w") as f:
        json.dump(R, f)


def gemm_of(m, n, k):
    a = torch.randn(m, k, device=dev, dtype=bf16)
    b = torch.randn(k, n, device=dev, dtype=bf16) * 0.02
    return (lambda: a @ b), 2 * m * n * k


# Boost against sustained, per shape: the Llama 3 405B TP8 layer GEMMs at
# 8,192 tokens (fwd; dgrad and wgrad have the same FLOPs), 8192^3, and the
# shapes of the measured 8-layer Llama (h 4096) and GPT (h 5120) steps.
R["boost"] = []
for m, n, k in ((8192, 2304, 16384), (8192, 16384, 2048), (8192, 13312, 16384), (8192, 16384, 6656),
                (8192, 8192, 8192), (8192, 6144, 4096), (8192, 4096, 4096), (8192, 28672, 4096),
                (8192, 4096, 14336), (8192, 15360, 5120), (8192, 5120, 5120), (8192, 20480, 5120),
                (8192, 5120, 20480)):
    fn, flops = gemm_of(m, n, k)
    boost, sus, t1, t2 = boost_then_sustained(fn, flops, 0.15)
    R["boost"].append([m, n, k, round(boost, 1), round(sus, 1), window(t1, t2)[0]])
    print(R["boost"][-1], flush=True)
save()

gemm, gflops = gemm_of(8192, 13312, 16384)
q, kk, v = (torch.randn(1, 32, 8192, 128, device=dev, dtype=bf16, requires_grad=True) for _ in range(3))
ATTN_FLOPS = 3.5 * 4 * 32 * 8192 * 8192 * 128 / 2


def attention():
    o = torch.nn.functional.scaled_dot_product_attention(q, kk, v, is_causal=True)
    o.backward(torch.ones_like(o))


def ms_of(fn, n=5):
    torch.cuda.synchronize()
    s, e = event(), event()
    s.record()
    for _ in range(n):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / n


def duty_run(other, n_gemm, n_other, seconds=2.0):
    """GEMM bursts alternating with `other`; GEMM ms, other ms, span ms, samples."""
    torch.cuda.synchronize()
    time.sleep(0.5)
    t0, cycles = time.time(), []
    while time.time() - t0 < seconds:
        for _ in range(2):
            m = [event() for _ in range(3)]
            m[0].record()
            for _ in range(n_gemm):
                gemm()
            m[1].record()
            for _ in range(n_other):
                other()
            m[2].record()
            cycles.append(m)
        torch.cuda.synchronize()
    keep = cycles[len(cycles) // 4:]
    g = sum(c[0].elapsed_time(c[1]) for c in keep)
    o = sum(c[1].elapsed_time(c[2]) for c in keep)
    span = keep[0][0].elapsed_time(keep[-1][2])
    return g, o, span, len(keep), window(t0 + 0.5, time.time())


# Idle between GEMMs: a one-thread spin of ~1 ms per launch.
SPIN = 1_900_000


def spin():
    torch.cuda._sleep(SPIN)


t_gemm, t_spin = ms_of(gemm), ms_of(spin, 20)
torch.cuda.synchronize()
time.sleep(0.5)
t0 = time.time()
while time.time() - t0 < 1.5:
    for _ in range(100):
        spin()
    torch.cuda.synchronize()
R["spin_alone"] = window(t0 + 0.5, time.time())
R["idle"] = []
for duty in (0.8, 0.5, 0.2):
    n_g = max(1, round(duty * 20 / t_gemm))
    g, o, span, n, w = duty_run(spin, n_g, round((1 - duty) * 20 / t_spin))
    R["idle"].append([duty, round(g / span, 3), round(gflops * n_g * n / (g * 1e-3) / 1e12, 1)] + w)
    print("idle", R["idle"][-1], flush=True)
save()

t_attn = ms_of(attention)
g, o, span, n, w = duty_run(attention, max(1, round(10 / t_gemm)), max(1, round(10 / t_attn)))
n_g, n_a = max(1, round(10 / t_gemm)), max(1, round(10 / t_attn))
R["attn"] = [round(g / span, 3), round(gflops * n_g * n / (g * 1e-3) / 1e12, 1),
             round(ATTN_FLOPS * n_a * n / (o * 1e-3) / 1e12, 1)] + w
print("attn", R["attn"], flush=True)
save()

# A collective-like kernel alone (hog.cu).
HOG = cp.RawKernel(open(os.path.join(os.path.dirname(__file__), "hog.cu")).read(), "hog")
HOG.max_dynamic_shared_size_bytes = 200 * 1024
n4 = 2 ** 22
src = cp.ones(n4 * 4, dtype=cp.float32)
dst = cp.zeros_like(src)
cnt = cp.zeros(1, dtype=cp.int32)
R["copy"] = []
for k, copying in ((16, 1), (32, 1), (32, 0)):
    cnt[...] = 0
    cp.cuda.Device().synchronize()
    time.sleep(0.5)
    t0 = time.time()
    HOG((k,), (640,), (src, dst, cp.int64(n4), cp.uint64(int(1.5e9)), cp.int32(copying), cnt),
        shared_mem=200 * 1024)
    cp.cuda.Device().synchronize()
    gbs = int(cnt.get()[0]) / k * n4 * 32 / 1.5 / 1e9
    R["copy"].append([k, copying, round(gbs)] + window(t0 + 0.5, time.time()))
    print("copy", R["copy"][-1], flush=True)
save()
print(json.dumps(R), flush=True)
