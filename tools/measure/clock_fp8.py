"""fp8 GEMMs under the power cap: full clock against the cap, and power.

The clock section of the h200-sxm profile was fitted on bf16 GEMMs; fp8
GEMMs (torch._scaled_mm, e4m3, as in tools/measure/h200/kernels.json's
gemm_fp8) may draw more and throttle further. Per shape, after 0.4 s idle:
the best of the first three GEMMs (full clock) and a 0.3 s back-to-back loop
(at the cap): [M, N, K, boost TF/s, sustained TF/s, sustained SM MHz, W].

Usage: python3 tools/measure/clock_fp8.py   (writes $OUT/clock_fp8.json)
Needs torch and pynvml; about 15 s of GPU time.
"""
import json
import os

import torch

from nvml_watch import boost_then_sustained, gpu, window

dev = "cuda"
R = {"gpu": gpu(),
     "torch": torch.__version__,
     "fields": "[M, N, K, boost TF/s, sustained TF/s, sustained SM MHz, W]", "fp8": [], "bf16": []}
one = torch.tensor(1.0, device=dev)
for m, n, k in ((8192, 2304, 16384), (8192, 16384, 2048), (8192, 13312, 16384), (8192, 16384, 6656),
                (8192, 8192, 8192), (8192, 28672, 4096), (8192, 4096, 14336)):
    a16 = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b16 = torch.randn(n, k, device=dev, dtype=torch.bfloat16) * 0.02
    a8, b8 = a16.to(torch.float8_e4m3fn), b16.to(torch.float8_e4m3fn)
    flops = 2 * m * n * k
    for kind, fn in (("fp8", lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                                     out_dtype=torch.bfloat16)),
                     ("bf16", lambda: a16 @ b16.t())):
        boost, sus, t1, t2 = boost_then_sustained(fn, flops, 0.3)
        R[kind].append([m, n, k, round(boost, 1), round(sus, 1)] + window(t1, t2))
        print(kind, R[kind][-1], flush=True)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "clock_fp8.json"), "w") as f:
    json.dump(R, f)
