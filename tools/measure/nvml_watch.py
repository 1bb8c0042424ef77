"""The board's SM clock and power, sampled beside the work every 5 ms.

Imported by the measurement scripts of this folder; importing it starts the
sampling thread. Power is NVML's instantaneous reading (field 186) where
the driver has one, else its averaged one.
"""
import threading
import time

import pynvml as nv

nv.nvmlInit()
HANDLE = nv.nvmlDeviceGetHandleByIndex(0)
SAMPLES = []


def power():
    v = nv.nvmlDeviceGetFieldValues(HANDLE, [186])[0]   # NVML_FI_DEV_POWER_INSTANT
    return v.value.uiVal / 1e3 if v.nvmlReturn == 0 else nv.nvmlDeviceGetPowerUsage(HANDLE) / 1e3


def _monitor():
    while True:
        SAMPLES.append((time.time(), nv.nvmlDeviceGetClockInfo(HANDLE, nv.NVML_CLOCK_SM), power()))
        time.sleep(0.005)


def window(t0, t1):
    """Mean SM MHz and W sampled in [t0, t1] (the last sample if none)."""
    v = [s for s in SAMPLES if t0 <= s[0] <= t1] or SAMPLES[-1:]
    return [round(sum(x[i] for x in v) / len(v), 1) for i in (1, 2)]


def boost_then_sustained(fn, flops, seconds):
    """A GEMM's TF/s after 0.4 s idle (the best of its first three runs) and
    then sustained over `seconds` after 0.15 s of warm-up; with the
    sustained loop's start and end times, for window()."""
    import torch
    event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
    fn()
    torch.cuda.synchronize()
    time.sleep(0.4)
    marks = [event() for _ in range(4)]
    marks[0].record()
    for i in range(3):
        fn()
        marks[i + 1].record()
    torch.cuda.synchronize()
    boost = max(flops / (marks[i].elapsed_time(marks[i + 1]) * 1e-3) / 1e12 for i in range(3))
    t0 = time.time()
    while time.time() - t0 < 0.15:
        fn()
        torch.cuda.synchronize()
    s, e, runs, t1 = event(), event(), 0, time.time()
    s.record()
    while time.time() - t1 < seconds:
        for _ in range(5):
            fn()
        runs += 5
        torch.cuda.synchronize()
    e.record()
    e.synchronize()
    return boost, flops * runs / (s.elapsed_time(e) * 1e-3) / 1e12, t1, time.time()


def gpu():
    """[name, enforced power limit in W]."""
    return [str(nv.nvmlDeviceGetName(HANDLE)), nv.nvmlDeviceGetEnforcedPowerLimit(HANDLE) / 1e3]


threading.Thread(target=_monitor, daemon=True).start()
