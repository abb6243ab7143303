"""The core study's control offset (issue 44, item 1): the second no-draft run of each group ran
faster than the first in every group. How large is that, and is it the interleave's order or a
request's place in its round? Pure functions over the quiet requests; no file I/O.

- **Pooled offset**: each prompt's control speedup (no-draft time per token over the control's,
  passes averaged first) averaged over the groups that measured it, then the mean over prompts
  with a 95 % t-interval over prompts (a prompt of a task is measured on every target: the
  prompt is the unit, not the (group, prompt)).
- **Sign test over groups**: how many group control means lie above 1, two-sided binomial p at
  one half.
- **Order**: per (group, prompt, pass) with a quiet request in both the no-draft run and the
  control, the ratio none / control of their times per token; the ratios where the control ran
  before the no-draft request of its round against those where it ran after, Welch's t-test.
- **Place**: the same ratios regressed on the control's place in the round minus the no-draft
  run's (``round_pos``: 0 first), least squares; the slope's p.

The (group, prompt, pass) ratios are taken as independent units; the prompt's own level cancels
in each ratio.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ALPHA = 0.05


@dataclass(frozen=True)
class Pair:
    """One (group, prompt, pass) measured quietly by both the no-draft run and the control."""

    group: str
    prompt: str
    ratio: float  # none's time per token over the control's: above 1, the control is faster
    control_pos: int
    none_pos: int


def _interval(xs: Sequence[float]) -> dict[str, Any]:
    from artifact.stats import t_quantile

    n = len(xs)
    mean = statistics.fmean(xs) if xs else math.nan
    if n < 2:
        return {"mean": round(mean, 4) if xs else None, "lo": None, "hi": None, "n": n}
    half = t_quantile(1 - ALPHA / 2, n - 1) * statistics.stdev(xs) / math.sqrt(n)
    return {"mean": round(mean, 4), "lo": round(mean - half, 4), "hi": round(mean + half, 4),
            "n": n}


def pooled(per_group: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """Each prompt's control speedup averaged over its groups, then mean and 95 % t-interval
    over prompts, with the one-sample t-test's p against 1.

    >>> pooled({"g1": {"a": 1.02, "b": 1.0}, "g2": {"a": 1.04}})["mean"]
    1.015
    """
    from scipy import stats

    by: dict[str, list[float]] = {}
    for ups in per_group.values():
        for p, x in ups.items():
            by.setdefault(p, []).append(x)
    xs = [statistics.fmean(v) for _, v in sorted(by.items())]
    out = _interval(xs)
    p_vs_1 = (float(stats.ttest_1samp(xs, 1.0).pvalue)
              if len(xs) > 1 and statistics.pstdev(xs) > 0 else None)
    return {**out, "p_vs_1": None if p_vs_1 is None else round(p_vs_1, 4),
            "unit": "prompt (each prompt's control speedup averaged over the groups that "
                    "measured it)"}


def sign_test(means: Sequence[float]) -> dict[str, Any]:
    """Group control means above 1, of the groups whose mean is not exactly 1, and the
    two-sided binomial p at one half.

    >>> sign_test([1.01, 1.02, 1.003, 1.015, 1.005, 1.0025])
    {'above': 6, 'n': 6, 'p': 0.0312}
    """
    from scipy import stats

    above = sum(1 for m in means if m > 1)
    n = sum(1 for m in means if m != 1)
    p = float(stats.binomtest(above, n, 0.5).pvalue) if n else None
    return {"above": above, "n": n, "p": None if p is None else round(p, 4)}


def order_test(pairs: Sequence[Pair]) -> dict[str, Any]:
    """The ratio none / control when the control ran before the no-draft request of its round
    against after: the mean of each, their difference (before minus after) and Welch's p.

    >>> ps = [Pair("g", "a", r, c, n) for r, c, n in
    ...       [(1.0, 0, 1), (1.02, 0, 1), (1.01, 1, 0), (1.03, 1, 0)]]
    >>> order_test(ps)["difference"]
    -0.01
    """
    from scipy import stats

    before = [p.ratio for p in pairs if p.control_pos < p.none_pos]
    after = [p.ratio for p in pairs if p.control_pos > p.none_pos]
    p = (float(stats.ttest_ind(before, after, equal_var=False).pvalue)
         if len(before) > 1 and len(after) > 1 else None)
    mb = statistics.fmean(before) if before else None
    ma = statistics.fmean(after) if after else None
    return {"control_first": {"mean": None if mb is None else round(mb, 4), "n": len(before)},
            "control_after": {"mean": None if ma is None else round(ma, 4), "n": len(after)},
            "difference": None if mb is None or ma is None else round(mb - ma, 4),
            "test": "Welch's t-test over (group, prompt, pass) ratios",
            "p": None if p is None or math.isnan(p) else round(p, 4)}


def place_test(pairs: Sequence[Pair]) -> dict[str, Any]:
    """The ratio none / control regressed on the control's place minus the no-draft run's:
    slope per place, and its p (least squares).

    >>> ps = [Pair("g", "a", 1 + 0.01 * (c - n), c, n) for c, n in [(0, 1), (2, 0), (1, 3)]]
    >>> place_test(ps)["slope"]
    0.01
    """
    from scipy import stats

    xs = [float(p.control_pos - p.none_pos) for p in pairs]
    ys = [p.ratio for p in pairs]
    if len(set(xs)) < 2:
        return {"slope": None, "p": None, "n": len(xs),
                "test": "least-squares slope over (group, prompt, pass) ratios"}
    fit = stats.linregress(xs, ys)
    p = float(fit.pvalue)
    return {"slope": round(float(fit.slope), 5), "p": None if math.isnan(p) else round(p, 4),
            "n": len(xs), "test": "least-squares slope over (group, prompt, pass) ratios"}


def control(per_group: Mapping[str, Mapping[str, float]], means: Mapping[str, float],
            pairs: Sequence[Pair]) -> dict[str, Any]:
    """Everything under core.json's ``control``: the group means, the pooled offset, the sign
    test, and the order and place tests."""
    return {"group_means": dict(sorted(means.items())), "pooled": pooled(per_group),
            "sign_test": sign_test(list(means.values())), "order": order_test(pairs),
            "place": place_test(pairs)}
