"""Per-position acceptance of the curves and ksweep runs, with bootstrap intervals."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from artifact import records, stats
from artifact.analysis.logs import LogEntry

# Bootstrap settings: part of the result, so part of the task's uptodate check.
from artifact.analysis.params import CONFIDENCE as CONFIDENCE
from artifact.analysis.params import N_RESAMPLES as N_RESAMPLES
from artifact.analysis.params import SEED as SEED


@dataclass(frozen=True, kw_only=True)
class Pos:
    position: int  # 1-based
    n: int
    mean: float
    median: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, kw_only=True)
class PositionStats:
    all: list[Pos]
    by_domain: dict[str, list[Pos]]


def rng_for(run_id: str, group: str, *, seed: int = SEED) -> np.random.Generator:
    """A generator seeded by the study seed, the run and the group: results do not depend on
    which other runs are analysed or in what order."""
    words = [seed, zlib.crc32(run_id.encode()), zlib.crc32(group.encode())]
    return np.random.default_rng(np.random.SeedSequence(words))


def matrix(vectors: Sequence[tuple[float, ...]]) -> np.ndarray:
    """Per-record vectors as rows of a matrix, short rows padded with ``nan``.

    >>> matrix([(1.0, 0.5), (1.0,)]).tolist()
    [[1.0, 0.5], [1.0, nan]]
    """
    width = max((len(v) for v in vectors), default=0)
    out = np.full((len(vectors), width), np.nan)
    for i, v in enumerate(vectors):
        out[i, : len(v)] = v
    return out


def position_table(
    m: np.ndarray, *, rng: np.random.Generator, n_resamples: int = N_RESAMPLES
) -> list[Pos]:
    """n, mean, median and bootstrap interval of every column (position) of ``m``."""
    if m.shape[0] == 0 or m.shape[1] == 0:
        return []
    low, high = stats.bootstrap_mean_ci(
        m, rng=rng, n_resamples=n_resamples, confidence=CONFIDENCE
    )
    out = []
    for j in range(m.shape[1]):
        col = m[:, j]
        col = col[~np.isnan(col)]
        if col.size == 0:  # no record of this group reached the position
            continue
        out.append(
            Pos(
                position=j + 1,
                n=int(col.size),
                mean=float(col.mean()),
                median=float(np.median(col)),
                ci_low=float(low[j]),
                ci_high=float(high[j]),
            )
        )
    return out


def position_stats(
    run_id: str,
    recs: Sequence[records.Result],
    entries: Sequence[LogEntry | None],
    *,
    n_resamples: int = N_RESAMPLES,
) -> PositionStats | None:
    """Per-position acceptance of one run's records (already filtered) and paired entries.

    ``None`` when no record has an ``acc per pos`` vector.
    """
    rows = [
        (r.domain, e.acc_per_pos)
        for r, e in zip(recs, entries, strict=True)
        if e is not None and e.acc_per_pos
    ]
    if not rows:
        return None
    m = matrix([v for _, v in rows])
    domains = np.array([d for d, _ in rows])
    by_domain = {
        d: position_table(m[domains == d], rng=rng_for(run_id, d), n_resamples=n_resamples)
        for d in sorted(set(domains.tolist()))
    }
    return PositionStats(
        all=position_table(m, rng=rng_for(run_id, "all"), n_resamples=n_resamples),
        by_domain=by_domain,
    )
