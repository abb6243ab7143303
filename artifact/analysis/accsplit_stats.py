"""Tagged values, intervals and tests of the acceptance-split study (pure; no I/O).

Every number the study writes says what it is: ``measured`` (server counters, reply timings,
arrival times as recorded) or ``estimated`` (derived from the client's view of the stream, or
a difference of group means standing in for a quantity nobody counted). Every interval names
its units (``over``: prompts, windows, requests) and its method (``t``: Student-t over one
value per unit; ``t-ratio``: a ratio of sums, the delta method with the units as clusters and
t with n - 1 degrees of freedom). An interval over fewer than three units is ``null`` with the
reason (over two, Student-t has one degree of freedom and a half-width of 12.7 standard errors:
no information), never a zero-width interval. A quantity with a range (accepted tokens per round
lie in [0, k], their differences in [-k, k], times above 0) gets its interval intersected with
that range, which keeps the coverage, and none when the interval covers the whole range.

Units: the requests of one prompt share its text and, across budgets, seed and prefix, so
they are not independent; where requests share a prompt the prompt is the unit (its requests
are reduced to one value first). Where the question is about windows, the window is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from artifact import stats
from artifact.contract.accsplit import Friedman, Interval, Kind, Value

MEASURED: Kind = "measured"
ESTIMATED: Kind = "estimated"
CONFIDENCE = 0.95
MIN_UNITS = 3  # fewer units get no interval (t with one degree of freedom says nothing)
Range = tuple[float, float]


def value(x: float | None, kind: Kind) -> Value:
    """A tagged value; ``nan`` becomes ``None``.

    >>> value(float("nan"), MEASURED)
    {'value': None, 'kind': 'measured'}
    """
    return Value(value=None if x is None or not math.isfinite(x) else float(x), kind=kind)


def interval(xs: Sequence[float | None], *, kind: Kind, over: str, within: Range | None = None,
             confidence: float = CONFIDENCE) -> Interval:
    """n, mean, sd and the t-interval of the mean of the finite values of ``xs``, intersected
    with ``within`` (where the quantity lies) when given.

    >>> iv = interval([1.0, 2.0, 3.0], kind=MEASURED, over="windows")
    >>> iv['n'], iv['mean'], iv['sd'], round(iv['low'], 4), round(iv['high'], 4)
    (3, 2.0, 1.0, -0.4841, 4.4841)
    >>> cut = interval([1.0, 2.0, 3.0], kind=MEASURED, over="windows", within=(0.0, 10.0))
    >>> cut['low'], round(cut['high'], 4)
    (0.0, 4.4841)
    >>> wide = interval([0.0, 4.0, 0.0], kind=MEASURED, over="windows", within=(0.0, 4.0))
    >>> wide['low'], wide['ci_reason']
    (None, 'the 95% interval covers the whole range [0, 4]')
    >>> two = interval([1.0, 2.0], kind=MEASURED, over="windows")
    >>> two['n'], two['mean'], round(two['sd'], 4), two['low'], two['ci_reason']
    (2, 1.5, 0.7071, None, 'fewer than three independent windows')
    >>> interval([None], kind=ESTIMATED, over="runs")['ci_reason']
    'no value'
    """
    arr = np.asarray([x for x in xs if x is not None and math.isfinite(x)], dtype=np.float64)
    n = int(arr.size)
    if n == 0:
        return Interval(n=0, mean=None, sd=None, low=None, high=None, ci_reason="no value",
                        kind=kind, over=over, method="t")
    mean = float(arr.mean())
    sd = float(arr.std(ddof=1)) if n >= 2 else None
    if n < MIN_UNITS:
        return Interval(n=n, mean=mean, sd=sd, low=None, high=None,
                        ci_reason=f"fewer than three independent {over}", kind=kind, over=over,
                        method="t")
    lo, hi = stats.t_interval(arr, confidence=confidence)
    iv = Interval(n=n, mean=mean, sd=sd, low=lo, high=hi, ci_reason=None, kind=kind,
                  over=over, method="t")
    return bounded(iv, within, confidence) if within is not None else iv


def ratio_interval(units: Sequence[tuple[float, float]], *, kind: Kind, over: str,
                   within: Range | None = None, confidence: float = CONFIDENCE) -> Interval:
    """The pooled ratio ``sum a / sum b`` over units ``(a, b)``, with the delta-method
    interval that treats each unit as a cluster: ``z_i = (a_i - R b_i) / mean(b)``, standard
    error ``sd(z) / sqrt(n)``, Student-t with n - 1 degrees of freedom. ``sd`` is that of
    ``z`` (the linearised per-unit values).

    >>> iv = ratio_interval([(2.0, 1.0), (6.0, 2.0), (8.0, 3.0)], kind=MEASURED, over="prompts")
    >>> iv['mean'], iv['method'], round(iv['low'], 4), round(iv['high'], 4)
    (2.6666666666666665, 't-ratio', 1.8386, 3.4947)
    >>> ratio_interval([(1.0, 0.0)], kind=MEASURED, over="prompts")['ci_reason']
    'no value'
    >>> ratio_interval([(1.0, 1.0), (2.0, 1.0)], kind=MEASURED, over="prompts")['ci_reason']
    'fewer than three independent prompts'
    """
    pairs = [(float(a), float(b)) for a, b in units
             if math.isfinite(a) and math.isfinite(b) and b > 0]
    n = len(pairs)
    if n == 0:
        return Interval(n=0, mean=None, sd=None, low=None, high=None, ci_reason="no value",
                        kind=kind, over=over, method="t-ratio")
    a = np.asarray([p[0] for p in pairs])
    b = np.asarray([p[1] for p in pairs])
    r = float(a.sum() / b.sum())
    z = (a - r * b) / float(b.mean())
    sd = float(z.std(ddof=1)) if n >= 2 else None
    if sd is None or n < MIN_UNITS:
        return Interval(n=n, mean=r, sd=sd, low=None, high=None,
                        ci_reason=f"fewer than three independent {over}", kind=kind, over=over,
                        method="t-ratio")
    half = stats.t_quantile(0.5 + confidence / 2.0, n - 1) * sd / math.sqrt(n)
    iv = Interval(n=n, mean=r, sd=sd, low=r - half, high=r + half, ci_reason=None,
                  kind=kind, over=over, method="t-ratio")
    return bounded(iv, within, confidence) if within is not None else iv


def clipped(iv: Interval, low: float, high: float) -> tuple[Interval, bool]:
    """The interval cut to ``[low, high]`` (where the quantity lies), and whether it was.

    >>> iv = interval([3.0, 3.9, 4.0], kind=ESTIMATED, over="prompts")
    >>> cut, was = clipped(iv, 0.0, 4.0)
    >>> cut['high'], was
    (4.0, True)
    """
    lo, hi = iv["low"], iv["high"]
    if lo is None or hi is None:
        return iv, False
    nlo, nhi = min(max(lo, low), high), min(max(hi, low), high)
    return Interval(**{**iv, "low": nlo, "high": nhi}), (nlo, nhi) != (lo, hi)


def bounded(iv: Interval, within: Range, confidence: float = CONFIDENCE) -> Interval:
    """``iv`` intersected with ``within``, the range its quantity lies in (the intersection of a
    confidence interval with the parameter space keeps its coverage), or no interval when it
    covers the whole range: such an interval says nothing the range did not.

    >>> iv = Interval(n=5, mean=0.5, sd=1.0, low=-0.7, high=1.7, ci_reason=None,
    ...               kind=MEASURED, over="windows", method="t")
    >>> cut = bounded(iv, (0.0, 4.0))
    >>> cut['low'], cut['high']
    (0.0, 1.7)
    """
    cut, _ = clipped(iv, *within)
    lo, hi = cut["low"], cut["high"]
    if lo is not None and hi is not None and lo <= within[0] and hi >= within[1]:
        pct = f"{100 * confidence:g}%"
        return Interval(**{**cut, "low": None, "high": None,
                           "ci_reason": f"the {pct} interval covers the whole range "
                                        f"[{within[0]:g}, {within[1]:g}]"})
    return cut


def paired_p(diffs: Sequence[float | None]) -> float:
    """Two-sided p of the paired t-test that the mean difference is 0 (``nan`` when n < 2 or
    every difference is equal).

    >>> round(paired_p([1.0, 2.0, 3.0]), 4)
    0.0742
    >>> math.isnan(paired_p([1.0]))
    True
    """
    arr = np.asarray([d for d in diffs if d is not None and math.isfinite(d)], dtype=np.float64)
    if arr.size < 2 or float(arr.std(ddof=1)) == 0.0:
        return math.nan
    from scipy import stats as sps  # here: only these tests need scipy.stats (0.35 s)

    return float(sps.ttest_1samp(arr, 0.0).pvalue)


def holm(ps: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (monotone, at most 1); ``nan`` stays ``nan`` and
    does not count in the family.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    idx = sorted((i for i, p in enumerate(ps) if math.isfinite(p)), key=lambda i: ps[i])
    m = len(idx)
    out = [math.nan] * len(ps)
    running = 0.0
    for rank, i in enumerate(idx):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = round(running, 12)
    return out


def friedman(table: Sequence[Sequence[float]]) -> Friedman:
    """Friedman's test that the columns (treatments) of a complete block design do not differ,
    rows being blocks: chi-square with ties corrected (scipy), df = k - 1, and Kendall's W =
    chi2 / (n (k - 1)) as its effect size (0: no agreement between blocks, 1: all blocks rank
    the treatments alike). Needs n >= 2 blocks and k >= 3 treatments; otherwise ``None``s.

    >>> f = friedman([[1.0, 2.0, 3.0], [1.5, 2.5, 3.5], [0.0, 1.0, 2.0]])
    >>> f['statistic'], f['df'], round(f['p'], 4), f['kendall_w']
    (6.0, 2, 0.0498, 1.0)
    """
    n = len(table)
    k = len(table[0]) if n else 0
    if n < 2 or k < 3:
        return Friedman(test="friedman", n_blocks=n, n_treatments=k, statistic=None, df=None,
                        p=None, kendall_w=None,
                        reason=f"needs >= 2 blocks and >= 3 treatments, has {n} and {k}")
    cols = np.asarray(table, dtype=np.float64).T
    if np.all(cols == cols[0]):  # every block ties every treatment: nothing differs
        return Friedman(test="friedman", n_blocks=n, n_treatments=k, statistic=0.0, df=k - 1,
                        p=1.0, kendall_w=0.0, reason=None)
    from scipy import stats as sps

    res = sps.friedmanchisquare(*cols)
    chi2 = float(res.statistic)
    return Friedman(test="friedman", n_blocks=n, n_treatments=k, statistic=chi2, df=k - 1,
                    p=float(res.pvalue), kendall_w=chi2 / (n * (k - 1)), reason=None)


def ratio(num: float, den: float) -> float:
    """``num / den``, ``nan`` when ``den`` is 0.

    >>> ratio(3.0, 2.0), math.isnan(ratio(1.0, 0.0))
    (1.5, True)
    """
    return num / den if den else math.nan
