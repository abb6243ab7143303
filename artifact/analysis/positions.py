"""Per-position acceptance of the curves and ksweep runs, with bootstrap intervals."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from artifact import records, stats
from artifact.analysis.logs import LogEntry
from artifact.analysis.params import Bootstrap
from artifact.contract.summary import Pos, PositionsEntry


def rng_for(run_id: str, group: str, *, seed: int) -> np.random.Generator:
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


def _column_medians(m: np.ndarray) -> list[float]:
    """``np.median`` of each column's values that are not ``nan`` (``nan`` for none), the
    columns sorted at once: the mean of the middle value or the two middle ones, summed from
    0.0 as ``np.median``'s mean sums them (so a median of -0.0 is 0.0, as there).

    >>> _column_medians(np.array([[3.0, 1.0, np.nan], [1.0, np.nan, np.nan], [2.0, 4.0, np.nan],
    ...                           [0.5, 2.0, np.nan]]))
    [1.5, 2.0, nan]
    """
    s = np.sort(m, axis=0)  # nan sorts last
    out: list[float] = []
    for j, n in enumerate((~np.isnan(m)).sum(axis=0).tolist()):
        half = n // 2
        if n == 0:
            out.append(float("nan"))
        elif n % 2:
            out.append(0.0 + float(s[half, j]))
        else:
            out.append((0.0 + float(s[half - 1, j]) + float(s[half, j])) / 2)
    return out


def position_table(
    m: np.ndarray, *, rng: np.random.Generator, bootstrap: Bootstrap
) -> list[Pos]:
    """n, mean, median and bootstrap interval of every column (position) of ``m``."""
    if m.shape[0] == 0 or m.shape[1] == 0:
        return []
    low, high = stats.bootstrap_mean_ci(
        m, rng=rng, n_resamples=bootstrap.resamples, confidence=bootstrap.confidence
    )
    medians = _column_medians(m)
    out: list[Pos] = []
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
                median=medians[j],
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
    bootstrap: Bootstrap,
) -> PositionsEntry | None:
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
        d: position_table(m[domains == d], rng=rng_for(run_id, d, seed=bootstrap.seed),
                          bootstrap=bootstrap)
        for d in sorted(set(domains.tolist()))
    }
    return PositionsEntry(
        all=position_table(m, rng=rng_for(run_id, "all", seed=bootstrap.seed),
                           bootstrap=bootstrap),
        by_domain=by_domain,
    )
