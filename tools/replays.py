#!/usr/bin/env python3
"""Replay every published comparison and print each one's error.

Two sets of rows, each a tab-separated file of
`file  kind  published  field  source` ('#' lines are comments; file is
relative to the table's folder; field is a key of
`clustersim run --format json`, optionally times a constant: `mfu*100`):

    dgxc     scenarios/validation/dgxc/published.tsv   (the development set)
    replays  scenarios/validation/published.tsv        (the replays of docs/validation.md)

Each row runs `clustersim run FILE --no-progress --format json [--set ...]`
from the source root; the error is (simulated - published) / published.
Prints a markdown table per set and the median and max |error| of each,
or the same as JSON.

    tools/replays.py [--build DIR] [--only dgxc|replays] [--match TEXT]
                     [--set KEY=VALUE]... [--jobs N] [--json] [--ledger]

--ledger runs every row once per step of LEDGER below, each step adding one
mechanism of the model to the one before (the first has them all switched
off), and prints the simulated figure of each step and the last one's error:
the ledger of docs/validation.md.

--build defaults to build-release when it holds clustersim, else build.
--match keeps the rows whose file name contains TEXT. Exits 1 when a run
fails or its field is missing, 2 on a bad table or argument.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The ledger: each mechanism's name and the --set that switches it off. Step
# k of a ledger run switches off mechanisms k+1.. and keeps 1..k.
LEDGER = [
    ("userbuffers", "parallelism.tp_overlap_model=nccl"),
    ("step edges", "training.step_edges=false"),
    ("fleet", "fleet=ideal"),
    ("fp8 amax", "training.fp8.amax=off"),
    ("fp8 gathers", "training.fp8.comm=false"),
    ("fp8 params", "training.fp8.params=false"),
]
SETS = {
    "dgxc": "scenarios/validation/dgxc/published.tsv",
    "replays": "scenarios/validation/published.tsv",
}


def read_table(name):
    """The rows of one set's table, each a dict; exits 2 on a malformed line."""
    path = os.path.join(ROOT, SETS[name])
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            try:
                if len(cols) != 5:
                    raise ValueError("%d columns, not 5" % len(cols))
                key, _, factor = cols[3].partition("*")
                if not float(cols[2]) > 0:
                    raise ValueError("published '%s' is not a positive number" % cols[2])
                rows.append({
                    "set": name,
                    "file": os.path.normpath(os.path.join(os.path.dirname(SETS[name]), cols[0])),
                    "kind": cols[1],
                    "published": float(cols[2]),
                    "published_text": cols[2],
                    "field": cols[3],
                    "key": key,
                    "factor": float(factor) if factor else 1.0,
                    "source": cols[4],
                })
            except ValueError as e:
                sys.exit("replays: %s:%d: %s" % (SETS[name], lineno, e))
    return rows


def replay(binary, row, sets):
    """Run one row; fills simulated, error_pct and wall_s, or error."""
    cmd = [binary, "run", row["file"], "--no-progress", "--format", "json"]
    for s in sets:
        cmd += ["--set", s]
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    row["wall_s"] = time.monotonic() - t0
    if p.returncode != 0:
        row["error"] = "exit %d: %s" % (p.returncode, (p.stderr.strip().splitlines() or [""])[-1])
        return row
    value = json.loads(p.stdout).get(row["key"])
    if not isinstance(value, (int, float)):
        row["error"] = "no number '%s' in the JSON report" % row["key"]
        return row
    row["simulated"] = value * row["factor"]
    row["error_pct"] = 100.0 * (row["simulated"] - row["published"]) / row["published"]
    return row


def summary(rows):
    errs = [abs(r["error_pct"]) for r in rows if "error_pct" in r]
    if not errs:
        return {"rows": len(rows), "median_abs_error_pct": None, "max_abs_error_pct": None}
    return {"rows": len(rows), "median_abs_error_pct": statistics.median(errs),
            "max_abs_error_pct": max(errs)}


def number(x):
    return "%.1f" % x if abs(x) >= 100 else "%.4g" % x


