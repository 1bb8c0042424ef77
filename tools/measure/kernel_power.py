"""Board power and throughput of the memory-bound kernels step_power.py left
out, and of the casts Transformer Engine's fp8 recipe adds, each alone.

  layernorm_bwd  aten's native LayerNorm backward (dx, dgamma, dbeta);
  dropout        dropout with p = 0.1 in training mode;
  cast_fp8       bf16 -> float8_e4m3fn;
  cast_fp8_t     the same of the transposed tensor (a transpose and a cast).

Each back to back for 0.8 s after 0.3 s idle: [GB/s, SM MHz, W], bytes as
read plus written. Usage: python3 tools/measure/kernel_power.py (writes
$OUT/kernel_power.json). Needs torch and pynvml; about 10 s of GPU time.
"""
import json
import os
import time

import torch
import torch.nn.functional as F

from nvml_watch import gpu, window

dev, bf16 = "cuda", torch.bfloat16
R = {"gpu": gpu(),
     "torch": torch.__version__, "fields": "[GB/s, SM MHz, W]", "kernels": {}}
x = torch.randn(16384, 8192, device=dev, dtype=bf16)
w = torch.ones(8192, device=dev, dtype=bf16)
b = torch.zeros(8192, device=dev, dtype=bf16)
dy = torch.randn_like(x)
_, mean, rstd = torch.ops.aten.native_layer_norm(x, [8192], w, b, 1e-5)
n = x.numel()
KERNELS = (
    ("layernorm_bwd", lambda: torch.ops.aten.native_layer_norm_backward(
        dy, x, [8192], mean, rstd, w, b, [True, True, True]), 6 * n),
    ("dropout", lambda: F.dropout(x, 0.1, training=True), 2 * n + 2 * n + n),
    ("cast_fp8", lambda: x.to(torch.float8_e4m3fn), 3 * n),
    ("cast_fp8_t", lambda: x.t().contiguous().to(torch.float8_e4m3fn), 2 * n + 2 * n + 2 * n + n),
)
for name, fn, nbytes in KERNELS:
    try:
        fn()
        torch.cuda.synchronize()
        time.sleep(0.3)
        t0, k = time.time(), 0
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        while time.time() - t0 < 0.8:
            for _ in range(5):
                fn()
            k += 5
            torch.cuda.synchronize()
        e.record()
        e.synchronize()
        R["kernels"][name] = [round(nbytes * k / (s.elapsed_time(e) * 1e-3) / 1e9)] + window(t0 + 0.3, time.time())
    except Exception as err:  # noqa: BLE001
        R["kernels"][name] = repr(err)[:200]
    print(name, R["kernels"][name], flush=True)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "kernel_power.json"), "w") as f:
    json.dump(R, f)
