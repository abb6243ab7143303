"""The claims ledger: every number the paper states, recomputed and compared.

``experiments/claims.toml`` holds ``[[claim]]`` tables::

    id        = "best-speedup"                  # used in the text as {{ claim("best-speedup") }}
    quantity  = "vars:best.speedup"             # "vars:<path>" or "summary:<path>"
    expected  = 1.15                            # the value the paper states (number or string)
    tolerance = { rel = 0.05 }                  # or { abs = 0.02 }; omitted: exact
                                                # side = "upper": only a larger value fails
    reason    = "why this tolerance"            # required with a tolerance
    noise     = "vars:core.control"             # the measurement the width comes from, or
                                                # "exact" (counts, greedy acceptance)
    wider_because = "why wider than that noise" # required where the tolerance is wider
    runs      = ["final-ngram-mod", "final-none"]
    used_in   = ["Results: speedup paragraph"]
    format    = ".2f"                           # how the text prints it (optional)
    scope     = "hardware-bound"                # what the value depends on (below)

Every claim has a ``scope``, which says how a reproduction elsewhere is judged
(:mod:`artifact.reproduce.compare`):

- ``hardware-independent``: acceptance at greedy decoding, counts: equal on any machine;
- ``hardware-bound``: rates, speedups, break-even points: they move with the CPU/GPU, so a
  deviation on other hardware is "differs with hardware", on the same hardware a failure;
- ``noise``: a measure of variation (depends on what else ran on the machine);
- ``qualitative``: a statement of the paper that must hold anywhere, checked as an inequality::

    id        = "draft-models-slow-decoding"
    scope     = "qualitative"
    statement = "every draft-model configuration decodes slower than no draft on a CPU"
    quantity  = "summary:speedup.final-draft-*.overall.mean_ratio"   # '*' matches keys: "every"
    holds     = { lt = 1.0 }                    # lt, le, gt, ge: a number or another quantity
    reason    = "why the paper says so"

:func:`check` looks each quantity up (:func:`lookup`) in the parsed ``summary.json`` /
``vars.json`` and classifies it ``ok`` (within tolerance), ``deviates`` or ``missing``. The ledger
knows no rendering: the reproduction report and the ``verify`` gate are
:mod:`artifact.render.report`, which renders what :func:`check` returns.

Every numeric claim names in ``noise`` the measurement its tolerance's width comes from
(:func:`noise_width`): ``"exact"`` (width 0), or a quantity that resolves in the computed files
to an interval (``lo``/``hi``, ``low``/``high``, ``ci_low``/``ci_high`` or a two-number list:
its half-width) or to a number (a half-width in the quantity's units; a key ending in ``_pct`` is
a percent of the expected value). A tolerance wider than that noise carries ``wider_because``
(:func:`noise_problems` lists those that do not, and sources that do not resolve).

Run ``python -m artifact.verify --print-current`` to print the current values as TOML lines, to
paste into the ledger after a human has read them (:mod:`artifact.verify`, the command line,
sits above this module and the renderer; nothing here imports ``render/``).

Exceptions::

    ClaimsError     the ledger is malformed (one line naming file and field)
"""

from __future__ import annotations

import fnmatch
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import files
from artifact.errors import ClaimsError as ClaimsError

