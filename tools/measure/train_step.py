# The script that measured the H200 steps of h200/train_steps.json (unchanged below this
# header); step_power.py imports its Model.
"""One-GPU training steps of decoder-only transformers in plain PyTorch (bf16 autocast, fp32
master weights, fused AdamW, SDPA attention), timed, with a per-kernel-class breakdown from
torch.profiler and the Chrome trace of one step. Ground truth for a simulator's single-GPU step.

Writes $OUT/train_steps.json and $OUT/trace_<name>.json.gz.
"""
import gzip, json, math, os, sys, time

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.environ.get("OUT", "/tmp")
T0 = time.time()
BUDGET = float(os.environ.get("TS_BUDGET_S", "200"))
dev = "cuda"
R = {"env": {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}, "runs": []}


class Block(nn.Module):
    def __init__(s, h, heads, kv, ffn, llama):
        super().__init__()
        s.h, s.heads, s.kv, s.hd, s.llama = h, heads, kv, h // heads, llama
        s.n1 = nn.RMSNorm(h) if llama else nn.LayerNorm(h)
        s.n2 = nn.RMSNorm(h) if llama else nn.LayerNorm(h)
        s.qkv = nn.Linear(h, (heads + 2 * kv) * s.hd, bias=not llama)
        s.o = nn.Linear(h, h, bias=not llama)
        if llama:
            s.up = nn.Linear(h, 2 * ffn, bias=False)
        else:
            s.up = nn.Linear(h, ffn)
        s.down = nn.Linear(ffn, h, bias=not llama)

    def forward(s, x, cos, sin):
        b, t, _ = x.shape
        q, k, v = s.qkv(s.n1(x)).split([s.heads * s.hd, s.kv * s.hd, s.kv * s.hd], dim=-1)
        q = q.view(b, t, s.heads, s.hd).transpose(1, 2)
        k = k.view(b, t, s.kv, s.hd).transpose(1, 2)
        v = v.view(b, t, s.kv, s.hd).transpose(1, 2)
        if s.llama:  # rotary embedding
            def rot(u):
                u1, u2 = u.chunk(2, dim=-1)
                return u * cos + torch.cat((-u2, u1), dim=-1) * sin
            q, k = rot(q), rot(k)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=s.kv != s.heads)
        x = x + s.o(a.transpose(1, 2).reshape(b, t, s.h))
        u = s.up(s.n2(x))
        if s.llama:
            g, u2 = u.chunk(2, dim=-1)
            u = F.silu(g) * u2
        else:
            u = F.gelu(u, approximate="tanh")
        return x + s.down(u)


