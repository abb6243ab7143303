"""The claims ledger: every number the paper states, recomputed and compared.

``experiments/claims.toml`` holds ``[[claim]]`` tables::

    id        = "best-speedup"                  # used in the text as {{ claim("best-speedup") }}
    quantity  = "vars:best.speedup"             # "vars:<path>" or "summary:<path>"
    expected  = 1.15                            # the value the paper states (number or string)
    tolerance = { rel = 0.05 }                  # or { abs = 0.02 }; omitted: exact
    reason    = "why this tolerance"            # required with a tolerance
    runs      = ["final-ngram-mod", "final-none"]
    used_in   = ["Results: speedup paragraph"]
    format    = ".2f"                           # how the text prints it (optional)

:func:`check` recomputes each quantity from ``summary.json`` / ``vars.json`` and classifies it
``ok`` (within tolerance), ``deviates`` or ``missing``. The report (Markdown and HTML with the
figures embedded) lists expected, reproduced, difference and status; anything not ``ok`` is a
warning by default and a failure under ``--strict``.

Run ``python -m artifact.claims --print-current`` to print the current values as TOML lines, to
paste into the ledger after a human has read them.

Exceptions::

    ClaimsError     the ledger is malformed (one line naming file and field)
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import paths

SOURCES = ("vars", "summary")
STATUSES = ("ok", "deviates", "missing")


class ClaimsError(Exception):
    """The claims ledger is malformed."""


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One stated number and how closely a reproduction must match it."""

    id: str
    quantity: str
    expected: float | str
    rel: float | None = None  # relative tolerance, |reproduced - expected| <= rel * |expected|
    abs: float | None = None  # absolute tolerance, same units as the quantity
    reason: str = ""
    runs: tuple[str, ...] = ()
    used_in: tuple[str, ...] = ()
    format: str = ".2f"

    @property
    def source(self) -> str:
        return self.quantity.split(":", 1)[0]

    @property
    def path(self) -> str:
        return self.quantity.split(":", 1)[1]

    def describe_tolerance(self) -> str:
        if self.rel is not None:
            return f"rel {self.rel:g}"
        if self.abs is not None:
            return f"abs {self.abs:g}"
        return "exact"


@dataclass(frozen=True, kw_only=True)
class Outcome:
    claim: Claim
    reproduced: float | str | None
    difference: float | None
    status: str  # one of STATUSES


