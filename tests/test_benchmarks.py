"""Every benchmark still works: each ``benchmarks/bench_*.py --quick`` runs to the end.

Quick modes check that a benchmark runs (its staging, its inputs, the code it times), not its
timings: a benchmark that nothing runs rots unseen (``bench_build`` once failed for weeks when the
acceptance-split tables arrived). A new benchmark is picked up here and must have a quick mode.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))


def test_there_are_benchmarks() -> None:
    assert len(BENCHMARKS) >= 8, [p.name for p in BENCHMARKS]


@pytest.mark.parametrize("bench", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_runs_in_its_quick_mode(bench: Path) -> None:
    proc = subprocess.run([sys.executable, str(bench), "--quick"], cwd=ROOT, text=True,
                          capture_output=True, timeout=300, check=False)
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
    assert proc.returncode == 0, f"{bench.name} --quick exited {proc.returncode}:\n{tail}"
    assert proc.stdout.strip(), f"{bench.name} --quick printed nothing"