SOURCES = ("vars", "summary")
STATUSES = ("ok", "deviates", "missing")
SCOPES = ("hardware-independent", "hardware-bound", "noise", "qualitative")
BOUNDS = {"lt": "<", "le": "≤", "gt": ">", "ge": "≥"}
EXACT = "exact"  # a claim's noise when it is a count or deterministic: width 0
_INTERVALS = (("lo", "hi"), ("low", "high"), ("ci_low", "ci_high"))


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One stated number and how closely a reproduction must match it."""

    id: str
    quantity: str
    expected: float | str | None  # None for a qualitative claim (it has bounds instead)
    rel: float | None = None  # relative tolerance, |reproduced - expected| <= rel * |expected|
    abs: float | None = None  # absolute tolerance, same units as the quantity
    # Only a value above expected + tolerance fails: a noise measure taken under load, which a
    # quieter rerun reproduces by being smaller (``tolerance.side = "upper"``).
    upper_only: bool = False
    reason: str = ""
    runs: tuple[str, ...] = ()
    used_in: tuple[str, ...] = ()
    format: str = ".2f"
    scope: str = "hardware-bound"
    statement: str = ""  # the paper's sentence (qualitative claims)
    holds: tuple[tuple[str, float | str], ...] = ()  # qualitative: every value satisfies these
    noise: str = ""  # "exact" or the quantity the tolerance's width comes from (numeric claims)
    wider_because: str = ""  # why the tolerance is wider than that noise

    @property
    def qualitative(self) -> bool:
        return self.scope == "qualitative"

    @property
    def source(self) -> str:
        return self.quantity.split(":", 1)[0]

    @property
    def path(self) -> str:
        return self.quantity.split(":", 1)[1]

    def describe_expected(self) -> str:
        """The expected value as printed, or the bounds of a qualitative claim.

        >>> Claim(id="x", quantity="vars:a", expected=None, scope="qualitative",
        ...       holds=(("ge", 0.8), ("le", 1.2))).describe_expected()
        '≥ 0.8 and ≤ 1.2'
        """
        if self.qualitative:
            return " and ".join(f"{BOUNDS[op]} {v:g}" if isinstance(v, float) else
                                f"{BOUNDS[op]} {v}" for op, v in self.holds)
        return format_value(self, self.expected)

    def describe_tolerance(self) -> str:
        """The tolerance in words.

        >>> Claim(id="x", quantity="vars:a", expected=50.0, abs=15.0,
        ...       upper_only=True).describe_tolerance()
        'abs 15, upper only'
        """
        if self.qualitative:
            return "inequality"
        side = ", upper only" if self.upper_only else ""
        if self.rel is not None:
            return f"rel {self.rel:g}{side}"
        if self.abs is not None:
            return f"abs {self.abs:g}{side}"
        return "exact"

    def within(self, diff: float, limit: float) -> bool:
        """Whether a difference from the reference value is inside the tolerance ``limit``.

        >>> c = Claim(id="x", quantity="vars:a", expected=50.0, abs=15.0, upper_only=True)
        >>> c.within(-40.0, 15.0), c.within(16.0, 15.0)
        (True, False)
        """
        top = limit * (1 + 1e-12)
        return diff <= top if self.upper_only else abs(diff) <= top


@dataclass(frozen=True, kw_only=True)
class Outcome:
    claim: Claim
    reproduced: float | str | None  # qualitative: the value closest to breaking a bound
    difference: float | None
    status: str  # one of STATUSES
    values: tuple[tuple[str, float], ...] = ()  # qualitative: every value the pattern matched
    bounds: tuple[tuple[str, float], ...] = ()  # qualitative: the bounds, resolved to numbers


def _field(where: str, name: str, value: Any, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ClaimsError(f"{where}: field '{name}': expected {_kind(kind)}, got {value!r}")
    return value


def _kind(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def parse(data: Mapping[str, Any], source: str = "claims.toml") -> list[Claim]:
    """Validate a parsed ledger; errors name the file, the claim and the field."""
    known = {"id", "quantity", "expected", "tolerance", "reason", "runs", "used_in", "format",
             "scope", "statement", "holds", "noise", "wider_because"}
    extra = sorted(set(data) - {"claim"})
    if extra:
        raise ClaimsError(f"{source}: field '{extra[0]}': unknown (the ledger holds [[claim]] "
                          "tables only)")
    raw = data.get("claim", [])
    if not isinstance(raw, list):
        raise ClaimsError(f"{source}: field 'claim': expected an array of tables ([[claim]])")
    claims: list[Claim] = []
    seen: set[str] = set()
    for i, c in enumerate(raw):
        where = f"{source}: claim[{i}]"
        if not isinstance(c, dict):
            raise ClaimsError(f"{where}: expected a table ([[claim]]), got {c!r}")
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
        scope = _field(where, "scope", c.get("scope"), str)
        if scope not in SCOPES:
            raise ClaimsError(f"{where}: field 'scope': expected one of {', '.join(SCOPES)}, "
                              f"got {scope!r}")
        reason = c.get("reason", "")
        _field(where, "reason", reason, str)
        runs = _strings(where, "runs", c.get("runs", []))
        used = _strings(where, "used_in", c.get("used_in", []))
        fmt = _format(where, c.get("format", ".2f"))
        statement = _field(where, "statement", c.get("statement", ""), str)
        common = {"id": cid, "quantity": quantity, "reason": reason, "scope": scope,
                  "runs": runs, "used_in": used, "format": fmt, "statement": statement}
        if scope == "qualitative":
            for name in ("noise", "wider_because"):
                if name in c:
                    raise ClaimsError(f"{where}: field '{name}': a qualitative claim has no "
                                      "tolerance to source")
            claims.append(Claim(expected=None, holds=_holds(where, c), **common))
            continue
        if "holds" in c:
            raise ClaimsError(f"{where}: field 'holds': only a qualitative claim has bounds")
        expected = _field(where, "expected", c.get("expected"), (int, float, str))
        if isinstance(expected, float) and not math.isfinite(expected):
            raise ClaimsError(f"{where}: field 'expected': expected a finite number, "
                              f"got {expected!r}")
        tol = c.get("tolerance", {})
        _field(where, "tolerance", tol, dict)
        side = tol.get("side")
        tol = {k: v for k, v in tol.items() if k != "side"}
        if set(tol) - {"rel", "abs"} or len(tol) > 1 or (side is not None and not tol):
            raise ClaimsError(f"{where}: field 'tolerance': give one of rel, abs (and "
                              "optionally side)")
        if side not in (None, "upper"):
            raise ClaimsError(f"{where}: field 'tolerance.side': expected \"upper\" (only a "
                              f"larger value fails), got {side!r}")
        for k, v in tol.items():
            # inf would make a claim always pass, nan always fail: neither is a tolerance
            if not math.isfinite(_field(where, f"tolerance.{k}", v, (int, float))):
                raise ClaimsError(f"{where}: field 'tolerance.{k}': expected a finite number, "
                                  f"got {v!r}")
            if v < 0:
                raise ClaimsError(f"{where}: field 'tolerance.{k}': must be >= 0")
        if tol and not reason.strip():
            raise ClaimsError(f"{where}: field 'reason': a tolerance needs a reason")
        if tol and isinstance(expected, str):
            raise ClaimsError(f"{where}: field 'tolerance': a string claim is compared exactly")
        noise, wider = _noise(where, c, wide=any(v > 0 for v in tol.values()))
        claims.append(Claim(
            expected=float(expected) if not isinstance(expected, str) else expected,
            rel=tol.get("rel"), abs=tol.get("abs"), upper_only=side == "upper",
            noise=noise, wider_because=wider, **common,
        ))
    return claims


def _noise(where: str, c: Mapping[str, Any], *, wide: bool) -> tuple[str, str]:
    """A numeric claim's ``noise`` and ``wider_because``: a source is required; ``"exact"``
    with a tolerance above zero needs the reason at once (no data can make it narrower)."""
    if "noise" not in c:
        raise ClaimsError(f"{where}: field 'noise': missing: name the measurement the "
                          "tolerance's width comes from ('vars:...'/'summary:...'), or \"exact\"")
    noise: str = _field(where, "noise", c["noise"], str)
    if noise != EXACT and noise.split(":", 1)[0] not in SOURCES:
        raise ClaimsError(f"{where}: field 'noise': expected \"exact\" or a 'vars:'/'summary:' "
                          f"quantity, got {noise!r}")
    wider: str = _field(where, "wider_because", c.get("wider_because", ""), str)
    if "wider_because" in c and not wider.strip():
        raise ClaimsError(f"{where}: field 'wider_because': empty (say why, or leave it out)")
    if noise == EXACT and wide and not wider.strip():
        raise ClaimsError(f"{where}: field 'wider_because': the noise is \"exact\" but the "
                          "tolerance is not zero: say why it is wider")
    return noise, wider


def _strings(where: str, name: str, value: Any) -> tuple[str, ...]:
    """A list of strings (``runs``, ``used_in``), or one line naming the item that is not."""
    _field(where, name, value, list)
    for i, v in enumerate(value):
        _field(where, f"{name}[{i}]", v, str)
    return tuple(value)


def _format(where: str, value: Any) -> str:
    """A ``format`` as :func:`format_value` uses it: a Python format spec for a float (for an
    integer when it ends in ``d``), tried here so that a bad one is one line at load time, not
    a ``ValueError`` when the text is rendered.

    >>> _format("claims.toml: claim 'x'", ".1q")
    Traceback (most recent call last):
    ...
    artifact.errors.ClaimsError: claims.toml: claim 'x': field 'format': expected a Python \
