"""Pure statistics for the study: no I/O, no printing, no plotting.

Every function takes arrays (or mappings) and returns numbers or small frozen records. A
statistic that cannot be computed (empty input, a singular fit) is ``nan``, never 0: the caller
decides how to report it.

- :func:`summarize` — n, mean, median, p95 of a sample.
- :func:`t_interval` — Student-t confidence interval of a mean.
- :func:`bootstrap_mean_ci` — percentile-bootstrap interval of a mean, every resample drawn in one
  vectorized call (columns of a 2-D sample are resampled jointly, by row).
- :func:`ols` and :func:`breakeven` — straight-line least squares with its covariance, and the
  delta-method interval of ``x`` where the line reaches a given ``y``.
- :func:`matched_ratios` — per-key ratios of two keyed samples (mean, median, ratio of means).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

# scipy.special, not scipy.stats: the same t quantile (t_quantile) for 0.1 s of import instead of
# 0.45 s in each process that computes an interval (issue 32: every build worker did)
from scipy import special as _special

FloatArray = npt.NDArray[np.float64]

__all__ = [
    "Breakeven",
    "MatchedRatios",
    "OlsFit",
    "Summary",
    "bootstrap_mean_ci",
    "breakeven",
    "matched_ratios",
    "ols",
    "summarize",
    "t_interval",
]


def _as_1d(x: npt.ArrayLike) -> FloatArray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D sample, got shape {arr.shape}")
    return arr


@dataclass(frozen=True, kw_only=True)
class Summary:
    """Location summary of one sample (``nan`` where the sample is empty)."""

    n: int
    mean: float
    median: float
    p95: float


def summarize(x: npt.ArrayLike) -> Summary:
    """n, mean, median and 95th percentile (linear interpolation) of a sample.

    >>> s = summarize([1.0, 2.0, 3.0, 4.0])
    >>> s.n, s.mean, s.median, round(s.p95, 2)
    (4, 2.5, 2.5, 3.85)
    >>> math.isnan(summarize([]).mean)
    True
    """
    arr = _as_1d(x)
    if arr.size == 0:
        return Summary(n=0, mean=math.nan, median=math.nan, p95=math.nan)
    return Summary(
        n=int(arr.size),
        mean=float(arr.mean()),
        median=float(np.median(arr)),
        p95=float(np.percentile(arr, 95.0)),
    )


def t_quantile(q: float, df: float) -> float:
    """Student's t quantile: ``scipy.stats.t.ppf(q, df)``, the same double, from the function
    that computes it there (``scipy.special.stdtrit``), and the same ``nan`` and infinities
    outside its domain.

    >>> round(t_quantile(0.975, 2), 4), t_quantile(0.975, 0), t_quantile(1.0, 3)
    (4.3027, nan, inf)
    """
    if not (df > 0 and 0.0 <= q <= 1.0):  # nan too
        return math.nan
    if q in (0.0, 1.0):
        return -math.inf if q == 0.0 else math.inf
    return float(_special.stdtrit(df, q)) * 1.0 + 0.0  # as t.ppf's scale and loc: -0.0 is 0.0


def t_interval(x: npt.ArrayLike, *, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Student-t confidence interval of the mean (``nan`` when n < 2).

    >>> lo, hi = t_interval([1.0, 2.0, 3.0])   # mean 2, s 1, t(0.975, 2) = 4.3027
    >>> round(lo, 4), round(hi, 4)
    (-0.4841, 4.4841)
    """
    arr = _as_1d(x)
    n = arr.size
    if n < 2:
        return (math.nan, math.nan)
    mean = float(arr.mean())
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * float(arr.std(ddof=1)) / math.sqrt(n)
    return (mean - half, mean + half)


