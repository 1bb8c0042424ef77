"""GEMM throughput, SM clock and board power against the mix of work on one GPU.

What the clock model (docs/compute-model.md, "Clocks under the power cap")
needs and the measurements in shared/ do not hold:

  alone    each kernel class back to back for 1.5 s: fp32 += bf16 gradient
           accumulation, bf16 copy, RMSNorm, flash attention fwd+bwd, and the
           two GEMMs used below: [GB/s or TF/s, SM MHz, W, °C];
  duty     GEMMs interleaved with accumulation kernels at a target GEMM duty
           over a period of 2 ms (small GEMM), 20 ms and 200 ms (large GEMM),
           2 s each after 0.5 s idle; the realized duty and GEMM TF/s come from
           CUDA events around every burst: [period ms, target, realized duty,
           GEMM TF/s, SM MHz, W]; for 200 ms also the TF/s of each GEMM of
           one burst in `burst`;
  step     the controller's response: after 1.5 s idle (`idle`) or 1.5 s of
           accumulation kernels (`mem`), large GEMMs back to back for 1.5 s:
           each GEMM's start (ms) and TF/s, and the NVML timeline
           [ms, SM MHz, W] over the same span.

Power is NVML's instantaneous reading where the driver has one (field 186),
else its averaged one; which is recorded in `power_field`.

Usage: python3 tools/measure/clock_duty.py   (writes $OUT/clock_duty.json)
Needs torch and pynvml; about 70 s of GPU time on an H100 or H200.
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
OUT = os.path.join(os.environ.get("OUT", "/tmp"), "clock_duty.json")


def _power_instant():
    v = nv.nvmlDeviceGetFieldValues(HANDLE, [186])[0]   # NVML_FI_DEV_POWER_INSTANT
    if v.nvmlReturn != 0:
        raise nv.NVMLError(v.nvmlReturn)
    return v.value.uiVal / 1e3


try:
    _power_instant()
    POWER, POWER_FIELD = _power_instant, "instant"
except Exception:                                   # older driver: 1 s average
    POWER, POWER_FIELD = (lambda: nv.nvmlDeviceGetPowerUsage(HANDLE) / 1e3), "average"


def monitor():
    while True:
        SAMPLES.append((time.time(), nv.nvmlDeviceGetClockInfo(HANDLE, nv.NVML_CLOCK_SM),
                        POWER(), nv.nvmlDeviceGetTemperature(HANDLE, 0)))
        time.sleep(0.005)


def window(t0, t1):
    """Mean SM MHz, W and °C sampled in [t0, t1]."""
    v = [s for s in SAMPLES if t0 <= s[0] <= t1] or SAMPLES[-1:]
    return [round(sum(x[i] for x in v) / len(v), 1) for i in (1, 2, 3)]


def timeline(t0, t1):
    return [[round((s[0] - t0) * 1e3, 1), s[1], round(s[2], 1)]
            for s in SAMPLES if t0 <= s[0] <= t1]


threading.Thread(target=monitor, daemon=True).start()
dev, bf16 = "cuda", torch.bfloat16
event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731

# Large: one Llama 3 405B TP8 MLP-up GEMM at 8,192 tokens (~5 ms).
# Small: 8192 x 8192 x 4096 (~0.6 ms), for the 2 ms period.
SHAPES = {"large": (8192, 13312, 16384), "small": (8192, 8192, 4096)}
GEMM = {}
for name, (m, n, k) in SHAPES.items():
    a = torch.randn(m, k, device=dev, dtype=bf16)
    b = torch.randn(k, n, device=dev, dtype=bf16) * 0.02
    GEMM[name] = ((lambda a=a, b=b: a @ b), 2 * m * n * k)
acc = torch.zeros(10 ** 8, device=dev)
grad = torch.randn(10 ** 8, device=dev, dtype=bf16)
src = torch.randn(2 ** 29, device=dev, dtype=bf16)
dst = torch.empty_like(src)
norm_in = torch.randn(16384, 16384, device=dev, dtype=bf16)
norm_w = torch.ones(16384, device=dev, dtype=bf16)
q, kk, v = (torch.randn(1, 32, 8192, 128, device=dev, dtype=bf16, requires_grad=True)
            for _ in range(3))
ATTN_FLOPS = 3.5 * 4 * 32 * 8192 * 8192 * 128 / 2   # causal fwd (1) + bwd (2.5)


def accumulate():
    acc.add_(grad)


def attention():
    o = torch.nn.functional.scaled_dot_product_attention(q, kk, v, is_causal=True)
    o.backward(torch.ones_like(o))


R = {"gpu": [str(nv.nvmlDeviceGetName(HANDLE)), nv.nvmlDeviceGetMaxClockInfo(HANDLE, nv.NVML_CLOCK_SM),
             nv.nvmlDeviceGetEnforcedPowerLimit(HANDLE) / 1e3],
     "torch": torch.__version__, "power_field": POWER_FIELD, "shapes": SHAPES,
     "fields": {"alone": "[GB/s or TF/s, SM MHz, W, degC]",
                "duty": "[period ms, target duty, realized duty, GEMM TF/s, SM MHz, W]",
                "burst": "{period: TF/s of each GEMM of one burst}",
                "step": "{gemm: [[ms since the first GEMM started, TF/s]], nvml: [[ms, MHz, W]]}"}}


def save():
    with open(OUT, "w") as f:
        json.dump(R, f)


def loop_ms(fn, n):
    torch.cuda.synchronize()
    s, e = event(), event()
    s.record()
    for _ in range(n):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / n


# Each class alone, back to back.
R["alone"] = {}
for name, fn, work in (("gradacc", accumulate, 10 * 10 ** 8),
                       ("copy", lambda: dst.copy_(src), 4 * 2 ** 29),
                       ("rmsnorm", lambda: torch.nn.functional.rms_norm(norm_in, (16384,), norm_w),
                        4 * 16384 * 16384),
                       ("attention", attention, ATTN_FLOPS),
                       ("gemm_large", GEMM["large"][0], GEMM["large"][1]),
                       ("gemm_small", GEMM["small"][0], GEMM["small"][1])):
    fn()
    torch.cuda.synchronize()
    time.sleep(0.5)
    t0, n, s = time.time(), 0, event()
    s.record()
    while time.time() - t0 < 1.5:
        for _ in range(10):
            fn()
        n += 10
        torch.cuda.synchronize()
    e = event()
    e.record()
    e.synchronize()
    R["alone"][name] = [round(work * n / (s.elapsed_time(e) * 1e-3) / 1e9)] + window(t0 + 0.7, time.time())
    print(name, R["alone"][name], flush=True)
save()

# GEMM duty cycles.
t_acc = loop_ms(accumulate, 50)
R["t_acc_ms"] = round(t_acc, 4)
R["duty"], R["burst"] = [], {}
for period, shape, duties in ((2.0, "small", (1.0, 0.8, 0.6, 0.4, 0.2)),
                              (20.0, "large", (1.0, 0.8, 0.6, 0.4, 0.2)),
                              (200.0, "large", (0.8, 0.5, 0.2))):
    gemm, flops = GEMM[shape]
    t_gemm = loop_ms(gemm, 10)
    for duty in duties:
        n_gemm = max(1, round(duty * period / t_gemm))
        n_acc = round((1 - duty) * period / t_acc)
        torch.cuda.synchronize()
        time.sleep(0.5)
        t0, cycles = time.time(), []
        while time.time() - t0 < 2.0:
            for _ in range(max(1, int(40 / period))):
                marks = [event() for _ in range(n_gemm + 1)]
                marks[0].record()
                for i in range(n_gemm):
                    gemm()
                    marks[i + 1].record()
                for _ in range(n_acc):
                    accumulate()
                cycles.append(marks)
            torch.cuda.synchronize()
        t1 = time.time()
        keep = cycles[len(cycles) // 4:]
        # The realized duty: GEMM time over the span from the first kept
        # cycle's start to the last one's (the last cycle's GEMMs excluded).
        gemm_ms = sum(c[0].elapsed_time(c[-1]) for c in keep[:-1])
        span_ms = keep[0][0].elapsed_time(keep[-1][0])
        n = n_gemm * (len(keep) - 1)
        row = [period, duty, round(gemm_ms / span_ms, 3),
               round(flops * n / (gemm_ms * 1e-3) / 1e12, 1)] + window(t0 + 0.5, t1)[:2]
        R["duty"].append(row)
        if period >= 200:
            c = keep[-1]
            R["burst"][f"{period:g}/{duty:g}"] = [
                round(flops / (c[i].elapsed_time(c[i + 1]) * 1e-3) / 1e12, 1) for i in range(n_gemm)]
        print(row, flush=True)
        save()

# The controller's step response, from idle and from memory-bound work.
R["step"] = {}
gemm, flops = GEMM["large"]
t_gemm = loop_ms(gemm, 10)
for before in ("idle", "mem"):
    torch.cuda.synchronize()
    t_pre = time.time()
    if before == "idle":
        time.sleep(1.5)
    else:
        while time.time() - t_pre < 1.5:
            for _ in range(100):
                accumulate()
            torch.cuda.synchronize()
    marks = []
    t0 = time.time()
    for _ in range(int(1500 / t_gemm)):
        s, e = event(), event()
        s.record()
        gemm()
        e.record()
        marks.append((s, e))
    torch.cuda.synchronize()
    t1 = time.time()
    first = marks[0][0]
    R["step"][before] = {
        "gemm": [[round(first.elapsed_time(s), 2), round(flops / (s.elapsed_time(e) * 1e-3) / 1e12, 1)]
                 for s, e in marks],
        "nvml": timeline(t0 - 0.3, t1)}
    print(before, R["step"][before]["gemm"][:3], R["step"][before]["gemm"][-1], flush=True)
save()
print(json.dumps({k: R[k] for k in ("alone", "duty")}), flush=True)
