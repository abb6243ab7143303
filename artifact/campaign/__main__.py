"""List or run the runs of a campaign file (python -m artifact.campaign)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from artifact import paths
from artifact.campaign.runner import run, run_is_current, runs_root
from artifact.campaign.slurm import SlurmCampaign, say_stderr, summary_lines
from artifact.errors import SpecError, cli
from artifact.executor_spec import KINDS
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
    ap.add_argument("--no-wait", action="store_true", help="Slurm: submit and return; a later "
                    "call shows progress and collects")
    args = ap.parse_args(argv)
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
        except KeyError:
            raise SpecError(f"{args.campaign}: no run {rid!r}") from None
    if camp.executor.kind == "slurm":
        return _slurm(camp, specs, args)
    for spec in specs:
        current = run_is_current(spec, args.runs_dir)
        if args.list:
            print(f"{spec.run_id:32s} {spec.family:9s} {spec.drafter:13s} "
                  f"{'current' if current else 'to run'}")
            continue
        if current and not args.run:
            if not args.quiet:
                print(f"{spec.run_id}: current, skipped")
            continue
        m = run(camp, spec, runs_root=args.runs_dir, show_progress=not args.quiet)
        print(f"{spec.run_id}: {m.n_results}/{m.n_expected} requests, {m.n_errors} errors, "
              f"{m.measure_s:.1f} s measured, complete={m.complete}")
    return 0


def _slurm(camp: Campaign, specs: list[RunSpec], args: argparse.Namespace) -> int:
    """Submit the wanted runs that are not current (one job each), then watch them."""
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
