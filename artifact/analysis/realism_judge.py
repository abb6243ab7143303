"""How a realism gap is judged (issue 44): the process spread it carries, its tests and their
Monte-Carlo error.

A gap compares a synthetic side with REAL-A, each measured on **one** server process. Two
identical processes differ (the replicated stratum, :mod:`artifact.analysis.process`), so a
gap carries process variance ``sigma_real^2 + sigma_synthetic^2`` beside its sessions'. The
rule (:func:`process_sd`), per drafter and quantity of the gap:

- *measured*: the components of that drafter and quantity, real and synthetic;
- *largest*: a drafter without components (the draft model was not replicated), or a quantity
  one drafter lacks: per side, the largest component of that quantity over the measured
  drafters;
- *exact*: acceptance at one stream, where identical processes agree exactly: zero;
- *floor*: acceptance at more than one stream, whose process variance was not measured: the
  stratum's own REAL-B against REAL-A acceptance gap of that drafter, ``|floor|``, read as one
  draw of the gap's process difference;
- *none*: no process study (no component at all): sessions only.

The components were measured on the main chat sessions at one stream; applying them to the
other strata (code, five streams) is an assumption. The process draws are normal with that SD,
added in log units to a relative gap's bootstrap draws (``100 ((1 + g / 100) e^x - 1)``) and in
points to acceptance's; they are seeded per gap, so the result is reproducible.

>>> round(tost_p(np.array([-1.0, 0.0, 1.0, 2.0]), 5.0), 3)  # every draw inside the margin
0.2
>>> round(two_sided_p(np.array([1.0, 2.0, 3.0])), 3)  # every draw above 0
0.5

The tests a verdict reads (p of 'no gap', p of 'inside the margin') are analytic, free of the
seed: the gap normal (relative gaps in log units, acceptance in points) with variance its
sessions' by the delta method (:func:`cluster_se`: the bootstrap's variance with resamples
without end) plus the process's ``sd^2``. Tail counts of the draws would not do: with a family
of 71 Holm-corrected tests the smallest p must fall below 0.05 / 71, where even 100,000 draws
hold some 70, and verdicts moved with the seed. The intervals stay percentile ones of the draws
(their Monte-Carlo error is stated).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from artifact.contract import realism as contract
from artifact.stats import percentile_interval

FloatArray = npt.NDArray[np.float64]
SIDE_KIND = {"real-a": "real"}  # every other side compared with REAL-A is a synthetic one
MC_BATCHES = 20


@dataclass(frozen=True)
class ProcessSD:
    """The SD of a gap's process draws (the gap's unit) and the rule that gave it."""

    sd: float
    rule: str


def _component(process: contract.Process, drafter: str | None, side: str,
               quantity: str) -> float | None:
    """A component's ``sd_pct``; with ``drafter`` None the largest over the drafters."""
    got = [c["sd_pct"]["value"] for c in process["components"]
           if c["side"] == side and c["quantity"] == quantity
           and (drafter is None or c["drafter"] == drafter) and c["sd_pct"]["value"] is not None]
    return max(got) if got else None


def process_sd(process: contract.Process | None, *, drafter: str, quantity: str,
               streams: int, floor_points: float | None) -> ProcessSD:
    """The process SD a synthetic gap against REAL-A carries (module docstring's rule).

    >>> comp = lambda d, s, q, v: {"drafter": d, "side": s, "quantity": q,
    ...                            "sd_pct": {"value": v, "lo": None, "hi": None}}
    >>> p = {"components": [comp("none", "real", "e2e", 0.3), comp("none", "synthetic", "e2e",
    ...      0.4), comp("ngram-mod", "real", "e2e", 0.6), comp("ngram-mod", "synthetic",
    ...      "e2e", 0.8)]}
    >>> process_sd(p, drafter="none", quantity="e2e", streams=1, floor_points=None)
    ProcessSD(sd=0.5, rule='measured')
    >>> process_sd(p, drafter="draft-simple", quantity="e2e", streams=1, floor_points=None)
    ProcessSD(sd=1.0, rule='largest')
    >>> process_sd(p, drafter="ngram-mod", quantity="acceptance", streams=5, floor_points=-1.5)
    ProcessSD(sd=1.5, rule='floor')
    """
    if process is None or not process["components"]:
        return ProcessSD(0.0, "none")
    if quantity == "acceptance":
        if streams == 1:
            return ProcessSD(0.0, "exact")
        if floor_points is None or not math.isfinite(floor_points):
            return ProcessSD(0.0, "none")
        return ProcessSD(abs(floor_points), "floor")
    real = _component(process, drafter, "real", quantity)
    syn = _component(process, drafter, "synthetic", quantity)
    rule = "measured"
    if real is None or syn is None:
        real = _component(process, None, "real", quantity)
        syn = _component(process, None, "synthetic", quantity)
        rule = "largest"
    if real is None or syn is None:
        return ProcessSD(0.0, "none")
    return ProcessSD(math.hypot(real, syn), rule)


def with_process(draws: FloatArray, sd: float, *, relative: bool,
                 rng: np.random.Generator) -> FloatArray:
    """A gap's bootstrap draws with independent normal process draws of SD ``sd`` added: in
    log units (``sd`` in 100 log units) to a relative gap, in points to acceptance's."""
    if sd <= 0:
        return draws
    x = rng.normal(0.0, sd, size=draws.shape)
    if relative:
        out: FloatArray = 100 * ((1 + draws / 100) * np.exp(x / 100) - 1)
        return out
    return draws + x


