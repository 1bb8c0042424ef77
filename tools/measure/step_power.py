"""Board power and SM clock during the two measured H200 training steps, and of
the memory-bound kernels they run, alone.

  steps    llama8l-h4096-s8192 and gpt-h5120-8l-s2048-mb4 of train_step.py
           (the setups of h200/train_steps.json), 3 warm-up
           steps then 12 timed ones: per step [s, SM MHz, W], and the means;
  mem      each kernel back to back for 0.8 s: [GB/s, SM MHz, W].

Usage: python3 tools/measure/step_power.py   (writes $OUT/step_power.json)
Needs torch and pynvml; about 40 s of GPU time.
"""
import json
import os
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

from nvml_watch import gpu, window

OUT = os.environ.get("OUT", "/tmp")

# train_step.py runs the configurations its argument names: none here.
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump([], f)
sys.argv = [sys.argv[0], f.name]
os.environ["OUT"] = tempfile.mkdtemp()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step  # noqa: E402
os.environ["OUT"] = OUT

R = {"gpu": gpu(),
     "torch": torch.__version__, "steps": {}, "mem": {}}
CONFIGS = [
    dict(name="llama8l-h4096-s8192", family="llama", hidden=4096, layers=8, heads=32, kv_heads=8, ffn=14336,
         vocab=128256, seq=8192, micro_batch=1, accum=2),
    dict(name="gpt-h5120-8l-s2048-mb4", family="gpt", hidden=5120, layers=8, heads=40, kv_heads=40, ffn=4 * 5120,
         vocab=51200, seq=2048, micro_batch=4, accum=2),
]


def save():
    with open(os.path.join(OUT, "step_power.json"), "w") as f:
        json.dump(R, f)


for c in CONFIGS:
    torch.manual_seed(0)
    m = train_step.Model(c).to("cuda")
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, c["vocab"], (c["micro_batch"], c["seq"]), device="cuda")

    def step():
        for _ in range(c["accum"]):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = m(ids, ids)
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    rows = []
    for _ in range(12):
        t0 = time.time()
        step()
        torch.cuda.synchronize()
        t1 = time.time()
        rows.append([round(t1 - t0, 5)] + window(t0, t1))
    s = sorted(r[0] for r in rows)
    R["steps"][c["name"]] = {"per_step": rows, "median_s": s[len(s) // 2],
                             "mean_mhz": round(sum(r[1] for r in rows) / len(rows), 1),
                             "mean_w": round(sum(r[2] for r in rows) / len(rows), 1)}
    print(c["name"], R["steps"][c["name"]]["median_s"], R["steps"][c["name"]]["mean_mhz"],
          R["steps"][c["name"]]["mean_w"], flush=True)
    del m, opt
    torch.cuda.empty_cache()
    save()

dev, bf16 = "cuda", torch.bfloat16
x = torch.randn(16384, 5120, device=dev, dtype=bf16)
w5 = torch.ones(5120, device=dev, dtype=bf16)
b5 = torch.zeros(5120, device=dev, dtype=bf16)
u = torch.randn(16384, 20480, device=dev, dtype=bf16)
g2 = torch.randn(16384, 2 * 14336, device=dev, dtype=bf16)
lg = torch.randn(8192, 51200, device=dev)
acc = torch.zeros(10 ** 8, device=dev)
grad = torch.randn(10 ** 8, device=dev, dtype=bf16)
p = torch.nn.Parameter(torch.randn(10 ** 8, device=dev))
p.grad = torch.randn_like(p)
adam = torch.optim.AdamW([p], fused=True)
f32 = torch.randn(2 ** 28, device=dev)
KERNELS = (("layernorm", lambda: F.layer_norm(x, (5120,), w5, b5), 4 * x.numel()),
           ("rmsnorm", lambda: F.rms_norm(x, (5120,), w5), 4 * x.numel()),
           ("gelu_tanh", lambda: F.gelu(u, approximate="tanh"), 4 * u.numel()),
           ("silu_mul", lambda: F.silu(g2[:, :14336]) * g2[:, 14336:], 6 * 16384 * 14336),
           ("softmax_fp32", lambda: torch.softmax(lg, -1), 8 * lg.numel()),
           ("cast_fp32_bf16", lambda: f32.to(bf16), 6 * f32.numel()),
           ("gradacc", lambda: acc.add_(grad), 10 * 10 ** 8),
           ("adamw_fused", adam.step, 28 * 10 ** 8))
for name, fn, nbytes in KERNELS:
    fn()
    torch.cuda.synchronize()
    time.sleep(0.3)
    t0, n = time.time(), 0
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    while time.time() - t0 < 0.8:
        for _ in range(5):
            fn()
        n += 5
        torch.cuda.synchronize()
    e.record()
    e.synchronize()
    R["mem"][name] = [round(nbytes * n / (s.elapsed_time(e) * 1e-3) / 1e9)] + window(t0 + 0.3, time.time())
    print(name, R["mem"][name], flush=True)
save()
print(json.dumps(R), flush=True)
