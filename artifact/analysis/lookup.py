"""The price of an n-gram drafter's lookup (cost model v3, issue 44 item 2), measured where the
drafter drafted nothing.

Cost model v2 priced the lookup at zero, and every sign it got wrong was an n-gram drafter on a
task where it seldom drafts: on prompts it never drafted for, an n-gram drafter still ran at
0.92-0.98 of no draft. That difference is the lookup's price (the search for a draft, and the
pool's upkeep, paid on every decode step whether or not a draft is found).

**Measured** from pairs (drafter run, no-draft run) of the same prompts, chosen by the caller
(the core runs for the post-hoc predictions, a family's pilot runs before its study): a prompt
is *undrafted* when the drafter drafted nothing in any of its quiet passes. On such a prompt
every decode step yields one token, so the extra time per decoded token is a price per step:

    extra(prompt) = mean over passes of ms/token (drafter) - the same of the no-draft run

with ms/token the server's ``predicted_ms / (predicted_n - 1)`` (decoding only), each run's
passes averaged per prompt first (passes of one prompt are not independent). The price is the
mean of ``extra`` over the undrafted prompts of every pair given, with a 95 % t-interval over
them. It is an absolute time (ms), not a ratio: the lookup is CPU work of the server that does
not depend on the target's weights, so a price measured on one target carries to another.
Records are read by :mod:`artifact.analysis.validate.core` (set-aside ones named in warnings).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from artifact.analysis.validate import core as screen_core
from artifact.records import Result


@dataclass(frozen=True)
class Price:
    """A lookup's price per decode step (ms) over its undrafted prompts: mean and 95 % interval
    (None ends with fewer than two prompts); ``extras`` the per-prompt values it rests on."""

    ms: float
    lo: float | None
    hi: float | None
    extras: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.extras)


def _ms_per_token(rows: Iterable[Result]) -> dict[str, list[float]]:
    by: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        by[r.prompt_id].append(r.timings.predicted_ms / (r.timings.predicted_n - 1))
    return by


def extras(run: Sequence[Result], base: Sequence[Result]) -> dict[str, float]:
    """Extra ms per decoded token of each prompt the run never drafted for, over the base run's
    time on the same prompt (passes averaged per prompt first)."""
    drafted = {r.prompt_id for r in run if (r.timings.draft_n or 0) > 0}
    mine, theirs = _ms_per_token(run), _ms_per_token(base)
    return {p: statistics.fmean(mine[p]) - statistics.fmean(theirs[p])
            for p in sorted(mine.keys() & theirs.keys()) if p not in drafted}


def price_of(values: Sequence[float]) -> Price | None:
    """Mean and 95 % t-interval of per-prompt extras (None without any).

    >>> p = price_of([1.0, 2.0, 3.0])
    >>> p.ms, round(p.lo, 4), round(p.hi, 4), p.n
    (2.0, -0.4841, 4.4841, 3)
    >>> price_of([0.5]), price_of([])
    (Price(ms=0.5, lo=None, hi=None, extras=(0.5,)), None)
    """
    if not values:
        return None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return Price(mean, None, None, tuple(values))
    from artifact.stats import t_quantile  # numpy: imported here, `doit` loads this package

    half = t_quantile(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return Price(mean, mean - half, mean + half, tuple(values))


def price(pairs: Iterable[tuple[Path, Path]], warnings: list[str]) -> Price | None:
    """The lookup's price from (drafter run, no-draft run) folders: every pair's undrafted
    prompts pooled (None when no prompt of any pair went undrafted)."""
    values: list[float] = []
    for run, base in pairs:
        mine, _ = screen_core.read(run, warnings)
        theirs, _ = screen_core.read(base, warnings)
        values.extend(extras(mine, theirs).values())
    return price_of(values)
