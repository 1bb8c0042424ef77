#!/usr/bin/env python3
"""make_profiles.py - the built-in kernel profiles from the H200 measurement table.

    python3 tools/profile/make_profiles.py [--check] [KERNELS_JSON]

Reads kernels.json (made by kernel_table.py on one H200 SXM; default
tools/measure/h200/kernels.json relative to the repository root)
and writes src/hw/profiles/{h200-sxm,h100-sxm,a100-sxm,b200,gb200}.yaml: the
H200's measured profile and four derived from it by the rules stated in
each file and in docs/kernel-profiles.md. Standard library only; the output
depends on the table's bytes alone, so re-running gives identical files.
With --check it writes nothing and exits 1 when a file differs from what it
would write (77, "skipped" to meson, when the table is not there).
"""
import hashlib
import json
import os
import sys

import clock_fit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT = os.path.join("tools", "measure", "h200", "kernels.json")
OUTDIR = os.path.join(ROOT, "src", "hw", "profiles")

# Memory-bound kinds in cs_kprof_mem_kind_name order: (profile key, table op).
MEM_KINDS = [
    ("copy", "copy"), ("add", "add"), ("layernorm", "layernorm"), ("rmsnorm", "rmsnorm"),
    ("layernorm_bwd", None), ("gelu", "gelu"), ("silu_mul", "silu_mul"),
    ("softmax", "softmax"), ("dropout", "dropout"), ("grad_accum", "grad_accum_fp32_bf16"),
    ("cross_entropy", "cross_entropy_fwdbwd_fp32"), ("adamw_fused", "adamw_fused"),
    ("adamw_foreach", "adamw_foreach"),
]

# Dense bf16 and fp8 MAMF (maximum achievable matmul TF/s, mean of 100 runs
# of the best shape) from stas00/ml-engineering compute/accelerator/README.md,
# "Maximum Achievable Matmul FLOPS comparison table". The H100 SXM row is the
# H200's too ("H200 is the same"); fp8 has its own H200 row.
MAMF_BF16 = {"a100": 271.2, "h100": 794.5, "b200": 1745.0}
MAMF_FP8 = {"h200": 1453.4, "b200": 3432.5}
# HBM bandwidth, TB/s (NVIDIA datasheets).
HBM = {"h200": 4.8, "h100": 3.35, "a100": 2.039, "b200": 8.0, "gb200": 8.0}
# Dense bf16 and fp8 peaks, TF/s (NVIDIA datasheets): the B200 at 1,000 W,
# the GB200's B200 at 1,200 W (GB200 NVL72: 360 PF bf16, 720 PF fp8 with
# sparsity over 72 GPUs). The GB300 has the GB200's bf16 and fp8 peaks.
PEAK = {"b200": (2250.0, 4500.0), "gb200": (2500.0, 5000.0)}
# FlashAttention-2 on the A100 (Dao 2023, arXiv 2307.08691, section 4.1):
# up to 73 % of the 312 TF/s peak forward and 63 % backward, at sequence
# 16K, head dimension 128, 16 heads, batch 1, no causal mask.
A100_PEAK = 312.0
FA2_A100_FWD, FA2_A100_BWD = 0.73, 0.63
FA2_ANCHOR = (False, 1, 16, 16384, 128)  # causal, batch, heads, seq, head_dim