class Model(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.c = c
        llama = c["family"] == "llama"
        s.emb = nn.Embedding(c["vocab"], c["hidden"])
        s.pos = None if llama else nn.Embedding(c["seq"], c["hidden"])
        s.blocks = nn.ModuleList(Block(c["hidden"], c["heads"], c["kv_heads"], c["ffn"], llama)
                                 for _ in range(c["layers"]))
        s.nf = nn.RMSNorm(c["hidden"]) if llama else nn.LayerNorm(c["hidden"])
        s.head = nn.Linear(c["hidden"], c["vocab"], bias=False)
        hd = c["hidden"] // c["heads"]
        inv = 1.0 / (500000 ** (torch.arange(0, hd, 2).float() / hd))
        f = torch.outer(torch.arange(c["seq"]).float(), inv)
        emb = torch.cat((f, f), dim=-1)
        s.register_buffer("cos", emb.cos()[None, None], persistent=False)
        s.register_buffer("sin", emb.sin()[None, None], persistent=False)

    def forward(s, ids, tgt):
        x = s.emb(ids)
        if s.pos is not None:
            x = x + s.pos.weight[None, : ids.shape[1]]
        cos, sin = s.cos.to(x.dtype), s.sin.to(x.dtype)
        for b in s.blocks:
            x = b(x, cos, sin)
        logits = s.head(s.nf(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt.view(-1))


def classify(name):
    n = name.lower()
    if any(k in n for k in ("flash", "fmha", "attn", "attention", "sdpa", "cudnn")):
        return "attention"
    if any(k in n for k in ("gemm", "xmma", "cutlass", "nvjet", "sm90", "sm80", "cublas", "matmul")):
        return "gemm"
    if "adam" in n or "multi_tensor" in n:
        return "optimizer"
    if "nll" in n or "softmax" in n or "cross" in n or "log_softmax" in n:
        return "loss"
    if "norm" in n:
        return "norm"
    return "other"


def run(c):
    torch.manual_seed(0)
    m = Model(c).to(dev)
    nparams = sum(p.numel() for p in m.parameters())
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    mb, seq = c["micro_batch"], c["seq"]
    ids = torch.randint(0, c["vocab"], (mb, seq), device=dev)

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
    ts = []
    for _ in range(c["steps"]):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    med = ts[len(ts) // 2]
    # profile one step
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    cls, busy = {}, 0.0
    kern = []
    ka = prof.key_averages()
    for e in ka:
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = getattr(e, "self_cuda_time_total", 0)
        if t and e.key and not e.key.startswith(("aten::", "autograd", "Optimizer", "cuda", "Memcpy", "Memset",
                                                 "ProfilerStep", "Torch-Compiled")):
            c_ = classify(e.key)
            cls[c_] = cls.get(c_, 0.0) + t / 1e3
            busy += t / 1e3
            kern.append([e.key[:90], round(t / 1e3, 3), e.count])
    kern.sort(key=lambda r: -r[1])
    path = os.path.join(OUT, "trace_%s.json" % c["name"])
    prof.export_chrome_trace(path)
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
        g.write(f.read())
    os.remove(path)
    tokens = mb * seq * c["accum"]
    h, L, V = c["hidden"], c["layers"], c["vocab"]
    lookup = V * h + (seq * h if c["family"] != "llama" else 0)  # embedding tables do no matmul
    dense = 6 * tokens * (nparams - lookup)
    attn = 6 * tokens * L * seq * h  # 12*L*h*s per token fwd+bwd full; causal halves: 6
    flops = dense + attn
    r = {"config": c, "params": nparams, "step_s_median": round(med, 5), "step_s_all": [round(t, 5) for t in ts],
         "tokens_per_step": tokens, "model_flops_per_step": flops, "tflops_per_gpu": round(flops / med / 1e12, 1),
         "profiled_step_kernel_ms_by_class": {k: round(v, 2) for k, v in cls.items()},
         "profiled_step_kernel_ms_total": round(busy, 2), "top_kernels_ms": kern[:25],
         "peak_mem_gb": round(torch.cuda.max_memory_allocated() / 1e9, 2)}
    R["runs"].append(r)
    print(c["name"], "step", r["step_s_median"], "s", r["tflops_per_gpu"], "TF/s", r["profiled_step_kernel_ms_by_class"], flush=True)
    del m, opt
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    with open(os.path.join(OUT, "train_steps.json"), "w") as f:
        json.dump(R, f, indent=1)


CONFIGS = [
    # Llama 3 8B's layer shape, 8 layers, 8K context, one sequence
    dict(name="llama8l-h4096-s8192", family="llama", hidden=4096, layers=8, heads=32, kv_heads=8, ffn=14336,
         vocab=128256, seq=8192, micro_batch=1, accum=2, steps=6),
    # GPT 1.7B (hidden 2304, 24 layers, 24 heads), 4K context, the smallest row of a weak-scaling table
    dict(name="gpt1.7b-s4096-mb1", family="gpt", hidden=2304, layers=24, heads=24, kv_heads=24, ffn=4 * 2304,
         vocab=131072, seq=4096, micro_batch=1, accum=4, steps=6),
    dict(name="gpt1.7b-s4096-mb4", family="gpt", hidden=2304, layers=24, heads=24, kv_heads=24, ffn=4 * 2304,
         vocab=131072, seq=4096, micro_batch=4, accum=1, steps=6),
    # GPT-3 13B-like layer shape (hidden 5120, 40 heads), 8 layers, 2K context
    dict(name="gpt-h5120-8l-s2048-mb4", family="gpt", hidden=5120, layers=8, heads=40, kv_heads=40, ffn=4 * 5120,
         vocab=51200, seq=2048, micro_batch=4, accum=2, steps=6),
]
if len(sys.argv) > 1:  # a JSON file with a list of configs replaces the defaults
    CONFIGS = json.load(open(sys.argv[1]))
for c in CONFIGS:
    if time.time() - T0 > BUDGET:
        break
    try:
        run(c)
    except Exception as e:  # noqa: BLE001
        R["runs"].append({"config": c, "error": repr(e)[:300]})
        print(c["name"], "error", repr(e)[:300], flush=True)
        torch.cuda.empty_cache()
R["wall_s"] = round(time.time() - T0, 1)
with open(os.path.join(OUT, "train_steps.json"), "w") as f:
    json.dump(R, f, indent=1)
print("done", R["wall_s"], flush=True)
