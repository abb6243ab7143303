"""List or run the runs of a campaign file (python -m artifact.campaign)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from artifact import paths
from artifact.campaign.runner import run, run_is_current
from artifact.errors import SpecError, cli
from artifact.spec import load_campaign


@cli
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m artifact.campaign", description=__doc__)
    ap.add_argument("campaign", type=Path, help="campaign file, e.g. experiments/campaigns/"
                    "cpu-study.toml")
    ap.add_argument("--run", action="append", default=[], metavar="ID",
                    help="run only this run (repeatable); default: every run not yet current")
    ap.add_argument("--runs-dir", type=Path, default=paths.RUNS,
                    help="where run directories go (default: experiments/runs)")
    ap.add_argument("--list", action="store_true", help="list the runs and whether each is "
                    "current, then exit")
    ap.add_argument("--quiet", action="store_true", help="no progress line")
    args = ap.parse_args(argv)
    camp = load_campaign(args.campaign)
    wanted = args.run or [r.run_id for r in camp.runs]
    for rid in wanted:
        try:
            spec = camp.run(rid)
        except KeyError:
            raise SpecError(f"{args.campaign}: no run {rid!r}") from None
        current = run_is_current(spec, args.runs_dir)
        if args.list:
            print(f"{rid:32s} {spec.family:9s} {spec.drafter:13s} "
                  f"{'current' if current else 'to run'}")
            continue
        if current and not args.run:
            continue
        m = run(camp, spec, runs_root=args.runs_dir, show_progress=not args.quiet)
        print(f"{rid}: {m.n_results}/{m.n_expected} requests, {m.n_errors} errors, "
              f"{m.measure_s:.1f} s measured, complete={m.complete}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
