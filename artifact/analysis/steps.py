"""Client-side step structure: stream events grouped into verification steps by arrival gaps.

``llama-server`` streams one event per token. The tokens of one verification step (the accepted
draft tokens and the token the target sampled after them) are written back to back, so they
reach the client as a burst of sub-millisecond gaps; the next step arrives one forward pass
later (tens of milliseconds on the CPU). The rule, applied per request to the gaps between
consecutive token events (the final ``stop`` event carries no token and is left out):

    a gap starts a new step when it is at least ``max(FLOOR_MS, FRACTION * m)``, where ``m`` is
    the median of the gaps of at least ``FLOOR_MS``.

``FLOOR_MS`` sits far above the burst gaps (tens of microseconds, a few ms when the OS
interrupts the client) and far below a forward pass; ``FRACTION`` of the typical step gap keeps
an occasional multi-millisecond hiccup inside a burst from counting as a step when steps are
hundreds of ms apart (a draft model's steps). The first token (after prefill) is its own step.
Everything here is derived on the client, so it is ESTIMATED: the server counters are the
reference it is checked against (``analysis.accsplit``).

>>> g = group_steps([0.0, 25.0, 25.1, 25.2, 50.0, 75.0])
>>> g.steps, g.tokens_per_step
(4, 1.5)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

FLOOR_MS = 2.0
FRACTION = 0.25


@dataclass(frozen=True, kw_only=True)
class Steps:
    """The step structure of one request's token events."""

    tokens: int  # token events
    steps: int  # bursts (the first token is one)
    starts: tuple[int, ...]  # index of the first token event of each step
    threshold_ms: float  # the gap that started a step in this request
    step_gap_p50_ms: float  # median gap that starts a step (nan with one step)
    step_gap_mean_ms: float
    decode_tok_per_s: float  # (tokens - 1) / (last - first arrival); nan with < 2 tokens

    @property
    def tokens_per_step(self) -> float:
        return self.tokens / self.steps if self.steps else math.nan


def threshold(gaps: Sequence[float] | np.ndarray) -> float:
    """The step-gap threshold of one request's gaps (see the module docstring).

    >>> threshold([0.02, 0.03, 24.0, 26.0, 120.0])
    6.5
    >>> threshold([0.02, 0.03])  # no gap reaches the floor: the floor
    2.0
    """
    g = np.asarray(gaps, dtype=np.float64)
    big = g[g >= FLOOR_MS]
    if big.size == 0:
        return FLOOR_MS
    return max(FLOOR_MS, FRACTION * float(np.median(big)))


def group_steps(token_ms: Sequence[float]) -> Steps:
    """Group token arrival times (ms, in order) into steps.

    >>> s = group_steps([100.0, 500.0, 500.2, 500.3, 900.0, 900.1])
    >>> s.steps, s.starts, s.step_gap_p50_ms, round(s.decode_tok_per_s, 3)
    (3, (0, 1, 4), 399.85, 6.249)
    """
    t = np.asarray(token_ms, dtype=np.float64)
    n = int(t.size)
    if n == 0:
        return Steps(tokens=0, steps=0, starts=(), threshold_ms=math.nan,
                     step_gap_p50_ms=math.nan, step_gap_mean_ms=math.nan,
                     decode_tok_per_s=math.nan)
    gaps = np.diff(t)
    thr = threshold(gaps)
    new = np.flatnonzero(gaps >= thr) + 1
    starts = (0, *(int(i) for i in new))
    step_gaps = gaps[gaps >= thr]
    span = float(t[-1] - t[0])
    return Steps(
        tokens=n,
        steps=len(starts),
        starts=starts,
        threshold_ms=thr,
        step_gap_p50_ms=float(np.median(step_gaps)) if step_gaps.size else math.nan,
        step_gap_mean_ms=float(step_gaps.mean()) if step_gaps.size else math.nan,
        decode_tok_per_s=(n - 1) / span * 1000.0 if n > 1 and span > 0 else math.nan,
    )


@dataclass(frozen=True, kw_only=True)
class Estimates:
    """Accepted tokens per step as a client can estimate it without server counters."""

    tps_x_gap_p50: float  # client tok/s * median step gap - 1
    tps_x_gap_mean: float  # client tok/s * mean step gap - 1
    tokens_per_step: float  # tokens per client step - 1, the first step (prefill) left out


def estimates(s: Steps) -> Estimates:
    """The three client-side estimators of accepted tokens per drafting round.

    The first token comes from the prompt's prefill: a step, but no drafting round. So
    ``tokens_per_step`` counts the steps and tokens after it, ``(tokens - 1) / (steps - 1) - 1``
    (with perfect step detection exactly the server's accepted / rounds when every later step
    drafts). The rate estimators already leave it out: the client rate is ``(tokens - 1)`` over
    the span from the first token, and step gaps start at the second step.

    >>> e = estimates(group_steps([0.0, 25.0, 25.1, 25.2, 50.0, 75.0]))
    >>> round(e.tokens_per_step, 3), round(e.tps_x_gap_p50, 3), round(e.tps_x_gap_mean, 3)
    (0.667, 0.667, 0.662)
    >>> math.isnan(estimates(group_steps([0.0, 0.1])).tokens_per_step)  # one step: no round
    True
    """
    tps = s.decode_tok_per_s / 1000.0  # tokens per ms
    return Estimates(
        tps_x_gap_p50=tps * s.step_gap_p50_ms - 1.0,
        tps_x_gap_mean=tps * s.step_gap_mean_ms - 1.0,
        tokens_per_step=((s.tokens - 1) / (s.steps - 1) - 1.0) if s.steps > 1 else math.nan,
    )


ESTIMATORS = ("tps_x_gap_p50", "tps_x_gap_mean", "tokens_per_step")
