"""Benchmark of reading records: the parsing floor on the committed core records (not a test).

    nice -n 19 python benchmarks/bench_parse.py [--repeats 5] [--baseline REV] [--quick]

The corpus is every line of ``experiments/runs-core/*/results.jsonl`` (issue 29's runs), held
in memory as bytes, so the parsers are timed without the disk. Each figure is CPU time per
record (``time.process_time``), the best of ``--repeats`` passes after one untimed warm-up pass.

Prints:
1. the parsing floor: stdlib ``json.loads``, msgspec untyped (``msgspec.json.decode``), the
   typed decoder alone (msgspec straight into :class:`artifact.records.Result`), and
   ``orjson.loads`` only where it is installed (it is no dependency of the artifact);
2. the reader: one line at a time (the typed decoder and the rules beyond types,
   ``records._line_record``), and whole runs from their files (``records.read_results``, events
   kept and dropped);
3. the whole core analysis (``artifact.analysis.core.build``: read, screen, statistics) per
   record, after one untimed warm-up call.

``--baseline REV``: also the run reader and the whole core analysis with the package at git
revision REV and with this tree's, in separate processes taking turns, ``--repeats`` times
each: their CPU per record (median) and the ratio, side by side (drift reaches both alike).
``--quick``: the parsers on the first 300 lines, one repeat, no baseline: checks that it works.

Goal (issue 32): the whole analysis at most 15 us of CPU per record. On a shared machine the
figures move with the load: measure alone (``nproc`` idle), or read the ratios only.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from artifact import paths, records  # noqa: E402
from artifact.analysis import core  # noqa: E402


def corpus(root: Path) -> list[bytes]:
    """Every non-blank line of the runs' ``results.jsonl`` under ``root``, in run order."""
    return [raw for run in records.run_folders(root)
            for _, raw in records._lines(run / records.RESULTS)]


def per_record(fn: Callable[[], object], n: int, repeats: int) -> float:
    """Best CPU microseconds per record of ``repeats`` calls of ``fn`` (over ``n`` records),
    after one untimed call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best / n * 1e6


def each(parse: Callable[[bytes], object], lines: list[bytes]) -> Callable[[], object]:
    """A pass of ``parse`` over ``lines`` (a list comprehension: no per-call overhead beyond
    the parser's own)."""
    return lambda: [parse(raw) for raw in lines]


def floors(lines: list[bytes]) -> list[tuple[str, Callable[[bytes], object]]]:
    """The parsers of section 1, by name; orjson only where it imports."""
    untyped = msgspec.json.Decoder()
    typed = msgspec.json.Decoder(records.Result)
    out: list[tuple[str, Callable[[bytes], object]]] = [
        ("stdlib json.loads", lambda raw: json.loads(raw.decode("utf-8"))),
        ("msgspec, untyped", untyped.decode),
        ("msgspec, typed (Result)", typed.decode),
    ]
    try:
        orjson: Any = importlib.import_module("orjson")
    except ImportError:
        print("  (orjson not installed: left out)")
    else:
        out.append(("orjson.loads", orjson.loads))
    return out


_CHILD = '''
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from artifact import records
from artifact.analysis import core
root, predictions = Path(sys.argv[2]), Path(sys.argv[3])
runs = records.run_folders(root)
def read():
    for run in runs:
        records.read_results(run)
for fn in (read, lambda: core.build(root, predictions)):
    fn()
    t = time.process_time()
    fn()
    print(time.process_time() - t)
'''


def _child(tree: Path, root: Path) -> tuple[float, float]:
    """CPU seconds of reading every run and of the whole core analysis, warm, with the
    package of ``tree``."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(tree), str(root),
                          str(paths.CORE_PREDICTIONS)],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[-2]), float(out[-1])


def side_by_side(rev: str, root: Path, n: int, repeats: int, tmp: Path) -> None:
    """The run reader and the whole core analysis here and at ``rev``, taking turns."""
    base = tmp / "baseline"
    base.mkdir()
    archive = tmp / "baseline.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "archive", "--format=tar", rev, "artifact"], cwd=ROOT, check=True,
                       stdout=f)
    with tarfile.open(archive) as t:
        t.extractall(base, filter="data")
    now: list[tuple[float, float]] = []
    old: list[tuple[float, float]] = []
    for _ in range(repeats):
        now.append(_child(ROOT, root))
        old.append(_child(base, root))
    print(f"\nside by side, CPU us per record, median of {repeats} warm calls in turns: "
          f"now against {rev}")
    print(f"  {'':28s} {'now':>8s} {rev[:12]:>12s} {'now/base':>9s}")
    for i, name in enumerate(("read_results, every run", "core analysis (core.build)")):
        a = statistics.median(x[i] for x in now) / n * 1e6
        b = statistics.median(x[i] for x in old) / n * 1e6
        print(f"  {name:28s} {a:8.2f} {b:12.2f} {a / b:9.2f}")


def table(rows: Iterable[tuple[str, float]], floor: float | None = None) -> None:
    for name, us in rows:
        ratio = f"   {us / floor:5.2f}x json.loads" if floor else ""
        print(f"  {name:34s} {us:8.2f} us/record{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", default="",
                        help="git revision: the reader and the core analysis there, side by side")
    parser.add_argument("--quick", action="store_true",
                        help="parsers on 300 lines, one repeat, no baseline: checks it works")
    args = parser.parse_args()
    root = paths.CORE_RUNS
    lines = corpus(root)
    n_all = len(lines)  # what the run reader and the analysis read
    if args.quick:
        lines, args.repeats, args.baseline = lines[:300], 1, ""
    n = len(lines)
    mib = sum(map(len, lines)) / 2**20
    print(f"corpus: {n} records of {root.relative_to(ROOT)} ({mib:.1f} MiB) in memory, "
          f"{n_all} in the runs; best of {args.repeats}, CPU time")

    print("\n1. parsing floor")
    results = [(name, per_record(each(fn, lines), n, args.repeats))
               for name, fn in floors(lines)]
    table(results, results[0][1])

    print("\n2. the reader")
    runs = records.run_folders(root)

    def read(keep: bool) -> Callable[[], object]:
        return lambda: [records.read_results(r, keep_events=keep) for r in runs]

    table([("per line (decoder + rules)",
            per_record(each(lambda raw: records._line_record(raw, records._RESULT), lines),
                       n, args.repeats)),
           ("read_results, events kept", per_record(read(True), n_all, args.repeats)),
           ("read_results, events dropped", per_record(read(False), n_all, args.repeats))],
          results[0][1])

    print("\n3. whole core analysis")
    us = per_record(lambda: core.build(root), n_all, args.repeats)
    print(f"  core.build                         {us:8.2f} us/record (goal <= 15)")
    if args.baseline:
        with tempfile.TemporaryDirectory(prefix="bench-parse-") as tmp:
            side_by_side(args.baseline, root, n_all, args.repeats, Path(tmp))


if __name__ == "__main__":
    main()
