"""The workload-realism study, take two (issue 17): realism runs -> ``realism.json``.

Each run is one server configuration (no draft, or a drafter) on which every session was played
as every side: REAL-A and REAL-B (the same real session twice) and one side per synthetic
condition, interleaved session by session. Per server, side and turn bin: median TTFT, TPOT and
E2E latency, acceptance, drafted turns, characters per token. On a drafter's server the
**speedup** of a side is the no-draft server's median TPOT (or E2E) of that side over the
drafter's. A synthetic condition is compared with REAL-A; REAL-B against REAL-A is the noise
floor, measured in the same run.

Intervals: one percentile bootstrap over sessions, drawn once (seeded) and shared by every
server, side and bin, so each comparison is paired by session; the Monte-Carlo error of an
endpoint is estimated from ``MC_BATCHES`` disjoint batches of the resamples. Medians are lower
medians (``inverted_cdf``) in the point estimate and in every resample alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from artifact import files, paths, records, sessionsets
from artifact.analysis import validate
from artifact.analysis.params import REALISM_BOOTSTRAP as BOOTSTRAP
from artifact.analysis.params import Bootstrap
from artifact.analysis.runs import AnalysisError
from artifact.contract import realism as contract
from artifact.errors import RecordError, SessionError
from artifact.sessionsets import find_recipe
from artifact.stats import cluster_weights, percentile_interval, weighted_median

FloatArray = npt.NDArray[np.float64]
BIN_EDGES = (2, 4)  # turn index where the next bin starts
MIN_SESSIONS = 5  # a bin with fewer sessions gets no interval
MC_BATCHES = 4
DEFAULT_THRESHOLD = 0.1  # cores; the quiet gate's default, when metrics.json does not say
REAL_A, REAL_B = "real-a", "real-b"
_GROUPS = (*contract.BINS, contract.ALL)


@dataclass(frozen=True)
class Turns:
    """One side of one server as columns, sessions as indices into the study's session list."""

    session: npt.NDArray[np.int64]
    turn: npt.NDArray[np.int64]
    order: npt.NDArray[np.int64]
    cols: dict[str, FloatArray]

    def take(self, mask: npt.NDArray[np.bool_]) -> Turns:
        return Turns(session=self.session[mask], turn=self.turn[mask], order=self.order[mask],
                     cols={k: v[mask] for k, v in self.cols.items()})


_COLS = ("ttft_ms", "tpot_ms", "e2e_ms", "prompt_tokens", "prompt_chars", "cached_tokens",
         "output_tokens", "draft_n", "draft_accepted", "foreign_cores")


def _columns(turns: Sequence[records.TurnResult], index: dict[str, int]) -> Turns:
    def col(values: Sequence[float | int | None]) -> FloatArray:
        return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)

    fc = [t.contention.get("foreign_cores") if isinstance(t.contention, dict) else None
          for t in turns]
    return Turns(
        session=np.array([index[t.session_id] for t in turns], dtype=np.int64),
        turn=np.array([t.turn for t in turns], dtype=np.int64),
        order=np.array([t.order for t in turns], dtype=np.int64),
        cols={"ttft_ms": col([t.ttft_ms for t in turns]),
              "tpot_ms": col([t.tpot_ms for t in turns]),
              "e2e_ms": col([t.e2e_ms for t in turns]),
              "prompt_tokens": col([t.prompt_tokens for t in turns]),
              "prompt_chars": col([t.prompt_chars for t in turns]),
              "cached_tokens": col([t.cached_tokens for t in turns]),
              "output_tokens": col([t.output_tokens for t in turns]),
              "draft_n": col([t.timings.draft_n or 0 for t in turns]),
              "draft_accepted": col([t.timings.draft_n_accepted or 0 for t in turns]),
              "foreign_cores": col(fc)})


