"""Verdicts by scope: one claim, two run sets, two hardware fingerprints.

Pure functions: claims and the computed files of a reference run set A and a reproduction B
in, verdicts out. A numeric claim is judged by its scope:

- ``hardware-independent`` (acceptance at greedy decoding, counts): ``reproduced`` when B's
  value is identical to A's; where the protocol is not deterministic (the claim's ``noise`` is
  an interval, e.g. five streams), when it lies within that interval of A's value; a claim
  whose noise is ``"exact"`` but whose tolerance says why it is wider (``wider_because``:
  floating-point differences between CPUs) within that tolerance. Otherwise ``failed``.
- ``hardware-bound`` (rates, speedups): an interval against an interval, by equivalence
  against the claim's noise as the margin (:mod:`artifact.reproduce.verdict`): ``reproduced``,
  ``differs with hardware`` (on the same hardware: ``failed``), ``cannot tell``, or
  ``cannot tell (no interval)`` where a side gives only a point and the points' difference lies
  within the ledger's tolerance (points cannot show equivalence; beyond the tolerance they
  differ, as above, "points only" in ``why``). The calibrated speed ratio is said beside it.
- ``noise``: B's value against A's under the claim's tolerance: ``reproduced`` within it,
  beyond it ``noise differs`` on other hardware, ``failed`` on the same.
 A qualitative claim is evaluated on each side on
its own (:func:`artifact.claims.evaluate`): ``holds`` or ``violated``, whatever the hardware.
A claim whose runs are not all in the reproduction (a subset) is ``not run``; one whose value
cannot be computed on a side is ``missing``.

Strict mode (``doit reproduce --strict``) fails on any ``failed``, ``violated`` or ``missing``.

>>> from artifact.claims import Claim
>>> c = Claim(id="tps", quantity="vars:tps.mean", expected=50.0, rel=0.1, reason="r",
...           scope="hardware-bound", noise="vars:noise")
>>> va = {"tps": {"mean": 50.0, "lo": 49.0, "hi": 51.0}, "noise": 2.0}
>>> vb = {"tps": {"mean": 80.0, "lo": 79.0, "hi": 81.0}}
>>> judge(c, {}, va, {}, vb, same_hardware=False).verdict
'differs with hardware'
>>> judge(c, {}, va, {}, vb, same_hardware=True).verdict
'failed'
>>> judge(c, {}, va, {}, {"tps": {"mean": 50.5}}, same_hardware=False).verdict
'cannot tell (no interval)'
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from artifact import claims
from artifact.claims import Claim, Outcome
from artifact.reproduce import verdict
from artifact.reproduce.verdict import Equivalence

REPRODUCED = "reproduced"
DIFFERS = "differs with hardware"
NOISE = "noise differs"
CANNOT_TELL = verdict.CANNOT_TELL
NO_INTERVAL = verdict.NO_INTERVAL
FAILED = "failed"
HOLDS = "holds"
VIOLATED = "violated"
NOT_RUN = "not run"
MISSING = "missing"
VERDICTS = (REPRODUCED, HOLDS, DIFFERS, NOISE, CANNOT_TELL, NO_INTERVAL, NOT_RUN, FAILED,
            VIOLATED, MISSING)
FAILING = frozenset({FAILED, VIOLATED, MISSING})


@dataclass(frozen=True, kw_only=True)
class Judged:
    """One claim on both sides, and the verdict."""

    claim: Claim
    a: Outcome  # the reference's value (its status against the ledger's expected value)
    b: Outcome  # the reproduction's value (its status against the ledger's expected value)
    verdict: str
    why: str  # one line: what decided the verdict
    band: tuple[float, float] | None  # numeric: A's value plus and minus the margin judged by
    missing_runs: tuple[str, ...] = ()
    equivalence: Equivalence | None = None  # a hardware-bound claim's three answers
    speed_ratio: float | None = None  # hardware-bound: the reproduction's calibrated ratio

    @property
    def failing(self) -> bool:
        return self.verdict in FAILING


def limit(claim: Claim, reference: float) -> float:
    """The largest allowed difference from the reference value.

    >>> limit(Claim(id="x", quantity="vars:a", expected=2.0, rel=0.1), 3.0)
    0.30000000000000004
    """
    if claim.rel is not None:
        return claim.rel * abs(reference)
    return claim.abs if claim.abs is not None else 0.0


def missing_runs(claim: Claim, reference_runs: Sequence[str],
                 reproduced_runs: Sequence[str]) -> tuple[str, ...]:
    """Runs of the reference that the claim draws on but the reproduction lacks.

    >>> c = Claim(id="x", quantity="vars:a", expected=1.0, runs=("final-ngram-*", "final-none"))
    >>> missing_runs(c, ["final-none", "final-ngram-a", "final-ngram-b"], ["final-none",
    ...              "final-ngram-a"])
    ('final-ngram-b',)
    """
    wanted = {r for pat in claim.runs for r in reference_runs if fnmatch.fnmatchcase(r, pat)}
    # a pattern no run of the reference matches draws on another runs root (the workload
    # study's experiments/runs-workload/): the reproduction did not run it either
    elsewhere = {pat for pat in claim.runs
                 if not any(fnmatch.fnmatchcase(r, pat) for r in reference_runs)}
    return tuple(sorted((wanted - set(reproduced_runs)) | elsewhere))


def judge(claim: Claim, summary_a: Mapping[str, Any], vars_a: Mapping[str, Any],
          summary_b: Mapping[str, Any], vars_b: Mapping[str, Any], *, same_hardware: bool,
          not_run: Sequence[str] = (), hardware_note: str = "",
          speed_ratio: float | None = None) -> Judged:
    """The verdict of one claim (``not_run``: runs it needs that B did not reproduce;
    ``hardware_note``: why the hardware is not the same, said beside a claim that differs with
    it; ``speed_ratio``: B's calibrated speed ratio, said beside every hardware-bound one)."""
    [a] = claims.check([claim], summary_a, vars_a)
    [b] = claims.check([claim], summary_b, vars_b)
    if not_run:
        return Judged(claim=claim, a=a, b=b, verdict=NOT_RUN, band=None,
                      why=f"not reproduced: {', '.join(not_run)}", missing_runs=tuple(not_run))
    if claim.qualitative:
        if b.status == "missing":
            return Judged(claim=claim, a=a, b=b, verdict=MISSING, band=None,
                          why="no value to test in the reproduction")
        held = b.status == "ok"
        shown = claim.describe_expected()
        return Judged(claim=claim, a=a, b=b, verdict=HOLDS if held else VIOLATED, band=None,
                      why=f"every value {shown}" if held else
                      f"{b.reproduced:.4g} breaks {shown}")
    va, vb = a.reproduced, b.reproduced
    if va is None or vb is None:
        side = "reference" if va is None else "reproduction"
        return Judged(claim=claim, a=a, b=b, verdict=MISSING, band=None,
                      why=f"no value in the {side}")
    if isinstance(va, str) or isinstance(vb, str):
        same = str(va) == str(vb)
        return Judged(claim=claim, a=a, b=b, verdict=REPRODUCED if same else FAILED,
                      band=None, why="same" if same else f"{vb} instead of {va}")
    lim = limit(claim, va)
    diff = vb - va
    if claim.scope == "hardware-bound":
        return _hardware_bound(claim, a, b, summary_a, vars_a, summary_b, vars_b,
                               same_hardware=same_hardware, hardware_note=hardware_note,
                               speed_ratio=speed_ratio)
    if claim.scope == "hardware-independent":
        return _hardware_independent(claim, a, b, summary_a, vars_a)
    band = (va - lim, va + lim)
    if claim.within(diff, lim):
        return Judged(claim=claim, a=a, b=b, verdict=REPRODUCED, band=band,
                      why=f"{diff:+.3g} within {claim.describe_tolerance()}")
    beyond = f"{diff:+.3g} beyond {claim.describe_tolerance()}"
    if same_hardware:
        return Judged(claim=claim, a=a, b=b, verdict=FAILED, band=band,
                      why=f"{beyond} on the same hardware")
    other = f"other hardware ({hardware_note})" if hardware_note else "other hardware"
    return Judged(claim=claim, a=a, b=b, verdict=NOISE, band=band, why=f"{beyond} on {other}")


def _numbers(a: Outcome, b: Outcome) -> tuple[float, float]:
    assert isinstance(a.reproduced, float) and isinstance(b.reproduced, float)
    return a.reproduced, b.reproduced


def _hardware_independent(claim: Claim, a: Outcome, b: Outcome, summary_a: Mapping[str, Any],
                          vars_a: Mapping[str, Any]) -> Judged:
    """Identical; or, where the protocol is not deterministic (the claim's noise is an
    interval, not "exact"), within that interval of A's value. A claim whose noise is "exact"
    but whose tolerance says why it is wider (``wider_because``) may differ by that much."""
    va, vb = _numbers(a, b)
    diff = vb - va
    if verdict.identical(va, vb):
        return Judged(claim=claim, a=a, b=b, verdict=REPRODUCED, band=(va, va), why="identical")
    width = None if claim.noise == claims.EXACT else verdict.margin_of(claim, summary_a, vars_a)
    if width is not None:
        ok = abs(diff) <= width * (1 + 1e-12)
        return Judged(claim=claim, a=a, b=b, verdict=REPRODUCED if ok else FAILED,
                      band=(va - width, va + width),
                      why=f"{diff:+.3g} {'within' if ok else 'beyond'} its own interval "
                          f"(+-{width:.3g}, {claim.noise})"
                          + ("" if ok else "; should not depend on the hardware"))
    lim = limit(claim, va)
    source = ("" if claim.noise in ("", claims.EXACT) else
              f" ({claim.noise} does not resolve on the reference)")
    if lim > 0 and claim.within(diff, lim):
        return Judged(claim=claim, a=a, b=b, verdict=REPRODUCED, band=(va - lim, va + lim),
                      why=f"not identical: {diff:+.3g} within {claim.describe_tolerance()}"
                          f"{source}")
    return Judged(claim=claim, a=a, b=b, verdict=FAILED, band=(va - lim, va + lim),
                  why=f"not identical: {diff:+.3g} beyond {claim.describe_tolerance()}{source}; "
                      "should not depend on the hardware")


def _hardware_bound(claim: Claim, a: Outcome, b: Outcome, summary_a: Mapping[str, Any],
                    vars_a: Mapping[str, Any], summary_b: Mapping[str, Any],
                    vars_b: Mapping[str, Any], *, same_hardware: bool, hardware_note: str,
                    speed_ratio: float | None) -> Judged:
    """An interval against an interval, by equivalence against the claim's noise
    (:mod:`artifact.reproduce.verdict`), with the calibrated speed ratio said beside it."""
    va, vb = _numbers(a, b)
    margin = verdict.margin_of(claim, summary_a, vars_a)
    eq = verdict.equivalence(va, verdict.interval_of(claim, summary_a, vars_a),
                             vb, verdict.interval_of(claim, summary_b, vars_b), margin=margin)
    lim = limit(claim, va)
    band = (va - margin, va + margin) if margin is not None else (va - lim, va + lim)
    ratio = (f"calibrated speed ratio x{speed_ratio:.2f}" if speed_ratio is not None else
             "no calibrated speed ratio")
    why = f"{eq.why}; {ratio}"
    beyond = False
    if eq.answer == verdict.NO_INTERVAL:
        diff = vb - va
        beyond = not claim.within(diff, lim)
        why = (f"{eq.why} (the points: {diff:+.3g}, {'beyond' if beyond else 'within'} "
               f"{claim.describe_tolerance()}); {ratio}")
        if not beyond:  # equivalence needs intervals; points within the band show no more
            return Judged(claim=claim, a=a, b=b, verdict=NO_INTERVAL, band=band, why=why,
                          equivalence=eq, speed_ratio=speed_ratio)
    if eq.answer == verdict.DIFFERS or beyond:  # points beyond the noise band differ too
        why = why if beyond else f"{eq.why}; {ratio}"
        if same_hardware:
            return Judged(claim=claim, a=a, b=b, verdict=FAILED, band=band,
                          why=f"{why}, on the same hardware", equivalence=eq,
                          speed_ratio=speed_ratio)
        other = f"other hardware ({hardware_note})" if hardware_note else "other hardware"
        return Judged(claim=claim, a=a, b=b, verdict=DIFFERS, band=band,
                      why=f"{why}, on {other}", equivalence=eq, speed_ratio=speed_ratio)
    return Judged(claim=claim, a=a, b=b, verdict=REPRODUCED if eq.answer == verdict.REPRODUCED
                  else CANNOT_TELL, band=band, why=why, equivalence=eq, speed_ratio=speed_ratio)


def judge_all(ledger: Sequence[Claim], summary_a: Mapping[str, Any], vars_a: Mapping[str, Any],
              summary_b: Mapping[str, Any], vars_b: Mapping[str, Any], *, same_hardware: bool,
              runs_a: Sequence[str], runs_b: Sequence[str],
              hardware_note: str = "", speed_ratio: float | None = None) -> list[Judged]:
    """Every claim of the ledger, in ledger order."""
    return [judge(c, summary_a, vars_a, summary_b, vars_b, same_hardware=same_hardware,
                  not_run=missing_runs(c, runs_a, runs_b), hardware_note=hardware_note,
                  speed_ratio=speed_ratio)
            for c in ledger]


def counts(judged: Sequence[Judged]) -> dict[str, int]:
    """How many claims got each verdict (every verdict listed, zeros included)."""
    return {v: sum(1 for j in judged if j.verdict == v) for v in VERDICTS}


def strict_failures(judged: Sequence[Judged]) -> list[Judged]:
    """What fails ``--strict``: a failed, violated or missing claim."""
    return [j for j in judged if j.failing]
