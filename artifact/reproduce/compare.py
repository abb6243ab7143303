"""Verdicts by scope: one claim, two run sets, two hardware fingerprints.

Pure functions: claims and the computed files of a reference run set A and a reproduction B
in, verdicts out. For a numeric claim, B's value is compared with A's under the claim's own
tolerance (relative to A's value), and a value beyond it is judged by the claim's scope:

==========================  ==============================  ===============================
scope                       beyond tolerance, other hardware  beyond tolerance, same hardware
==========================  ==============================  ===============================
hardware-independent        ``failed``                      ``failed``
hardware-bound              ``differs with hardware``       ``failed``
noise                       ``noise differs``               ``failed``
==========================  ==============================  ===============================

Within tolerance a claim is ``reproduced``. A qualitative claim is evaluated on each side on
its own (:func:`artifact.claims.evaluate`): ``holds`` or ``violated``, whatever the hardware.
A claim whose runs are not all in the reproduction (a subset) is ``not run``; one whose value
cannot be computed on a side is ``missing``.

Strict mode (``doit reproduce --strict``) fails on any ``failed``, ``violated`` or ``missing``.

>>> from artifact.claims import Claim
>>> c = Claim(id="tps", quantity="vars:tps", expected=50.0, rel=0.1, reason="r",
...           scope="hardware-bound")
>>> judge(c, {}, {"tps": 50.0}, {}, {"tps": 80.0}, same_hardware=False).verdict
'differs with hardware'
>>> judge(c, {}, {"tps": 50.0}, {}, {"tps": 80.0}, same_hardware=True).verdict
'failed'
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from artifact import claims
from artifact.claims import Claim, Outcome

REPRODUCED = "reproduced"
DIFFERS = "differs with hardware"
NOISE = "noise differs"
FAILED = "failed"
HOLDS = "holds"
VIOLATED = "violated"
NOT_RUN = "not run"
MISSING = "missing"
VERDICTS = (REPRODUCED, HOLDS, DIFFERS, NOISE, NOT_RUN, FAILED, VIOLATED, MISSING)
FAILING = frozenset({FAILED, VIOLATED, MISSING})


@dataclass(frozen=True, kw_only=True)
class Judged:
    """One claim on both sides, and the verdict."""

    claim: Claim
    a: Outcome  # the reference's value (its status against the ledger's expected value)
    b: Outcome  # the reproduction's value (its status against the ledger's expected value)
    verdict: str
    why: str  # one line: what decided the verdict
    band: tuple[float, float] | None  # numeric: A's value plus and minus the tolerance
    missing_runs: tuple[str, ...] = ()

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
          not_run: Sequence[str] = (), hardware_note: str = "") -> Judged:
    """The verdict of one claim (``not_run``: runs it needs that B did not reproduce;
    ``hardware_note``: why the hardware is not the same, e.g. the calibrated speed ratio, said
    beside a claim that differs with it)."""
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
    band = (va - lim, va + lim)
    diff = vb - va
    if claim.within(diff, lim):
        return Judged(claim=claim, a=a, b=b, verdict=REPRODUCED, band=band,
                      why=f"{diff:+.3g} within {claim.describe_tolerance()}")
    beyond = f"{diff:+.3g} beyond {claim.describe_tolerance()}"
    if claim.scope == "hardware-independent":
        return Judged(claim=claim, a=a, b=b, verdict=FAILED, band=band,
                      why=f"{beyond}; should not depend on the hardware")
    if same_hardware:
        return Judged(claim=claim, a=a, b=b, verdict=FAILED, band=band,
                      why=f"{beyond} on the same hardware")
    other = f"other hardware ({hardware_note})" if hardware_note else "other hardware"
    return Judged(claim=claim, a=a, b=b, verdict=DIFFERS if claim.scope == "hardware-bound"
                  else NOISE, band=band, why=f"{beyond} on {other}")


def judge_all(ledger: Sequence[Claim], summary_a: Mapping[str, Any], vars_a: Mapping[str, Any],
              summary_b: Mapping[str, Any], vars_b: Mapping[str, Any], *, same_hardware: bool,
              runs_a: Sequence[str], runs_b: Sequence[str],
              hardware_note: str = "") -> list[Judged]:
    """Every claim of the ledger, in ledger order."""
    return [judge(c, summary_a, vars_a, summary_b, vars_b, same_hardware=same_hardware,
                  not_run=missing_runs(c, runs_a, runs_b), hardware_note=hardware_note)
            for c in ledger]


def counts(judged: Sequence[Judged]) -> dict[str, int]:
    """How many claims got each verdict (every verdict listed, zeros included)."""
    return {v: sum(1 for j in judged if j.verdict == v) for v in VERDICTS}


def strict_failures(judged: Sequence[Judged]) -> list[Judged]:
    """What fails ``--strict``: a failed, violated or missing claim."""
    return [j for j in judged if j.failing]
