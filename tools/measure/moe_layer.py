#!/usr/bin/env python3
"""A dropless MoE layer's host and GPU time on one GPU, as Megatron-Core runs it.

    OUT=dir python3 tools/measure/moe_layer.py        # about 90 s on an H200

The model charges an MoE layer its kernels' GPU time and one launch cost
per kernel (the profile's eager 12.5 us). Megatron-Core's dropless
alltoall dispatcher also synchronises with the GPU before the all-to-all
(`cuda_sync_point = "before_ep_alltoall"`: the split sizes go to the
host), so whatever the host does after that point, the GPU waits for. This
script measures how long that is. It runs, in plain PyTorch on one GPU
(bf16, no expert parallelism: the all-to-all is the identity, which keeps
the host work), the layer's steps in Megatron-Core's order:

  router      logits GEMM (h x E), softmax, top-k, the routing map
  preprocess  tokens per expert (histc), .cpu() of the counts (the sync)
  permute     argsort of the expert indices, index_select of the tokens
  experts     per local expert: up GEMM (gated, 2 x ffn), SiLU x mul, down
              GEMM -- as a Python loop of E_local GEMMs (Transformer
              Engine's GroupedLinear issues one GEMM per expert) and, where
              torch._grouped_mm exists, as one grouped GEMM
  unpermute   probability scaling, index_add back to the token order

forward and backward (autograd), for the Qwen3-30B-A3B layer on EP 8 (h
2048, 16 local experts of width 768, top 8 of 128) and the DeepSeek-V3 one
on EP 64 (h 7168, 4 local experts of width 2048, top 8 of 256), at 2,048 to
16,384 tokens. Per case it writes:

  gpu_ms       the kernels' time: CUDA events around the layer, run back to
               back with the sync removed (counts precomputed), so the host
               stays ahead
  wall_ms      the layer as Megatron runs it, the sync included, host and
               GPU both: time.perf_counter around forward + backward, with
               torch.cuda.synchronize() before and after
  host_ms      the host's own time per layer: the same wall clock with
               every kernel made trivial (the layer on 1 token per expert),
               the host work being shape independent
  kernels      kernels launched per layer (torch.profiler, one run)

and the environment (GPU, driver, PyTorch and CUDA versions, SM clock and
power before and after). wall_ms - gpu_ms is what the model would need to
charge beyond its kernels; host_ms says how much of it the host's work
explains.
"""
import json
import os
import time

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", "/tmp")
DEV = "cuda"
DT = torch.bfloat16

CASES = [  # name, hidden, local experts, expert width, top-k, experts in all
    ("qwen3-30b-a3b-ep8", 2048, 16, 768, 8, 128),
    ("deepseek-v3-ep64", 7168, 4, 2048, 8, 256),
]
TOKENS = [2048, 4096, 8192, 16384]


class Layer(torch.nn.Module):
    def __init__(self, h, local, ffn, k, experts):
        super().__init__()
        self.h, self.local, self.ffn, self.k, self.experts = h, local, ffn, k, experts
        self.router = torch.nn.Parameter(torch.randn(experts, h, device=DEV, dtype=DT) * 0.02)
        self.up = torch.nn.Parameter(torch.randn(local, h, 2 * ffn, device=DEV, dtype=DT) * 0.02)
        self.down = torch.nn.Parameter(torch.randn(local, ffn, h, device=DEV, dtype=DT) * 0.02)

    def forward(self, x, grouped=False, counts=None):
        logits = x @ self.router.t()
        probs = torch.softmax(logits.float(), dim=-1)
        top, idx = torch.topk(probs, self.k, dim=-1)
        # the local experts take the first `local` of the global ids
        # (with EP 1 every copy is local): fold the ids onto them
        local_idx = idx % self.local
        flat = local_idx.reshape(-1)
        if counts is None:
            counts = torch.histc(flat.float(), bins=self.local, min=0, max=self.local)
            counts = counts.to("cpu").long().tolist()  # the dispatcher's sync
        order = torch.argsort(flat, stable=True)
        tokens = x.repeat_interleave(self.k, dim=0).index_select(0, order)
        if grouped and hasattr(torch, "_grouped_mm"):
            offs = torch.tensor(counts, device=DEV, dtype=torch.int32).cumsum(0).to(torch.int32)
            a = torch._grouped_mm(tokens, self.up, offs=offs)
            g, u = a.chunk(2, dim=-1)
            out = torch._grouped_mm((F.silu(g) * u).contiguous(), self.down, offs=offs)
        else:
            outs, at = [], 0
            for e in range(self.local):
                n = counts[e]
                t = tokens[at : at + n]
                g, u = (t @ self.up[e]).chunk(2, dim=-1)
                outs.append((F.silu(g) * u) @ self.down[e])
                at += n
            out = torch.cat(outs, dim=0)
        out = out * top.reshape(-1).index_select(0, order).unsqueeze(-1).to(DT)
        y = torch.zeros(x.shape[0] * self.k, self.h, device=DEV, dtype=DT)
        y = y.index_add(0, order, out)
        return y.view(x.shape[0], self.k, self.h).sum(dim=1)


def fwd_bwd(layer, x, grouped, counts=None):
    y = layer(x, grouped, counts)
    y.backward(torch.ones_like(y))


def balanced_counts(layer, tokens):
    copies = tokens * layer.k
    base = copies // layer.local
    return [base + (1 if e < copies - base * layer.local else 0) for e in range(layer.local)]


def gpu_ms(layer, x, grouped, counts, reps):
    for _ in range(3):
        fwd_bwd(layer, x, grouped, counts)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps):
        fwd_bwd(layer, x, grouped, counts)
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / reps


def wall_ms(layer, x, grouped, reps):
    for _ in range(3):
        fwd_bwd(layer, x, grouped)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fwd_bwd(layer, x, grouped)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / reps


def kernels(layer, x, grouped):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fwd_bwd(layer, x, grouped)
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def clocks():
    try:
        import pynvml

        pynvml.nvmlInit()
        hnd = pynvml.nvmlDeviceGetHandleByIndex(0)
        return {
            "sm_mhz": pynvml.nvmlDeviceGetClockInfo(hnd, pynvml.NVML_CLOCK_SM),
            "power_w": pynvml.nvmlDeviceGetPowerUsage(hnd) / 1000.0,
        }
    except Exception as exc:  # NVML is optional here
        return {"nvml": str(exc)}


def main():
    torch.manual_seed(0)
    env = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "grouped_mm": hasattr(torch, "_grouped_mm"),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "before": clocks(),
    }
    rows = []
    for name, h, local, ffn, k, experts in CASES:
        layer = Layer(h, local, ffn, k, experts)
        tiny = torch.randn(local, h, device=DEV, dtype=DT, requires_grad=True)
        for grouped in (False, True):
            if grouped and not env["grouped_mm"]:
                continue
            host = wall_ms(layer, tiny, grouped, 50)
            for t in TOKENS:
                x = torch.randn(t, h, device=DEV, dtype=DT, requires_grad=True)
                counts = balanced_counts(layer, t)
                row = {
                    "case": name,
                    "grouped": grouped,
                    "tokens": t,
                    "gpu_ms": gpu_ms(layer, x, grouped, counts, 20),
                    "wall_ms": wall_ms(layer, x, grouped, 20),
                    "host_ms": host,
                    "kernels": kernels(layer, x, grouped),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    env["after"] = clocks()
    with open(os.path.join(OUT, "moe_layer.json"), "w") as f:
        json.dump({"env": env, "fields": list(rows[0].keys()) if rows else [], "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
