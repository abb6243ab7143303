"""``python -m artifact.analysis [--runs DIR] [--out FILE] [--no-cache]``: write summary.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from artifact import paths, warning_classes
from artifact.analysis.runcache import CACHE
from artifact.analysis.summary import write_summary
from artifact.errors import cli


@cli
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m artifact.analysis", description="Raw runs to summary.json."
    )
    parser.add_argument("--runs", type=Path, default=paths.RUNS, help="runs directory")
    parser.add_argument("--out", type=Path, default=paths.SUMMARY, help="summary.json to write")
    parser.add_argument("--no-cache", action="store_true",
                        help=f"read every run again, not from the reduced runs kept ({CACHE.name} "
                             "under .cache/: same result, slower)")
    args = parser.parse_args(argv)
    summary = write_summary(args.runs, args.out, cache=None if args.no_cache else CACHE)
    n_warn = len(summary["warnings"])
    print(f"wrote {args.out}: {len(summary['runs'])} run(s), {n_warn} warning(s)")
    for line in warning_classes.lines(summary["warnings"]):
        print(f"warning: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
