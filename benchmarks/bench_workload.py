"""Time ``doit workload`` (or ``doit realism``) on the committed runs (goal: under 2 s).

Runs the task for real, as a person would, in a temporary copy of the repository (so the
checkout's doit database and ``workload.json`` are left alone): ``doit workload`` once from an
empty database (the analysis runs: read every run, bootstrap, write the file), then again (up to
date: nothing to do). Also times the analysis alone in this process, warm, as the median of a
few calls. Prints each next to the 2 s goal.

    python benchmarks/bench_workload.py [--study workload|realism|both] [--repeats N] [--quick]

``--study``: the first workload design (``doit workload``), workload realism take two
(``doit realism``), or both side by side in one run (default). ``--quick``: one in-process
call, exit 0 whatever the time (checks that the benchmark works).
"""

from __future__ import annotations

import argparse
import importlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 2.0


STUDIES = {"workload": ("runs-workload", "artifact.analysis.workload", "build_workload"),
           "realism": ("runs-realism", "artifact.analysis.realism", "build_realism")}


def stage(dest: Path) -> None:
    for d in ("artifact", "experiments/runs-workload", "experiments/runs-realism",
              "experiments/campaigns", "experiments/sessions"):
        if not (ROOT / d).exists():
            continue
        shutil.copytree(ROOT / d, dest / d, ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("dodo.py", "pyproject.toml", "experiments/session_sets.toml",
              "experiments/prompt_sets.toml", "experiments/claims.toml"):
        shutil.copy2(ROOT / f, dest / f)


def doit_task(root: Path, task: str) -> tuple[float, float]:
    """Wall and CPU seconds of one ``doit <task>`` (CPU: user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "doit", task], cwd=root, check=True,
                   capture_output=True, env={"PYTHONPATH": str(root), "PATH": ""})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench(study: str, repeats: int) -> tuple[bool, list[str]]:
    """One study's three timings as table lines, and whether its cold CPU time met the goal."""
    runs_dir, module, func = STUDIES[study]
    runs = ROOT / "experiments" / runs_dir
    if not any(runs.glob("*/results.jsonl")):
        return False, [f"no committed runs under experiments/{runs_dir}/"]
    n_records = sum(1 for p in runs.glob("*/results.jsonl") for _ in p.open("rb"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        stage(root)
        first = doit_task(root, study)
        noop = doit_task(root, study)
    sys.path.insert(0, str(ROOT))
    build = getattr(importlib.import_module(module), func)
    build(runs)  # warm: imports, file cache
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        build(runs)
        times.append(time.perf_counter() - t0)
    n_runs = len(list(runs.glob("*/results.jsonl")))
    return first[1] < GOAL_S, [
        f"{study}: {n_runs} runs, {n_records} turn records",
        f"  {'doit ' + study + ' (analysis runs, cold process)':44s} {first[0]:7.2f}s "
        f"{first[1]:7.2f}s {GOAL_S:6.1f}s",
        f"  {'doit ' + study + ' again (up to date)':44s} {noop[0]:7.2f}s {noop[1]:7.2f}s "
        f"{GOAL_S:6.1f}s",
        f"  {'analysis alone, in process (median)':44s} {statistics.median(times):7.2f}s "
        f"{'':>8s} {GOAL_S:6.1f}s"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", choices=[*STUDIES, "both"], default="both")
    ap.add_argument("--repeats", type=int, default=5, help="in-process analysis calls")
    ap.add_argument("--quick", action="store_true",
                    help="one call, no verdict: checks that the benchmark works")
    args = ap.parse_args()
    if args.quick:
        args.repeats = 1
    studies = list(STUDIES) if args.study == "both" else [args.study]
    print("(wall time depends on what else runs on the machine; CPU time does not)")
    print(f"  {'what':44s} {'wall':>8s} {'CPU':>8s} {'goal':>7s}")
    ok = True
    for study in studies:
        met, lines = bench(study, args.repeats)
        print("\n".join(lines))
        ok = ok and met
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
