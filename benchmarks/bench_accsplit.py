"""Time ``doit accsplit`` on the committed runs against its goal (under 2 s).

Runs the real task (``python -m doit accsplit`` with a fresh doit database in a temporary
directory, so the task is never skipped as up to date) a few times and prints the wall time of
each, side by side with the goal, and the in-process time of the analysis alone (loading the
runs with their event times, the seven sections, canonical JSON).

    python benchmarks/bench_accsplit.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 2.0


def doit_once(db: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "doit", "--db-file", str(db), "accsplit"], cwd=ROOT,
                   check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
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
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):
            walls.append(doit_once(Path(tmp) / f"db{i}"))  # fresh database: never up to date
    print(f"{'measure':44s} {'median s':>9s} {'goal s':>7s}")
    print(f"{'analysis in process (steady state)':44s} {statistics.median(inproc):9.2f} "
          f"{'':>7s}")
    print(f"{'doit accsplit (process start to exit)':44s} {statistics.median(walls):9.2f} "
          f"{GOAL_S:7.1f}")
    ok = statistics.median(walls) < GOAL_S
    print("within goal" if ok else "OVER GOAL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
