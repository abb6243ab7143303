"""How far apart two identical server processes are: the realism study's process variance
component (issue 44), from the replicated stratum of ``experiments/runs-realism-process/``.

The stratum (``experiments/campaigns/realism-process.toml``) ran three servers per side: REAL-A,
REAL-B and REAL-C replay the same real sessions, SYNTHETIC english, english-b and english-c the
same synthetic twin; each with no draft and with ngram-mod, all twelve interleaved turn by turn
in one Williams design, so that process and place in the round are crossed.

The analysis was declared in that campaign file before any run was measured. The unit is the
session. For each drafter, side (``real``, ``synthetic``) and quantity, ``Y[s, p]`` is the log
of session ``s``'s mean on process ``p`` over the turns every server measured quietly (E2E,
TPOT, TTFT per turn; the speedup is no draft's E2E over ngram-mod's, the processes paired in
the order a, b, c). Sessions and processes form a two-way layout without replication, and the
**process variance component** is the method-of-moments estimate

    sigma_p^2 = max(0, (MS_process - MS_residual) / S)

with ``S`` sessions; its 95 % interval resamples whole sessions. ``sd_pct`` is ``100 sigma_p``
(a relative spread, in percent for small values). A gap between two sides that each ran on one
process (take three) carries a process spread of ``sqrt(2) sigma_p`` beside its sessions'
(``gap_sd_pct``). Acceptance must agree exactly among the processes of a side at greedy
decoding (:func:`exact`).

>>> import numpy as np
>>> y = np.array([[0.0, 0.1, 0.2], [1.0, 1.1, 1.2], [2.0, 2.1, 2.2]])  # a pure process effect
>>> round(component(y), 6)
0.1
>>> component(y - y.mean(axis=0)) == 0.0  # sessions differ, processes do not
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from artifact import records
from artifact.analysis.params import Bootstrap
from artifact.contract import realism as contract
from artifact.stats import cluster_weights, percentile_interval

FloatArray = npt.NDArray[np.float64]
PROCESS_BOOTSTRAP = Bootstrap(resamples=20000, seed=20261205)
SIDES = {"real": ("real-a", "real-b", "real-c"),
         "synthetic": ("synthetic-english", "synthetic-english-b", "synthetic-english-c")}
TIMED = {"e2e": "e2e_ms", "tpot": "tpot_ms", "ttft": "ttft_ms"}


def component(y: FloatArray) -> float:
    """The process variance component of ``y`` (sessions x processes), as a standard
    deviation in ``y``'s units: ``sqrt(max(0, (MS_process - MS_residual) / S))``."""
    return float(np.sqrt(_components(y, np.ones((1, y.shape[0])))[0]))


def _components(y: FloatArray, w: FloatArray) -> FloatArray:
    """``sigma_p^2`` under each row of session weights ``w`` (resamples x sessions), every
    row at once: with ``Z = Y - row means`` and ``m = w Z / S`` (each process's departure from
    the grand mean under the resample), ``MS_process = S |m|^2 / (P - 1)`` and ``SS_residual =
    w (Z^2 summed over processes) - S |m|^2``."""
    s, p = y.shape
    z = y - y.mean(axis=1, keepdims=True)
    m = (w @ z) / s
    between = s * (m * m).sum(axis=1)
    resid = w @ (z * z).sum(axis=1) - between
    ms_p = between / (p - 1)
    ms_r = resid / ((s - 1) * (p - 1))
    out: FloatArray = np.maximum(0.0, (ms_p - ms_r) / s)
    return out


@dataclass(frozen=True)
class Server:
    """One process's per-session means over the analysed turns (sessions in one order)."""

    run_id: str
    drafter: str
    side: str
    means: dict[str, FloatArray]  # quantity -> per-session mean (nan where none)


def session_means(run_id: str, drafter: str, side: str,
                  turns: Sequence[records.TurnResult], order: Sequence[str]) -> Server:
    """Per session of ``order``, the mean of each timed quantity over ``turns``."""
    index = {sid: i for i, sid in enumerate(order)}
    means: dict[str, FloatArray] = {}
    for q, name in TIMED.items():
        tot = np.zeros(len(order))
        n = np.zeros(len(order))
        for t in turns:
            v = getattr(t, name)
            if v is not None and t.session_id in index:
                tot[index[t.session_id]] += float(v)
                n[index[t.session_id]] += 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            means[q] = np.where(n > 0, tot / np.where(n > 0, n, 1.0), math.nan)
    return Server(run_id=run_id, drafter=drafter, side=side, means=means)


