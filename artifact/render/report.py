"""The claims report and the ``verify`` gate over the claims ledger.

:func:`verify` recomputes every claim of ``experiments/claims.toml`` (:mod:`artifact.claims`)
from the committed runs (a recomputation, not a rerun: ``doit reproduce`` measures again),
writes ``report.md`` and a self-contained ``report.html`` (figures embedded) listing expected,
recomputed, difference and status, prints the verdict (claims within tolerance out of all, then
one line per claim that is not), and fails under ``strict`` if any claim is not ``ok``
(otherwise each is a warning). :func:`main` is the command line (``python -m artifact.verify``).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup, escape

from artifact import claims, files, paths, warning_classes
from artifact.claims import ClaimsError, Outcome
from artifact.errors import cli
from artifact.log import Log
from artifact.log import stderr as log_stderr
from artifact.render import model, sources
from artifact.render import vars as rvars
from artifact.render.text import environment

_log: Log = log_stderr("claims")


def _href(target: Path, base: Path) -> str:
    """``target`` relative to the folder ``base``, as a URL path."""
    rel = Path(os.path.relpath(target, base)).as_posix()
    return quote(rel + ("/" if target.is_dir() else ""))


def report_rows(
    outcomes: Sequence[Outcome], *, out_dir: Path, runs_root: Path, paper: Path | None,
) -> list[dict[str, Any]]:
    """One row per claim: the printed values, its runs (folders, files) and paper spots."""
    spots = (sources.paper_spots(paper.read_text(encoding="utf-8"))
             if paper is not None and paper.is_file() else {})
    paper_href = _href(paper, out_dir) if paper is not None else ""
    rows = []
    for o in outcomes:
        c = o.claim
        runs = [{"run_id": r.run_id, "href": _href(r.path, out_dir),
                 "files": [{"name": f, "href": _href(r.path / f, out_dir)} for f in r.files]}
                for r in sources.claim_runs(c.runs, runs_root)]
        rows.append({
            "id": c.id, "quantity": c.quantity, "status": o.status,
            # break a long dotted path after a dot or a slash, not inside a word
            "quantity_html": Markup("<wbr>").join(
                escape(p) for p in c.quantity.replace(".", ".\0").replace("/", "/\0")
                .split("\0")),
            # a qualitative claim's bound may name a quantity: break it after a dot too
            "expected": Markup("<wbr>").join(
                escape(p) for p in c.describe_expected().replace(".", ".\0").split("\0")),
            "scope": c.scope, "statement": c.statement,
            "reproduced": (claims.format_value(c, o.reproduced)
                           if o.reproduced is not None else "\u2014"),
            "difference": f"{o.difference:+.3g}" if o.difference is not None else "\u2014",
            "tolerance": c.describe_tolerance(), "reason": c.reason,
            "used_in": list(c.used_in), "runs": runs,
            "spots": [{"section": sp.section, "href": f"{paper_href}#{sp.anchor}"}
                      for sp in spots.get(c.id, [])],
        })
    return rows


def write_report(
    outcomes: Sequence[Outcome], *, out_dir: Path, figures: Sequence[Path], strict: bool,
    templates: Path = paths.TEMPLATES, runs_root: Path = paths.RUNS,
    paper: Path | None = None, warnings: Sequence[str] = (),
) -> tuple[Path, Path]:
    """``report.md`` and a self-contained ``report.html`` (CSS inline, figures embedded).

    Both link each claim to its committed runs under ``runs_root`` and to the places in
    ``paper`` (paper.html, default: beside the report) where its number is printed, and list
    the analysis warnings grouped by class (:mod:`artifact.warning_classes`).
    """
    paper = out_dir / "paper.html" if paper is None else paper
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in claims.STATUSES}
    rows = report_rows(outcomes, out_dir=out_dir, runs_root=runs_root, paper=paper)
    groups = [(warning_classes.CLASSES[name], ws)
              for name, ws in warning_classes.grouped(warnings).items()]
    env = environment("md", jinja2.FileSystemLoader(templates))
    md = env.get_template("report.md.j2").render(
        outcomes=outcomes, rows=rows, counts=counts, strict=strict, warning_groups=groups,
        paper_href=_href(paper, out_dir),
        figures=[f.relative_to(out_dir).as_posix() for f in figures], fmt=claims.format_value,
    )
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    files.write_text(md_path, md)
    html_env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates), autoescape=True,
                                  undefined=jinja2.StrictUndefined, trim_blocks=True,
                                  lstrip_blocks=True, keep_trailing_newline=True)
    figs = [{"name": f.relative_to(out_dir).as_posix(),
             "data": "data:image/png;base64," + base64.b64encode(f.read_bytes()).decode("ascii")}
            for f in figures]
    page = html_env.get_template("report.html.j2").render(
        rows=rows, counts=counts, strict=strict, paper_href=_href(paper, out_dir), figures=figs,
        warning_groups=groups)
    files.write_text(html_path, page)
    return md_path, html_path


def verify(
    *, ledger: Path, summary: Path, variables: Path, out_dir: Path, figures: Sequence[Path],
    strict: bool = False, log: Log = _log, studies: Sequence[Path] = (),
) -> list[Outcome]:
    """Recompute every claim, write the report; under ``strict``, raise if any claim is not ok
    or an analysis raised a warning of a fatal class: the core's (``summary``) or another
    study's (``studies``: accsplit.json, workload.json, realism.json, costmodel.json; each
    warning prefixed with its file)."""
    computed = read_computed(summary)
    outcomes = claims.check(claims.load(ledger), computed, read_computed(variables))
    warnings = [str(w) for w in computed.get("warnings", [])]
    for study in studies:
        if study.exists():
            found = read_computed(study).get("warnings", [])
            warnings += [f"{study.name}: {w}" for w in found if isinstance(w, str)]
    write_report(outcomes, out_dir=out_dir, figures=figures, strict=strict, warnings=warnings)
    bad = [o for o in outcomes if o.status != "ok"]
    log(verdict(outcomes, out_dir / "report.html"))
    for o in bad:
        log(f"{o.claim.id}: {o.status} (expected {o.claim.describe_expected()}, "
            f"recomputed {o.reproduced}, tolerance {o.claim.describe_tolerance()})")
    fatal = warning_classes.fatal(warnings)
    busy = claims.contended(outcomes, computed)
    for line in busy:
        log(line)
    if strict and (bad or fatal or busy):
        parts = []
        if busy:
            parts.append(f"{len(busy)} timing claim(s) rest on contended runs (listed above)")
        if bad:
            parts.append(f"{len(bad)} of {len(outcomes)} claims not reproduced "
                         f"({', '.join(o.claim.id for o in bad)})")
        if fatal:
            names = sorted({warning_classes.classify(w) for w in fatal})
            parts.append(f"{len(fatal)} analysis warning(s) of a fatal class "
                         f"({', '.join(names)}; listed in report.md)")
        raise ClaimsError(f"{ledger}: " + "; ".join(parts))
    return outcomes


def verdict(outcomes: Sequence[Outcome], report: Path) -> str:
    """The one line ``doit verify`` prints first: claims within tolerance out of all.

    >>> ok = claims.Claim(id="a", quantity="vars:x", expected=1.0, abs=0.1)
    >>> print(verdict([Outcome(claim=ok, reproduced=1.0, difference=0.0, status="ok"),
    ...                Outcome(claim=ok, reproduced=None, difference=None, status="missing")],
    ...               paths.ROOT / "report.html").replace("; ", ";\\n"))
    1 of 2 claims within tolerance (recomputed from the committed runs);
    1 not, listed below;
    report: report.html
    """
    n_ok = sum(1 for o in outcomes if o.status == "ok")
    rest = len(outcomes) - n_ok
    tail = f"; {rest} not, listed below" if rest else ""
    return (f"{n_ok} of {len(outcomes)} claims within tolerance (recomputed from the committed "
            f"runs){tail}; report: {paths.shown(report)}")


def read_computed(path: Path) -> dict[str, Any]:
    """A computed JSON file (summary.json, vars.json); a :class:`ClaimsError` when unusable."""
    obj: dict[str, Any] = files.read_json(path, ClaimsError)
    return obj


@cli
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m artifact.verify``: print each claim's status, or its current value as TOML."""
    p = argparse.ArgumentParser(prog="python -m artifact.verify",
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
            if o.claim.qualitative:
                print(f"# {o.claim.id}: qualitative ({o.claim.describe_expected()}), "
                      f"status {o.status}\n")
                continue
            value = o.reproduced
            shown = json.dumps(value) if value is not None else "# missing"
            print(f'# {o.claim.id} ({o.claim.quantity}): was {o.claim.expected!r}, '
                  f"status {o.status}\nexpected = {shown}\n")
        return 0
    for o in outcomes:
        print(f"{o.status:9} {o.claim.id}: expected {o.claim.describe_expected()}, "
              f"reproduced {o.reproduced}")
    bad = sum(1 for o in outcomes if o.status != "ok")
    return 1 if bad and args.strict else 0