def print_markdown(names, rows, sums):
    for name in names:
        print("%s (%s):\n" % (name, SETS[name]))
        print("| scenario | kind | published | simulated | error | sim wall s |")
        print("|---|---|---:|---:|---:|---:|")
        for r in rows:
            if r["set"] != name:
                continue
            scen = os.path.basename(r["file"])
            if "error" in r:
                print("| %s | %s | %s | failed: %s | | %.2f |" % (scen, r["kind"], r["published_text"],
                                                                r["error"], r["wall_s"]))
            else:
                print("| %s | %s | %s | %s | %+.1f %% | %.2f |" % (scen, r["kind"], r["published_text"],
                                                                   number(r["simulated"]), r["error_pct"],
                                                                   r["wall_s"]))
        s = sums[name]
        if s["median_abs_error_pct"] is None:
            print("\n%s: no row ran\n" % name)
        else:
            print("\n%s: %d rows, median |error| %.1f %%, max |error| %.1f %%\n"
                  % (name, s["rows"], s["median_abs_error_pct"], s["max_abs_error_pct"]))


def ledger_steps():
    """The --set lists of the ledger's steps: none added, then one more each."""
    offs = [off for _, off in LEDGER]
    return [("before", offs)] + [("+ " + LEDGER[k][0], offs[k + 1:]) for k in range(len(LEDGER))]


def print_ledger(names, rows, steps):
    for name in names:
        print("%s (%s):\n" % (name, SETS[name]))
        print("| scenario | kind | published | " + " | ".join(s for s, _ in steps) + " | error |")
        print("|---|---|---:|" + "---:|" * len(steps) + "---:|")
        for r in rows:
            if r[0]["set"] != name:
                continue
            cells = ["failed" if "error" in x else number(x["simulated"]) for x in r]
            last = r[-1]
            err = "%+.1f %%" % last["error_pct"] if "error_pct" in last else ""
            print("| %s | %s | %s | %s | %s |" % (os.path.basename(last["file"]), last["kind"],
                                                last["published_text"], " | ".join(cells), err))
        sums = [summary([r[k] for r in rows if r[0]["set"] == name]) for k in range(len(steps))]
        print("| median / max \\|error\\| | | | %s | |" % " | ".join(
            "%.1f / %.1f %%" % (s["median_abs_error_pct"], s["max_abs_error_pct"])
            if s["median_abs_error_pct"] is not None else "" for s in sums))
        print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", help="the build folder holding clustersim")
    ap.add_argument("--only", choices=sorted(SETS), help="one set only")
    ap.add_argument("--match", default="", help="only the rows whose file contains TEXT")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="passed to every run")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    ap.add_argument("--ledger", action="store_true", help="each mechanism added in turn")
    a = ap.parse_args()
    if a.jobs < 1:
        ap.error("--jobs must be at least 1")
    build = a.build
    if build is None:
        build = "build-release" if os.path.exists(os.path.join(ROOT, "build-release", "clustersim")) else "build"
    binary = os.path.abspath(os.path.join(build if os.path.isabs(build) else os.path.join(os.getcwd(), build),
                                          "clustersim"))
    if not os.access(binary, os.X_OK):
        ap.error("no clustersim in '%s'" % build)

    names = [a.only] if a.only else list(SETS)
    rows = [r for n in names for r in read_table(n) if a.match in os.path.basename(r["file"])]
    if not rows:
        ap.error("no row matches")
    if a.ledger:
        steps = ledger_steps()
        runs = [(i, k) for i in range(len(rows)) for k in range(len(steps))]
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            done = list(ex.map(lambda ik: replay(binary, dict(rows[ik[0]]), a.sets + steps[ik[1]][1]),
                               runs))
        table = [done[i * len(steps):(i + 1) * len(steps)] for i in range(len(rows))]
        names = [n for n in names if any(r["set"] == n for r in rows)]
        if a.json:
            json.dump({"steps": [s for s, _ in steps],
                       "rows": [{"file": r[0]["file"], "published": r[0]["published"],
                                 "simulated": [x.get("simulated") for x in r],
                                 "error_pct": r[-1].get("error_pct")} for r in table]}, sys.stdout, indent=2)
            print()
        else:
            print_ledger(names, table, steps)
        return 1 if any("error" in x for r in table for x in r) else 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        rows = list(ex.map(lambda r: replay(binary, r, a.sets), rows))
    names = [n for n in names if any(r["set"] == n for r in rows)]
    sums = {n: summary([r for r in rows if r["set"] == n]) for n in names}

    if a.json:
        json.dump({"sets": sums, "rows": [{k: v for k, v in r.items() if k not in ("key", "factor", "published_text")}
                                          for r in rows]}, sys.stdout, indent=2)
        print()
    else:
        print_markdown(names, rows, sums)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
