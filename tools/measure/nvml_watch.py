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


def gpu():
    """[name, enforced power limit in W]."""
    return [str(nv.nvmlDeviceGetName(HANDLE)), nv.nvmlDeviceGetEnforcedPowerLimit(HANDLE) / 1e3]


threading.Thread(target=_monitor, daemon=True).start()
