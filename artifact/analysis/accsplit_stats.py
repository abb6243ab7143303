"""Tagged values and intervals of the acceptance-split study (pure; no I/O).

Every number the study writes says what it is: ``measured`` (server counters, reply timings,
arrival times as recorded) or ``estimated`` (derived from the client's view of the stream, or
a difference of group means standing in for a quantity nobody counted). An interval over fewer
than two independent runs is ``null`` with the reason, never a zero-width interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from artifact import stats
from artifact.contract.accsplit import Interval, Kind, Value

MEASURED: Kind = "measured"
ESTIMATED: Kind = "estimated"
CONFIDENCE = 0.95


def value(x: float | None, kind: Kind) -> Value:
    """A tagged value; ``nan`` becomes ``None``.

    >>> value(float("nan"), MEASURED)
    {'value': None, 'kind': 'measured'}
    """
    return Value(value=None if x is None or not math.isfinite(x) else float(x), kind=kind)


def interval(xs: Sequence[float | None], *, kind: Kind, over: str,
             confidence: float = CONFIDENCE) -> Interval:
    """n, mean, sd and the t-interval of the mean of the finite values of ``xs``.

    >>> iv = interval([1.0, 2.0, 3.0], kind=MEASURED, over="windows")
    >>> iv['n'], iv['mean'], iv['sd'], round(iv['low'], 4), round(iv['high'], 4)
    (3, 2.0, 1.0, -0.4841, 4.4841)
    >>> one = interval([2.5], kind=MEASURED, over="windows")
    >>> one['n'], one['mean'], one['low'], one['high'], one['ci_reason']
    (1, 2.5, None, None, 'fewer than two independent windows')
    >>> interval([None], kind=ESTIMATED, over="runs")['ci_reason']
    'no value'
    """
    arr = np.asarray([x for x in xs if x is not None and math.isfinite(x)], dtype=np.float64)
    n = int(arr.size)
    if n == 0:
        return Interval(n=0, mean=None, sd=None, low=None, high=None, ci_reason="no value",
                        kind=kind, over=over)
    mean = float(arr.mean())
    if n < 2:
        return Interval(n=1, mean=mean, sd=None, low=None, high=None,
                        ci_reason=f"fewer than two independent {over}", kind=kind, over=over)
    sd = float(arr.std(ddof=1))
    lo, hi = stats.t_interval(arr, confidence=confidence)
    return Interval(n=n, mean=mean, sd=sd, low=lo, high=hi, ci_reason=None, kind=kind,
                    over=over)


def ratio(num: float, den: float) -> float:
    """``num / den``, ``nan`` when ``den`` is 0.

    >>> ratio(3.0, 2.0), math.isnan(ratio(1.0, 0.0))
    (1.5, True)
    """
    return num / den if den else math.nan
