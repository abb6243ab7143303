"""Submission overhead of the Slurm executor: submit -> running, against the run's own duration.

    python benchmarks/bench_slurm.py                 # the kick campaign through Slurm, measured
    python benchmarks/bench_slurm.py RUNS_DIR        # report on runs already measured via Slurm
    python benchmarks/bench_slurm.py --quick         # the report on a made-up ledger: it works

Without RUNS_DIR it runs the kick campaign (3 runs, one job each) through the Slurm executor into
a scratch folder, on the cluster that ``SLURM_CONF`` names (``bash scripts/slurm-cluster start``
then ``eval "$(bash scripts/slurm-cluster env)"`` for the test cluster on this host), then
reports every job from the runs' ledgers (``slurm.jsonl``):

- ``sbatch``: the submission call itself (submitit writes the script and pickle, runs sbatch);
- ``submit->running``: from the submission to the job's own first line on its node (scheduling,
  job launch, Python start and imports: everything Slurm adds before the run can start);
- ``run``: from that first line to the job's end (toolchain check, server start, warm-up,
  measuring; a requeued job's wait included); ``measured``: the runner's own measuring time
  (``metrics.json: measure_s``).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from artifact import records  # noqa: E402
from artifact.executors import ledger  # noqa: E402


def report(runs: Path) -> int:
    rows = []
    for run in sorted(p for p in runs.iterdir() if (p / ledger.LEDGER).is_file()):
        events = ledger.read(run)
        try:
            measured = float(records.read_json(run / records.METRICS).get("measure_s", 0.0))
        except records.RecordError:
            measured = float("nan")
        subs = {e["job_id"]: e for e in events if e.get("event") == "submitted"}
        starts: dict[str, list[dict[str, object]]] = {}
        for e in events:
            if e.get("event") == "started":
                starts.setdefault(e["job_id"], []).append(e)
        ends = {e["job_id"]: e for e in events if e.get("event") in ("finished", "failed")}
        for jid, sub in subs.items():
            if jid not in starts or jid not in ends:
                continue
            first = starts[jid][0]  # a requeued job starts again: its first start counts here
            overhead = float(first["unix_s"]) - sub["unix_s"]  # type: ignore[arg-type]
            run_s = ends[jid]["unix_s"] - float(first["unix_s"])  # type: ignore[arg-type]
            rows.append((run.name, jid, str(first.get("node")), sub.get("sbatch_s", 0.0),
                         overhead, run_s, measured, len(starts[jid]) - 1))
    if not rows:
        print(f"no run with a complete Slurm job under {runs}", file=sys.stderr)
        return 1
    print(f"{'run':24s} {'job':>5s} {'node':6s} {'sbatch':>8s} {'submit->running':>16s} "
          f"{'run':>8s} {'measured':>9s} {'overhead/run':>13s} {'requeued':>8s}")
    for name, jid, node, sb, ov, rs, ms, rq in rows:
        print(f"{name:24s} {jid:>5s} {node or '?':6s} {sb:7.3f}s {ov:15.2f}s {rs:7.1f}s "
              f"{ms:8.1f}s {ov / rs:12.1%} {rq:8d}")
    ovs = [r[4] for r in rows]
    runs_s = [r[5] for r in rows]
    print(f"\nsubmit->running: median {statistics.median(ovs):.2f} s, max {max(ovs):.2f} s "
          f"over {len(rows)} jobs; a run itself: median {statistics.median(runs_s):.1f} s "
          f"(overhead {statistics.median(ovs) / statistics.median(runs_s):.1%} of a run)")
    return 0


def quick() -> int:
    """The report on a made-up run with one requeued job: checks that the benchmark works
    without a cluster, a server or a model (the numbers are the ledger's, not a measurement)."""
    with tempfile.TemporaryDirectory(prefix="bench-slurm-") as tmp:
        run = Path(tmp) / "runs" / "kick-run"
        rows = [(ledger.submitted("7", 100.0, 0.05, "x.out"), 100.0),
                (ledger.started("7", "node1", 0, {}), 101.5),
                (ledger.event("checkpoint", "7", "node1"), 120.0),
                (ledger.started("7", "node2", 1, {}), 125.0),
                (ledger.finished("7", "node2", True), 160.0)]
        for row, unix_s in rows:
            ledger.append(run, {**row, "unix_s": unix_s})
        (run / records.METRICS).write_text('{"measure_s": 30.0}', encoding="utf-8")
        return report(run.parent)


def main() -> int:
    if sys.argv[1:] == ["--quick"]:
        return quick()
    if len(sys.argv) > 1:
        return report(Path(sys.argv[1]))
    with tempfile.TemporaryDirectory(prefix="bench-slurm-") as tmp:
        runs = Path(tmp) / "runs"
        proc = subprocess.run([sys.executable, "-m", "artifact.campaign",
                               str(ROOT / "experiments" / "campaigns" / "kick.toml"),
                               "--executor", "slurm", "--runs-dir", str(runs)], cwd=ROOT,
                              check=False)
        if proc.returncode != 0:
            return proc.returncode
        return report(runs)


if __name__ == "__main__":
    sys.exit(main())