def two_sided_p(draws: FloatArray) -> float:
    """Two-sided bootstrap p of 'no gap': twice the smaller tail at 0 (add-one), at most 1."""
    f = draws[np.isfinite(draws)]
    if not f.size:
        return math.nan
    return min(1.0, 2 * min(int((f <= 0).sum()), int((f >= 0).sum())) / (f.size + 1)
               + 2 / (f.size + 1))


def tost_p(draws: FloatArray, margin: float) -> float:
    """The two one-sided tests' bootstrap p of 'the gap lies inside ±margin': the larger of the
    tails at -margin and at +margin (add-one); below 0.05 exactly when the 90 % percentile
    interval lies inside the margin (up to the add-one)."""
    f = draws[np.isfinite(draws)]
    if not f.size or not math.isfinite(margin):
        return math.nan
    return min(1.0, (max(int((f <= -margin).sum()), int((f >= margin).sum())) + 1) / (f.size + 1))


def log_ratio_influence(num: FloatArray, den: FloatArray) -> FloatArray:
    """Each session's influence on ``log(sum num / sum den)`` (its linearization): ``num_i /
    sum num - den_i / sum den``; they sum to 0.

    >>> log_ratio_influence(np.array([1.0, 3.0]), np.array([1.0, 1.0])).tolist()
    [-0.25, 0.25]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = num / num.sum() - den / den.sum()
    return out


def cluster_se(u: FloatArray, clusters: Sequence[int] | None) -> float:
    """The standard error of a statistic with session influences ``u`` under the bootstrap of
    sessions (or of ``clusters``, each session's, numbered from 0), drawn without end: the
    influences summed per cluster, ``sqrt(sum (u_c - mean)^2)`` (the variance of a multinomial
    resample of the clusters; the delta method).

    >>> round(cluster_se(np.array([-1.0, 1.0, -1.0, 1.0]), None), 3)
    2.0
    >>> cluster_se(np.array([-1.0, 1.0, -1.0, 1.0]), [0, 0, 1, 1])  # each chunk sums to 0
    0.0
    """
    if clusters is not None:
        u = np.bincount(np.asarray(clusters, dtype=np.int64), weights=u).astype(np.float64)
    if not u.size or not np.isfinite(u).all():
        return math.nan
    return float(np.sqrt(((u - u.mean()) ** 2).sum()))


def normal_p(value: float, se: float) -> float:
    """Two-sided p of 'no gap' with the gap's estimate normal about ``value`` with SD ``se``:
    ``2 Phi(-|value| / se)``.

    >>> round(normal_p(1.959964, 1.0), 4)
    0.05
    """
    if not (math.isfinite(value) and math.isfinite(se)) or se <= 0:
        return math.nan
    return float(2 * _norm_sf(abs(value) / se))


def normal_tost_p(value: float, se: float, lo: float, hi: float) -> float:
    """The two one-sided tests' p of 'inside (lo, hi)' under the same normal: the larger of
    ``Phi(-(value - lo) / se)`` and ``Phi(-(hi - value) / se)``.

    >>> round(normal_tost_p(0.0, 1.0, -1.644854, 1.644854), 4)
    0.05
    """
    if not (math.isfinite(value) and math.isfinite(se)) or se <= 0 or math.isnan(lo + hi):
        return math.nan
    return float(max(_norm_sf((value - lo) / se), _norm_sf((hi - value) / se)))


def _norm_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))


def mc_se_p(p: float, n: int, *, two_sided: bool) -> float:
    """Monte-Carlo standard error of a bootstrap tail p from ``n`` draws (a two-sided p is
    twice a tail).

    >>> round(mc_se_p(0.5, 100_000, two_sided=False), 5)
    0.00158
    """
    if not math.isfinite(p) or n <= 0:
        return 0.0
    t = p / 2 if two_sided else p
    return (2 if two_sided else 1) * math.sqrt(t * (1 - t) / n)


def mc_se_ends(draws: FloatArray, confidences: Sequence[float] = (0.95, 0.90)) -> float:
    """The largest Monte-Carlo standard error of the interval ends by batch means: the ends of
    :data:`MC_BATCHES` batches of the draws, their SD over ``sqrt(MC_BATCHES)``."""
    f = draws[np.isfinite(draws)]
    n = f.size // MC_BATCHES
    if n < 2:
        return 0.0
    worst = 0.0
    batches = f[:n * MC_BATCHES].reshape(MC_BATCHES, n)
    for c in confidences:
        ends = np.array([percentile_interval(b, confidence=c) for b in batches])
        worst = max(worst, float(ends.std(axis=0, ddof=1).max()) / math.sqrt(MC_BATCHES))
    return worst


def chunks(order: Sequence[str], concurrency: int) -> dict[str, int]:
    """Each played session's chunk: at ``concurrency`` streams the plan sends the sessions in
    chunks of ``concurrency``, in play order (:func:`artifact.workloads.roundplan.rounds`),
    and a chunk's sessions share the server's batches.

    >>> chunks(["a", "b", "c", "d", "e"], 2)
    {'a': 0, 'b': 0, 'c': 1, 'd': 1, 'e': 2}
    """
    return {s: i // max(1, concurrency) for i, s in enumerate(order)}
