#!/usr/bin/env python3
"""The figures the docs quote are what the commands print.

Two forms are checked, in README.md and docs/*.md:

1. Output blocks. A ```sh block of N `clustersim` commands followed by N
   plain ``` blocks (each command's output, in order), or a plain block that
   starts with "$ clustersim ..." (the command, then its output). Every line
   of the quoted output must be a line of what the command prints now
   (spaces between words may differ; a run's seconds in "N events in
   S s" are not compared, its event count is), except lines that time the
   run ("elapsed", "wall") and "..." (lines left out).

2. Tables. In a table with a column headed `clustersim` and a cell holding
   a `clustersim ...` command span, every number in the row's clustersim
   cell must be a number the command prints, to the digits quoted.

    tools/check-doc-figures.py [BUILD_DIR]      (default build-release)

Exits 1 naming each figure that differs.
"""
import atexit
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOLATILE = re.compile(r"elapsed|\bwall\b")
# the time a run took varies; its event count does not, and is compared
SECONDS = re.compile(r"(events in) [0-9.]+ s")
PREFIX = re.compile(r"^(\$ )?(\./)?(build-release/)?(?=clustersim )")


def command_of(line):
    """The argument list of a clustersim command line, or None."""
    line = PREFIX.sub("", line.strip())
    if not line.startswith("clustersim "):
        return None
    line = re.sub(r"\s+#.*$", "", line)
    try:
        return shlex.split(line)[1:]
    except ValueError:   # not a shell line (a mention in prose)
        return None


def sh_commands(lines):
    """Join continuation lines; keep the clustersim commands."""
    cmds, cur = [], ""
    for ln in lines:
        cur += ln.rstrip("\\").rstrip() + " " if ln.endswith("\\") else ln
        if ln.endswith("\\"):
            continue
        args = command_of(cur)
        if args is not None:
            cmds.append(args)
        cur = ""
    return cmds


def blocks(text):
    """(info, first line number, lines) of each fenced block, in order."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append((m.group(1), i + 1, lines[i + 1:j], j + 1))
        i = j + 1
    return out


def mirror():
    """A scratch folder whose entries link to the repository's, so the
    commands read its files and write theirs outside the checkout."""
    work = tempfile.mkdtemp(prefix="cs-docs-")
    atexit.register(shutil.rmtree, work, True)
    for e in os.listdir(ROOT):
        os.symlink(os.path.join(ROOT, e), os.path.join(work, e))
    return work


class Runner:
    def __init__(self, binary):
        self.binary, self.cache = binary, {}
        self.cwd = os.environ.get("CS_DOCS_WORKDIR") or mirror()

    def run(self, args):
        key = tuple(args)
        if key not in self.cache:
            p = subprocess.run([self.binary] + args, cwd=self.cwd, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=600)
            self.cache[key] = p.stdout if p.returncode == 0 else None
        return self.cache[key]


def norm(line):
    return SECONDS.sub(r"\1 _ s", " ".join(line.split()))


def check_output(doc, where, args, quoted, runner, fails):
    got = runner.run(args)
    if got is None:
        fails.append(f"{doc}:{where}: clustersim {' '.join(args)} failed")
        return 0
    have = {norm(l) for l in got.split("\n")}
    n = 0
    for k, line in enumerate(quoted):
        if not line.strip() or line.strip() == "..." or VOLATILE.search(line):
            continue
        n += 1
        if norm(line) not in have:
            fails.append(f"{doc}:{where + k}: quoted line not in the output of "
                         f"'clustersim {' '.join(args)}':\n    {line.strip()}")
    return n


NUMBER = re.compile(r"(?<![\w.])[0-9]+(?:\.[0-9]+)?(?![\w.]|\.[0-9])")


def check_tables(doc, text, runner, fails):
    n, col = 0, None
    for no, line in enumerate(text.split("\n"), 1):
        if not line.startswith("|"):
            col = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if col is None:
            col = cells.index("clustersim") if "clustersim" in cells else -1
            continue
        if col < 0 or col >= len(cells) or set(line) <= set("|-: "):
            continue
        spans = [m for c in cells for m in re.findall(r"`(clustersim [^`]*)`", c)]
        if len(spans) != 1:
            continue
        args = command_of(spans[0])
        got = runner.run(args)
        if got is None:
            fails.append(f"{doc}:{no}: clustersim {spans[0]} failed")
            continue
        printed = [float(x) for x in NUMBER.findall(got)]
        for fig in NUMBER.findall(cells[col]):
            n += 1
            # quoted to fewer digits: any printed number that rounds to it
            half = 0.5 * 10.0 ** -(len(fig.split(".")[1]) if "." in fig else 0)
            if not any(abs(x - float(fig)) <= half * (1 + 1e-9) for x in printed):
                fails.append(f"{doc}:{no}: {fig} (column clustersim) is not in the output of "
                             f"'{spans[0]}'")
    return n


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build-release"
    binary = os.path.join(ROOT, build, "clustersim")
    if not os.access(binary, os.X_OK):
        sys.exit(f"check-doc-figures: no binary at {binary} (build it first)")
    runner, fails, lines, figs = Runner(binary), [], 0, 0
    docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(ROOT, "docs"))
                                  if f.endswith(".md"))
    for doc in docs:
        text = open(os.path.join(ROOT, doc), encoding="utf-8").read()
        bl = blocks(text)
        for i, (info, start, body, _) in enumerate(bl):
            if info == "" and body and command_of(body[0]) is not None and body[0].startswith("$"):
                lines += check_output(doc, start + 1, command_of(body[0]), body[1:], runner, fails)
            if info != "sh":
                continue
            cmds = sh_commands(body)
            outs = bl[i + 1:i + 1 + len(cmds)]
            if not cmds or len(outs) < len(cmds) or any(o[0] != "" for o in outs):
                continue
            # the output blocks must follow the commands with only blank lines between
            ends = [bl[i][3]] + [o[3] for o in outs[:-1]]
            gaps = [text.split("\n")[e:o[1] - 1] for e, o in zip(ends, outs)]
            if any(any(g.strip() for g in gap) for gap in gaps):
                continue
            for args, (_, ostart, obody, _) in zip(cmds, outs):
                lines += check_output(doc, ostart + 1, args, obody, runner, fails)
        figs += check_tables(doc, text, runner, fails)
    for f in fails:
        print("FAIL " + f, file=sys.stderr)
    print(f"check-doc-figures: {lines} quoted output lines and {figs} table figures checked "
          f"against {len(runner.cache)} commands, {len(fails)} differ")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
