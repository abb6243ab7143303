"""The core study's verdicts on its predictions, judged with the variance the study measured
(issue 44, item 1): pure functions, no file I/O.

- **Sign verdict** of a cell, from its measured 95 % interval over prompts: ``right`` when the
  interval excludes 1 on the predicted side, ``wrong`` when it excludes 1 on the other side,
  ``undecided`` when it contains 1 (or has no ends, below two prompts). Tallied per drafter
  family (:data:`DRAFTER_FAMILY`) and over all.
- **One Holm family** over every pairwise drafter test of the study (every group's pairs
  together): :func:`study_holm`.
- **Interval score** (Gneiting & Raftery 2007, at alpha = 0.05) of a prediction interval against
  the measured mean, beside the same score of a reference forecast: :func:`interval_score`.
- **The pilot that would have sufficed**: the smallest pilot whose prediction interval, by the
  predictions file's own formula, excludes 1 (:func:`pilot_needed`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

ALPHA = 0.05
Verdict = Literal["right", "wrong", "undecided"]
VERDICTS: tuple[Verdict, ...] = ("right", "wrong", "undecided")
NGRAM, DRAFT_MODEL, ALL = "n-gram", "draft model", "all"
DRAFTER_FAMILY = {"ngram-mod": NGRAM, "ngram-mod-k16": NGRAM, "ngram-simple": NGRAM,
                  "draft-q2k": DRAFT_MODEL}
FAMILIES = (NGRAM, DRAFT_MODEL, ALL)
MAX_PILOT = 1_000_000  # searched up to here; beyond it the asymptote decides


def sign_verdict(lo: float | None, hi: float | None, predicted_sign: str) -> Verdict:
    """The sign verdict of a measured interval ``[lo, hi]`` on a prediction that the cell
    ``pays`` (above 1) or ``loses``.

    >>> sign_verdict(1.02, 1.2, "pays"), sign_verdict(0.9, 0.98, "pays")
    ('right', 'wrong')
    >>> sign_verdict(0.906, 1.059, "loses"), sign_verdict(None, None, "loses")
    ('undecided', 'undecided')
    """
    if lo is None or hi is None or lo <= 1 <= hi:
        return "undecided"
    side = "pays" if lo > 1 else "loses"
    return "right" if side == predicted_sign else "wrong"


def tally(verdicts: Iterable[tuple[str, Verdict]]) -> dict[str, dict[str, int]]:
    """Right, wrong and undecided by drafter family and over all (``verdicts``: drafter and
    verdict of each judged cell).

    >>> tally([("ngram-mod", "right"), ("draft-q2k", "right"), ("ngram-simple", "undecided")])
    ... # doctest: +NORMALIZE_WHITESPACE
    {'n-gram': {'right': 1, 'wrong': 0, 'undecided': 1},
     'draft model': {'right': 1, 'wrong': 0, 'undecided': 0},
     'all': {'right': 2, 'wrong': 0, 'undecided': 1}}
    """
    out: dict[str, dict[str, int]] = {f: {v: 0 for v in VERDICTS} for f in FAMILIES}
    for drafter, v in verdicts:
        out[DRAFTER_FAMILY[drafter]][v] += 1
        out[ALL][v] += 1
    return out


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm-adjusted p-values (step-down, monotone).

    >>> holm({"a": 0.01, "b": 0.04, "c": 0.03})
    {'a': 0.03, 'b': 0.06, 'c': 0.06}
    """
    order = sorted(pvalues, key=lambda k: pvalues[k])
    m = len(order)
    out: dict[str, float] = {}
    running = 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[k]))
        out[k] = round(running, 6)
    return dict(sorted(out.items()))


