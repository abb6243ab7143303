"""Benchmark of the analysis stage on the synthetic corpus (not a timed test).

    nice -n 19 python benchmarks/bench_analysis.py [--scales 1 4 16] [--repeats 3] [--quick]

``--quick``: a 0.05x corpus, one repeat, no loop baselines (checks that the benchmark works).
``--baseline REV``: instead, the whole analysis at each scale here and at git revision REV, in
separate processes taking turns, ``--repeats`` times each: the CPU per record of both and their
ratio, side by side (the machine's drift reaches both alike).

Prints:
1. the whole analysis (``build_summary``: load, pair, statistics, rounding) on the 1x corpus,
   after one untimed warm-up call; wall and CPU time, best of ``--repeats``;
2. the per-position bootstrap on the same data, vectorized (what the analysis does: one draw per
   run and group, all positions at once) side by side with a plain loop over resamples (per run,
   group and position, ``rng.choice`` once per resample), and their ratio; also a loop over
   resamples that resamples all positions at once per iteration, the fairest loop; and the
   floor per record that the committed bytes fix (issue 32): the bootstrap's random draws (its
   stream), its counts and sums, and the typed decode of the records;
3. the whole analysis at each scale, with time per record (linear growth keeps it flat).

Goals (issue 3): whole analysis < 2 s on 2 cores; vectorized bootstrap >= 20x the loop;
linear growth. On a shared machine CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from artifact import records, stats  # noqa: E402
from artifact.analysis import build_summary, load_runs  # noqa: E402
from artifact.analysis.logs import pair  # noqa: E402
from artifact.analysis.params import BOOTSTRAP  # noqa: E402
from artifact.analysis.positions import matrix  # noqa: E402
from artifact.analysis.positions import rng_for as _rng_for  # noqa: E402
from tests.corpus import write_corpus  # noqa: E402

N_RESAMPLES, CONFIDENCE = BOOTSTRAP.resamples, BOOTSTRAP.confidence


def rng_for(run_id: str, group: str) -> np.random.Generator:
    return _rng_for(run_id, group, seed=BOOTSTRAP.seed)


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """Best wall and CPU seconds of ``repeats`` calls."""
    from artifact.analysis import runcache

    def cpu() -> float:  # the pool's workers too, when it reduces in one (issue 32)
        return time.process_time() + sum(runcache.POOL_CPU_S)

    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), cpu()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(cpu() - c)
    return min(walls), min(cpus)


def position_groups(root: Path) -> list[tuple[str, str, np.ndarray]]:
    """(run id, group, records x positions matrix): exactly what the analysis bootstraps."""
    runs, _ = load_runs(root)
    out = []
    for run in runs:
        if run.desc.family not in ("curves", "ksweep") or run.log is None:
            continue
        p = pair(run.records, run.log, where=run.desc.run_id)
        rows = [
            (r.domain, e.acc_per_pos)
            for r, e, bad in zip(run.records, p.entry_of, run.spurious, strict=True)
            if not bad and e is not None and e.acc_per_pos
        ]
        m = matrix([v for _, v in rows])
        doms = np.array([d for d, _ in rows])
        out.append((run.desc.run_id, "all", m))
        out += [(run.desc.run_id, d, m[doms == d]) for d in sorted(set(doms.tolist()))]
    return out


def vectorized(groups: list[tuple[str, str, np.ndarray]]) -> None:
    for rid, g, m in groups:
        stats.bootstrap_mean_ci(m, rng=rng_for(rid, g), n_resamples=N_RESAMPLES)


def loop_per_position(groups: list[tuple[str, str, np.ndarray]]) -> None:
    """The plain version: for every run, group and position, one resample per iteration."""
    lo_q, hi_q = 100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2
    for rid, g, m in groups:
        rng = rng_for(rid, g)
        for j in range(m.shape[1]):
            col = m[:, j][~np.isnan(m[:, j])]
            means = []
            for _ in range(N_RESAMPLES):
                means.append(rng.choice(col, size=col.size, replace=True).mean())
            np.percentile(means, [lo_q, hi_q])


def loop_joint(groups: list[tuple[str, str, np.ndarray]]) -> None:
    """A tighter loop: one iteration per resample, all positions of a group at once."""
    for rid, g, m in groups:
        rng = rng_for(rid, g)
        n = m.shape[0]
        means = np.empty((N_RESAMPLES, m.shape[1]))
        for b in range(N_RESAMPLES):
            means[b] = m[rng.integers(0, n, n)].mean(axis=0)
        np.quantile(means, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2], axis=0)


def draws(groups: list[tuple[str, str, np.ndarray]]) -> None:
    """Only the random draws of the bootstrap: the analysis's own stream (same generator, same
    call, same dtype), which fixes its bytes; no counting, no sums."""
    for rid, g, m in groups:
        stats.resample_draws(rng_for(rid, g), m.shape[0], N_RESAMPLES)


def decode_all(root: Path) -> None:
    """Only the typed decode of every record (the analysis's msgspec decoder, no validation)."""
    decode = records._RESULT.decoder.decode
    for p in sorted(root.glob("*/results.jsonl")):
        with p.open("rb") as f:
            for line in f:
                decode(line)


def floor(groups: list[tuple[str, str, np.ndarray]], root: Path, n_rec: int,
          repeats: int) -> None:
    """What the committed bytes fix, per record, against the goal of 15 us (issue 32): the
    bootstrap's draws (another stream: other intervals), its counts and sums (the same sums in
    einsum's order: the same doubles), and the typed decode (the parsing floor)."""
    _, boot_cpu = timed(lambda: vectorized(groups), repeats)
    _, d_cpu = timed(lambda: draws(groups), repeats)
    _, j_cpu = timed(lambda: decode_all(root), repeats)
    us = [x / n_rec * 1e6 for x in (d_cpu, boot_cpu - d_cpu, j_cpu)]
    print(f"    floor per record: draws {us[0]:.1f} + counts and sums {us[1]:.1f} + typed "
          f"decode {us[2]:.1f} = {sum(us):.1f} us, before any validation, pairing or "
          "statistics (goal for the whole analysis: <= 15)")


_CHILD = '''
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from artifact.analysis import build_summary, runcache
def cpu():  # this process, and the pool's workers where the tree has one (issue 32)
    return time.process_time() + sum(getattr(runcache, "POOL_CPU_S", []))
root = Path(sys.argv[2])
build_summary(root)
t = cpu()
build_summary(root)
print(cpu() - t)
'''


def _one(tree: Path, corpus: Path) -> float:
    """CPU seconds of one warm ``build_summary`` of ``corpus`` with the package of ``tree``."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(tree), str(corpus)], check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def side_by_side(rev: str, roots: dict[float, Path], repeats: int, tmp: Path) -> None:
    """The whole analysis with this tree's package and with ``rev``'s, taking turns."""
    base = tmp / "baseline"
    base.mkdir()
    archive = tmp / "baseline.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "archive", "--format=tar", rev, "artifact"], cwd=ROOT, check=True,
                       stdout=f)
    with tarfile.open(archive) as t:
        t.extractall(base, filter="data")
    print(f"\nwhole analysis, CPU us per record, median of {repeats} warm calls in turns: "
          f"now against {rev}")
    print(f"  {'scale':>6s} {'records':>8s} {'now':>8s} {rev[:12]:>12s} {'now/base':>9s}")
    for scale, root in roots.items():
        n_rec = sum(1 for p in root.glob("*/results.jsonl") for _ in p.open())
        now, old = [], []
        for _ in range(repeats):
            now.append(_one(ROOT, root))
            old.append(_one(base, root))
        a, b = statistics.median(now) / n_rec * 1e6, statistics.median(old) / n_rec * 1e6
        print(f"  {scale:5g}x {n_rec:8d} {a:8.1f} {b:12.1f} {a / b:9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scales", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", default="",
                        help="git revision: the whole analysis here and there, side by side")
    parser.add_argument("--quick", action="store_true",
                        help="a 0.05x corpus, one repeat, no loops: checks that it works")
    args = parser.parse_args()
    if args.quick:
        args.scales, args.repeats = [0.05], 1
    with tempfile.TemporaryDirectory(prefix="bench-analysis-") as tmp:
        roots: dict[float, Path] = {}
        for scale in args.scales:
            root = Path(tmp) / f"x{scale:g}"
            w = time.perf_counter()
            write_corpus(root, scale=scale)
            n_rec = sum(1 for p in root.glob("*/results.jsonl") for _ in p.open())
            mib = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20
            print(f"corpus {scale:g}x: {len(list(root.iterdir()))} runs, {n_rec} records, "
                  f"{mib:.0f} MiB (written in {time.perf_counter() - w:.1f} s)")
            roots[scale] = root
        if args.baseline:
            side_by_side(args.baseline, roots, args.repeats, Path(tmp))
            return
        base = roots[args.scales[0]]

        build_summary(base)  # warm-up: imports, caches, first-touch allocations
        wall, cpu = timed(lambda: build_summary(base), args.repeats)
        print(f"\nwhole analysis, {args.scales[0]:g}x: {wall:.3f} s wall, {cpu:.3f} s CPU "
              f"(best of {args.repeats}; goal < 2 s)")

        groups = position_groups(base)
        n_cols = sum(m.shape[1] for _, _, m in groups)
        n_rows = sum(m.shape[0] for _, _, m in groups)
        print(f"\nbootstrap: {len(groups)} (run, group) matrices, {n_cols} (run, group, position)"
              f" columns, {n_rows} rows, {N_RESAMPLES} resamples")
        vectorized(groups)
        v_wall, v_cpu = timed(lambda: vectorized(groups), args.repeats)
        slice_ = groups[:1] if args.quick else groups  # quick: that the loops still run
        l_wall, l_cpu = timed(lambda: loop_per_position(slice_), 1)
        j_wall, j_cpu = timed(lambda: loop_joint(slice_), 1)
        if args.quick:
            v_wall, v_cpu = timed(lambda: vectorized(slice_), 1)
        print(f"  vectorized (one draw per group):     {v_wall:8.3f} s wall {v_cpu:8.3f} s CPU")
        n_base = sum(1 for p in base.glob("*/results.jsonl") for _ in p.open())
        print(f"    = {v_cpu / n_base * 1e6:.1f} us CPU per record of the corpus: the bootstrap as "
              "the analysis draws it (other draws: other bytes; issue 32)")
        floor(slice_, base, n_base, 1 if args.quick else args.repeats)
        print(f"  loop per resample, per position:     {l_wall:8.3f} s wall {l_cpu:8.3f} s CPU"
              f"   ratio {l_wall / v_wall:6.1f}x wall {l_cpu / v_cpu:6.1f}x CPU (goal >= 20x)")
        print(f"  loop per resample, positions joint:  {j_wall:8.3f} s wall {j_cpu:8.3f} s CPU"
              f"   ratio {j_wall / v_wall:6.1f}x wall {j_cpu / v_cpu:6.1f}x CPU")

        print("\nscaling (whole analysis):")
        first: float | None = None
        for scale, root in roots.items():
            n_rec = sum(1 for p in root.glob("*/results.jsonl") for _ in p.open())
            reps = args.repeats if scale <= 4 else 1
            wall, cpu = timed(functools.partial(build_summary, root), reps)
            per = cpu / n_rec * 1e6
            first = first or per
            print(f"  {scale:4g}x {n_rec:8d} records  {wall:8.3f} s wall {cpu:8.3f} s CPU  "
                  f"{per:6.1f} us CPU/record  ({per / first:.2f} of 1x per record)")


if __name__ == "__main__":
    main()