def _field(where: str, name: str, value: Any, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ClaimsError(f"{where}: field '{name}': expected {_kind(kind)}, got {value!r}")
    return value


def _kind(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def parse(data: Mapping[str, Any], source: str = "claims.toml") -> list[Claim]:
    """Validate a parsed ledger; errors name the file, the claim and the field."""
    known = {"id", "quantity", "expected", "tolerance", "reason", "runs", "used_in", "format"}
    raw = data.get("claim", [])
    if not isinstance(raw, list):
        raise ClaimsError(f"{source}: field 'claim': expected an array of tables ([[claim]])")
    claims: list[Claim] = []
    seen: set[str] = set()
    for i, c in enumerate(raw):
        where = f"{source}: claim[{i}]"
        cid = _field(where, "id", c.get("id"), str)
        where = f"{source}: claim '{cid}'"
        if cid in seen:
            raise ClaimsError(f"{where}: field 'id': duplicate")
        seen.add(cid)
        extra = sorted(set(c) - known)
        if extra:
            raise ClaimsError(f"{where}: field '{extra[0]}': unknown")
        quantity = _field(where, "quantity", c.get("quantity"), str)
        if ":" not in quantity or quantity.split(":", 1)[0] not in SOURCES:
            raise ClaimsError(f"{where}: field 'quantity': must start with 'vars:' or 'summary:'")
        expected = _field(where, "expected", c.get("expected"), (int, float, str))
        tol = c.get("tolerance", {})
        _field(where, "tolerance", tol, dict)
        if set(tol) - {"rel", "abs"} or len(tol) > 1:
            raise ClaimsError(f"{where}: field 'tolerance': give one of rel, abs")
        for k, v in tol.items():
            if _field(where, f"tolerance.{k}", v, (int, float)) < 0:
                raise ClaimsError(f"{where}: field 'tolerance.{k}': must be >= 0")
        reason = c.get("reason", "")
        _field(where, "reason", reason, str)
        if tol and not reason.strip():
            raise ClaimsError(f"{where}: field 'reason': a tolerance needs a reason")
        if tol and isinstance(expected, str):
            raise ClaimsError(f"{where}: field 'tolerance': a string claim is compared exactly")
        runs = _field(where, "runs", c.get("runs", []), list)
        used = _field(where, "used_in", c.get("used_in", []), list)
        fmt = _field(where, "format", c.get("format", ".2f"), str)
        claims.append(Claim(
            id=cid, quantity=quantity,
            expected=float(expected) if not isinstance(expected, str) else expected,
            rel=tol.get("rel"), abs=tol.get("abs"), reason=reason,
            runs=tuple(str(r) for r in runs), used_in=tuple(str(u) for u in used), format=fmt,
        ))
    return claims


def load(path: Path) -> list[Claim]:
    """Read and validate the ledger."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ClaimsError(f"{path}: cannot read ({err.strerror})") from err
    except tomllib.TOMLDecodeError as err:
        raise ClaimsError(f"{path}: not TOML ({err})") from err
    return parse(data, str(path))


def resolve(claim: Claim, summary: Mapping[str, Any], variables: Mapping[str, Any]) -> Any:
    """The current value of a claim's quantity; ``KeyError`` when absent."""
    from artifact.render.model import lookup

    root = variables if claim.source == "vars" else summary
    return lookup(root, claim.path)


def format_value(claim: Claim, value: Any) -> str:
    """A value as the text prints it.

    >>> format_value(Claim(id="x", quantity="vars:a", expected=1.0, format=".1f"), 1.26)
    '1.3'
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        if claim.format.endswith("d"):
            return format(round(value), claim.format)
        return format(value, claim.format)
    return str(value)


def compare(claim: Claim, value: Any) -> Outcome:
    """Classify one reproduced value against the ledger."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return Outcome(claim=claim, reproduced=None, difference=None, status="missing")
    if isinstance(claim.expected, str) or not isinstance(value, int | float):
        ok = str(value) == str(claim.expected)
        return Outcome(claim=claim, reproduced=str(value), difference=None,
                       status="ok" if ok else "deviates")
    diff = float(value) - claim.expected
    if claim.rel is not None:
        limit = claim.rel * abs(claim.expected)
    elif claim.abs is not None:
        limit = claim.abs
    else:
        limit = 0.0
    ok = abs(diff) <= limit * (1 + 1e-12)
    return Outcome(claim=claim, reproduced=float(value), difference=diff,
                   status="ok" if ok else "deviates")


def check(
    claims: Sequence[Claim], summary: Mapping[str, Any], variables: Mapping[str, Any]
) -> list[Outcome]:
    out = []
    for c in claims:
        try:
            value = resolve(c, summary, variables)
        except (KeyError, IndexError, ValueError):
            value = None
        out.append(compare(c, value))
    return out


def _image(path: Path) -> str:
    return path.as_posix()


def write_report(
    outcomes: Sequence[Outcome], *, out_dir: Path, figures: Sequence[Path], strict: bool,
    templates: Path = paths.TEMPLATES,
) -> tuple[Path, Path]:
    """``report.md`` and a self-contained ``report.html`` (figures embedded)."""
    import jinja2
    import pypandoc

    from artifact.render.text import environment

    env = environment("md", jinja2.FileSystemLoader(templates))
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in STATUSES}
    md = env.get_template("report.md.j2").render(
        outcomes=outcomes, counts=counts, strict=strict,
        figures=[f.relative_to(out_dir).as_posix() for f in figures], fmt=format_value,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    md_path.write_text(md, encoding="utf-8")
    subprocess.run(
        [pypandoc.get_pandoc_path(), "report.md", "-s", "--embed-resources",
         "--metadata", "title=Reproduction report", "-o", "report.html"],
        cwd=out_dir, check=True,
    )
    return md_path, html_path


def verify(
    *, ledger: Path, summary: Path, variables: Path, out_dir: Path, figures: Sequence[Path],
    strict: bool = False,
) -> list[Outcome]:
    """Recompute every claim, write the report; raise under ``strict`` if any is not ok."""
    claims = load(ledger)
    outcomes = check(claims, json.loads(summary.read_text(encoding="utf-8")),
                     json.loads(variables.read_text(encoding="utf-8")))
    write_report(outcomes, out_dir=out_dir, figures=figures, strict=strict)
    bad = [o for o in outcomes if o.status != "ok"]
    for o in bad:
        print(f"claims: {o.claim.id}: {o.status} (expected {o.claim.expected}, "
              f"reproduced {o.reproduced})", file=sys.stderr)
    if bad and strict:
        raise ClaimsError(f"{ledger}: {len(bad)} of {len(outcomes)} claims not reproduced")
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m artifact.claims",
                                description="Recompute the claims ledger.")
    p.add_argument("--ledger", type=Path, default=paths.CLAIMS)
    p.add_argument("--summary", type=Path, default=paths.SUMMARY)
    p.add_argument("--vars", type=Path, default=paths.BUILD / "vars.json")
    p.add_argument("--print-current", action="store_true",
                   help="print each claim's current value as TOML, for a human to paste")
    p.add_argument("--strict", action="store_true", help="fail when a claim is not reproduced")
    args = p.parse_args(argv)
    try:
        claims = load(args.ledger)
        summary = json.loads(args.summary.read_text(encoding="utf-8"))
        if args.vars.exists():
            variables = json.loads(args.vars.read_text(encoding="utf-8"))
        else:
            from artifact.render import model
            from artifact.render import vars as rvars
            variables = rvars.compute(model.from_json(summary, str(args.summary)))
    except (ClaimsError, OSError, json.JSONDecodeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    outcomes = check(claims, summary, variables)
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


if __name__ == "__main__":
    raise SystemExit(main())