def study_holm(raw: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Holm over one family of every group's pairs together (``raw``: by group, by pair, the raw
    p); the adjusted p by group and pair.

    >>> study_holm({"g1": {"a vs b": 0.01}, "g2": {"a vs b": 0.02, "a vs c": 0.5}})
    {'g1': {'a vs b': 0.03}, 'g2': {'a vs b': 0.04, 'a vs c': 0.5}}
    """
    flat = {(g, pair): p for g, ps in raw.items() for pair, p in ps.items()}
    keys = {f"{i}": k for i, k in enumerate(flat)}
    adj = holm({i: flat[k] for i, k in keys.items()})
    out: dict[str, dict[str, float]] = {g: {} for g in raw}
    for i, (g, pair) in keys.items():
        out[g][pair] = adj[i]
    return {g: dict(sorted(v.items())) for g, v in out.items()}


def interval_score(lo: float, hi: float, x: float, alpha: float = ALPHA) -> float:
    """Gneiting and Raftery's (2007) interval score of the central (1 - alpha) interval
    ``[lo, hi]`` for the outcome ``x``: its width, plus 2/alpha times the distance by which
    ``x`` falls outside. Lower is better; a wide interval pays for its width, a narrow one that
    misses pays 40 times the miss at alpha = 0.05.

    >>> round(interval_score(0.9, 1.1, 1.0), 6), round(interval_score(0.9, 1.1, 1.2), 6)
    (0.2, 4.2)
    """
    return (hi - lo) + (2 / alpha) * max(lo - x, 0.0) + (2 / alpha) * max(x - hi, 0.0)


def mean_scores(scores: Iterable[tuple[str, float, float]]) -> dict[str, dict[str, Any]]:
    """By drafter family and over all (``scores``: drafter, the prediction's score, the
    reference's score of each judged cell): the mean of each, the cells counted, and which
    forecast scores better (lower; ``tie`` when equal at 4 places).

    >>> mean_scores([("ngram-mod", 0.5, 4.2), ("draft-q2k", 1.0, 0.5)])["all"]
    {'better': 'prediction', 'n': 2, 'prediction': 0.75, 'reference': 2.35}
    """
    by: dict[str, list[tuple[float, float]]] = {f: [] for f in FAMILIES}
    for drafter, pred, ref in scores:
        by[DRAFTER_FAMILY[drafter]].append((pred, ref))
        by[ALL].append((pred, ref))
    out: dict[str, dict[str, Any]] = {}
    for f, xs in by.items():
        if not xs:
            out[f] = {"better": None, "n": 0, "prediction": None, "reference": None}
            continue
        p = round(statistics.fmean(a for a, _ in xs), 4)
        r = round(statistics.fmean(b for _, b in xs), 4)
        out[f] = {"better": "prediction" if p < r else "reference" if r < p else "tie",
                  "n": len(xs), "prediction": p, "reference": r}
    return out


def _t975(df: float) -> float:
    from artifact.stats import t_quantile  # numpy: imported here, `doit` loads this package

    return t_quantile(1 - ALPHA / 2, df)


def pilot_needed(predicted: float, lo: float, hi: float, per_prompt: Sequence[float],
                 n_pilot: int, new_prompts: int) -> dict[str, Any]:
    """The smallest pilot (prompts) whose prediction interval, by the predictions file's formula
    ``predicted ± t(0.975, n - 1)·sqrt(var_boot + s²/new_prompts)``, excludes 1, with
    ``var_boot`` (recovered from the committed half-width) shrinking as 1/n and ``s`` (the sd of
    the per-prompt predictions) and the point held. Null, with the reason, when no pilot can:
    the new prompts' own spread ``1.96·s/sqrt(new_prompts)`` already reaches 1.

    >>> pilot_needed(1.3, 0.9, 1.7, [1.1, 1.3, 1.5], 3, 30)["n_pilot"]  # 3 prompts: half 0.40
    4
    >>> pilot_needed(1.05, 0.7, 1.4, [0.8, 1.05, 1.3], 3, 30)["n_pilot"] is None
    True
    """
    s = statistics.stdev(per_prompt) if len(per_prompt) > 1 else 0.0
    t_now = _t975(n_pilot - 1) if n_pilot > 1 else math.inf
    half = (hi - lo) / 2
    var_new = s * s / new_prompts
    var_boot = max((half / t_now) ** 2 - var_new, 0.0) if math.isfinite(t_now) else 0.0
    gap = abs(predicted - 1)
    floor = _t975(math.inf) * math.sqrt(var_new)
    base = {"var_boot": round(var_boot, 6), "s": round(s, 4), "floor_half": round(floor, 4),
            "distance_to_1": round(gap, 4)}

    def half_at(n: int) -> float:
        return _t975(n - 1) * math.sqrt(var_boot * n_pilot / n + var_new)

    if gap <= floor:
        return {**base, "n_pilot": None,
                "why": (f"even an infinite pilot cannot: the {new_prompts} new prompts' own "
                        f"spread alone gives a half-width of {floor:.4f} (1.96·s/sqrt("
                        f"{new_prompts})), at least the prediction's distance {gap:.4f} to 1")}
    if half_at(MAX_PILOT) >= gap:
        return {**base, "n_pilot": None,
                "why": f"more than {MAX_PILOT} pilot prompts (the half-width nears its floor)"}
    a, b = 2, MAX_PILOT  # half_at falls with n: the smallest n with half_at(n) < gap
    while a < b:
        m = (a + b) // 2
        if half_at(m) < gap:
            b = m
        else:
            a = m + 1
    return {**base, "n_pilot": a, "why": None}