def _matrix(servers: Sequence[Server], quantity: str) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.column_stack([s.means[quantity] for s in servers]))


def _speedup(none: Sequence[Server], drafted: Sequence[Server]) -> FloatArray:
    return _matrix(none, "e2e") - _matrix(drafted, "e2e")


def estimate(y: FloatArray, *, drafter: str, side: str, quantity: str, runs: Sequence[str],
             bootstrap: Bootstrap = PROCESS_BOOTSTRAP) -> contract.Component:
    """One component from its matrix (sessions with a value on every process only)."""
    y = y[np.isfinite(y).all(axis=1)]
    s, p = y.shape
    if s < 2 or p < 2:
        none = contract.Interval(value=None, lo=None, hi=None)
        return contract.Component(drafter=drafter, side=side, quantity=quantity, runs=list(runs),
                                  n_sessions=s, n_processes=p, sd_pct=none, spread_pct=None,
                                  gap_sd_pct=None, process_pct=[])
    rng = np.random.default_rng([bootstrap.seed, s, *f"{drafter}:{side}:{quantity}".encode()])
    w = cluster_weights(s, rng=rng, n_resamples=bootstrap.resamples)
    sd = 100 * math.sqrt(_components(y, np.ones((1, s)))[0])
    lo, hi = percentile_interval(100 * np.sqrt(_components(y, w)),
                                 confidence=bootstrap.confidence)
    cols = y.mean(axis=0)
    departures = 100 * (np.exp(cols - cols.mean()) - 1)
    return contract.Component(
        drafter=drafter, side=side, quantity=quantity, runs=list(runs), n_sessions=s,
        n_processes=p, sd_pct=contract.Interval(value=sd, lo=lo, hi=hi),
        spread_pct=float(100 * (math.exp(cols.max() - cols.min()) - 1)),
        gap_sd_pct=math.sqrt(2) * sd, process_pct=[float(x) for x in departures])


def exact(drafter: str, side: str, runs: Sequence[tuple[str, Sequence[records.TurnResult]]]
          ) -> contract.ProcessExact:
    """The processes of one side turn by turn: the same drafted and accepted counts on every
    turn all of them recorded (contention changes the timing, not the text)."""
    counts = [{(t.session_id, t.turn): (t.timings.draft_n or 0, t.timings.draft_n_accepted or 0)
               for t in turns} for _, turns in runs]
    common = set.intersection(*(set(c) for c in counts)) if counts else set()
    differ = sum(1 for k in common if len({c[k] for c in counts}) > 1)
    return contract.ProcessExact(drafter=drafter, side=side, runs=[r for r, _ in runs],
                                 n_turns=len(common), n_differ=differ,
                                 equal=differ == 0 and bool(common))


def analyse(servers: Sequence[Server], *, bootstrap: Bootstrap = PROCESS_BOOTSTRAP
            ) -> list[contract.Component]:
    """Every component the design allows: for each drafter and side with three processes, the
    timed quantities; for each side with both drafters, the speedup."""
    by = {(s.drafter, s.side): s for s in servers}
    out: list[contract.Component] = []
    drafters = sorted({s.drafter for s in servers}, key=lambda d: (d != "none", d))
    for kind, sides in SIDES.items():
        for d in drafters:
            group = [by[(d, side)] for side in sides if (d, side) in by]
            if len(group) < 2:
                continue
            for q in TIMED:
                out.append(estimate(_matrix(group, q), drafter=d, side=kind, quantity=q,
                                    runs=[g.run_id for g in group], bootstrap=bootstrap))
        for d in drafters:
            if d == "none":
                continue
            pairs = [(by[("none", side)], by[(d, side)]) for side in sides
                     if ("none", side) in by and (d, side) in by]
            if len(pairs) < 2:
                continue
            out.append(estimate(_speedup([a for a, _ in pairs], [b for _, b in pairs]),
                                drafter=d, side=kind, quantity="speedup",
                                runs=[x.run_id for pair in pairs for x in pair],
                                bootstrap=bootstrap))
    return out
