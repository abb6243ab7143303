"""List or run the runs of a campaign file (python -m artifact.campaign), on the executor the
campaign names (:mod:`artifact.executors`: local, or Slurm)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from artifact import files, paths, records
from artifact.campaign import contention
from artifact.campaign.interleave import groups
from artifact.campaign.quiet import Conditions
from artifact.campaign.runner import run_is_current, runs_root
from artifact.errors import SpecError, cli
from artifact.executor_spec import KINDS
from artifact.executors.local import LocalExecutor
from artifact.executors.slurm import SlurmCampaign, local_only, say_stderr, summary_lines
from artifact.log import stderr as log_stderr
from artifact.spec import Campaign, RunSpec, load_campaign


@cli
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m artifact.campaign", description=__doc__)
    ap.add_argument("campaign", type=Path, help="campaign file, e.g. experiments/campaigns/"
                    "cpu-study.toml")
    ap.add_argument("--run", action="append", default=[], metavar="ID",
                    help="run only this run (repeatable); default: every run not yet current")
    ap.add_argument("--window", action="append", default=[], metavar="W",
                    help="run only the runs of this measurement window (spec.window; "
                    "repeatable), e.g. w1")
    ap.add_argument("--runs-dir", type=Path, default=None,
                    help="where run directories go (default: experiments/runs, or "
                    "experiments/runs-workload for a campaign of workload runs)")
    ap.add_argument("--list", action="store_true", help="list the runs and whether each is "
                    "current (Slurm: each run's job state), then exit")
    ap.add_argument("--quiet", action="store_true", help="no progress line")
    ap.add_argument("--executor", choices=KINDS, default=None,
                    help="where runs execute (default: [executor] kind of the campaign or the "
                    "site file, else local)")
    ap.add_argument("--no-wait", action="store_true", help="local: fail in one line when "
                    "another measurement holds this host's lock (default: wait for it); Slurm: "
                    "submit and return; a later call shows progress and collects")
    ap.add_argument("--allow-contention", action="store_true",
                    help="measure even when the machine does not become quiet before the "
                    "gate's timeout (the run's ledger and metrics say so)")
    ap.add_argument("--quiet-threshold", type=float, default=None, metavar="CORES",
                    help="foreign CPU (cores) above which the machine is busy and a request "
                    f"contended (default {contention.DEFAULT_THRESHOLD_CORES:g})")
    ap.add_argument("--quiet-timeout", type=float, default=None, metavar="S",
                    help="how long the quiet gate waits for a quiet machine (default "
                    f"{contention.DEFAULT_GATE_TIMEOUT_S:g} s)")
    ap.add_argument("--remeasure-contended", type=int, default=None, metavar="N",
                    help="measure a contended request again, up to N times, keeping every "
                    "attempt (default 1; never for drafters with state across requests)")
    ap.add_argument("--sessions", type=int, default=None, metavar="N",
                    help="calibrate: measure only the first N sessions of each group of "
                    "per-side deployments (into a scratch --runs-dir) and print the whole "
                    "group's estimated time")
    args = ap.parse_args(argv)
    if args.sessions is not None and (args.sessions < 1 or args.runs_dir is None):
        raise SpecError("--sessions N: expected N >= 1 and a scratch --runs-dir (a calibration "
                        "measures part of each run; the committed runs stay whole)")
    if args.runs_dir is not None:
        files.folder(args.runs_dir, what="--runs-dir", error=SpecError)
    camp = load_campaign(args.campaign, executor_kind=args.executor)
    if args.runs_dir is None:
        args.runs_dir = runs_root(camp)
    windows = {r.window for r in camp.runs}
    for w in args.window:
        if w not in windows:
            raise SpecError(f"{args.campaign}: no run has window {w!r}")
    wanted = args.run or [r.run_id for r in camp.runs
                          if not args.window or r.window in args.window]
    specs = []
    for rid in wanted:
        try:
            specs.append(camp.run(rid))
        except KeyError:  # a run deployed per side: every side's run
            sides = [r for r in camp.runs if r.run_id.startswith(f"{rid}-")
                     and r.workload is not None and r.workload.play is not None]
            if not sides:
                raise SpecError(f"{args.campaign}: no run {rid!r}") from None
            specs += sides
    if camp.executor.kind == "slurm":
        return _slurm(camp, specs, args)
    if args.list:
        for spec in specs:
            current = run_is_current(spec, args.runs_dir)
            group = f" [{spec.interleave}]" if spec.interleave else ""
            print(f"{spec.run_id:32s} {spec.family:9s} {spec.drafter:13s} "
                  f"{'current' if current else 'to run'}{group}")
        return 0
    cond = Conditions.from_env(wait_for_lock=not args.no_wait,
                               allow_contention=args.allow_contention or None,
                               threshold_cores=args.quiet_threshold,
                               gate_timeout_s=args.quiet_timeout,
                               remeasure_contended=args.remeasure_contended)
    local = LocalExecutor(camp, args.runs_dir, cond=cond, show_progress=not args.quiet,
                          max_sessions=args.sessions)
    for unit in groups(specs):
        todo = [s for s in unit if args.run or not run_is_current(s, args.runs_dir)]
        if not args.quiet:
            for s in unit:
                if s not in todo:
                    print(f"{s.run_id}: current, skipped")
        if not todo:
            continue
        t0 = time.monotonic()
        ms = local.measure(todo, log_stderr("campaign"))
        if args.sessions is not None:
            print(calibration_line(todo, ms, time.monotonic() - t0, args.runs_dir))
        for rid, m in ms.items():
            busy = (m.contention or {}).get("n_contended")
            print(f"{rid}: {m.n_results}/{m.n_expected} requests, {m.n_errors} errors, "
                  f"{m.measure_s:.1f} s measured, complete={m.complete}"
                  + (f", {busy} contended" if busy else ""))
    return 0


def calibration_line(unit: list[RunSpec], ms: dict[str, Any], wall_s: float,
                     runs_dir: Path) -> str:
    """What a calibration measured and the whole group's time at its rate (the turns' own wall
    time; planning and server starts, paid once, are in ``wall_s``)."""
    done = sum(m.n_results for m in ms.values())
    busy = sum(m.measure_s for m in ms.values())
    total = 0
    for spec in unit:
        plan = records.read_plan(records.run_dir(runs_dir, spec.run_id))
        total += len(plan.turns) if plan is not None else 0
    if not done:
        return f"calibration: no turn measured in {wall_s:.0f} s"
    eta = busy / done * total
    return (f"calibration of group {unit[0].interleave} ({len(unit)} servers): {done} turns, "
            f"{busy / done:.2f} s per turn ({wall_s:.0f} s in all, planning and starts "
            f"included); the whole group: {total} turns, about {eta / 3600:.1f} h "
            f"({eta / 60:.0f} min) of turns")


def _slurm(camp: Campaign, specs: list[RunSpec], args: argparse.Namespace) -> int:
    """Submit the wanted runs that are not current (one job each), then watch them."""
    if not args.list:
        local_only(specs, str(args.campaign))
    runs_root = args.runs_dir
    if runs_root == paths.RUNS and camp.executor.slurm.runs_dir:
        runs_root = Path(camp.executor.slurm.runs_dir)
    sc = SlurmCampaign(camp, runs_root)
    if args.list:
        for st in sc.statuses(specs):
            print(st.line())
        return 0
    for spec in specs:
        sc.submit(spec, say_stderr)
    sts = sc.watch(specs, say_stderr, wait=not args.no_wait)
    if args.no_wait:
        return 0
    for line in summary_lines(sts, runs_root):
        print(line)
    return 1 if any(s.state == "failed" for s in sts) else 0


if __name__ == "__main__":
    sys.exit(main())