format spec for a float, e.g. ".2f" (or for an integer, e.g. ",d"), got '.1q' (Unknown format \
code 'q' for object of type 'float')
    """
    fmt: str = _field(where, "format", value, str)
    try:
        format(round(1.5) if fmt.endswith("d") else 1.5, fmt)
    except (ValueError, TypeError, OverflowError) as err:
        raise ClaimsError(f"{where}: field 'format': expected a Python format spec for a float, "
                          f'e.g. ".2f" (or for an integer, e.g. ",d"), got {fmt!r} ({err})'
                          ) from err
    return fmt


def _holds(where: str, c: Mapping[str, Any]) -> tuple[tuple[str, float | str], ...]:
    """A qualitative claim's bounds: ``holds = { lt = 1.0 }`` and friends, with its reason."""
    for name in ("expected", "tolerance"):
        if name in c:
            raise ClaimsError(f"{where}: field '{name}': a qualitative claim has 'holds' instead")
    if not str(c.get("statement", "")).strip():
        raise ClaimsError(f"{where}: field 'statement': a qualitative claim states its sentence")
    if not str(c.get("reason", "")).strip():
        raise ClaimsError(f"{where}: field 'reason': a qualitative claim needs a reason")
    holds = _field(where, "holds", c.get("holds"), dict)
    if not holds or set(holds) - set(BOUNDS):
        raise ClaimsError(f"{where}: field 'holds': give one or two of lt, le, gt, ge")
    out: list[tuple[str, float | str]] = []
    for op in BOUNDS:  # a fixed order: lt, le, gt, ge
        if op not in holds:
            continue
        v = _field(where, f"holds.{op}", holds[op], (int, float, str))
        if isinstance(v, str) and v.split(":", 1)[0] not in SOURCES:
            raise ClaimsError(f"{where}: field 'holds.{op}': a number or a 'vars:'/'summary:' "
                              "quantity")
        if not isinstance(v, str) and not math.isfinite(v):
            raise ClaimsError(f"{where}: field 'holds.{op}': must be finite")
        out.append((op, v if isinstance(v, str) else float(v)))
    return tuple(out)


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


