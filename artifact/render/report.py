"""The reproduction report and the ``verify`` gate over the claims ledger.

:func:`verify` recomputes every claim of ``experiments/claims.toml`` (:mod:`artifact.claims`),
writes ``report.md`` and a self-contained ``report.html`` (figures embedded) listing expected,
reproduced, difference and status, and fails under ``strict`` if any claim is not ``ok``
(otherwise each is a warning). :func:`main` is the command line (``python -m artifact.claims``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
import pypandoc

from artifact import claims, files, paths
from artifact.claims import ClaimsError, Outcome
from artifact.errors import cli
from artifact.log import Log
from artifact.log import stderr as log_stderr
from artifact.render import model
from artifact.render import vars as rvars
from artifact.render.text import environment

_log: Log = log_stderr("claims")


def write_report(
    outcomes: Sequence[Outcome], *, out_dir: Path, figures: Sequence[Path], strict: bool,
    templates: Path = paths.TEMPLATES,
) -> tuple[Path, Path]:
    """``report.md`` and a self-contained ``report.html`` (figures embedded)."""
    env = environment("md", jinja2.FileSystemLoader(templates))
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in claims.STATUSES}
    md = env.get_template("report.md.j2").render(
        outcomes=outcomes, counts=counts, strict=strict,
        figures=[f.relative_to(out_dir).as_posix() for f in figures], fmt=claims.format_value,
    )
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    files.write_text(md_path, md)
    html = subprocess.run(
        [pypandoc.get_pandoc_path(), "report.md", "-s", "--embed-resources",
         "--metadata", "title=Reproduction report", "--to", "html"],
        cwd=out_dir, check=True, capture_output=True,
    ).stdout
    files.write_text(html_path, html.decode("utf-8"))
    return md_path, html_path


def verify(
    *, ledger: Path, summary: Path, variables: Path, out_dir: Path, figures: Sequence[Path],
    strict: bool = False, log: Log = _log,
) -> list[Outcome]:
    """Recompute every claim, write the report; raise under ``strict`` if any is not ok."""
    outcomes = claims.check(claims.load(ledger), read_computed(summary), read_computed(variables))
    write_report(outcomes, out_dir=out_dir, figures=figures, strict=strict)
    bad = [o for o in outcomes if o.status != "ok"]
    for o in bad:
        log(f"{o.claim.id}: {o.status} (expected {o.claim.expected}, reproduced {o.reproduced})")
    if bad and strict:
        raise ClaimsError(f"{ledger}: {len(bad)} of {len(outcomes)} claims not reproduced")
    return outcomes


def read_computed(path: Path) -> dict[str, Any]:
    """A computed JSON file (summary.json, vars.json); a :class:`ClaimsError` when unusable."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ClaimsError(f"{path}: cannot read computed JSON ({err})") from err
    if not isinstance(obj, dict):
        raise ClaimsError(f"{path}: expected a JSON object")
    return obj


@cli
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m artifact.claims``: print each claim's status, or its current value as TOML."""
    p = argparse.ArgumentParser(prog="python -m artifact.claims",
                                description="Recompute the claims ledger.")
    p.add_argument("--ledger", type=Path, default=paths.CLAIMS)
    p.add_argument("--summary", type=Path, default=paths.SUMMARY)
    p.add_argument("--vars", type=Path, default=paths.BUILD / "vars.json")
    p.add_argument("--print-current", action="store_true",
                   help="print each claim's current value as TOML, for a human to paste")
    p.add_argument("--strict", action="store_true", help="fail when a claim is not reproduced")
    args = p.parse_args(argv)
    ledger = claims.load(args.ledger)
    summary = model.load(args.summary)
    variables = read_computed(args.vars) if args.vars.exists() else rvars.compute(summary)
    outcomes = claims.check(ledger, summary.raw, variables)
    if args.print_current:
        for o in outcomes:
            value = o.reproduced
            shown = json.dumps(value) if value is not None else "# missing"
            print(f'# {o.claim.id} ({o.claim.quantity}): was {o.claim.expected!r}, '
                  f"status {o.status}\nexpected = {shown}\n")
        return 0
    for o in outcomes:
        print(f"{o.status:9} {o.claim.id}: expected {o.claim.expected}, reproduced {o.reproduced}")
    bad = sum(1 for o in outcomes if o.status != "ok")
    return 1 if bad and args.strict else 0
