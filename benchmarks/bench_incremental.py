"""Adding one run to many: the analysis with cached reduced runs against a full one, side by side.

    python benchmarks/bench_incremental.py [--runs N ...] [--scale S] [--full-only] [--copies]
                                            [--quick]
    python benchmarks/bench_incremental.py --runs 1000 --scale 37.1 --full-only --copies  # 10M

For each N, a synthetic, seed-shaped corpus of N runs (the seed study's 69 runs, cut to N or
extended with further curves runs, ``--scale`` x 270 records each) is analysed, each
measurement in a fresh Python process (imports not timed; peak memory is the process's
maximum RSS):

- **full**: ``build_summary`` reading every run (no cache), as before issue 21, the runs
  reduced in a pool of one process per core where they are many (issue 32:
  :func:`artifact.analysis.runcache.loader`); its CPU time counts the pool's workers;
- **added run**: the cache holds the other N - 1 runs reduced (their statistics and
  per-position bootstrap: :mod:`artifact.analysis.reduced`), one new run is read and reduced:
  what ``doit`` costs after a campaign adds a run; split into loading (the cached reductions,
  found by their files' stat, and the new run read and reduced) and the pooling (everything
  after: speedups and break-even fits across runs, rounding, the contract check);
- **JSON floor**: only ``json.loads`` of every line of every ``results.jsonl``: what any
  analysis that parses the raw records with the stdlib must spend, in the same machine state;
  and the **msgspec floor**, the same lines parsed by msgspec (untyped), the parser the
  records are read with since issue 32.

It prints the ratios full / added and the full analysis per record against the JSON floor per
record, and what 10 million records would cost at the measured per-record rates (a projection,
said so), unless the largest corpus has 10 million records or more: then they were measured.
Each run is reduced as it is read, so the peak memory follows the runs' statistics, not their
records. ``--full-only`` measures the full analysis and the JSON floor only (no cache, no added
run): ``--runs 1000 --scale 37.1`` writes and analyses 10 million records (about 19 GB of files
under the system's temporary folder; ``TMPDIR`` moves it); ``--copies`` writes the further
curves runs as copies of one per drafter, at disk speed (on the 2-core VM of issue 32: 108 s
writing, 226 s the full analysis, 9 minutes in all with the two parsing floors).

Goals: one added run < 1 s at 1,000 runs (issue 21); a full analysis of 10M records < 120 s
wall on 2 cores, peak < 1 GiB (issue 32), or the measured ceiling and what bounds it.
``--quick`` checks the benchmark works (two small N, a tiny corpus), not its timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from artifact.analysis import runcache  # noqa: E402
from tests import corpus  # noqa: E402

# One measurement in its own process: prints a JSON line {wall, cpu, load, rss_mib}.
CHILD = r"""
import json, resource, sys, time
from pathlib import Path
import msgspec
from artifact.analysis import runs as R, runcache, summary as S
from artifact.analysis.params import BOOTSTRAP
root, cache, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
cache = None if cache == "-" else Path(cache)
def cpu_s():  # this process, its finished children and the pool's workers (they report it)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + c.ru_utime + c.ru_stime + sum(runcache.POOL_CPU_S)
t0, c0 = time.perf_counter(), cpu_s()
if mode in ("json", "msgspec"):
    parse = json.loads if mode == "json" else msgspec.json.Decoder().decode
    n = 0
    for p in sorted(root.glob("*/results.jsonl")):
        with p.open("rb") as f:
            for line in f:
                parse(line); n += 1
    load = time.perf_counter() - t0
else:
    with runcache.remembered(cache, root) as memo:
        loaded, warnings = R.load_runs_with(root, runcache.loader(
            root, bootstrap=BOOTSTRAP, cache=cache, memo=memo))
    load = time.perf_counter() - t0
    kept = [r for r in loaded if r.desc.family not in S.OWN_ANALYSIS]
    S.summarize_text(kept, warnings)  # the summary and its text, as write_summary makes them
