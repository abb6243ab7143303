"""Benchmark of a clean build from the raw runs, here and at another revision, in turns.

    python benchmarks/bench_clean.py [--baseline REV] [--repeats 3] [--quick]

A clean build is what a fresh clone does: no doit database, no analysis cache, then ``doit``
(analysis of every study from the committed runs, tables, figures, vars, the three papers, the
claims report, the manifest). Each side runs in a private copy of its tree, staged as
``bench_noop`` stages it (this working tree as it is on disk; ``git archive REV`` for the
baseline), with that copy
first on ``PYTHONPATH`` and this checkout's environment, so only the code differs. The sides
take turns ``--repeats`` times (the machine's drift reaches both alike); each build's wall time
and peak resident memory (the largest single process of the build's tree, the workers
included, from ``wait4``) are printed, then the medians and the ratio. The two sides'
``MANIFEST.sha256`` are compared too (equal when the change is a refactor).

Goal (issue 32): clean build < 8 s wall on 2 cores, peak < 400 MiB. Measure alone: any other
load on the machine moves both sides' figures. ``--quick``: one build of this tree, its
analysis tasks only (checks that the benchmark works, in seconds).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_noop import stage_revision, stage_worktree  # the same two copies as the no-op's

ROOT = Path(__file__).resolve().parents[1]


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env.pop("VIRTUAL_ENV", None)
    return env


def clean_build(tree: Path, tasks: list[str]) -> tuple[float, float]:
    """One clean build in ``tree``: (wall s, peak RSS MiB)."""
    for name in (".doit.db", ".doit.db.db", ".doit.db.dat", ".doit.db.dir", ".doit.db.bak"):
        (tree / name).unlink(missing_ok=True)
    shutil.rmtree(tree / ".cache", ignore_errors=True)
    shutil.rmtree(tree / "manuscript" / "build", ignore_errors=True)
    shutil.rmtree(tree / "experiments" / "analysis", ignore_errors=True)
    # wait4 gives the build's own usage: its peak RSS is the largest process of its tree (the
    # workers included, as GNU time's %M), without needing GNU time on the machine
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "doit", *tasks], cwd=tree, env=_env(tree),
                                stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            log.seek(0)
            said = log.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"bench_clean: doit failed in {tree}:\n{said}")
    return wall, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", metavar="REV", help="git revision to compare with, in turns")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one build of the analyses here")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-clean-"))
    try:
        here = tmp / "here"
        stage_worktree(here)
        sides = {"here": here}
        if args.baseline and not args.quick:
            base = tmp / "base"
            stage_revision(base, args.baseline)
            sides = {f"at {args.baseline}": base, "here": here}
        tasks = ["analysis", "core"] if args.quick else []
        got: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
        for i in range(1 if args.quick else args.repeats):
            for name, tree in sides.items():
                wall, mib = clean_build(tree, tasks)
                got[name].append((wall, mib))
                print(f"turn {i + 1}: {name:>14}: {wall:6.2f} s wall, peak {mib:5.0f} MiB",
                      flush=True)
        print()
        for name, xs in got.items():
            print(f"{name:>14}: median {statistics.median(w for w, _ in xs):6.2f} s wall, "
                  f"peak {max(m for _, m in xs):5.0f} MiB (goal: < 8 s, < 400 MiB)")
        if len(sides) == 2:
            (a, xa), (_, xb) = got.items()
            ratio = statistics.median(w for w, _ in xa) / statistics.median(w for w, _ in xb)
            print(f"wall ratio {a} / here: {ratio:.2f}x")
            manifests = [(t / "manuscript" / "build" / "MANIFEST.sha256") for t in sides.values()]
            same = [_outputs(m) for m in manifests]
            print("outputs (MANIFEST.sha256, build/ files): "
                  + ("identical" if same[0] == same[1] else
                     f"differ in {len(set(same[0]) ^ set(same[1]))} lines"))
        if args.quick:
            print("quick: the analyses of one clean build (a check that it works, not a figure)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _outputs(manifest: Path) -> list[str]:
    """The manifest's lines for outputs (inputs such as the templates may differ by design)."""
    if not manifest.is_file():
        return []
    return [line for line in manifest.read_text(encoding="utf-8").splitlines()
            if "manuscript/build/" in line]


if __name__ == "__main__":
    raise SystemExit(main())