def bin_index(turn: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Index into :data:`contract.BINS` of each 0-based turn.

    >>> bin_index([0, 1, 2, 3, 4, 5, 9]).tolist()
    [0, 0, 1, 1, 2, 2, 2]
    """
    out: npt.NDArray[np.int64] = np.digitize(np.asarray(turn), BIN_EDGES).astype(np.int64)
    return out


@dataclass
class RealismRun:
    """One loaded run: its turns screened (:mod:`artifact.analysis.validate`), by side."""

    run_id: str
    drafter: str
    k: int | None
    spec: dict[str, Any]
    plan: dict[str, Any]
    sides: dict[str, list[records.TurnResult]]
    n_errors: int
    duration_s: float | None
    complete: bool
    threshold_cores: float
    start_time: str
    machine: str = ""
    binary_sha256: str = ""
    foreign_cores: list[float] = field(default_factory=list)  # every turn's, contended too
    problems: list[str] = field(default_factory=list)


def load_run(run: Path, *, locks: Path | None = None) -> RealismRun:
    """A realism run directory; a config that is not one, a plan missing or damaged, or a
    session set whose id lock (``<locks>/<set>.txt``, default ``experiments/sessions``) cannot
    be read, is an :class:`AnalysisError` (the run is then left out).

    Its turns are screened (:mod:`artifact.analysis.validate`): a turn of a session that the id
    lock does not hold is excluded even when the run's own plan holds it, and turns that
    recorded no contention window are counted (analysed as if quiet); each a warning.
    """
    where = f"{run.name}/{records.CONFIG}"
    try:
        config = records.read_json(run / records.CONFIG)
        spec = config["spec"]
        w = spec["workload"]
        if not isinstance(w, dict) or int(w.get("replays", 1)) < 2:
            raise TypeError("spec.workload: expected the interleaved design (replays >= 2)")
        drafter = str(spec["drafter"])
        k = spec["k"] if isinstance(spec["k"], int) else None
        env = config.get("environment")
        start = str(env.get("start_time", "")) if isinstance(env, dict) else ""
        machine = f"{env.get('cpu_model')} ({env.get('cpu_cores')} cores)" \
            if isinstance(env, dict) else ""
        binary = str(env.get("binary_sha256", "")) if isinstance(env, dict) else ""
        session_set = str(spec["prompt_set"])
        recorded = config.get("prompt_set")
        recorded_sha = recorded.get("sha256") if isinstance(recorded, dict) else None
    except (RecordError, KeyError, TypeError, ValueError) as err:
        raise AnalysisError(f"{where}: not a realism run's config ({err})") from err
    lock = sessionsets.lock_file(session_set, locks)
    try:
        entries, lock_sha = sessionsets.read_id_lock(lock)
    except SessionError as err:
        raise AnalysisError(f"run {run.name}: session lock of set {session_set!r}: {err}; its "
                            "turns cannot be checked against it") from err
    locked = {sid for _, sid in entries}
    planned = records.read_plan(run)
    if planned is None or planned.n_bad_lines:
        raise AnalysisError(f"run {run.name}: {records.SESSIONS}: missing or damaged; its turns "
                            "cannot be checked against the plan")
    try:
        plan = records.read_json(run / records.WORKLOAD)
    except RecordError:
        plan = {}
    try:
        metrics = records.read_json(run / records.METRICS)
    except RecordError:
        metrics = {}
    problems: list[str] = []
    if isinstance(recorded_sha, str) and recorded_sha != lock_sha:
        problems.append(f"run {run.name}: {records.CONFIG}: measured under another session lock "
                        f"(prompt_set.sha256 {recorded_sha[:12]}, {lock.name} now has "
                        f"{lock_sha[:12]})")
    turns, n_bad = records.read_turns(run, keep_events=False)
    if n_bad:
        problems.append(f"run {run.name}: {records.RESULTS}: {n_bad} unreadable line(s) skipped")
    errors = records.read_jsonl(run / records.ERRORS)
    excluded = validate.screen(turns, key=lambda t: t.key,
                               label=lambda t: f"{t.key[0]}#{t.turn}",
                               problem=lambda t: validate.turn_problem(t, planned,
                                                                       locked=locked),
                               where=run.name, warnings=problems)
    kept = [t for t, x in zip(turns, excluded, strict=True) if not x]
    validate.unknown_contention(kept, run.name, problems)
    # A turn measured while other work used the cores is left out (a turn cannot be measured
    # again: its session's cache and the drafter's state have moved on); its session stays.
    foreign = [float(t.contention["foreign_cores"]) for t in kept
               if isinstance(t.contention, dict)
               and isinstance(t.contention.get("foreign_cores"), int | float)]
    busy = [t for t in kept if t.contended]
    if busy:
        problems.append(f"run {run.name}: {len(busy)} contended turn(s) left out of the medians "
                        f"(foreign CPU above {DEFAULT_THRESHOLD:g} cores): "
                        f"{validate.listed([f'{t.key[0]}#{t.turn}' for t in busy])}")
    kept = [t for t in kept if not t.contended]
    names = [str(s) for s in plan.get("sides", [])] or sorted({t.side for t in kept})
    by_side = {s: [t for t in kept if t.side == s] for s in names}
    odd = validate.one_sided({s: {t.session_id for t in v} for s, v in by_side.items()},
                             run.name, problems)
    by_side = {s: [t for t in v if t.session_id not in odd] for s, v in by_side.items()}
    m = metrics.get("measure_s")
    cont = metrics.get("contention")
    thr = float(cont["threshold_cores"]) if isinstance(cont, dict) \
        and isinstance(cont.get("threshold_cores"), int | float) else DEFAULT_THRESHOLD
    return RealismRun(
        run_id=run.name, drafter=drafter, k=k, spec=spec, plan=plan, sides=by_side,
        n_errors=len(errors.rows),
        duration_s=float(m) if isinstance(m, int | float) and not isinstance(m, bool) else None,
        complete=metrics.get("complete") is True, threshold_cores=thr, start_time=start,
        machine=machine, binary_sha256=binary, foreign_cores=foreign, problems=problems)


# ---- statistics ------------------------------------------------------------------------------

class Draws:
    """Medians and ratios of sums under one shared session bootstrap: a point and its draws."""

    def __init__(self, n_sessions: int, bootstrap: Bootstrap) -> None:
        rng = np.random.default_rng([bootstrap.seed, n_sessions])
        self.w = cluster_weights(n_sessions, rng=rng, n_resamples=bootstrap.resamples)
        self.bootstrap = bootstrap

    def median(self, t: Turns, col: str) -> tuple[float, FloatArray]:
        v = t.cols[col]
        keep = ~np.isnan(v)
        if not keep.any():
            return math.nan, np.full(self.w.shape[0], math.nan)
        point = float(np.quantile(v[keep], 0.5, method="inverted_cdf"))
        return point, weighted_median(v[keep], self.w[:, t.session[keep]])

    def ratio(self, t: Turns, num: FloatArray, den: FloatArray) -> tuple[float, FloatArray]:
        n_s = self.w.shape[1]
        a = np.bincount(t.session, weights=num, minlength=n_s)
        b = np.bincount(t.session, weights=den, minlength=n_s)
        point = float(a.sum() / b.sum()) if b.sum() > 0 else math.nan
        wa, wb = self.w @ a, self.w @ b
        with np.errstate(divide="ignore", invalid="ignore"):
            return point, np.where(wb > 0, wa / np.where(wb > 0, wb, 1.0), math.nan)

    def interval(self, point: float, draws: FloatArray, n_sessions: int) -> contract.Interval:
        if math.isnan(point) or n_sessions < MIN_SESSIONS:
            return contract.Interval(value=_num(point), lo=None, hi=None)
        lo, hi = percentile_interval(draws, confidence=self.bootstrap.confidence)
        return contract.Interval(value=point, lo=_num(lo), hi=_num(hi))

    def mc_error(self, draws: FloatArray) -> float:
        """Standard error of the interval's endpoints from ``MC_BATCHES`` disjoint batches."""
        ends = np.array([percentile_interval(b, confidence=self.bootstrap.confidence)
                         for b in np.array_split(draws, MC_BATCHES)])
        if np.isnan(ends).any():
            return math.nan
        return float(np.max(ends.std(axis=0, ddof=1)) / math.sqrt(MC_BATCHES))


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _pct(a: FloatArray | float, b: FloatArray | float) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100.0 * (np.asarray(b, dtype=np.float64) / np.asarray(a, dtype=np.float64) - 1.0)


def _sym(a: FloatArray | float, b: FloatArray | float) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.asarray(b, dtype=np.float64) / np.asarray(a, dtype=np.float64)
        return 100.0 * (np.maximum(r, 1.0 / r) - 1.0)


@dataclass
class Cell:
    """A side's quantities in one group (bin or all) of one server: points and draws."""

    n_sessions: int
    values: dict[str, tuple[float, FloatArray]]


def _cell(d: Draws, t: Turns) -> Cell:
    vals = {m: d.median(t, m) for m in contract.METRICS}
    vals["acceptance"] = d.ratio(t, t.cols["draft_accepted"], t.cols["draft_n"])
    vals["drafted_turns"] = d.ratio(t, (t.cols["draft_n"] > 0).astype(np.float64),
                                    np.ones(t.session.size))
    return Cell(n_sessions=len(set(t.session.tolist())), values=vals)


def _group(t: Turns, g: str) -> Turns:
    return t if g == contract.ALL else t.take(bin_index(t.turn) == contract.BINS.index(g))


def _side_bin(d: Draws, t: Turns, c: Cell) -> contract.SideBin:
    def mean(col: str) -> float | None:
        v = t.cols[col]
        v = v[~np.isnan(v)]
        return float(v.mean()) if v.size else None

    tok, chars = t.cols["prompt_tokens"], t.cols["prompt_chars"]
    iv = {k: d.interval(*c.values[k], c.n_sessions) for k in c.values}
    return contract.SideBin(
        n_sessions=c.n_sessions, n_turns=int(t.session.size), ttft_ms=iv["ttft_ms"],
        tpot_ms=iv["tpot_ms"], e2e_ms=iv["e2e_ms"], acceptance=iv["acceptance"],
        drafted_turns=iv["drafted_turns"],
        accepted_per_turn=mean("draft_accepted"),
        prompt_chars_per_token=float(chars.sum() / tok.sum()) if tok.sum() > 0 else None,
        prompt_tokens_mean=mean("prompt_tokens"), cached_tokens_mean=mean("cached_tokens"),
        output_tokens_mean=mean("output_tokens"))


def _gap(d: Draws, a: tuple[float, FloatArray], b: tuple[float, FloatArray],
         n: int) -> contract.Gap:
    return contract.Gap(signed=d.interval(float(_pct(a[0], b[0])), _pct(a[1], b[1]), n),
                        symmetric=d.interval(float(_sym(a[0], b[0])), _sym(a[1], b[1]), n))


def _label(drafter: str, k: int | None, spec: dict[str, Any]) -> str:
    if drafter == "none":
        return "no draft"
    if drafter.startswith("draft"):
        return f"draft model {spec.get('draft_quant') or ''} k={k}".replace("  ", " ")
    return f"{drafter} k={k}"


def _contention(foreign: Sequence[float], threshold: float) -> contract.Contention | None:
    v = np.asarray(foreign, dtype=np.float64)
    if not v.size:
        return None
    return contract.Contention(n_turns=int(v.size), median=float(np.median(v)),
                               max=float(v.max()), n_contended=int((v > threshold).sum()),
                               threshold_cores=threshold)


def _cache_equal(a: Turns, b: Turns) -> float:
    key_a = {(s, t): c for s, t, c in zip(a.session.tolist(), a.turn.tolist(),
                                          a.cols["cached_tokens"].tolist(), strict=True)}
    pairs = [(key_a.get((s, t)), c) for s, t, c in zip(b.session.tolist(), b.turn.tolist(),
                                                       b.cols["cached_tokens"].tolist(),
                                                       strict=True)]
    same = [x == y for x, y in pairs if x is not None]
    return float(np.mean(same)) if same else math.nan


def _order_effect(d: Draws, server: str, a: Turns, b: Turns) -> contract.OrderEffect:
    """REAL replay second against first, per session (``order`` says which ran first)."""
    first_a = {s: o for s, o in zip(a.session.tolist(), a.order.tolist(), strict=True)}
    b_first = np.array([first_a.get(s, -1) > o for s, o in zip(b.session.tolist(),
                                                                b.order.tolist(), strict=True)],
                       dtype=bool)  # bool even when empty: a mask
    a_first_sessions = {s for s, bf in zip(b.session.tolist(), b_first.tolist(), strict=True)
                        if not bf}
    in_a_first = np.array([s in a_first_sessions for s in a.session.tolist()], dtype=bool)
    in_b_first = np.array([s in a_first_sessions for s in b.session.tolist()], dtype=bool)
    # the second replay: REAL-B where REAL-A ran first, REAL-A where REAL-B did
    second = _concat(b.take(in_b_first), a.take(~in_a_first))
    first = _concat(a.take(in_a_first), b.take(~in_b_first))
    n = len(set(first.session.tolist()))
    t1, t2 = d.median(first, "tpot_ms"), d.median(second, "tpot_ms")
    r1 = d.ratio(first, first.cols["draft_accepted"], first.cols["draft_n"])
    r2 = d.ratio(second, second.cols["draft_accepted"], second.cols["draft_n"])
    return contract.OrderEffect(
        server=server, tpot_pct=d.interval(float(_pct(t1[0], t2[0])), _pct(t1[1], t2[1]), n),
        acceptance_diff=d.interval(r2[0] - r1[0], r2[1] - r1[1], n))


def _concat(x: Turns, y: Turns) -> Turns:
    return Turns(session=np.concatenate([x.session, y.session]),
                 turn=np.concatenate([x.turn, y.turn]),
                 order=np.concatenate([x.order, y.order]),
                 cols={k: np.concatenate([x.cols[k], y.cols[k]]) for k in x.cols})


def _stratum(runs: Sequence[RealismRun], bootstrap: Bootstrap,
             warnings: list[str]) -> contract.Stratum:
    """One stratum from its loaded runs (its no-draft run is every drafter's reference)."""
    side_names = list(runs[0].sides)
    for r in runs[1:]:
        if list(r.sides) != side_names:
            raise AnalysisError(f"realism: run {r.run_id} has the sides {list(r.sides)}, run "
                                f"{runs[0].run_id} of the same stratum {side_names}")
    ids = sorted(set.intersection(*({t.session_id for v in r.sides.values() for t in v}
                                    for r in runs)))
    index = {s: i for i, s in enumerate(ids)}
    d = Draws(len(ids), bootstrap)
    cols = {r.run_id: {s: _columns([t for t in r.sides.get(s, []) if t.session_id in index],
                                   index) for s in side_names} for r in runs}
    cells = {rid: {s: {g: _cell(d, _group(t, g)) for g in _GROUPS} for s, t in by.items()}
             for rid, by in cols.items()}
    base = next((r for r in runs if r.drafter == "none"), None)
    if base is None:
        conc, name = stratum_key(runs[0])
        warnings.append(f"realism: stratum {name} at concurrency {conc}: no no-draft run; "
                        "speedups left out")
    for r in runs:  # the speedups of each drafter's sides against the no-draft server
        if base is None or r is base:
            continue
        for s in side_names:
            for g in _GROUPS:
                for m, src in (("speedup_tpot", "tpot_ms"), ("speedup_e2e", "e2e_ms")):
                    n0, n1 = cells[base.run_id][s][g].values[src], cells[r.run_id][s][g].values[src]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        cells[r.run_id][s][g].values[m] = (n0[0] / n1[0], n0[1] / n1[1])
    servers: list[contract.Server] = []
    for r in runs:
        sent = [t.sent_unix_s for v in r.sides.values() for t in v]
        servers.append(contract.Server(
            run_id=r.run_id, drafter=r.drafter, k=r.k, label=_label(r.drafter, r.k, r.spec),
            machine=r.machine, binary_sha256=r.binary_sha256,
            complete=r.complete, n_errors=r.n_errors, duration_s=r.duration_s,
            # whole seconds: 6 significant digits of a Unix time would be 20 minutes
            first_unix_s=round(min(sent)) if sent else None,
            last_unix_s=round(max(sent)) if sent else None,
            utc_date=_date(min(sent)) if sent else "",
            contention=_contention(r.foreign_cores, r.threshold_cores),
            sides={s: {g: _side_bin(d, _group(cols[r.run_id][s], g), cells[r.run_id][s][g])
                       for g in _GROUPS} for s in side_names},
            cache_turn0_max={s: int(np.nanmax(t.cols["cached_tokens"][t.turn == 0]))
                             if (t.turn == 0).any() else 0
                             for s, t in cols[r.run_id].items()},
            cache_turn0_mean={s: float(np.nanmean(t.cols["cached_tokens"][t.turn == 0]))
                              if (t.turn == 0).any() else None
                              for s, t in cols[r.run_id].items()},
            real_cache_equal=_cache_equal(cols[r.run_id][REAL_A], cols[r.run_id][REAL_B])))
    comparisons: list[contract.Comparison] = []
    headline: list[contract.Headline] = []
    mc: list[float] = []
    for r in runs:
        c = cells[r.run_id]
        metrics = [*contract.METRICS] + ([*contract.SPEEDUPS] if r is not base and base else [])
        for s in side_names:
            if s == REAL_A:
                continue
            comparisons.append(contract.Comparison(server=r.run_id, side=s, metrics={
                m: {g: _gap(d, c[REAL_A][g].values[m], c[s][g].values[m],
                            c[s][g].n_sessions) for g in _GROUPS} for m in metrics}))
        if r is base or base is None:
            continue
        for s in side_names:
            if not s.startswith("synthetic-"):
                continue
            a, n = c[REAL_A][contract.ALL], c[s][contract.ALL].n_sessions
            gaps = {m: (_gap(d, a.values[m], c[s][contract.ALL].values[m], n),
                        _gap(d, a.values[m], c[REAL_B][contract.ALL].values[m], n))
                    for m in ("speedup_tpot", "tpot_ms", "e2e_ms")}
            for m in gaps:
                mc.append(d.mc_error(_pct(a.values[m][1], c[s][contract.ALL].values[m][1])))
            headline.append(contract.Headline(
                server=r.run_id, condition=s.removeprefix("synthetic-"),
                speedup_real=d.interval(*a.values["speedup_tpot"], n),
                speedup_synthetic=d.interval(*c[s][contract.ALL].values["speedup_tpot"], n),
                speedup_gap=gaps["speedup_tpot"][0], speedup_floor=gaps["speedup_tpot"][1],
                tpot_gap=gaps["tpot_ms"][0], tpot_floor=gaps["tpot_ms"][1],
                e2e_gap=gaps["e2e_ms"][0], e2e_floor=gaps["e2e_ms"][1],
                beyond_floor={k: _beyond(g, f) for k, (g, f) in
                              zip(("speedup", "tpot", "e2e"), gaps.values(), strict=True)}))
    order = [_order_effect(d, r.run_id, cols[r.run_id][REAL_A], cols[r.run_id][REAL_B])
             for r in runs]
    plan = runs[0].plan
    syn_raw = plan.get("synthetic")
    syn: dict[str, Any] = syn_raw if isinstance(syn_raw, dict) else {}
    spec = runs[0].spec
    recipe = find_recipe(str(spec["prompt_set"]))
    finite = [x for x in mc if not math.isnan(x)]
    return contract.Stratum(
        protocol=contract.Protocol(
            session_set=str(spec["prompt_set"]), n_sessions=len(ids),
            clip_chars=recipe.clip_chars if recipe else None,
            max_turns=recipe.max_turns if recipe else None,
            code_share=recipe.code_share if recipe else None,
            turns_per_side=int(cols[runs[0].run_id][REAL_A].session.size),
            sides=side_names, n_predict_cap=int(spec["n_predict"]),
            ctx_size=int(spec["ctx_size"]), threads=int(spec["threads"]),
            concurrency=int(spec["concurrency"]), temperature=float(spec["temperature"]),
            chars_per_token_real=_float(plan.get("chars_per_token_real")),
            chars_per_token={s: _float(v.get("chars_per_token")) if isinstance(v, dict)
                             else None for s, v in syn.items()},
            prefix_tokens_max={s: _prefix_max(v) for s, v in syn.items()}),
        servers=servers, comparisons=comparisons, headline=headline, order_effect=order,
        mc_error_max=max(finite) if finite else None)


def stratum_key(r: RealismRun) -> tuple[int, str]:
    """(concurrency, session set): the runs that share it form one stratum."""
    return int(r.spec["concurrency"]), str(r.spec["prompt_set"])


def strata(runs: Sequence[RealismRun]) -> list[list[RealismRun]]:
    """The runs grouped by :func:`stratum_key`, each no draft first, then in the order they were
    measured; the main stratum first: one stream, the most servers, then the earliest.
    """
    groups: dict[tuple[int, str], list[RealismRun]] = {}
    for r in runs:
        groups.setdefault(stratum_key(r), []).append(r)
    out = [sorted(g, key=lambda r: (r.drafter != "none", r.start_time, r.run_id))
           for g in groups.values()]
    first = min(out, key=lambda g: (stratum_key(g[0])[0] != 1, -len(g),
                                    min(r.start_time for r in g)))
    rest = sorted((g for g in out if g is not first), key=lambda g: stratum_key(g[0]))
    return [first, *rest]


def analyse(runs: Sequence[RealismRun], *, bootstrap: Bootstrap = BOOTSTRAP
            ) -> contract.Realism:
    """The study from its loaded runs: the main stratum and the others (:func:`strata`)."""
    warnings: list[str] = []
    for r in runs:
        warnings += r.problems
        if not r.complete:
            warnings.append(f"{r.run_id}: run not complete; analysed as it stands")
    if not runs:
        raise AnalysisError("realism: no realism run to analyse")
    main, *rest = [_stratum(g, bootstrap, warnings) for g in strata(runs)]
    return contract.Realism(
        schema_version=contract.SCHEMA_VERSION, protocol=main["protocol"],
        servers=main["servers"], comparisons=main["comparisons"], headline=main["headline"],
        order_effect=main["order_effect"], mc_error_max=main["mc_error_max"], strata=rest,
        parameters=contract.Parameters(
            bootstrap_resamples=bootstrap.resamples, bootstrap_seed=bootstrap.seed,
            confidence=bootstrap.confidence, bins=list(contract.BINS),
            min_sessions_interval=MIN_SESSIONS, mc_batches=MC_BATCHES),
        warnings=warnings)


def _beyond(g: contract.Gap, floor: contract.Gap) -> bool | None:
    s, f = g["signed"], floor["symmetric"]["value"]
    if s["value"] is None or s["lo"] is None or s["hi"] is None or f is None:
        return None
    return abs(s["value"]) > f and (s["lo"] > 0 or s["hi"] < 0)


def _prefix_max(part: Any) -> int:
    """The largest shared prefix a plan's synthetic side gave a session (0: none)."""
    v = part.get("prefix_tokens") if isinstance(part, dict) else None
    return max((int(x) for x in v if isinstance(x, int)), default=0) \
        if isinstance(v, list) else 0


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _date(unix_s: float) -> str:
    import datetime as dt
    return dt.datetime.fromtimestamp(unix_s, dt.UTC).strftime("%Y-%m-%d")


def load_runs(root: Path, *, locks: Path | None = None) -> tuple[list[RealismRun], list[str]]:
    """Every realism run under ``root`` (``_``-prefixed folders skipped), in the order they were
    measured, and one warning line per run left out (``locks``: the session sets' id locks,
    default ``experiments/sessions``)."""
    runs: list[RealismRun] = []
    warnings: list[str] = []
    subs = records.run_folders(root)  # links out of the repository refused
    for sub in subs:
        if not (sub / records.CONFIG).exists():
            warnings.append(f"run {sub.name}: no {records.CONFIG}; not a run, skipped")
            continue
        try:
            runs.append(load_run(sub, locks=locks))
        except AnalysisError as err:
            warnings.append(f"{err}; run skipped")
    runs.sort(key=lambda r: (r.start_time, r.run_id))
    return runs, warnings


def build_realism(root: Path, *, bootstrap: Bootstrap = BOOTSTRAP,
                  locks: Path | None = None) -> contract.Realism:
    """The ``realism.json`` object of the runs under ``root``, checked against the contract."""
    runs, warnings = load_runs(root, locks=locks)
    result = analyse(runs, bootstrap=bootstrap)
    plain = {k: files.to_plain(v, k) for k, v in result.items() if k != "warnings"}
    plain["warnings"] = sorted(set(warnings + result["warnings"]))
    return contract.validate(plain, source=f"realism analysis of {root}", error=AnalysisError)


def write_realism(root: Path = paths.REALISM_RUNS, out: Path = paths.REALISM
                  ) -> contract.Realism:
    """Build and write ``realism.json`` atomically (sorted keys, 6 significant digits)."""
    data = build_realism(root)
    files.write_text(out, files.dumps_json(data))
    return data