def _is_pattern(part: str) -> bool:
    return any(ch in part for ch in "*?[")


def lookup_all(data: Any, dotted: str) -> list[tuple[str, Any]]:
    """Every (path, value) a dotted path with ``*`` segments matches, in key order.

    A pattern segment matches whole keys (run ids may contain dots); a path that does not
    lead anywhere for one key is skipped for that key.

    >>> d = {"s": {"final-a": {"r": 1}, "final-b": {"r": 2}, "other": {"r": 3}}}
    >>> lookup_all(d, "s.final-*.r")
    [('s.final-a.r', 1), ('s.final-b.r', 2)]
    >>> lookup_all(d, "s.other.r")
    [('s.other.r', 3)]
    """
    parts = dotted.split(".")
    star = next((i for i, p in enumerate(parts) if _is_pattern(p)), None)
    if star is None:
        try:
            return [(dotted, lookup(data, dotted))]
        except (KeyError, IndexError, ValueError):
            return []
    head, pattern, rest = ".".join(parts[:star]), parts[star], ".".join(parts[star + 1:])
    try:
        node = lookup(data, head) if head else data
    except (KeyError, IndexError, ValueError):
        return []
    if not isinstance(node, Mapping):
        return []
    out: list[tuple[str, Any]] = []
    for key in sorted(k for k in node if fnmatch.fnmatchcase(str(k), pattern)):
        prefix = f"{head}.{key}" if head else str(key)
        if rest:
            out += [(f"{prefix}.{q}", w) for q, w in lookup_all(node[key], rest)]
        else:
            out.append((prefix, node[key]))
    return out


def _root(source: str, summary: Mapping[str, Any], variables: Mapping[str, Any]) -> Any:
    return variables if source == "vars" else summary


def resolve(claim: Claim, summary: Mapping[str, Any], variables: Mapping[str, Any]) -> Any:
    """The current value of a claim's quantity; ``KeyError`` when absent."""
    return lookup(_root(claim.source, summary, variables), claim.path)


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        return None
    return float(x)