def bootstrap_mean_ci(
    x: npt.ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> tuple[FloatArray, FloatArray]:
    """Percentile-bootstrap interval of the mean, all resamples drawn in one call.

    ``x`` is 1-D (one sample) or 2-D ``(n_obs, n_vars)``: rows are resampled jointly, so each
    column gets the bootstrap interval of its own mean (columns may hold ``nan`` for missing
    values; a resample's mean then skips them). Returns ``(low, high)`` arrays of shape
    ``(n_vars,)`` (``(1,)`` for a 1-D sample); ``nan`` where a column has no values.

    >>> rng = np.random.default_rng(0)
    >>> lo, hi = bootstrap_mean_ci([2.0, 2.0, 2.0], rng=rng)
    >>> float(lo[0]), float(hi[0])
    (2.0, 2.0)
    >>> lo, hi = bootstrap_mean_ci(np.arange(10.0), rng=np.random.default_rng(1))
    >>> bool(lo[0] < 4.5 < hi[0])
    True
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"expected a 1-D or 2-D sample, got shape {arr.shape}")
    n, k = arr.shape
    if n == 0 or n_resamples < 1:
        return np.full(k, math.nan), np.full(k, math.nan)
    # The one draw: every resample at once. Each resample is turned into how often it drew each
    # row, so its column means are one matrix product (no gather of n_resamples * n * k values).
    idx = resample_draws(rng, n, n_resamples)
    present = ~np.isnan(arr)
    full = bool(present.all())
    # what is summed: the values (0 where missing) and, with missing ones, how many were drawn
    summed = [arr] if full else [np.where(present, arr, 0.0), present.astype(np.float64)]
    # einsum, not ``@``: a threaded BLAS spins on a busy 2-core machine, and numpy's own loop
    # gives the same bytes on every machine.
    columns = [np.ascontiguousarray(a.T) for a in summed]
    sums = [np.empty((n_resamples, k)) for _ in summed]
    # A block of resamples at a time, so that their counts stay in the cache while they are
    # made and used (issue 32: 0.21 s -> 0.16 s for the analysis's 164 groups); each sum is
    # the same one, over the same rows in the same order: the same bytes (a test).
    for lo, hi in _blocks(n_resamples, n):
        flat = idx[lo:hi].astype(np.intp)
        flat += (np.arange(hi - lo, dtype=np.intp) * n)[:, None]
        weights = np.bincount(flat.ravel(), minlength=(hi - lo) * n)
        weights = weights.reshape(hi - lo, n).astype(np.float64)
        for col, out in zip(columns, sums, strict=True):
            out[lo:hi] = np.einsum("kn,bn->bk", col, weights)
    if full:
        means = sums[0] / n
    else:
        means = np.full_like(sums[0], math.nan)
        # nan: the resample drew no value
        np.divide(sums[0], sums[1], out=means, where=sums[1] > 0)
    alpha = (1.0 - confidence) / 2.0
    low, high = _column_quantiles(means, (alpha, 1.0 - alpha))
    return low, high


def resample_draws(rng: np.random.Generator, n: int, n_resamples: int) -> npt.NDArray[Any]:
    """The rows each resample draws, ``(n_resamples, n)``, in one call: the stream that fixes
    :func:`bootstrap_mean_ci`'s bytes (16-bit draws where they suffice: fewer random bits)."""
    small = np.uint16 if n <= np.iinfo(np.uint16).max else np.int64
    return rng.integers(0, n, size=(n_resamples, n), dtype=small)


BLOCK_VALUES = 32768  # counts a block of resamples holds (256 KiB of float64)
# resamples a block holds at least: a few, so that a large group's blocks stay near
# BLOCK_VALUES too (64 made blocks of 5 MiB at 10,000 rows: 19.6 -> 16.8 us a row)
BLOCK_MIN = 8


def _blocks(n_resamples: int, n: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` ranges of resamples, of nearly equal sizes, each of at least
    :data:`BLOCK_MIN` (or all of them) and about :data:`BLOCK_VALUES` / ``n`` resamples.

    >>> _blocks(2000, 131)[:2], len(_blocks(2000, 131)), _blocks(10, 131), _blocks(130, 900)
    ([(0, 250), (250, 500)], 8, [(0, 10)], [(0, 43), (43, 86), (86, 130)])
    >>> len(_blocks(2000, 10_000)), _blocks(2000, 10_000)[0]
    (250, (0, 8))
    """
    size = max(BLOCK_MIN, BLOCK_VALUES // max(n, 1))
    count = max(1, n_resamples // size)  # each block at least size resamples
    cuts = [n_resamples * i // count for i in range(count + 1)]
    return list(itertools.pairwise(cuts))


def _column_quantile(v: FloatArray, q: float) -> FloatArray:
    """Quantile ``q`` of every column, skipping ``nan`` (numpy's default linear method).

    >>> _column_quantile(np.array([[1.0, 5.0], [2.0, np.nan], [4.0, 7.0]]), 0.5).tolist()
    [2.0, 6.0]
    """
    return _column_quantiles(v, (q,))[0]


def _column_quantiles(v: FloatArray, qs: Sequence[float]) -> list[FloatArray]:
    """:func:`_column_quantile` of each of ``qs``, the columns sorted once."""
    s = np.sort(v, axis=0)  # nan sorts last
    count = (~np.isnan(v)).sum(axis=0)
    return [_sorted_quantile(s, count, q) for q in qs]


def _sorted_quantile(s: FloatArray, count: npt.NDArray[np.int64], q: float) -> FloatArray:
    """Quantile ``q`` of every column of ``s`` (sorted columns, ``nan`` last; ``count``: the
    values that are not ``nan`` in each)."""
    h = (count - 1) * q
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(count - 1, 0))
    lo = np.maximum(lo, 0)
    cols = np.arange(s.shape[1])
    a, b = s[lo, cols], s[hi, cols]
    out = a + (h - lo) * (b - a)
    return np.where(count > 0, out, math.nan)


@dataclass(frozen=True, kw_only=True)
class OlsFit:
    """``y = a + beta * x`` by least squares; ``cov`` is the 2-by-2 covariance of ``(a, beta)``."""

    n: int
    a: float
    beta: float
    cov: tuple[tuple[float, float], tuple[float, float]]
    r2: float
    df: int  # residual degrees of freedom, n - 2


_NAN_COV = ((math.nan, math.nan), (math.nan, math.nan))


def ols(x: npt.ArrayLike, y: npt.ArrayLike) -> OlsFit:
    """Straight-line ordinary least squares with the classical covariance of the coefficients.

    ``nan`` coefficients when n < 2 or ``x`` is constant; ``nan`` covariance when n < 3.

    >>> f = ols([0.0, 1.0, 2.0, 3.0], [1.0, 3.0, 5.0, 7.5])
    >>> round(f.a, 4), round(f.beta, 4), round(f.r2, 4)   # 1 - 0.075 / 23.1875
    (0.9, 2.15, 0.9968)
    >>> round(f.cov[1][1], 6)     # s^2 / Sxx = (SSE 0.075 / 2) / 5
    0.0075
    """
    xa, ya = _as_1d(x), _as_1d(y)
    if xa.size != ya.size:
        raise ValueError(f"x and y differ in length ({xa.size} vs {ya.size})")
    n = int(xa.size)
    if n < 2:
        return OlsFit(n=n, a=math.nan, beta=math.nan, cov=_NAN_COV, r2=math.nan, df=n - 2)
    xm, ym = float(xa.mean()), float(ya.mean())
    dx, dy = xa - xm, ya - ym
    sxx = float(dx @ dx)
    if sxx <= 0.0 or not math.isfinite(sxx):
        return OlsFit(n=n, a=math.nan, beta=math.nan, cov=_NAN_COV, r2=math.nan, df=n - 2)
    beta = float(dx @ dy) / sxx
    a = ym - beta * xm
    resid = ya - (a + beta * xa)
    sse = float(resid @ resid)
    syy = float(dy @ dy)
    r2 = 1.0 - sse / syy if syy > 0.0 else math.nan
    if n < 3:
        return OlsFit(n=n, a=a, beta=beta, cov=_NAN_COV, r2=r2, df=n - 2)
    s2 = sse / (n - 2)
    var_beta = s2 / sxx
    var_a = s2 * (1.0 / n + xm * xm / sxx)
    cov_ab = -xm * s2 / sxx
    return OlsFit(n=n, a=a, beta=beta, cov=((var_a, cov_ab), (cov_ab, var_beta)), r2=r2, df=n - 2)


@dataclass(frozen=True, kw_only=True)
class Breakeven:
    """``x`` where a fitted line reaches ``y0``, with its delta-method interval."""

    x: float
    se: float
    low: float
    high: float


def breakeven(fit: OlsFit, y0: float, *, confidence: float = 0.95) -> Breakeven:
    """Solve ``y0 = a + beta * x`` for ``x`` with a delta-method interval.

    ``x = (y0 - a) / beta``; its gradient in ``(a, beta)`` is ``(-1/beta, -x/beta)``, so
    ``var(x) = g' C g`` with ``C`` the OLS covariance. ``y0`` is taken as known (its own
    sampling error is not propagated). The interval is ``x ± t(df) * se`` with the fit's
    residual degrees of freedom.

    >>> f = OlsFit(n=12, a=20.0, beta=40.0, cov=((4.0, -5.0), (-5.0, 9.0)), r2=0.9, df=10)
    >>> b = breakeven(f, 50.0)     # x = 0.75; g = (-0.025, -0.01875)
    >>> round(b.x, 6), round(b.se, 6)   # var = 0.0025 - 0.0046875 + 0.0031640625 = 0.03125**2
    (0.75, 0.03125)
    """
    a, beta = fit.a, fit.beta
    if not (math.isfinite(a) and math.isfinite(beta)) or beta == 0.0:
        return Breakeven(x=math.nan, se=math.nan, low=math.nan, high=math.nan)
    x = (y0 - a) / beta
    g0, g1 = -1.0 / beta, -x / beta
    (caa, cab), (_, cbb) = fit.cov
    var = g0 * g0 * caa + 2.0 * g0 * g1 * cab + g1 * g1 * cbb
    if fit.df < 1 or not math.isfinite(var) or var < 0.0:
        return Breakeven(x=x, se=math.nan, low=math.nan, high=math.nan)
    se = math.sqrt(var)
    half = t_quantile(0.5 + confidence / 2.0, fit.df) * se
    return Breakeven(x=x, se=se, low=x - half, high=x + half)


def fieller(fit: OlsFit, y0: float, *, confidence: float = 0.95) -> tuple[float, float]:
    """Fieller's interval for ``x = (y0 - a) / beta``: every ``x`` at which the fitted line's
    value is not distinguishable from ``y0`` (a t test with the fit's residual df).

    That set solves ``(y0 - a - beta x)^2 <= t^2 var(a + beta x)``, a quadratic in ``x``. It
    is a bounded interval only when the slope itself is distinguishable from 0
    (``beta^2 > t^2 var(beta)``); otherwise it is unbounded and ``(nan, nan)`` is returned. Unlike
    the delta method it is not symmetric about ``x`` and does not assume ``x`` normal, which
    matters when the slope is uncertain (a ratio whose denominator may be near 0).

    >>> f = OlsFit(n=12, a=20.0, beta=40.0, cov=((4.0, -5.0), (-5.0, 9.0)), r2=0.9, df=10)
    >>> [round(v, 3) for v in fieller(f, 50.0)]    # delta method: 0.75 +- 0.0696
    [0.685, 0.826]
    >>> fieller(OlsFit(n=5, a=20.0, beta=1.0, cov=((4.0, 0.0), (0.0, 9.0)), r2=0.1, df=3),
    ...         50.0)                              # slope within noise of 0: unbounded
    (nan, nan)
    """
    a, beta = fit.a, fit.beta
    (caa, cab), (_, cbb) = fit.cov
    if fit.df < 1 or not all(math.isfinite(v) for v in (a, beta, caa, cab, cbb, y0)):
        return math.nan, math.nan
    t2 = t_quantile(0.5 + confidence / 2.0, fit.df) ** 2
    d = y0 - a
    qa = beta * beta - t2 * cbb  # x^2 coefficient; <= 0: the set is unbounded
    qb = d * beta + t2 * cab  # minus half the x coefficient
    qc = d * d - t2 * caa
    disc = qb * qb - qa * qc
    if qa <= 0.0 or disc < 0.0:
        return math.nan, math.nan
    root = math.sqrt(disc)
    return (qb - root) / qa, (qb + root) / qa


@dataclass(frozen=True, kw_only=True)
class MatchedRatios:
    """Ratios ``num[k] / den[k]`` over the keys both samples share."""

    n_matched: int
    mean_ratio: float
    median_ratio: float
    ratio_of_means: float


def matched_ratios(
    num: Mapping[Hashable, float], den: Mapping[Hashable, float]
) -> MatchedRatios:
    """Per-key ratios over shared keys: their mean and median, and mean(num) / mean(den).

    Keys are visited in sorted order (by ``repr``), so the result does not depend on the order
    the mappings were built in. Keys whose denominator is not positive are dropped.

    >>> r = matched_ratios({"a": 2.0, "b": 6.0, "c": 1.0}, {"a": 1.0, "b": 2.0})
    >>> r.n_matched, r.mean_ratio, r.median_ratio, r.ratio_of_means
    (2, 2.5, 2.5, 2.6666666666666665)
    """
    keys = sorted((k for k in num.keys() & den.keys() if den[k] > 0.0), key=repr)
    if not keys:
        return MatchedRatios(
            n_matched=0, mean_ratio=math.nan, median_ratio=math.nan, ratio_of_means=math.nan
        )
    n = np.array([num[k] for k in keys], dtype=np.float64)
    d = np.array([den[k] for k in keys], dtype=np.float64)
    r = n / d
    return MatchedRatios(
        n_matched=len(keys),
        mean_ratio=float(r.mean()),
        median_ratio=float(np.median(r)),
        ratio_of_means=float(n.mean() / d.mean()),
    )


def cluster_weights(n_clusters: int, *, rng: np.random.Generator,
                    n_resamples: int = 2000) -> FloatArray:
    """How often each cluster (e.g. a session) is drawn in each resample: ``(n_resamples,
    n_clusters)`` multiplicities from one draw. A cluster bootstrap resamples whole clusters, so
    turns of one session stay together (they are not independent).

    >>> w = cluster_weights(3, rng=np.random.default_rng(0), n_resamples=4)
    >>> w.shape, w.sum(axis=1).tolist()
    ((4, 3), [3.0, 3.0, 3.0, 3.0])
    """
    if n_clusters == 0:
        return np.zeros((n_resamples, 0))
    idx = rng.integers(0, n_clusters, size=(n_resamples, n_clusters), dtype=np.int64)
    offsets = (np.arange(n_resamples, dtype=np.int64) * n_clusters)[:, None]
    counts = np.bincount((idx + offsets).ravel(), minlength=n_resamples * n_clusters)
    return counts.reshape(n_resamples, n_clusters).astype(np.float64)


def weighted_median(values: npt.ArrayLike, weights: npt.ArrayLike) -> FloatArray:
    """The (lower) median of ``values`` under each row of ``weights``: the smallest value whose
    cumulative weight reaches half the row's total; ``nan`` for a row of zero weight.

    ``weights`` is ``(n_rows, n)``; every row at once (one sort, one cumulative sum). With unit
    weights it is ``np.quantile(values, 0.5, method="inverted_cdf")``.

    >>> weighted_median([3.0, 1.0, 2.0, 10.0], np.ones((1, 4))).tolist()
    [2.0]
    >>> weighted_median([3.0, 1.0, 2.0], [[0, 0, 0], [5, 1, 1], [0, 1, 0]]).tolist()
    [nan, 3.0, 1.0]
    """
    v = _as_1d(values)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    if w.shape[1] != v.size:
        raise ValueError(f"weights have {w.shape[1]} columns for {v.size} values")
    if v.size == 0:
        return np.full(w.shape[0], math.nan)
    order = np.argsort(v, kind="stable")
    sv, sw = v[order], w[:, order]
    cum = np.cumsum(sw, axis=1)
    total = cum[:, -1]
    pos = (cum < (total / 2.0)[:, None]).sum(axis=1)
    pos = np.minimum(pos, v.size - 1)
    return np.where(total > 0, sv[pos], math.nan)


def percentile_interval(draws: npt.ArrayLike, *, confidence: float = 0.95
                        ) -> tuple[float, float]:
    """Percentile interval of bootstrap draws, skipping ``nan`` (``nan`` when none is left).

    >>> percentile_interval([1.0, np.nan, 2.0, 3.0], confidence=0.0)
    (2.0, 2.0)
    """
    d = _as_1d(draws)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return (math.nan, math.nan)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(d, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))
