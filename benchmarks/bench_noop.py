"""Time a no-op ``doit`` (everything up to date), now against a baseline revision, side by side.

    python benchmarks/bench_noop.py [--baseline REV] [--tasks T ...] [--runs N] [--quick]

Stages two copies of the repository in a temporary directory: ``now`` (the working tree: tracked
files and untracked ones git does not ignore, as they are on disk) and ``baseline`` (``git
archive REV``; none with ``--baseline ''``), and a third holding only a one-task ``dodo.py``:
``doit``'s own floor (its imports and its database). In each copy ``doit TASKS`` builds once
(not timed) and once more to warm the caches (bytecode, the import-graph cache), then the copies
take turns, ``--runs`` times each, so that a drift of the machine's speed reaches all three
alike. Printed: the median and range of wall and CPU seconds (the child's own accounting), and
each median's ratio to the floor and to the baseline. Bytecode is written as a user's Python
writes it (PYTHONDONTWRITEBYTECODE is dropped).

Goal (issue 21): a no-op ``doit`` <= 0.25 s on a quiet 2-core machine, near the floor however
many tasks the studies add. ``--quick`` checks the benchmark works (the analysis task only, one
run, no baseline), not the timing.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TASKS = ["analysis", "accsplit", "workload", "costmodel", "tables", "figures"]
FLOOR_DODO = 'def task_floor():\n    return {"actions": None, "uptodate": [True]}\n'


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# Outside a git checkout (a release tarball), the tree is copied without these: the environment,
# caches and build outputs a checkout's .gitignore leaves out.
_NOT_STAGED = {".git", ".venv", ".cache", "__pycache__", ".mypy_cache", ".ruff_cache",
               ".pytest_cache", "build"}


def in_git_checkout() -> bool:
    try:
        return subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=ROOT,
                              capture_output=True, check=False).returncode == 0
    except OSError:  # no git on PATH
        return False


def stage_worktree(dest: Path) -> None:
    """The working tree as it is on disk: tracked and not-ignored untracked files (outside a git
    checkout: every file but those of :data:`_NOT_STAGED` folders)."""
    if in_git_checkout():
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], cwd=ROOT, check=True,
                             capture_output=True).stdout.decode()
        rels = [Path(r) for r in filter(None, out.split("\0"))]
    else:
        rels = [p.relative_to(ROOT) for p in sorted(ROOT.rglob("*")) if p.is_file()
                and not _NOT_STAGED.intersection(p.relative_to(ROOT).parts)
                and not p.name.startswith(".doit.db")]
    for rel in rels:
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def stage_revision(dest: Path, rev: str) -> None:
    """The tree of a committed revision."""
    dest.mkdir(parents=True)
    archive = dest.parent / f"{dest.name}.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, check=True, stdout=f)
    with tarfile.open(archive) as t:
        t.extractall(dest, filter="data")
    archive.unlink()


def doit(cwd: Path, tasks: list[str]) -> tuple[float, float]:
    """Run ``doit TASKS`` in ``cwd``: (wall s, CPU s of the child); a failure is fatal."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "doit", *tasks], cwd=cwd, env=_env(),
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise SystemExit(f"bench_noop: doit {' '.join(tasks)} failed in {cwd.name}: "
                         + " | ".join(tail))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _row(xs: list[float]) -> str:
    return f"{statistics.median(xs):7.3f} [{min(xs):.3f}-{max(xs):.3f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--baseline", default="HEAD",
                    help="git revision to compare with ('' for none; default HEAD)")
    ap.add_argument("--tasks", nargs="+", default=DEFAULT_TASKS,
                    help=f"tasks of the no-op (default: {' '.join(DEFAULT_TASKS)})")
    ap.add_argument("--runs", type=int, default=7, help="timed no-ops of each tree")
    ap.add_argument("--quick", action="store_true",
                    help="check the benchmark works: analysis only, one run, no baseline")
    args = ap.parse_args()
    if args.quick:
        args.tasks, args.runs, args.baseline = ["analysis"], 1, ""
    if args.baseline and not in_git_checkout():
        raise SystemExit(f"bench_noop: --baseline {args.baseline} needs a git checkout with git "
                         "on PATH (this tree is not one); --baseline '' compares with doit's "
                         "floor only")
    with tempfile.TemporaryDirectory(prefix="bench-noop-") as tmp:
        trees: dict[str, Path] = {"floor": Path(tmp) / "floor", "now": Path(tmp) / "now"}
        trees["floor"].mkdir()
        (trees["floor"] / "dodo.py").write_text(FLOOR_DODO, encoding="utf-8")
        stage_worktree(trees["now"])
        if args.baseline:
            trees["baseline"] = Path(tmp) / "baseline"
            stage_revision(trees["baseline"], args.baseline)
        for name, tree in trees.items():
            tasks = ["floor"] if name == "floor" else args.tasks
            w, _ = doit(tree, tasks)  # the build itself
            doit(tree, tasks)  # warm: bytecode, the import-graph cache
            print(f"{name}: built in {w:.1f} s ({tree.name})")
        walls: dict[str, list[float]] = {n: [] for n in trees}
        cpus: dict[str, list[float]] = {n: [] for n in trees}
        for _ in range(args.runs):
            for name, tree in trees.items():
                w, c = doit(tree, ["floor"] if name == "floor" else args.tasks)
                walls[name].append(w)
                cpus[name].append(c)
        print(f"\nno-op `doit {' '.join(args.tasks)}`, {args.runs} runs each, in turn; "
              f"median [min-max] s" + (f"; baseline = {args.baseline}" if args.baseline else ""))
        head = "  ".join(f"{n:>22}" for n in trees)
        print(f"{'':8}{head}   now/floor" + ("   now/baseline" if args.baseline else ""))
        for label, d in (("wall", walls), ("cpu", cpus)):
            med = {n: statistics.median(xs) for n, xs in d.items()}
            line = "  ".join(f"{_row(xs):>22}" for n, xs in d.items())
            line += f"   {med['now'] / med['floor']:9.2f}"
            if args.baseline:
                line += f"   {med['now'] / med['baseline']:12.2f}"
            print(f"{label:8}{line}")
        print("\ngoal: no-op <= 0.25 s wall on a quiet 2-core machine (issue 21)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