def _satisfies(value: float, op: str, bound: float) -> bool:
    return {"lt": value < bound, "le": value <= bound, "gt": value > bound,
            "ge": value >= bound}[op]


def evaluate(claim: Claim, summary: Mapping[str, Any],
             variables: Mapping[str, Any]) -> Outcome:
    """A qualitative claim on one set of computed files: does every matched value hold?

    ``ok`` when at least one value matched and every one satisfies every bound, ``deviates``
    when one does not, ``missing`` when nothing matched or a bound could not be resolved. The
    reported value is the one closest to (or furthest past) a bound.
    """
    found = [(p, _number(v)) for p, v in
             lookup_all(_root(claim.source, summary, variables), claim.path)]
    values = tuple((p, v) for p, v in found if v is not None)
    bounds: list[tuple[str, float]] = []
    for op, b in claim.holds:
        if isinstance(b, str):
            src, _, path = b.partition(":")
            try:
                num = _number(lookup(_root(src, summary, variables), path))
            except (KeyError, IndexError, ValueError):
                num = None
            if num is None:
                return Outcome(claim=claim, reproduced=None, difference=None,
                               status="missing", values=values)
            bounds.append((op, num))
        else:
            bounds.append((op, b))
    if not values or len(values) < len(found):
        return Outcome(claim=claim, reproduced=None, difference=None, status="missing",
                       values=values, bounds=tuple(bounds))

    def margin(v: float) -> float:  # > 0: inside every bound, by this much
        return min((b - v) if op in ("lt", "le") else (v - b) for op, b in bounds)

    worst = min(values, key=lambda pv: margin(pv[1]))[1]
    ok = all(_satisfies(v, op, b) for _, v in values for op, b in bounds)
    return Outcome(claim=claim, reproduced=worst, difference=None,
                   status="ok" if ok else "deviates", values=values, bounds=tuple(bounds))


def format_value(claim: Claim, value: Any) -> str:
    """A value as the text prints it (a value that rounds to zero without its sign).

    >>> c = Claim(id="x", quantity="vars:a", expected=1.0, format=".1f")
    >>> format_value(c, 1.26), format_value(c, -0.04)
    ('1.3', '0.0')
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        if claim.format.endswith("d"):
            return format(round(value), claim.format)
        text = format(value, claim.format)
        # a value that rounds to zero prints without a sign, never "-0.0"
        return text[1:] if text.startswith("-") and not text.strip("-0.") else text
    return str(value)


def compare(claim: Claim, value: Any) -> Outcome:
    """Classify one reproduced value against the ledger."""
    if claim.expected is None:
        raise ValueError(f"claim {claim.id}: qualitative; use evaluate()")
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
    return Outcome(claim=claim, reproduced=float(value), difference=diff,
                   status="ok" if claim.within(diff, limit) else "deviates")


def check(
    claims: Sequence[Claim], summary: Mapping[str, Any], variables: Mapping[str, Any]
) -> list[Outcome]:
    """Every claim's outcome against the parsed summary and variables, in ledger order."""
    out = []
    for c in claims:
        if c.qualitative:
            out.append(evaluate(c, summary, variables))
            continue
        try:
            value = resolve(c, summary, variables)
        except (KeyError, IndexError, ValueError):
            value = None
        out.append(compare(c, value))
    return out


def tolerance_width(claim: Claim) -> float:
    """The tolerance as an absolute half-width around the expected value (0 when exact).

    >>> tolerance_width(Claim(id="x", quantity="vars:a", expected=-2.0, rel=0.1))
    0.2
    """
    if claim.rel is not None and isinstance(claim.expected, float):
        return claim.rel * abs(claim.expected)
    return claim.abs if claim.abs is not None else 0.0


