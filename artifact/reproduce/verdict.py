"""Three answers for a hardware-bound claim: an interval against an interval, by equivalence.

A rate or a speedup measured on two machines is never equal; the question is whether the two
differ by more than the study's own run-to-run noise. That noise is the claim's ``noise`` in
the ledger (the control's interval, the realism floor, a margin), as a half-width ``m`` in the
quantity's units (:func:`artifact.claims.noise_width`, read on the reference). The difference
``d = B - A`` gets a standard error from both sides' own intervals (each a symmetric normal
approximation: ``se = half-width / z``, ``z`` of the interval's level; the two sides are
independent, so ``se_d = sqrt(se_A² + se_B²)``), and then (two one-sided tests, TOST):

================  ===============================================================================
answer            when
================  ===============================================================================
``reproduced``    the 90 % interval of ``d`` lies inside ``[-m, +m]`` (edges included): both
                  one-sided tests reject a difference of ``m`` or more at 5 % (equivalence)
``differs``       the 95 % interval of ``d`` lies wholly beyond the margin (its low end above
                  ``+m`` or its high end below ``-m``, strictly): a difference larger than the
                  noise, at 2.5 % one-sided; such an interval also excludes 0
``cannot tell``   otherwise: the data cannot say which (too few prompts, too wide intervals, or
                  a difference about the size of the margin)
================  ===============================================================================

Where a side has only a point, not an interval, the answer is ``cannot tell (no interval)``
(:data:`NO_INTERVAL`); where the margin does not resolve on the reference, ``cannot tell``.

>>> a, b = Interval(lo=0.95, hi=1.05), Interval(lo=0.96, hi=1.06)
>>> equivalence(1.00, a, 1.01, b, margin=0.10).answer
'reproduced'
>>> equivalence(1.00, a, 1.30, Interval(lo=1.25, hi=1.35), margin=0.10).answer
'differs'
>>> equivalence(1.00, a, 1.10, Interval(lo=1.05, hi=1.15), margin=0.10).answer
'cannot tell'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from artifact import claims
from artifact.claims import Claim

REPRODUCED = "reproduced"
DIFFERS = "differs"
CANNOT_TELL = "cannot tell"
NO_INTERVAL = "cannot tell (no interval)"
ANSWERS = (REPRODUCED, DIFFERS, CANNOT_TELL, NO_INTERVAL)
EQUIVALENCE_LEVEL = 0.90  # TOST at 5 % each side
DIFFERENCE_LEVEL = 0.95

# interval keys beside a value, each with its level: (low key, high key) in a mapping, or a
# two-number list under one key
_PAIRS = (("lo", "hi"), ("low", "high"), ("ci_low", "ci_high"))
_LISTS = (("ci95", 0.95), ("ci90", 0.90))


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2)


@dataclass(frozen=True, kw_only=True)
class Interval:
    """A two-sided interval at ``level`` (the analysis's intervals are 95 % unless named)."""

    lo: float
    hi: float
    level: float = 0.95

    @property
    def se(self) -> float:
        """Its standard error under a symmetric normal approximation.

        >>> round(Interval(lo=-1.959964, hi=1.959964).se, 6)
        1.0
        """
        return (self.hi - self.lo) / 2 / _z(self.level)

    def as_list(self) -> list[float]:
        return [self.lo, self.hi]


@dataclass(frozen=True, kw_only=True)
class Equivalence:
    """One answer, and the numbers that gave it."""

    answer: str  # one of ANSWERS
    difference: float | None  # B - A
    ci90: Interval | None  # the difference's 90 % interval
    ci95: Interval | None
    margin: float | None
    why: str


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        return None
    return float(x)


def _pair(node: Any, level: float) -> Interval | None:
    """An interval held by ``node``: a mapping with low and high keys, or a two-number list."""
    if isinstance(node, Mapping):
        for lo, hi in _PAIRS:
            a, b = _number(node.get(lo)), _number(node.get(hi))
            if a is not None and b is not None and a <= b:
                return Interval(lo=a, hi=b, level=level)
        return None
    if isinstance(node, list) and len(node) == 2:
        a, b = _number(node[0]), _number(node[1])
        if a is not None and b is not None and a <= b:
            return Interval(lo=a, hi=b, level=level)
    return None


def interval_of(claim: Claim, summary: Mapping[str, Any], variables: Mapping[str, Any]
                ) -> Interval | None:
    """The interval the computed files give beside a claim's value, or ``None`` (a point).

    Looked for in the value's own mapping (``speedup.mean`` beside ``speedup.lo``/``.hi``;
    ``gap.value`` beside ``gap.ci95``, else ``gap.ci90``) and under ``<key>_ci`` beside it
    (``pooled`` and ``pooled_ci``). A pattern quantity (``*``) has none.

    >>> c = Claim(id="x", quantity="vars:cell.speedup.mean", expected=1.0)
    >>> interval_of(c, {}, {"cell": {"speedup": {"mean": 1.0, "lo": 0.9, "hi": 1.1}}})
    Interval(lo=0.9, hi=1.1, level=0.95)
    >>> c = Claim(id="x", quantity="vars:gap.value", expected=1.0)
    >>> interval_of(c, {}, {"gap": {"value": 3.2, "ci90": [0.7, 5.8]}}).level
    0.9
    >>> interval_of(Claim(id="x", quantity="vars:a.b", expected=1.0), {}, {"a": {"b": 1.0}})
    """
    if any(ch in claim.path for ch in "*?["):
        return None
    head, _, last = claim.path.rpartition(".")
    root = variables if claim.source == "vars" else summary
    try:
        parent = claims.lookup(root, head) if head else root
    except (KeyError, IndexError, ValueError):
        return None
    if not isinstance(parent, Mapping):
        return None
    found = _pair(parent, 0.95)
    if found is not None:
        return found
    for key, level in _LISTS:
        found = _pair(parent.get(key), level)
        if found is not None:
            return found
    return _pair(parent.get(f"{last}_ci"), 0.95)


def _interval(d: float, se: float, level: float) -> Interval:
    half = _z(level) * se
    return Interval(lo=d - half, hi=d + half, level=level)


def equivalence(a: float, a_iv: Interval | None, b: float, b_iv: Interval | None, *,
                margin: float | None) -> Equivalence:
    """The three answers (module docstring) for B's value against A's under ``margin``.

    The margin's edge counts as inside it:

    >>> iv = Interval(lo=-1.0, hi=1.0, level=0.90)
    >>> e = equivalence(0.0, iv, 0.0, iv, margin=math.sqrt(2))
    >>> e.answer, round(e.ci90.hi, 12) == round(math.sqrt(2), 12)
    ('reproduced', True)
    """
    d = b - a
    if a_iv is None or b_iv is None:
        side = "reference" if a_iv is None else "reproduction"
        return Equivalence(answer=NO_INTERVAL, difference=d, ci90=None, ci95=None,
                           margin=margin, why=f"the {side} gives a point, not an interval")
    se = math.hypot(a_iv.se, b_iv.se)
    ci90 = _interval(d, se, EQUIVALENCE_LEVEL)
    ci95 = _interval(d, se, DIFFERENCE_LEVEL)
    if margin is None:
        return Equivalence(answer=CANNOT_TELL, difference=d, ci90=ci90, ci95=ci95, margin=None,
                           why="no margin: the claim's noise does not resolve on the reference")
    top = margin * (1 + 1e-12) + 1e-15
    shown = (f"B - A {d:+.3g}, 90 % [{ci90.lo:+.3g}, {ci90.hi:+.3g}], "
             f"95 % [{ci95.lo:+.3g}, {ci95.hi:+.3g}], margin +-{margin:.3g}")
    if -top <= ci90.lo and ci90.hi <= top:
        return Equivalence(answer=REPRODUCED, difference=d, ci90=ci90, ci95=ci95,
                           margin=margin, why=f"{shown}: 90 % inside the margin")
    if ci95.lo > top or ci95.hi < -top:
        return Equivalence(answer=DIFFERS, difference=d, ci90=ci90, ci95=ci95, margin=margin,
                           why=f"{shown}: 95 % beyond the margin")
    return Equivalence(answer=CANNOT_TELL, difference=d, ci90=ci90, ci95=ci95, margin=margin,
                       why=f"{shown}: neither inside nor beyond it")


def margin_of(claim: Claim, summary: Mapping[str, Any], variables: Mapping[str, Any]
              ) -> float | None:
    """The claim's noise as a half-width on the reference (``None``: it does not resolve)."""
    try:
        return claims.noise_width(claim, summary, variables)
    except (KeyError, IndexError, ValueError):
        return None


def identical(a: float, b: float) -> bool:
    """Equal as the computed files round them (6 significant digits).

    >>> identical(0.994939, 0.9949390000001), identical(0.994939, 0.99494)
    (True, False)
    """
    return a == b or abs(b - a) <= 1e-9 * max(abs(a), abs(b))