wall, cpu = time.perf_counter() - t0, cpu_s() - c0
# the largest process's peak (the pool's workers, if any, ran side by side)
rss = max(resource.getrusage(who).ru_maxrss for who in
          (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024
print(json.dumps({"wall": wall, "cpu": cpu, "load": load, "rss_mib": rss}))
"""


def measure(root: Path, cache: Path | None, mode: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), str(cache or "-"), mode],
                         check=True, capture_output=True, text=True, env=env, cwd=ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def specs(n: int) -> list[dict[str, object]]:
    """N run specs: the seed study's, cut to N, or extended with curves runs (distinct ids)."""
    base = corpus.study_specs()
    if n <= len(base):
        return base[:n]
    drafters = ("ngram-mod", "ngram-simple", "ngram-map-k", "ngram-map-k4v", "draft-simple")
    extra = [corpus.spec(f"curves-lab-{i:04d}", family="curves", drafter=drafters[i % 5], k=8)
             for i in range(n - len(base))]
    return base + extra


def write(root: Path, n: int, scale: float, *, copies: bool = False) -> int:
    """Write the corpus; returns its number of records. With ``copies``, each further curves
    run of a drafter is a copy of the first one's files under its own id (written at disk
    speed instead of simulated; the analysis still reads and reduces every copy in full)."""
    root.mkdir(parents=True)
    first: dict[str, tuple[Path, int]] = {}  # drafter -> the first further run, its records
    n_rec = 0
    for i, sp in enumerate(specs(n)):
        lab = copies and str(sp["run_id"]).startswith("curves-lab-")
        if lab and sp["drafter"] in first:
            template, count = first[str(sp["drafter"])]
            copy_run(template, root / str(sp["run_id"]))
        else:
            run = corpus.write_study_run(root, sp, scale=scale, seed=i)
            count = sum(1 for _ in (run / "results.jsonl").open("rb"))
            if lab:
                first[str(sp["drafter"])] = (run, count)
        n_rec += count
    return n_rec


def copy_run(template: Path, run: Path) -> None:
    """``template``'s files under the run id ``run.name`` (config.json says the new id)."""
    run.mkdir()
    for f in template.iterdir():
        if f.name == "config.json":
            config = json.loads(f.read_text(encoding="utf-8"))
            config["run_id"] = config["spec"]["run_id"] = run.name
            (run / f.name).write_text(json.dumps(config, sort_keys=True, indent=2) + "\n",
                                      encoding="utf-8")
        else:
            shutil.copyfile(f, run / f.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="records per run, as a multiple of the seed study's 270")
    parser.add_argument("--full-only", action="store_true",
                        help="only the full analysis and the JSON floor (e.g. at 10M records)")
    parser.add_argument("--copies", action="store_true",
                        help="write each further curves run as a copy of the first of its "
                             "drafter (disk speed; every copy still analysed in full)")
    parser.add_argument("--quick", action="store_true",
                        help="N = 10 and 75 at scale 0.05, with copies: checks that it works")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.scale, args.copies = [10, 75], 0.05, True
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-incremental-") as tmp:
        for n in args.runs:
            root, cache = Path(tmp) / f"n{n}", Path(tmp) / f"cache{n}"
            w = time.perf_counter()
            n_rec = write(root, n, args.scale, copies=args.copies)
            time.sleep(runcache.SETTLE_S)  # files written just now are hashed, not stat'ed
            last = sorted(p for p in root.iterdir())[-1]
            print(f"{n} runs, {n_rec} records: written in {time.perf_counter() - w:.1f} s",
                  flush=True)
            full = measure(root, None, "summary")
            floor = measure(root, None, "json")
            floor_m = measure(root, None, "msgspec")
            added = None
            if not args.full_only:
                aside = last.rename(root / f"_{last.name}")  # the cache fills with the N - 1
                measure(root, cache, "summary")
                aside.rename(last)
                added = measure(root, cache, "summary")
            rows.append((n, n_rec, full, added, floor, floor_m))
            print(f"  full {full['wall']:.2f} s (load {full['load']:.2f}, {full['rss_mib']:.0f} "
                  "MiB) | " + (f"added run {added['wall']:.2f} s (load {added['load']:.2f}, "
                               f"pooling {added['wall'] - added['load']:.2f}, "
                               f"{added['rss_mib']:.0f} MiB) | " if added else "")
                  + f"JSON floor {floor['wall']:.2f} s, msgspec floor {floor_m['wall']:.2f} s",
                  flush=True)
            shutil.rmtree(root, ignore_errors=True)  # a 10M corpus takes 19 GB
            shutil.rmtree(cache, ignore_errors=True)
    print("\n   runs    records   full s  added s  ratio   full us/rec  JSON us/rec  "
          "full/JSON  msgspec us/rec  peak MiB")
    for n, n_rec, full, added, floor, floor_m in rows:
        add = (f"{added['wall']:8.2f} {full['wall'] / added['wall']:6.1f}x" if added
               else f"{'-':>8} {'-':>7}")
        print(f"  {n:5d} {n_rec:10d} {full['wall']:8.2f} {add} {1e6 * full['cpu'] / n_rec:12.1f} "
              f"{1e6 * floor['cpu'] / n_rec:12.1f} {full['cpu'] / floor['cpu']:9.1f}x "
              f"{1e6 * floor_m['cpu'] / n_rec:15.1f} {full['rss_mib']:9.0f}")
    n, n_rec, full, added, floor, floor_m = rows[-1]
    if n_rec >= 10_000_000:
        print(f"\n{n_rec / 1e6:.1f}M records, measured: full analysis {full['wall']:.0f} s wall, "
              f"{full['cpu']:.0f} s CPU, peak {full['rss_mib']:.0f} MiB; JSON parsing alone "
              f"{floor['wall']:.0f} s wall, {floor['cpu']:.0f} s CPU (on 2 cores at best "
              f"{floor['cpu'] / 2:.0f} s); msgspec parsing alone {floor_m['wall']:.0f} s wall, "
              f"{floor_m['cpu']:.0f} s CPU")
        return
    per_full, per_json = full["cpu"] / n_rec, floor["cpu"] / n_rec
    print(f"\n10M records, projected from the largest corpus's per-record CPU (not measured): "
          f"full analysis {per_full * 1e7:.0f} s of CPU, JSON parsing alone "
          f"{per_json * 1e7:.0f} s (on 2 cores at best {per_json * 1e7 / 2:.0f} s), msgspec "
          f"parsing alone {floor_m['cpu'] / n_rec * 1e7:.0f} s: what any analysis of the "
          "raw records costs at least; only a run already in the cache avoids it. Memory: "
          "each run is reduced as it is read (peak above).")
    print("goals: one added run < 1 s at 1,000 runs; 10M records < 120 s wall on 2 cores "
          "(issue 32)")


if __name__ == "__main__":
    main()