def noise_width(claim: Claim, summary: Mapping[str, Any], variables: Mapping[str, Any]
                ) -> float:
    """The half-width of the noise a claim's tolerance comes from, in the quantity's units.

    ``"exact"`` is 0; an interval gives its half-width; a number is a half-width itself, or,
    under a key ending in ``_pct``, a percent of the expected value. ``KeyError`` when the
    source does not resolve, ``ValueError`` when it is neither a number nor an interval.

    >>> c = Claim(id="x", quantity="vars:a", expected=2.0, noise="vars:n")
    >>> noise_width(c, {}, {"n": {"lo": 0.9, "hi": 1.1}})
    0.10000000000000003
    >>> noise_width(Claim(id="x", quantity="vars:a", expected=2.0, noise="vars:n_pct"), {},
    ...             {"n_pct": 5.0})
    0.1
    """
    if claim.noise == EXACT:
        return 0.0
    src, _, path = claim.noise.partition(":")
    found = lookup(_root(src, summary, variables), path)
    if isinstance(found, Mapping):
        for lo, hi in _INTERVALS:
            if lo in found and hi in found:
                found = [found[lo], found[hi]]
                break
    if isinstance(found, list) and len(found) == 2:
        a, b = (_number(x) for x in found)
        if a is not None and b is not None:
            return abs(b - a) / 2
    width = _number(found)
    if width is None or width < 0:
        raise ValueError(f"expected a number >= 0 or an interval, got {found!r}")
    if path.rsplit(".", 1)[-1].endswith("_pct"):
        expected = claim.expected if isinstance(claim.expected, float) else 0.0
        return width / 100 * abs(expected)
    return width


def noise_problems(claims_: Sequence[Claim], summary: Mapping[str, Any],
                   variables: Mapping[str, Any], source: str = "claims.toml") -> list[str]:
    """One line per numeric claim whose ``noise`` does not resolve in the computed files, or
    whose tolerance is wider than that noise without a ``wider_because``."""
    out = []
    for c in claims_:
        if c.qualitative:
            continue
        where = f"{source}: claim '{c.id}': field 'noise'"
        if not c.noise:
            out.append(f"{where}: missing")
            continue
        try:
            width = noise_width(c, summary, variables)
        except (KeyError, IndexError, ValueError) as err:
            out.append(f"{where}: {c.noise!r} does not resolve to a number or an interval in "
                       f"the computed files ({err})")
            continue
        tol = tolerance_width(c)
        if tol > width * (1 + 1e-9) and not c.wider_because.strip():
            out.append(f"{where}: the tolerance ({c.describe_tolerance()}, +-{tol:.4g}) is "
                       f"wider than its noise {c.noise} (+-{width:.4g}) and gives no "
                       "'wider_because'")
    return out


if __name__ == "__main__":  # the command line lives above the ledger and the renderer
    sys.exit("python -m artifact.claims: the ledger's command line is `python -m artifact.verify` "
             "(same options: --strict, --print-current)")


def contended(outcomes: Sequence[Outcome], summary: Mapping[str, Any]) -> list[str]:
    """One line per timing claim (scope ``hardware-bound``) that rests on a contended run: one
    where most requests were contended (median foreign CPU above its threshold), or whose quiet
    gate did not pass (``summary.json: runs.<run>.contention``). The contended requests of any
    run are already left out of its timing statistics; a run that is mostly contended has few
    left. Runs measured before contention was recorded say nothing either way and are not
    counted here.

    >>> c = Claim(id="x", quantity="vars:a", expected=1.0, runs=("r",))
    >>> o = Outcome(claim=c, reproduced=1.0, difference=0.0, status="ok")
    >>> contended([o], {"runs": {"r": {"contention": {"foreign_cores_median": 0.4,
    ...     "threshold_cores": 0.1, "gate_passed": True}}}})
    ['x: a timing claim on contended run r (foreign CPU median 0.4 cores, threshold 0.1)']
    """
    runs = summary.get("runs")
    out = []
    for o in outcomes:
        if o.claim.scope != "hardware-bound" or not isinstance(runs, Mapping):
            continue
        for rid in sorted({r for pat in o.claim.runs for r in runs
                           if fnmatch.fnmatchcase(str(r), pat)}):
            entry = runs.get(rid)
            c = entry.get("contention") if isinstance(entry, Mapping) else None
            if not isinstance(c, Mapping):
                continue
            med, th = c.get("foreign_cores_median"), c.get("threshold_cores")
            if isinstance(med, int | float) and isinstance(th, int | float) and med > th:
                out.append(f"{o.claim.id}: a timing claim on contended run {rid} (foreign CPU "
                           f"median {med:g} cores, threshold {th:g})")
            elif c.get("gate_passed") is False:
                out.append(f"{o.claim.id}: a timing claim on run {rid}, measured after its "
                           "quiet gate failed (--allow-contention)")
    return out

