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

:func:`check` looks each quantity up (:func:`lookup`) in the parsed ``summary.json`` /
``vars.json`` and classifies it ``ok`` (within tolerance), ``deviates`` or ``missing``. The ledger
knows no rendering: the reproduction report and the ``verify`` gate are
:mod:`artifact.render.report`, which renders what :func:`check` returns.

Run ``python -m artifact.claims --print-current`` to print the current values as TOML lines, to
paste into the ledger after a human has read them (the command line is
:func:`artifact.render.report.main`; this module's name is kept for it).

Exceptions::

    ClaimsError     the ledger is malformed (one line naming file and field)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import files
from artifact.errors import ClaimsError as ClaimsError

SOURCES = ("vars", "summary")
STATUSES = ("ok", "deviates", "missing")


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
        if isinstance(expected, float) and not math.isfinite(expected):
            raise ClaimsError(f"{where}: field 'expected': expected a finite number, "
                              f"got {expected!r}")
        tol = c.get("tolerance", {})
        _field(where, "tolerance", tol, dict)
        if set(tol) - {"rel", "abs"} or len(tol) > 1:
            raise ClaimsError(f"{where}: field 'tolerance': give one of rel, abs")
        for k, v in tol.items():
            # inf would make a claim always pass, nan always fail: neither is a tolerance
            if not math.isfinite(_field(where, f"tolerance.{k}", v, (int, float))):
                raise ClaimsError(f"{where}: field 'tolerance.{k}': expected a finite number, "
                                  f"got {v!r}")
            if v < 0:
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
    return parse(files.load_toml(path, ClaimsError), str(path))


def lookup(data: Any, dotted: str) -> Any:
    """Follow a dotted path (``speedup.run.overall.mean_ratio``) into nested mappings/lists.

    Run ids may contain dots, so at each level the longest key that matches wins.

    >>> lookup({"a": {"b.c": [1, {"d": 2}]}}, "a.b.c.1.d")
    2
    """
    parts = dotted.split(".")
    i = 0
    cur = data
    while i < len(parts):
        if isinstance(cur, list):
            cur = cur[int(parts[i])]
            i += 1
            continue
        if not isinstance(cur, Mapping):
            raise KeyError(".".join(parts[:i]))
        for j in range(len(parts), i, -1):
            key = ".".join(parts[i:j])
            if key in cur:
                cur = cur[key]
                i = j
                break
        else:
            raise KeyError(".".join(parts[: i + 1]))
    return cur


def resolve(claim: Claim, summary: Mapping[str, Any], variables: Mapping[str, Any]) -> Any:
    """The current value of a claim's quantity; ``KeyError`` when absent."""
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
    """Every claim's outcome against the parsed summary and variables, in ledger order."""
    out = []
    for c in claims:
        try:
            value = resolve(c, summary, variables)
        except (KeyError, IndexError, ValueError):
            value = None
        out.append(compare(c, value))
    return out


if __name__ == "__main__":  # `python -m artifact.claims`: the command line at the edge
    import importlib  # not a static import: render sits above the ledger

    raise SystemExit(importlib.import_module("artifact.render.report").main())
