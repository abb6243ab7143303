"""Time ``doit accsplit`` on the committed runs against its goal (under 2 s).

Runs the real task (``python -m doit accsplit`` with a fresh doit database in a temporary
directory, so the task is never skipped as up to date) a few times and prints the wall time of
each, side by side with the goal, and the in-process time of the analysis alone (loading the
runs with their event times, the seven sections, canonical JSON). Wall time and CPU time
(user + system of the doit process) are printed apart: on a shared machine the wall time also
holds the time spent waiting for a core (the load average is printed), the CPU time does not.

    python benchmarks/bench_accsplit.py [--repeats N] [--quick]

``--quick``: one repeat, exit 0 whatever the time (checks that the benchmark works).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 2.0


def doit_once(db: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``doit accsplit`` with a fresh database."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "doit", "--db-file", str(db), "accsplit"], cwd=ROOT,
                   check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true",
                    help="one repeat, no verdict: checks that the benchmark works")
    args = ap.parse_args()
    if args.quick:
        args.repeats = 1
    sys.path.insert(0, str(ROOT))
    from artifact import paths
    from artifact.analysis import accsplit
    from artifact.analysis.task import accsplit_runs

    runs = accsplit_runs()
    n_req = sum(1 for r in runs for _ in (r / "results.jsonl").open())
    print(f"committed accsplit runs: {len(runs)}, requests: {n_req}")
    t0 = time.perf_counter()
    accsplit.build(paths.RUNS)  # warm-up: imports numpy/scipy, fills the page cache
    print(f"analysis in process (first call, imports included): {time.perf_counter() - t0:.2f} s")
    inproc = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        accsplit.build(paths.RUNS)
        inproc.append(time.perf_counter() - t0)
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):
            wall, cpu = doit_once(Path(tmp) / f"db{i}")  # fresh database: never up to date
            walls.append(wall)
            cpus.append(cpu)
    load = os.getloadavg()[0]
    print(f"load average (1 min): {load:.1f} on {os.cpu_count()} cores")
    print(f"{'measure':44s} {'median s':>9s} {'goal s':>7s}")
    print(f"{'analysis in process (steady state)':44s} {statistics.median(inproc):9.2f} "
          f"{'':>7s}")
    print(f"{'doit accsplit, CPU time (user + system)':44s} {statistics.median(cpus):9.2f} "
          f"{GOAL_S:7.1f}")
    print(f"{'doit accsplit, wall time':44s} {statistics.median(walls):9.2f} {GOAL_S:7.1f}")
    ok_cpu, ok_wall = statistics.median(cpus) < GOAL_S, statistics.median(walls) < GOAL_S
    print("within goal" if ok_wall else
          "CPU time within goal; wall time over it while the machine is loaded" if ok_cpu else
          "OVER GOAL")
    return 0 if ok_cpu or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
