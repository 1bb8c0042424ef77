"""clock_fit.py - the power-cap clock model's parameters from the H200 clock measurements.

    python3 tools/profile/clock_fit.py [KERNELS_JSON]   (prints the fit and its residuals)

make_profiles.py imports `fit` to write the `clock:` section of the h200-sxm
profile. Inputs, all measured on one H200 SXM (700 W limit) and kept in
tools/measure/h200/ with the scripts that made them:

  clock_duty.json  kernels alone (power at full clock), GEMM duty cycles
                   against fp32 gradient accumulation (2, 20, 200 ms), the
                   controller's step response from idle and from memory-bound work;
  clock_mix.json   per GEMM shape the first GEMMs after idle (full clock) and
                   a 0.3 s loop (at the cap); GEMM duty cycles against an idle GPU;
  step_power.json  board power during the two measured training steps, and
                   memory-bound kernels alone;
  kernel_power.json  LayerNorm backward, dropout and fp8 casts alone.

The model (docs/compute-model.md, "Clocks under the power cap"): a GEMM runs
r times its speed at the cap, r = 1 + (boost - 1)(1 - exp(-H / h0)), where H
is the power the rest of the recent work leaves under the cap per unit of
GEMM time, H = sum_c t_c (cap - P_c) / t_gemm, averaged over the controller's
window. Standard library only; the output depends on the files' bytes alone.
"""
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEASURED = os.path.join(ROOT, "tools", "measure", "h200")

# Memory-bound kinds (make_profiles.MEM_KINDS keys) -> the kernels measured
# alone whose mean board power at full clock stands for them (None: not
# measured; such a kind would take the mean of the measured kinds).
MEM_POWER = {
    "copy": [("step_power", "cast_fp32_bf16"), ("clock_duty", "copy")],
    "add": [("step_power", "gradacc"), ("clock_duty", "gradacc")],
    "layernorm": [("step_power", "layernorm")],
    "rmsnorm": [("step_power", "rmsnorm"), ("clock_duty", "rmsnorm")],
    "layernorm_bwd": [("kernel_power", "layernorm_bwd")],
    "gelu": [("step_power", "gelu_tanh")],
    "silu_mul": [("step_power", "silu_mul")],
    "softmax": [("step_power", "softmax_fp32")],
    "dropout": [("kernel_power", "dropout")],
    "grad_accum": [("step_power", "gradacc"), ("clock_duty", "gradacc")],
    "cross_entropy": [("step_power", "softmax_fp32")],
    "adamw_fused": [("step_power", "adamw_fused")],
    "adamw_foreach": [("step_power", "adamw_fused")],
}
CAP_FLOOR = 0.95  # a duty row counts as held at the cap when its power is at least this x the limit


def load(name):
    with open(os.path.join(MEASURED, name + ".json"), "rb") as fh:
        raw = fh.read()
    return json.loads(raw), raw


def nn_tflops(rows, m, n, k):
    """The profile's bf16 NN lookup at a grid M: bilinear in (log N, log K),
    as src/hw/kprof.c evaluates it."""
    pts = {(r[1], r[2]): r[3] for r in rows if r[0] == m}
    ns = sorted({p[0] for p in pts})
    ks = sorted({p[1] for p in pts})

    def bracket(v, grid):
        v = min(max(v, grid[0]), grid[-1])
        for i in range(len(grid) - 1):
            if grid[i] <= v <= grid[i + 1]:
                lo, hi = math.log(grid[i]), math.log(grid[i + 1])
                return i, (math.log(v) - lo) / (hi - lo)
        return len(grid) - 2, 1.0

    i, tn = bracket(n, ns)
    j, tk = bracket(k, ks)
    z = lambda a, b: pts[(ns[a], ks[b])]  # noqa: E731
    return ((1 - tn) * (1 - tk) * z(i, j) + tn * (1 - tk) * z(i + 1, j)
            + (1 - tn) * tk * z(i, j + 1) + tn * tk * z(i + 1, j + 1))


def speedup(h, boost, h0):
    return 1.0 + (boost - 1.0) * (1.0 - math.exp(-max(h, 0.0) / h0))