def num(x):
    """A number as YAML text: integers plain, measured values as given."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if float(x).is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(float(x))


def derived_num(x):
    """A derived value: 12 significant digits, so that the rule holds to 1e-11."""
    return num(float("%.12g" % x))


def row(vals):
    return "[" + ", ".join(vals) + "]"


# ---- the measured profile -------------------------------------------------------------

def gemm_tables(t):
    out = {"bf16": {}, "fp8": {}}
    for r in t["gemm"] + t.get("gemm_fp8", []):
        layout, dtype, m, n, k, tf = r[0], r[1], r[2], r[3], r[4], r[6]
        d = "bf16" if dtype == "bf16" else "fp8"
        out[d].setdefault(layout, {})[(m, n, k)] = tf
    for d in out:
        for lay in out[d]:
            out[d][lay] = sorted([m, n, k, tf] for (m, n, k), tf in out[d][lay].items())
    return out


def sustained_attention(t, misc):
    """The ratio of cuDNN attention run back to back for seconds (misc.json
    `cudnn_sus`: forward + backward TF/s, causal, batch 1, 16 heads, seq 8192,
    head dim 128, at the power cap) to the table's short loop of the same work
    (batch x heads = 16 at seq 8192): the table's attention ran at full clock,
    its GEMMs at the sustained one."""
    for r in t["attn"]:
        if (len(r) >= 10 and r[0] == "cudnn" and r[1] is True and r[4] == 8192 and r[5] == 128
                and r[2] * r[3] == 16):
            return misc["cudnn_sus"][0] / r[9]
    raise SystemExit("make_profiles: no cuDNN row at the sustained measurement's shape")


def attn_tables(t, sus=1.0):
    """Backend -> rows [causal, batch, heads, seq, head_dim, fwd TF/s, bwd TF/s],
    scaled to the sustained clock by `sus`."""
    out = {"cudnn": [], "flash2": []}
    for r in t["attn"]:
        if len(r) < 10 or r[6] == "error" or isinstance(r[6], str):
            continue
        backend, causal, b, h, s, d, fwd_ms, fb_ms = r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[8]
        flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
        fwd = sus * flops / fwd_ms / 1e9
        bwd = sus * 2.5 * flops / (fb_ms - fwd_ms) / 1e9
        name = "flash2" if backend == "flash" else backend
        out[name].append([bool(causal), b, h, s, d, round(fwd, 1), round(bwd, 1)])
    for name in out:
        out[name].sort(key=lambda x: (x[0], x[4], x[3], x[1] * x[2]))
    return out


def mem_tables(t):
    """Kind -> sorted [bytes, GB/s]; equal byte counts merge to total bytes / total time."""
    rows = {}
    for r in t["membound"]:
        if len(r) < 6 or isinstance(r[3], str):
            continue
        op, nrows, ncols, nbytes, gbs = r[0], r[1], r[2], int(r[4]), r[5]
        rows.setdefault(op, []).append((nrows, ncols, nbytes, gbs))
    out = {}
    for key, op in MEM_KINDS:
        pts = []  # (bytes, ms)
        if key == "layernorm_bwd":
            fwd = {(a, b): nb / g / 1e6 for a, b, nb, g in rows.get("layernorm", [])}
            for a, b, nb, g in rows.get("layernorm_fwdbwd", []):
                if (a, b) in fwd:
                    e = a * b * 2
                    pts.append((3 * e, nb / g / 1e6 - fwd[(a, b)]))
        else:
            for a, b, nb, g in rows.get(op, []):
                ms = nb / g / 1e6
                if key == "add":
                    nb = nb * 2 // 3  # x + x reads one tensor: 2 tensors of traffic, not 3
                pts.append((nb, ms))
        merged = {}
        for nb, ms in pts:
            merged.setdefault(nb, []).append(ms)
        out[key] = [[nb, round(nb / (sum(v) / len(v)) / 1e6, 1)] for nb, v in sorted(merged.items())]
    return out


def contention_table(t, hog):
    """Compute's rate while communication holds a fraction of the SMs: the
    GEMM loop of interference/sm-hog.json beside a resident kernel on k SMs
    that copies memory as a collective does (`kK_m1`), over the loop alone
    (`k0_m0`); rows [k / SMs, rate]."""
    alone = hog["k0_m0"][0]
    rows = [[0, 1]]
    for k in sorted(int(key[1:key.index("_")]) for key in hog if key.startswith("k") and key.endswith("_m1")):
        rows.append([k / t["env"]["sms"], hog["k%d_m1" % k][0] / alone])
    return rows


def document_floor(misc):
    """Causal attention with N equal documents per 8K sequence (misc.json
    `flex_N`, FlexAttention) takes t_N = t_1 (a + (1 - a) / N): the least
    squares a over N = 2, 4, 8, 16."""
    t1 = misc["flex_1"][0]
    num = den = 0.0
    for n in (2, 4, 8, 16):
        key = "flex_%d" % n
        if key not in misc:
            continue
        r, f = misc[key][0] / t1, 1.0 / n
        num += (r - f) * (1 - f)
        den += (1 - f) ** 2
    return num / den


def measured(t, sus, hog, misc):
    return {
        "name": "h200-sxm",
        "gpu": "NVIDIA H200 SXM 141 GB, %d W, %d SMs" % (round(t["env"]["power_limit_w"]), t["env"]["sms"]),
        "derived": False,
        "launch": (t["launch"]["eager_tiny_op_us"], t["launch"]["graph_tiny_kernel_us"],
                   t["launch"]["synchronize_us"]),
        "gemm": gemm_tables(t),
        "attention": attn_tables(t, sus),
        "membound": mem_tables(t),
        "contention": contention_table(t, hog),
        "doc_floor": document_floor(misc),
        "clock": None,
    }


# ---- derived profiles -----------------------------------------------------------------

def scale_gemm(g, f_bf16, f_fp8):
    out = {}
    for d, f in (("bf16", f_bf16), ("fp8", f_fp8)):
        if f is None or d not in g:
            continue
        out[d] = {lay: [r[:3] + [r[3] * f] for r in rows] for lay, rows in g[d].items()}
    return out


def scale_attn(a, f_fwd, f_bwd):
    return {b: [r[:5] + [r[5] * f_fwd, r[6] * f_bwd] for r in rows] for b, rows in a.items()}


def scale_mem(m, f):
    return {k: [[r[0], r[1] * f] for r in rows] for k, rows in m.items()}


def derive(h200):
    g, a, m = h200["gemm"], h200["attention"], h200["membound"]
    out = []

    f_mem = HBM["h100"] / HBM["h200"]
    out.append(dict(h200, name="h100-sxm", gpu="NVIDIA H100 SXM 80 GB, 700 W, 132 SMs", derived=True,
                    membound=scale_mem(m, f_mem), rule=(
        "the H200's chip at the same 700 W limit: GEMM and attention tables unchanged; "
        "memory-bound bandwidths x 3.35/4.8 (HBM3 against HBM3e, NVIDIA datasheets); "
        "launch costs unchanged")))

    f_bf16 = MAMF_BF16["b200"] / MAMF_BF16["h100"]
    f_fp8 = MAMF_FP8["b200"] / MAMF_FP8["h200"]
    out.append(dict(h200, name="b200", gpu="NVIDIA B200 SXM 180 GB, 1000 W, 148 SMs", derived=True,
                    gemm=scale_gemm(g, f_bf16, f_fp8), attention=scale_attn(a, f_bf16, f_bf16),
                    membound=scale_mem(m, HBM["b200"] / HBM["h200"]), rule=(
        "bf16 GEMM and attention x 1745.0/794.5 (B200 over H100/H200 bf16 MAMF, "
        "stas00/ml-engineering compute/accelerator/README.md); fp8 GEMM x 3432.5/1453.4 "
        "(B200 over H200 fp8 MAMF, same table); memory-bound bandwidths x 8.0/4.8 "
        "(HBM, NVIDIA datasheets); launch costs unchanged")))

    # GB200 (and GB300): no public MAMF; the B200's fractions of peak at
    # the GB200's peaks, the same factor on bf16 and fp8 (2500/2250 = 5000/4500)
    f_gb = PEAK["gb200"][0] / PEAK["b200"][0]
    out.append(dict(h200, name="gb200", gpu="NVIDIA GB200 (B200 at 1200 W), 186 GB, 148 SMs; the GB300's too",
                    derived=True,
                    gemm=scale_gemm(g, f_bf16 * f_gb, f_fp8 * f_gb),
                    attention=scale_attn(a, f_bf16 * f_gb, f_bf16 * f_gb),
                    membound=scale_mem(m, HBM["gb200"] / HBM["h200"]), rule=(
        "the b200 rule, then GEMM and attention x 2500/2250 (GB200 over B200 dense bf16 "
        "and fp8 peaks, NVIDIA datasheets: the B200's measured fraction of peak kept, "
        "as no GB200 MAMF is published): bf16 x 1745.0/794.5 x 2500/2250, fp8 x "
        "3432.5/1453.4 x 5000/4500; memory-bound bandwidths x 8.0/4.8 (8 TB/s HBM3e, as "
        "the B200); launch costs unchanged. The GB300 uses this profile: its dense bf16 "
        "and fp8 peaks and HBM bandwidth are the GB200's, and its 12 more SMs do not enter "
        "a rule that scales by peak")))

    fa = a["flash2"]
    anchor = [r for r in fa if tuple(r[:5]) == FA2_ANCHOR]
    if len(anchor) != 1:
        sys.exit("make_profiles: the table lacks the flash attention point %r" % (FA2_ANCHOR,))
    f_fwd = FA2_A100_FWD * A100_PEAK / anchor[0][5]
    f_bwd = FA2_A100_BWD * A100_PEAK / anchor[0][6]
    flash = scale_attn({"flash2": fa}, f_fwd, f_bwd)["flash2"]
    out.append(dict(h200, name="a100-sxm", gpu="NVIDIA A100 SXM 80 GB, 400 W, 108 SMs", derived=True,
                    gemm=scale_gemm(g, MAMF_BF16["a100"] / MAMF_BF16["h100"], None),
                    attention={"cudnn": flash, "flash2": flash},
                    membound=scale_mem(m, HBM["a100"] / HBM["h200"]), rule=(
        "bf16 GEMM x 271.2/794.5 (A100 over H100/H200 bf16 MAMF, stas00/ml-engineering "
        "compute/accelerator/README.md); no fp8; attention: FlashAttention-2 only (the H200's "
        "cuDNN figures are Hopper kernels', and SDPA runs FlashAttention-2 on the A100; the "
        "cudnn table repeats flash2), the H200's flash2 "
        "table scaled so that forward is 73 %% and backward 63 %% of the 312 TF/s peak at "
        "seq 16384, head dim 128, 16 heads, batch 1, no mask, as FlashAttention-2 measured "
        "on the A100 (Dao 2023, arXiv 2307.08691, section 4.1): forward x %.6g, backward "
        "x %.6g; memory-bound bandwidths x 2.039/4.8 (HBM, NVIDIA datasheets); launch costs "
        "unchanged" % (f_fwd, f_bwd))))
    for p in out:
        p["rule"] += ("; contention (compute's rate against the fraction of the SMs that "
                      "communication kernels hold) and the document mask floor unchanged; "
                      "no clock model (the power its kernels draw is not measured): GEMMs "
                      "run as the table measured them")
        p["clock"] = None
    return out


# ---- writing --------------------------------------------------------------------------

def render(p, header):
    f = derived_num if p["derived"] else num
    L = ["# " + h for h in header]
    L.append("name: " + p["name"])
    L.append("gpu: " + p["gpu"])
    L.append("derived: " + num(p["derived"]))
    if p["derived"]:
        L.append("derived_from: h200-sxm")
        L.append("rule: " + json.dumps(p["rule"]))
    L.append("launch: {eager_op_us: %s, graph_kernel_us: %s, sync_us: %s}"
             % (num(p["launch"][0]), num(p["launch"][1]), num(p["launch"][2])))
    L.append("gemm:")
    for d in ("bf16", "fp8"):
        if d not in p["gemm"]:
            continue
        L.append("  %s:" % d)
        for lay in ("NN", "NT", "TN"):
            rows = p["gemm"][d].get(lay)
            if not rows:
                continue
            L.append("    %s:  # [M, N, K, TFLOPs]" % lay)
            L.extend("      - " + row([num(r[0]), num(r[1]), num(r[2]), f(r[3])]) for r in rows)
    L.append("attention:  # [causal, batch, heads, seq, head_dim, fwd_TFLOPs, bwd_TFLOPs]")
    for b in ("cudnn", "flash2"):
        rows = p["attention"].get(b)
        if not rows:
            continue
        L.append("  %s:" % b)
        L.extend("    - " + row([num(x) for x in r[:5]] + [f(r[5]), f(r[6])]) for r in rows)
    L.append("membound:  # [bytes, GBps], sorted by bytes")
    for key, _ in MEM_KINDS:
        rows = p["membound"].get(key)
        if rows:
            L.append("  %s:" % key)
            L.extend("    - " + row([num(r[0]), f(r[1])]) for r in rows)
    L.append("document_mask_floor: %s  # masked attention: floor + (1 - floor) x its share of the work"
             % derived_num(p["doc_floor"]))
    L.append("contention:  # [sm_fraction, rate]: compute beside communication kernels")
    L.extend("  - " + row([derived_num(r[0]), derived_num(r[1])]) for r in p["contention"])
    c = p.get("clock")
    if c:
        g = lambda x: "%.6g" % x  # noqa: E731
        L.append("clock:  # the power cap: W at full clock; fitted by tools/profile/clock_fit.py")
        for key, val in (("cap_w", c["cap_w"]), ("gemm_boost", c["boost"]), ("gemm_table", c["table"]),
                         ("headroom_w", c["headroom_w"]), ("window_ms", c["window_ms"]),
                         ("idle_w", c["idle_w"]), ("attention_w", c["attention_w"])):
            L.append("  %s: %s" % (key, g(val)))
        L.append("  membound_w: {%s}" % ", ".join("%s: %s" % (k, g(c["membound_w"][k])) for k, _ in MEM_KINDS))
    return "\n".join(L) + "\n"


def main(argv):
    args = argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(__doc__.strip())
        return 0 if args and args[0] in ("-h", "--help") else 2
    src = args[0] if args else os.path.join(ROOT, DEFAULT)
    if check and not os.path.exists(src):
        print("make_profiles: %s is not there; nothing to check" % src)
        return 77
    with open(src, "rb") as fh:
        raw = fh.read()
    t = json.loads(raw)
    misc_path = os.path.join(os.path.dirname(src), "interference", "misc.json")
    with open(misc_path, "rb") as fh:
        misc_raw = fh.read()
    misc = json.loads(misc_raw)
    sus = sustained_attention(t, misc)
    hog_path = os.path.join(os.path.dirname(src), "interference", "sm-hog.json")
    with open(hog_path, "rb") as fh:
        hog_raw = fh.read()
    hog = json.loads(hog_raw)
    rel = os.path.relpath(os.path.abspath(src), ROOT)
    sha = hashlib.sha256(raw).hexdigest()
    env = t["env"]
    cudnn = env["cudnn"]
    cudnn_v = "%d.%d.%d" % (cudnn // 10000, cudnn // 100 % 100, cudnn % 100)
    common = [
        "source: %s" % rel,
        "sha256: %s" % sha,
        "attention at the sustained clock: x%.4f (interference/misc.json cudnn_sus, sha256 %s)"
        % (sus, hashlib.sha256(misc_raw).hexdigest()),
        "contention: interference/sm-hog.json, sha256 %s" % hashlib.sha256(hog_raw).hexdigest(),
        "measured on: %s, %d SMs, max SM clock %d MHz, power limit %d W; torch %s, CUDA %s, cuDNN %s"
        % (env["gpu"], env["sms"], env["max_sm_mhz"], round(env["power_limit_w"]), env["torch"],
           env["cuda"], cudnn_v),
        "regenerate: python3 tools/profile/make_profiles.py %s" % DEFAULT,
        "generated file: edit the tool, not this; format and rules in docs/kernel-profiles.md",
    ]
    h200 = measured(t, sus, hog, misc)
    h200["clock"] = clock_fit.fit(h200["gemm"]["bf16"]["NN"])
    common.insert(4, "clock: tools/measure/h200/ %s" % ", ".join(
        "%s sha256 %s" % (n, hashlib.sha256(raw).hexdigest()[:16])
        for n, raw in sorted(h200["clock"]["sources"].items())))
    stale = 0
    if not check:
        os.makedirs(OUTDIR, exist_ok=True)
    for p in [h200] + derive(h200):
        what = "derived from h200-sxm by the rule below" if p["derived"] else "measured"
        header = ["%s kernel profile: %s, %s" % (p["name"], p["gpu"], what)] + common
        text = render(p, header)
        path = os.path.join(OUTDIR, p["name"] + ".yaml")
        rel = os.path.relpath(path, ROOT)
        if check:
            try:
                with open(path, encoding="ascii", newline="") as fh:
                    same = fh.read() == text
            except OSError:
                same = False
            if not same:
                print("%s differs from what make_profiles.py writes; re-run it" % rel)
                stale += 1
            continue
        with open(path, "w", encoding="ascii", newline="\n") as fh:
            fh.write(text)
        print("wrote %s" % rel)
    if check and not stale:
        print("the built-in profiles match %s" % os.path.relpath(os.path.abspath(src), ROOT))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