def golden(f, lo, hi, n=200):
    """The argmin of a unimodal f on [lo, hi]."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(n):
        c, d = b - g * (b - a), a + g * (b - a)
        if f(c) < f(d):
            b = d
        else:
            a = c
    return (a + b) / 2


def fit(nn_rows):
    """The clock section's parameters, and the rows each was fitted on."""
    duty, duty_raw = load("clock_duty")
    mix, mix_raw = load("clock_mix")
    idle, idle_raw = load("clock_idle")
    steps, steps_raw = load("step_power")
    kern, kern_raw = load("kernel_power")
    limit = duty["gpu"][2]
    out = {"sources": {"clock_duty.json": duty_raw, "clock_mix.json": mix_raw, "clock_idle.json": idle_raw,
                       "step_power.json": steps_raw, "kernel_power.json": kern_raw}}

    # The power the controller holds: duty rows and steps at the cap.
    held = [r[5] for r in duty["duty"] if r[5] >= CAP_FLOOR * limit]
    held += [s["mean_w"] for s in steps["steps"].values()]
    cap = sum(held) / len(held)

    # Full clock against the cap, per shape: the first GEMMs after idle over a
    # 0.3 s loop.
    boost = sum(r[3] / r[4] for r in mix["boost"]) / len(mix["boost"])
    # The table's GEMMs against the cap, at the measured shapes on its grid.
    on_grid = [r for r in mix["boost"] if any(x[0] == r[0] and x[1] == r[1] and x[2] == r[2] for x in nn_rows)]
    table = sum(nn_tflops(nn_rows, r[0], r[1], r[2]) / r[4] for r in on_grid) / len(on_grid)

    # Board power of each memory-bound kind at full clock.
    alone = {"clock_duty": {k: v[2] for k, v in duty["alone"].items()},
             "step_power": {k: v[2] for k, v in steps["mem"].items()},
             "kernel_power": {k: v[2] for k, v in kern["kernels"].items() if isinstance(v, list)}}
    mem_w = {}
    for kind, srcs in MEM_POWER.items():
        if srcs:
            vals = [alone[f][k] for f, k in srcs]
            mem_w[kind] = sum(vals) / len(vals)
    mean_mem = sum(mem_w.values()) / len(mem_w)
    for kind in MEM_POWER:
        mem_w.setdefault(kind, mean_mem)
    attn_w = duty["alone"]["attention"][2]

    # h0 from the duty cycles against gradient accumulation, at the cap.
    gradacc_w = mem_w["grad_accum"]
    sustained = {"large": duty["alone"]["gemm_large"][0] / 1e3, "small": duty["alone"]["gemm_small"][0] / 1e3}
    rows = []
    for period, _target, d, tf, _mhz, w in duty["duty"]:
        if w < CAP_FLOOR * limit:
            continue
        shape = "small" if period < 10 else "large"
        rows.append(((1 - d) / d * (cap - gradacc_w), tf / sustained[shape]))
    sse = lambda h0: sum((r - speedup(h, boost, h0)) ** 2 for h, r in rows)  # noqa: E731
    h0 = golden(sse, 1.0, 1000.0)

    # What a stretch without compute kernels counts as (a wait, a bubble, a
    # transfer's kernels alone): the duty cycles against an idle GPU and
    # against a collective-like copy kernel, gaps of 1 to 80 ms, wherever
    # the clock was held below its maximum, each against its own run's
    # GEMMs at the cap.
    sus_large = [r[4] for r in mix["boost"] if r[:3] == [8192, 13312, 16384]][0]
    max_mhz = duty["gpu"][1]
    idle_rows = [(r[1], r[2] / sus_large) for r in mix["idle"] if r[3] < max_mhz]
    idle_rows += [(r[3], r[4] / idle["sustained"][0]) for r in idle["gaps"] if r[5] < max_mhz]
    sse_idle = lambda p: sum((r - speedup((1 - d) / d * (cap - p), boost, h0)) ** 2  # noqa: E731
                             for d, r in idle_rows)
    idle_w = golden(sse_idle, 0.0, cap)

    # The controller's window from its step response: the time the GEMMs take
    # to fall halfway from full clock to the cap, after idle and after
    # memory-bound work; an exponential window of tau gives t = -tau ln x with
    # h x / (1 - x) = h0 ln 2, h the headroom before.
    ts, ks = [], []
    for before, h in (("idle", cap - idle_w), ("mem", cap - gradacc_w)):
        g = duty["step"][before]["gemm"]
        top = max(tf for _, tf in g[:5])
        mid = (top + sustained["large"]) / 2
        t_half = next(t for t, tf in g[1:] if tf < mid)
        x = h0 * math.log(2) / (h + h0 * math.log(2))
        ts.append(t_half)
        ks.append(-math.log(x))
    tau = sum(t * k for t, k in zip(ts, ks)) / sum(k * k for k in ks)

    out.update(cap_w=cap, boost=boost, table=table, headroom_w=h0, idle_w=idle_w, window_ms=tau,
               attention_w=attn_w, membound_w=mem_w,
               residuals={"duty": [(round(h, 1), round(r, 4), round(speedup(h, boost, h0), 4)) for h, r in rows],
                          "idle": [(d, round(r, 4), round(speedup((1 - d) / d * (cap - idle_w), boost, h0), 4))
                                   for d, r in idle_rows],
                          "window": list(zip(ts, [round(tau * k, 1) for k in ks])),
                          "table_shapes": [(r[:3], round(nn_tflops(nn_rows, r[0], r[1], r[2]) / r[4], 4))
                                           for r in on_grid]})
    return out


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_profiles
    src = argv[1] if len(argv) > 1 else os.path.join(ROOT, make_profiles.DEFAULT)
    with open(src, "rb") as fh:
        t = json.load(fh)
    f = fit(make_profiles.gemm_tables(t)["bf16"]["NN"])
    for k, v in f.items():
        if k != "sources":
            print(k, json.dumps(v) if not isinstance(v, float) else round(v, 4))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
