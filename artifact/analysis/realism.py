"""The workload-realism study, take three (issue 28): per-side runs -> ``realism.json``.

Each run is one deployment: one drafter (no draft, ngram-mod, the Q2_K draft model) serving one
side (REAL-A, REAL-B, a synthetic twin) on a server of its own; the runs of one interleave group
(a **stratum**: one session set at one concurrency) were measured together, turn by turn
(:mod:`artifact.campaign.deployments`). Per server: the mean E2E, TPOT and TTFT per turn and
the acceptance (accepted over drafted tokens, pooled over turns). On a drafter, the **speedup**
of a side is the no-draft server's mean E2E per turn of that side over the drafter's.

A **gap** compares a side with REAL-A on one drafter's servers: latencies and speedups as
100 (side / REAL-A - 1) %, acceptance as 100 (side - REAL-A) points. REAL-B against REAL-A is
the **floor**: two servers with identical histories, so their acceptance must agree exactly
(:class:`Exact`) and their timing differs by the machine only.

The inputs pass :mod:`artifact.analysis.validate.realism` first: a run's config, one protocol
(concurrency, session set) per stratum as the campaign file plans it, each turn's slot and place
in its round within range; a drafter with no REAL-B server has no floor, and says so.

Only (session, turn) pairs that every server of the stratum measured quietly are analysed: a
contended turn is dropped from every side and server. Intervals: a percentile bootstrap over
sessions, one draw per stratum shared by every server. Each synthetic gap gets one verdict
against the margin declared in the campaign file before measuring (its ``[equivalence]``
table): *equivalent* when its 90 % interval lies inside the margin, else *differs* when its
Holm-adjusted bootstrap p (over every synthetic gap of the study) is below ``ALPHA``, else
*cannot tell*.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from artifact import files, hostinfo, paths, records, sessionsets
from artifact.analysis import process, validate
from artifact.analysis import realism_judge as judge
from artifact.analysis.accsplit_stats import holm
from artifact.analysis.params import REALISM_BOOTSTRAP as BOOTSTRAP
from artifact.analysis.params import Bootstrap
from artifact.analysis.runs import AnalysisError
from artifact.analysis.validate import realism as vrealism
from artifact.contract import realism as contract
from artifact.errors import RecordError, SessionError, SpecError
from artifact.sessionsets import find_recipe
from artifact.spec import Campaign, load_campaign
from artifact.stats import cluster_weights, percentile_interval

FloatArray = npt.NDArray[np.float64]
REAL_A, REAL_B = "real-a", "real-b"
ALPHA = 0.05
EQUIVALENCE_CONFIDENCE = 0.90
POWER = 0.80
Z_DETECT = 1.959964 + 0.841621  # z(1 - ALPHA / 2) + z(POWER)
DEFAULT_THRESHOLD = 0.1  # cores; the quiet gate's default, when metrics.json does not say
LATENCIES = {"e2e": "e2e_ms", "tpot": "tpot_ms", "ttft": "ttft_ms"}


@dataclass
class SideRun:
    """One loaded per-side run: its turns screened (:mod:`artifact.analysis.validate`)."""

    run_id: str
    group: str  # the interleave group: the stratum
    drafter: str
    k: int | None
    side: str
    spec: dict[str, Any]
    plan: dict[str, Any]
    turns: list[records.TurnResult]  # screened, contended ones included
    n_errors: int
    complete: bool
    server_starts: int
    threshold_cores: float
    start_time: str
    machine: str = ""
    host: dict[str, str | int | None] | None = None
    binary_sha256: str = ""
    problems: list[str] = field(default_factory=list)


def load_run(run: Path, *, locks: Path | None = None) -> SideRun:
    """A per-side realism run directory; a config that is not one (by the rules of
    :mod:`artifact.analysis.validate.realism`: its side, its group and its stratum's protocol),
    a plan missing or damaged, or a session set whose id lock (``<locks>/<set>.txt``, default
    ``experiments/sessions``) cannot be read, is an :class:`AnalysisError` naming the field (the
    run is then left out).

    Its turns are screened (:mod:`artifact.analysis.validate`): impossible values, turns off
    the run's plan (which holds its one side only) or off the set's id lock are excluded, and
    turns that recorded no contention window counted; each a warning.
    """
    where = f"{run.name}/{records.CONFIG}"
    try:
        config = records.read_json(run / records.CONFIG)
        why = vrealism.config_problem(config)
        if why is not None:
            raise TypeError(why)
        spec = config["spec"]
        w = spec["workload"]
        group = spec["interleave"]
        drafter = str(spec["drafter"])
        k = spec["k"] if isinstance(spec["k"], int) else None
        env = config.get("environment")
        start = str(env.get("start_time", "")) if isinstance(env, dict) else ""
        machine = hostinfo.machine_name(env) if isinstance(env, dict) else ""
        binary = str(env.get("binary_sha256", "")) if isinstance(env, dict) else ""
        host = env.get("host") if isinstance(env, dict) else None
        session_set = str(spec["prompt_set"])
        recorded = config.get("prompt_set")
        recorded_sha = recorded.get("sha256") if isinstance(recorded, dict) else None
    except (RecordError, KeyError, TypeError, ValueError) as err:
        raise AnalysisError(f"{where}: not a per-side realism run's config ({err})") from err
    lock = sessionsets.lock_file(session_set, locks)
    try:
        entries, lock_sha = sessionsets.read_id_lock(lock)
    except SessionError as err:
        raise AnalysisError(f"run {run.name}: session lock of set {session_set!r}: {err}; its "
                            "turns cannot be checked against it") from err
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
    locked = {sid for _, sid in entries}
    excluded = validate.screen(turns, key=lambda t: t.key,
                               label=lambda t: f"{t.key[0]}#{t.turn}",
                               problem=lambda t: validate.turn_problem(t, planned,
                                                                       locked=locked),
                               where=run.name, warnings=problems)
    kept = [t for t, x in zip(turns, excluded, strict=True) if not x]
    validate.unknown_contention(kept, run.name, problems)
    cont = metrics.get("contention")
    thr = float(cont["threshold_cores"]) if isinstance(cont, dict) \
        and isinstance(cont.get("threshold_cores"), int | float) else DEFAULT_THRESHOLD
    starts = metrics.get("server_starts")
    return SideRun(
        run_id=run.name, group=group, drafter=drafter, k=k, side=str(w["play"]), spec=spec,
        plan=plan, turns=kept, n_errors=len(records.read_jsonl(run / records.ERRORS).rows),
        complete=metrics.get("complete") is True,
        server_starts=starts if isinstance(starts, int) and not isinstance(starts, bool) else 0,
        threshold_cores=thr, start_time=start, machine=machine, binary_sha256=binary,
        host=_host(host), problems=problems)


def _host(value: Any) -> dict[str, str | int | None] | None:
    """A recorded extended fingerprint, its values kept where they are strings or integers."""
    if not isinstance(value, dict):
        return None
    return {str(k): v if isinstance(v, str | int) and not isinstance(v, bool) else None
            for k, v in sorted(value.items())}


def load_runs(root: Path, *, locks: Path | None = None) -> tuple[list[SideRun], list[str]]:
    """Every per-side run under ``root`` (``_``-prefixed folders skipped), and one warning line
    per run left out."""
    runs: list[SideRun] = []
    warnings: list[str] = []
    for sub in records.run_folders(root):  # links out of the repository refused
        if not (sub / records.CONFIG).exists():
            warnings.append(f"run {sub.name}: no {records.CONFIG}; not a run, skipped")
            continue
        try:
            runs.append(load_run(sub, locks=locks))
        except AnalysisError as err:
            warnings.append(f"{err}; run skipped")
    runs.sort(key=lambda r: (r.group, r.run_id))
    return runs, warnings


# ---- one stratum -----------------------------------------------------------------------------

@dataclass
class Sums:
    """A server's per-session sums over the stratum's analysed turns (sessions in play order)."""

    n: FloatArray
    e2e_ms: FloatArray
    tpot_ms: FloatArray
    n_tpot: FloatArray
    ttft_ms: FloatArray
    n_ttft: FloatArray
    drafted: FloatArray
    accepted: FloatArray


def _sums(turns: Sequence[records.TurnResult], index: dict[str, int]) -> Sums:
    n_s = len(index)

    def add(values: Sequence[float]) -> FloatArray:
        out: FloatArray = np.bincount([index[t.session_id] for t in turns],
                                      weights=np.asarray(values, dtype=np.float64),
                                      minlength=n_s).astype(np.float64)
        return out

    return Sums(
        n=add([1.0] * len(turns)), e2e_ms=add([t.e2e_ms for t in turns]),
        tpot_ms=add([t.tpot_ms or 0.0 for t in turns]),
        n_tpot=add([1.0 if t.tpot_ms is not None else 0.0 for t in turns]),
        ttft_ms=add([t.ttft_ms or 0.0 for t in turns]),
        n_ttft=add([1.0 if t.ttft_ms is not None else 0.0 for t in turns]),
        drafted=add([float(t.timings.draft_n or 0) for t in turns]),
        accepted=add([float(t.timings.draft_n_accepted or 0) for t in turns]))


class Draws:
    """Ratios of sums under one session bootstrap: a point and its draws. With ``clusters``
    (each session's cluster, numbered from 0) whole clusters are resampled, every session of a
    cluster taking its cluster's weight."""

    def __init__(self, n_sessions: int, bootstrap: Bootstrap, key: str,
                 clusters: Sequence[int] | None = None) -> None:
        if clusters is None:
            rng = np.random.default_rng([bootstrap.seed, n_sessions, *key.encode()])
            self.w = cluster_weights(n_sessions, rng=rng, n_resamples=bootstrap.resamples)
        else:
            n = max(clusters, default=-1) + 1
            rng = np.random.default_rng([bootstrap.seed, n_sessions, n, *key.encode()])
            self.w = cluster_weights(n, rng=rng, n_resamples=bootstrap.resamples
                                     )[:, np.asarray(clusters, dtype=np.int64)]
        self.bootstrap = bootstrap

    def ratio(self, num: FloatArray, den: FloatArray) -> tuple[float, FloatArray]:
        point = float(num.sum() / den.sum()) if den.sum() > 0 else math.nan
        a, b = self.w @ num, self.w @ den
        with np.errstate(divide="ignore", invalid="ignore"):
            return point, np.where(b > 0, a / np.where(b > 0, b, 1.0), math.nan)

    def interval(self, point: float, draws: FloatArray) -> contract.Interval:
        if math.isnan(point):
            return contract.Interval(value=None, lo=None, hi=None)
        lo, hi = percentile_interval(draws, confidence=self.bootstrap.confidence)
        return contract.Interval(value=point, lo=_num(lo), hi=_num(hi))


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


Estimate = tuple[float, FloatArray]


def _quantities(d: Draws, s: Sums) -> dict[str, Estimate]:
    return {"e2e": d.ratio(s.e2e_ms, s.n), "tpot": d.ratio(s.tpot_ms, s.n_tpot),
            "ttft": d.ratio(s.ttft_ms, s.n_ttft), "acceptance": d.ratio(s.accepted, s.drafted)}


def label(drafter: str, k: int | None, spec: dict[str, Any]) -> str:
    """A drafter in words.

    >>> label("none", None, {}), label("ngram-mod", 4, {})
    ('no draft', 'ngram-mod k=4')
    """
    if drafter == "none":
        return "no draft"
    if drafter.startswith("draft"):
        return f"draft model {spec.get('draft_quant') or ''} k={k}".replace("  ", " ")
    return f"{drafter} k={k}"


@dataclass
class GapDraft:
    """A gap before the family's correction: its point, draws and where it goes."""

    gap: contract.Gap
    draws: FloatArray  # the session (chunk) bootstrap's
    floor: bool
    stratum: str = ""
    streams: int = 1
    se: float = math.nan  # the sessions' delta-method SE: log units (relative gaps) or points


@dataclass(frozen=True)
class GapTests:
    """What a gap's draws say: intervals, p of 'no gap', p of 'inside the margin', SD."""

    ci95: list[float | None]
    ci90: list[float | None]
    p: float
    p_tost: float
    sd: float
    equivalent_by_interval: bool


def _tests(draws: FloatArray, margin: float) -> GapTests:
    lo95, hi95 = percentile_interval(draws, confidence=0.95)
    lo90, hi90 = percentile_interval(draws, confidence=EQUIVALENCE_CONFIDENCE)
    finite = draws[np.isfinite(draws)]
    eq = math.isfinite(lo90) and math.isfinite(hi90) and -margin < lo90 and hi90 < margin
    return GapTests(ci95=[_num(lo95), _num(hi95)], ci90=[_num(lo90), _num(hi90)],
                 p=judge.two_sided_p(draws), p_tost=judge.tost_p(draws, margin),
                 sd=float(finite.std(ddof=1)) if finite.size > 1 else math.nan,
                 equivalent_by_interval=eq)


def _gap(d: Draws, drafter: SideRun, side: str, quantity: str, real: Estimate,
         other: Estimate, margin: float, floor: bool) -> GapDraft:
    """A gap judged by its sessions (chunks) alone; :func:`_judge` adds the process."""
    rel = quantity != "acceptance"
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 100 * (other[0] / real[0] - 1) if rel else 100 * (other[0] - real[0])
        draws = 100 * (other[1] / real[1] - 1) if rel else 100 * (other[1] - real[1])
    m = 100 * margin
    t = _tests(draws, m)
    verdict = "equivalent" if t.equivalent_by_interval else "cannot tell"
    alone = contract.GapSessions(ci95=t.ci95, ci90=t.ci90, p=_num(t.p), p_holm=None,
                                 mde=_num(Z_DETECT * t.sd), verdict=verdict)
    g = contract.Gap(
        drafter=drafter.drafter, label=label(drafter.drafter, drafter.k, drafter.spec),
        side=side, quantity=quantity, unit="%" if rel else "points",
        real=d.interval(*real), side_value=d.interval(*other), value=_num(float(value)),
        ci95=t.ci95, ci90=t.ci90, margin=m, p=_num(t.p), p_holm=None, p_tost=_num(t.p_tost),
        p_tost_holm=None, process_sd=None, process_rule="floor-not-adjusted",
        mde=_num(Z_DETECT * t.sd), mde_holm=None, verdict=verdict, sessions_only=alone)
    return GapDraft(gap=g, draws=draws, floor=floor)


def _judge(g: GapDraft, sd: judge.ProcessSD, bootstrap: Bootstrap) -> FloatArray:
    """A synthetic gap with the process spread: its draws, intervals, p and detectable gap
    (seeded per stratum and gap); the draws returned for the Monte-Carlo error."""
    gap = g.gap
    rng = np.random.default_rng([bootstrap.seed, *(f"process:{g.stratum}:{gap['drafter']}:"
                                                   f"{gap['side']}:{gap['quantity']}").encode()])
    draws = judge.with_process(g.draws, sd.sd, relative=gap["unit"] == "%", rng=rng)
    t = _tests(draws, gap["margin"])
    gap["ci95"], gap["ci90"], gap["mde"] = t.ci95, t.ci90, _num(Z_DETECT * t.sd)
    value, m = _finite(gap["value"]), gap["margin"]
    if gap["unit"] == "%":  # in log units: the gap log(1 + g / 100), the margin likewise
        se = math.hypot(g.se, sd.sd / 100)
        x = math.log1p(value / 100) if value > -100 else math.nan
        lo, hi = (math.log1p(-m / 100) if m < 100 else -math.inf), math.log1p(m / 100)
    else:
        se, x, lo, hi = math.hypot(g.se, sd.sd), value, -m, m
    gap["p"] = _num(judge.normal_p(x, se))
    gap["p_tost"] = _num(judge.normal_tost_p(x, se, lo, hi))
    gap["process_sd"], gap["process_rule"] = sd.sd, sd.rule
    return draws


@dataclass
class StratumDraft:
    stratum: contract.Stratum
    gaps: list[GapDraft]


def _common_keys(runs: Sequence[SideRun], warnings: list[str], key: str
                 ) -> tuple[set[tuple[str, int]], int]:
    """The (session, turn) pairs every server measured, minus those contended on any: what is
    analysed on every server; and how many were dropped."""
    measured = [{(t.session_id, t.turn) for t in r.turns} for r in runs]
    every = set.intersection(*measured)
    seen = set.union(*measured)
    busy = {(t.session_id, t.turn) for r in runs for t in r.turns if t.contended}
    kept = every - busy
    if busy:
        warnings.append(f"realism: stratum {key}: {len(busy & seen)} contended turn(s) left out "
                        "of every server's figures (foreign CPU above the threshold on one)")
    if seen - every:
        warnings.append(f"realism: stratum {key}: {len(seen - every)} turn(s) measured on one "
                        "side only (missing on some server), left out of every server's figures")
    return kept, len(seen - kept)


def _first_turns(runs: Sequence[SideRun]) -> dict[str, int]:
    """Each session's place in play order: the ``order`` of its first turn read."""
    first_turn: dict[str, int] = {}
    for r in runs:
        for t in r.turns:
            first_turn.setdefault(t.session_id, t.order)
    return first_turn


def _stratum(key: str, runs: Sequence[SideRun], bootstrap: Bootstrap,
             margins: dict[str, float], warnings: list[str],
             plan: vrealism.Planned | None = None) -> StratumDraft:
    """One stratum from its loaded runs."""
    kept, dropped = _common_keys(runs, warnings, key)
    first_turn = _first_turns(runs)
    order = sorted({s for s, _ in kept}, key=lambda s: (first_turn[s], s))
    index = {s: i for i, s in enumerate(order)}
    streams = int(runs[0].spec["concurrency"])
    clusters = _clusters(order, first_turn, streams)
    d = Draws(len(order), bootstrap, key, clusters)
    by = {(r.drafter, r.side): r for r in runs}
    analysed = {r.run_id: [t for t in r.turns if (t.session_id, t.turn) in kept] for r in runs}
    sums = {r.run_id: _sums(analysed[r.run_id], index) for r in runs}
    q = {r.run_id: _quantities(d, sums[r.run_id]) for r in runs}
    infl = {r.run_id: _influences(sums[r.run_id]) for r in runs}
    none = {r.side: r for r in runs if r.drafter == "none"}
    for r in runs:  # the speedup of each drafter's side: no draft's E2E over the drafter's
        if r.drafter != "none" and r.side in none:
            n0, n1 = q[none[r.side].run_id]["e2e"], q[r.run_id]["e2e"]
            with np.errstate(divide="ignore", invalid="ignore"):
                q[r.run_id]["speedup"] = (n0[0] / n1[0], n0[1] / n1[1])
            infl[r.run_id]["speedup"] = infl[none[r.side].run_id]["e2e"] - infl[r.run_id]["e2e"]
    gaps: list[GapDraft] = []
    drafters = list(dict.fromkeys(r.drafter for r in sorted(runs, key=_drafter_rank)))
    for dr in drafters:
        a = by.get((dr, REAL_A))
        if a is None:
            warnings.append(f"realism: stratum {key}: drafter {dr} has no REAL-A server; its "
                            "gaps left out")
            continue
        if (dr, REAL_B) not in by:
            warnings.append(_no_floor(key, dr, plan))
        sides = [r.side for r in runs if r.drafter == dr and r.side != REAL_A]
        for side in sorted(sides, key=_side_rank):
            s = by[(dr, side)]
            for quantity in contract.QUANTITIES:
                if quantity == "acceptance" and dr == "none":
                    continue
                if quantity not in q[a.run_id] or quantity not in q[s.run_id]:
                    continue
                g = _gap(d, a, side, quantity, q[a.run_id][quantity], q[s.run_id][quantity],
                         margins.get(quantity, math.nan), floor=side == REAL_B)
                se = _gap_se(quantity, (q[a.run_id][quantity][0], infl[a.run_id][quantity]),
                             (q[s.run_id][quantity][0], infl[s.run_id][quantity]), clusters)
                gaps.append(replace(g, stratum=key, streams=streams, se=se))
    servers = [_server(r, analysed[r.run_id], d, q[r.run_id], len(runs)) for r in
               sorted(runs, key=lambda r: (_drafter_rank(r), _side_rank(r.side)))]
    stratum = contract.Stratum(
        key=key, protocol=_protocol(runs, order, len(kept), dropped),
        resample_unit="session" if clusters is None else "chunk",
        n_clusters=len(order) if clusters is None else len(set(clusters)),
        servers=servers, gaps=[], floors=[],
        exact=[_exact(by[(dr, REAL_A)], by[(dr, REAL_B)]) for dr in drafters
               if dr != "none" and (dr, REAL_A) in by and (dr, REAL_B) in by],
        drift=[_drift(r, analysed[r.run_id], order) for r in
               sorted(runs, key=lambda r: (_drafter_rank(r), _side_rank(r.side)))
               if r.drafter != "none"])
    for e in stratum["exact"]:
        if not e["equal"]:
            why = ("two servers with identical histories should not" if streams == 1 else
                   f"at {streams} streams what a server drafts depends on how it batches the "
                   "requests that arrive together: acceptance has a floor, REAL-B against REAL-A")
            warnings.append(f"realism: stratum {key}: drafter {e['drafter']}: REAL-A and REAL-B "
                            f"accepted differently on {e['n_differ']} of {e['n_turns']} turns "
                            f"({why})")
    return StratumDraft(stratum=stratum, gaps=gaps)


def _influences(s: Sums) -> dict[str, FloatArray]:
    """Each session's influence on the log of each quantity (:func:`_quantities`)."""
    f = judge.log_ratio_influence
    return {"e2e": f(s.e2e_ms, s.n), "tpot": f(s.tpot_ms, s.n_tpot),
            "ttft": f(s.ttft_ms, s.n_ttft), "acceptance": f(s.accepted, s.drafted)}


def _gap_se(quantity: str, real: tuple[float, FloatArray], side: tuple[float, FloatArray],
            clusters: Sequence[int] | None) -> float:
    """A gap's delta-method SE under the session (chunk) bootstrap: of its log (relative gaps)
    or in points (acceptance, ``100 (A_side - A_real)``)."""
    if quantity != "acceptance":
        return judge.cluster_se(side[1] - real[1], clusters)
    return judge.cluster_se(100 * (side[0] * side[1] - real[0] * real[1]), clusters)


def _clusters(order: Sequence[str], first_turn: Mapping[str, int], streams: int
              ) -> list[int] | None:
    """At more than one stream, each analysed session's chunk (numbered from 0 over the chunks
    analysed): the chunks of the sessions played, in play order
    (:func:`artifact.analysis.realism_judge.chunks`); None at one stream (sessions resampled).

    >>> _clusters(["b", "c", "d"], {"a": 0, "b": 1, "c": 2, "d": 3}, 2)
    [0, 1, 1]
    """
    if streams <= 1:
        return None
    chunk = judge.chunks(sorted(first_turn, key=lambda s: (first_turn[s], s)), streams)
    renum = {c: i for i, c in enumerate(dict.fromkeys(chunk[s] for s in order))}
    return [renum[chunk[s]] for s in order]


def _no_floor(key: str, drafter: str, plan: vrealism.Planned | None) -> str:
    """The warning of a drafter with a REAL-A server and no REAL-B one: no floor.

    >>> print(_no_floor("g", "ngram-mod", None).replace(": ", ":\\n"))
    realism:
    stratum g:
    drafter ngram-mod:
    floor not computable, written as empty:
    no REAL-B server among the stratum's runs, so REAL-A has no twin to be compared with
    """
    run = plan.runs.get((drafter, REAL_B)) if plan is not None else None
    where = (f" (run {run}, planned in {plan.where}, is not among the runs analysed)"
             if run is not None and plan is not None else " among the stratum's runs")
    return (f"realism: stratum {key}: drafter {drafter}: floor not computable, written as "
            f"empty: no REAL-B server{where}, so REAL-A has no twin to be compared with")


def _screened(key: str, runs: list[SideRun], plan: vrealism.Planned | None,
              warnings: list[str]) -> list[SideRun]:
    """A stratum's runs through the realism rules (:mod:`artifact.analysis.validate.realism`):
    those of the stratum's protocol, each with the turns whose slot and place in the round are
    possible (the places: the servers the campaign plans for the group)."""
    kept = vrealism.one_protocol(key, runs, run_id=lambda r: r.run_id, spec=lambda r: r.spec,
                                 plan=plan, warnings=warnings)
    places = plan.servers if plan is not None else None
    out = []
    for r in kept:
        turns = vrealism.in_range(r.turns, slots=int(r.spec["concurrency"]), places=places,
                                  where=r.run_id, warnings=warnings)
        out.append(r if len(turns) == len(r.turns) else replace(r, turns=turns))
    return out


_DRAFTERS = ("none", "ngram-mod", "draft-simple")


def _drafter_rank(r: SideRun) -> tuple[int, str]:
    return (_DRAFTERS.index(r.drafter) if r.drafter in _DRAFTERS else len(_DRAFTERS), r.drafter)


def _side_rank(side: str) -> tuple[int, str]:
    """REAL-A, REAL-B, then the synthetic sides in the design's order.

    >>> sorted(["synthetic-prefix", "real-b", "synthetic-english", "real-a"], key=_side_rank)
    ['real-a', 'real-b', 'synthetic-english', 'synthetic-prefix']
    """
    fixed = ("real-a", "real-b", "synthetic-english", "synthetic-recurrent", "synthetic-prefix")
    return (fixed.index(side) if side in fixed else len(fixed), side)


def _server(r: SideRun, turns: Sequence[records.TurnResult], d: Draws,
            q: dict[str, Estimate], n_servers: int) -> contract.Server:
    sent = [t.sent_unix_s for t in r.turns]
    places = Counter(t.round_pos for t in r.turns if t.round_pos is not None)
    fc = [float(t.contention["foreign_cores"]) for t in r.turns
          if isinstance(t.contention, dict)
          and isinstance(t.contention.get("foreign_cores"), int | float)]
    n = len(turns)
    tok = sum(t.prompt_tokens for t in turns)
    first = [t.cached_tokens for t in turns if t.turn == 0]
    return contract.Server(
        run_id=r.run_id, drafter=r.drafter, k=r.k, label=label(r.drafter, r.k, r.spec),
        side=r.side, machine=r.machine, binary_sha256=r.binary_sha256, complete=r.complete,
        n_errors=r.n_errors, server_starts=r.server_starts, n_turns=n,
        first_unix_s=round(min(sent)) if sent else None,
        last_unix_s=round(max(sent)) if sent else None,
        places=[places.get(i, 0) for i in range(n_servers)],
        contention=_contention(fc, r.threshold_cores),
        e2e_ms=d.interval(*q["e2e"]), tpot_ms=d.interval(*q["tpot"]),
        ttft_ms=d.interval(*q["ttft"]), acceptance=d.interval(*q["acceptance"]),
        drafted_turns=sum(1 for t in turns if (t.timings.draft_n or 0) > 0) / n if n else 0.0,
        accepted_per_turn=sum(t.timings.draft_n_accepted or 0 for t in turns) / n if n else 0.0,
        prompt_chars_per_token=sum(t.prompt_chars for t in turns) / tok if tok else None,
        cached_tokens_mean=sum(t.cached_tokens for t in turns) / n if n else None,
        cached_turn0_mean=sum(first) / len(first) if first else None)


def _contention(foreign: Sequence[float], threshold: float) -> contract.Contention | None:
    v = np.asarray(foreign, dtype=np.float64)
    if not v.size:
        return None
    return contract.Contention(n_turns=int(v.size), median=float(np.median(v)),
                               max=float(v.max()), n_contended=int((v > threshold).sum()),
                               threshold_cores=threshold)


def _exact(a: SideRun, b: SideRun) -> contract.Exact:
    """REAL-A and REAL-B turn by turn: the same drafted and accepted counts on every turn both
    recorded (contended ones too: contention changes the timing, not the text)."""
    def counts(r: SideRun) -> dict[tuple[str, int], tuple[int, int]]:
        return {(t.session_id, t.turn): (t.timings.draft_n or 0, t.timings.draft_n_accepted or 0)
                for t in r.turns}

    ca, cb = counts(a), counts(b)
    both = ca.keys() & cb.keys()
    differ = sum(1 for k in both if ca[k] != cb[k])
    return contract.Exact(drafter=a.drafter, n_turns=len(both), n_differ=differ,
                          equal=differ == 0 and bool(both))


def _drift(r: SideRun, turns: Sequence[records.TurnResult], order: list[str]) -> contract.Drift:
    """Acceptance over the first and the second half of the sessions in play order."""
    half = set(order[:len(order) // 2])

    def acc(ts: list[records.TurnResult]) -> float | None:
        n = sum(t.timings.draft_n or 0 for t in ts)
        return sum(t.timings.draft_n_accepted or 0 for t in ts) / n if n else None

    a = acc([t for t in turns if t.session_id in half])
    b = acc([t for t in turns if t.session_id not in half])
    return contract.Drift(drafter=r.drafter, side=r.side, first=a, second=b,
                          diff_points=100 * (b - a) if a is not None and b is not None
                          else None)


def _protocol(runs: Sequence[SideRun], order: list[str], n_kept: int,
              dropped: int) -> contract.Protocol:
    spec = runs[0].spec
    recipe = find_recipe(str(spec["prompt_set"]))
    sent = [t.sent_unix_s for r in runs for t in r.turns]
    real = next((r for r in runs if r.side == REAL_A), runs[0])
    syn: dict[str, dict[str, Any]] = {}
    for r in runs:
        part = r.plan.get("synthetic", {}).get(r.side) if isinstance(
            r.plan.get("synthetic"), dict) else None
        if isinstance(part, dict):
            syn.setdefault(r.side, part)
    rounds = {(t.session_id, t.turn) for t in real.turns}
    return contract.Protocol(
        session_set=str(spec["prompt_set"]), n_sessions=len(order),
        n_sessions_played=len({t.session_id for r in runs for t in r.turns}),
        turns_per_side=n_kept, n_turns_dropped=dropped,
        clip_chars=recipe.clip_chars if recipe else None,
        max_turns=recipe.max_turns if recipe else None,
        code_share=recipe.code_share if recipe else None,
        n_predict_cap=int(spec["n_predict"]), ctx_size=int(spec["ctx_size"]),
        threads=int(spec["threads"]), concurrency=int(spec["concurrency"]),
        temperature=float(spec["temperature"]), n_servers=len(runs),
        n_rounds=-(-len(rounds) // int(spec["concurrency"])),
        chars_per_token_real=_float(real.plan.get("chars_per_token_real")),
        chars_per_token={s: _float(v.get("chars_per_token")) for s, v in sorted(syn.items())},
        prefix_tokens_max={s: max((int(x) for x in v.get("prefix_tokens", [])
                                   if isinstance(x, int)), default=0)
                           for s, v in sorted(syn.items())},
        session_order=order,
        dates=sorted({_date(x) for x in sent}),
        wall_min=(max(sent) - min(sent)) / 60 if sent else 0.0,
        machines=sorted({r.machine for r in runs}),
        hosts=[dict(h) for h in sorted({tuple(r.host.items()) for r in runs if r.host},
                                       key=repr)],
        binaries=sorted({r.binary_sha256[:12] for r in runs}))


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _date(unix_s: float) -> str:
    return dt.datetime.fromtimestamp(unix_s, dt.UTC).strftime("%Y-%m-%d")


# ---- the study -------------------------------------------------------------------------------

def _main_first(key: str, runs: Sequence[SideRun]) -> tuple[int, int, str]:
    """Strata order after the campaign file's: one stream before more, the most servers
    first, then by key."""
    return (int(runs[0].spec["concurrency"]) != 1, -len(runs), key)


def analyse(runs: Sequence[SideRun], margins: dict[str, float], *,
            groups: Sequence[str] = (), bootstrap: Bootstrap = BOOTSTRAP,
            campaign: str = "", plans: Mapping[str, vrealism.Planned] | None = None,
            process: contract.Process | None = None) -> contract.Realism:
    """The study from its loaded runs: one stratum per interleave group; ``groups``: the
    campaign's groups, those without runs listed as pending; ``plans``: what the campaign plans
    for each group (its protocol, its servers), against which each stratum's runs and turns are
    checked (:func:`_screened`); ``process``: the replicated stratum, whose components every
    synthetic gap carries (:mod:`artifact.analysis.realism_judge`; None: sessions only)."""
    warnings: list[str] = []
    for r in runs:
        warnings += r.problems
        if not r.complete:
            warnings.append(f"{r.run_id}: run not complete; analysed as it stands")
    if not runs:
        raise AnalysisError("realism: no per-side realism run to analyse")
    by_group: dict[str, list[SideRun]] = {}
    for r in runs:
        by_group.setdefault(r.group, []).append(r)
    for k in list(by_group):
        by_group[k] = _screened(k, by_group[k], (plans or {}).get(k), warnings)
        if not by_group[k]:
            del by_group[k]
    if not by_group:
        left = sorted(w for w in warnings if w.endswith("; run skipped"))
        raise AnalysisError("realism: every per-side run left out by the checks of its stratum "
                            f"({validate.listed(left, most=2)})")
    keys = sorted(by_group, key=lambda k: (groups.index(k) if k in groups else len(groups),
                                           _main_first(k, by_group[k])))
    for k in list(keys):
        if not set.intersection(*({(t.session_id, t.turn) for t in r.turns}
                                  for r in by_group[k])):
            warnings.append(f"realism: stratum {k}: no turn measured on every server; left out")
            keys.remove(k)
    if not keys:
        raise AnalysisError("realism: no stratum with a turn measured on every server")
    drafts = [_stratum(k, by_group[k], bootstrap, margins, warnings, (plans or {}).get(k))
              for k in keys]
    family = [g for s in drafts for g in s.gaps if not g.floor]
    mc = _judge_family(drafts, family, process, bootstrap)
    for s in drafts:
        s.stratum["gaps"] = [g.gap for g in s.gaps if not g.floor]
        s.stratum["floors"] = [g.gap for g in s.gaps if g.floor]
    counts = Counter(g.gap["verdict"] for g in family)
    alone = Counter(g.gap["sessions_only"]["verdict"] for g in family)
    return contract.Realism(
        schema_version=contract.SCHEMA_VERSION, strata=[s.stratum for s in drafts],
        pending=[g for g in groups if g not in keys], echo=[], process=None,
        verdicts=contract.Verdicts(
            n_gaps=len(family), equivalent=counts["equivalent"], differs=counts["differs"],
            cannot_tell=counts["cannot tell"],
            sessions_only=contract.VerdictCounts(equivalent=alone["equivalent"],
                                                 differs=alone["differs"],
                                                 cannot_tell=alone["cannot tell"])),
        parameters=contract.Parameters(
            bootstrap_resamples=bootstrap.resamples, bootstrap_seed=bootstrap.seed,
            confidence=bootstrap.confidence, equivalence_confidence=EQUIVALENCE_CONFIDENCE,
            alpha=ALPHA, power=POWER, margins=dict(margins), campaign=campaign,
            mc_se_p_max=mc[0], mc_se_interval_max=mc[1]),
        warnings=warnings)


def _finite(x: float | None) -> float:
    return math.nan if x is None else x


def _judge_family(drafts: Sequence[StratumDraft], family: Sequence[GapDraft],
                  process: contract.Process | None, bootstrap: Bootstrap
                  ) -> tuple[float, float]:
    """Every synthetic gap judged twice: by its sessions alone (take three's rule: equivalent
    when its 90 % interval lies inside the margin, differs when its Holm-adjusted p is below
    ``ALPHA``) and with the process spread (equivalent when its Holm-adjusted TOST p is below
    ``ALPHA``, else differs by its Holm-adjusted p). Returns the largest Monte-Carlo standard
    errors of a p and of an interval end (floors included)."""
    floors = {(g.stratum, g.gap["drafter"]): g.gap["value"] for s in drafts for g in s.gaps
              if g.floor and g.gap["quantity"] == "acceptance"}
    n = len(family)
    z_holm = float(_z(1 - ALPHA / (2 * max(n, 1))) + _z(POWER))
    se_p, se_end = 0.0, 0.0
    for g in family:
        sd = judge.process_sd(process, drafter=g.gap["drafter"], quantity=g.gap["quantity"],
                              streams=g.streams, floor_points=floors.get((g.stratum,
                                                                          g.gap["drafter"])))
        draws = _judge(g, sd, bootstrap)
        se_end = max(se_end, judge.mc_se_ends(draws))
        finite = draws[np.isfinite(draws)]
        se = float(finite.std(ddof=1)) if finite.size > 1 else math.nan
        g.gap["mde_holm"] = _num(z_holm * se)
    for s in drafts:
        for g in s.gaps:
            if g.floor:
                se_end = max(se_end, judge.mc_se_ends(g.draws))
    alone = holm([_finite(g.gap["sessions_only"]["p"]) for g in family])
    p_holm = holm([_finite(g.gap["p"]) for g in family])
    tost_holm = holm([_finite(g.gap["p_tost"]) for g in family])
    for g, pa, ph, th in zip(family, alone, p_holm, tost_holm, strict=True):
        so = g.gap["sessions_only"]
        so["p_holm"] = _num(pa)
        if so["verdict"] != "equivalent" and math.isfinite(pa) and pa < ALPHA:
            so["verdict"] = "differs"
        g.gap["p_holm"], g.gap["p_tost_holm"] = _num(ph), _num(th)
        g.gap["verdict"] = ("equivalent" if math.isfinite(th) and th < ALPHA else
                            "differs" if math.isfinite(ph) and ph < ALPHA else "cannot tell")
        se_p = max(se_p, judge.mc_se_p(_finite(so["p"]), bootstrap.resamples, two_sided=True))
    return se_p, se_end


def _z(q: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(q))


def take_two_echo(root: Path) -> list[contract.Echo]:
    """Per superseded take-two run (``<root>/take-two-*``, one server that played REAL-A and
    REAL-B of every session), the acceptance of the replays that ran first and of those that
    ran second (the record's ``order`` says which), pooled over turns; runs without drafts
    left out."""
    out: list[contract.Echo] = []
    for run in sorted(root.glob("take-two-*")):
        try:
            spec = records.read_json(run / records.CONFIG)["spec"]
        except (RecordError, KeyError, TypeError):
            continue
        turns = [t for t in records.read_turns(run, keep_events=False)[0]
                 if t.side in (REAL_A, REAL_B)]
        if not isinstance(spec, dict) or spec.get("drafter") == "none" or not turns:
            continue
        first_order: dict[str, int] = {}
        for t in turns:
            first_order[t.session_id] = min(first_order.get(t.session_id, t.order), t.order)
        pools = {True: [0, 0], False: [0, 0]}  # ran first? -> [accepted, drafted]
        for t in turns:
            pool = pools[t.order == first_order[t.session_id]]
            pool[0] += t.timings.draft_n_accepted or 0
            pool[1] += t.timings.draft_n or 0
        out.append(contract.Echo(
            run_id=run.name, drafter=str(spec.get("drafter")),
            session_set=str(spec.get("prompt_set")), concurrency=int(spec.get("concurrency", 1)),
            n_sessions=len(first_order),
            first=pools[True][0] / pools[True][1] if pools[True][1] else None,
            second=pools[False][0] / pools[False][1] if pools[False][1] else None))
    return out


def margins_of(campaign_file: Path) -> tuple[dict[str, float], list[str]]:
    """The margins declared in the campaign file's ``[equivalence]`` table, and its interleave
    groups (in the file's order); a file that cannot be read, or declares no margin for a
    quantity, is an :class:`AnalysisError` naming it."""
    return _declared(_campaign(campaign_file), campaign_file)


def _campaign(campaign_file: Path) -> Campaign:
    try:
        return load_campaign(campaign_file, read_site=False)  # the build reads no site file
    except SpecError as err:
        raise AnalysisError(f"realism: {err}") from err


def _declared(camp: Campaign, campaign_file: Path) -> tuple[dict[str, float], list[str]]:
    missing = [q for q in contract.QUANTITIES if q not in camp.equivalence]
    if missing:
        raise AnalysisError(f"realism: {paths.shown(campaign_file)}: [equivalence]: no margin "
                            f"for {', '.join(missing)} (declare each before measuring)")
    groups = list(dict.fromkeys(r.interleave for r in camp.runs if r.interleave))
    return camp.equivalence, groups


def process_study(root: Path, campaign_file: Path, warnings: list[str], *,
                  locks: Path | None = None,
                  bootstrap: Bootstrap = process.PROCESS_BOOTSTRAP) -> contract.Process | None:
    """The replicated stratum under ``root`` (:mod:`artifact.analysis.process`): its runs read
    and screened like every realism run, the (session, turn) pairs every server measured
    quietly, the process variance components and the processes' exact agreement; None, with a
    warning, when it has no run."""
    shown = paths.shown(root)
    runs, left_out = load_runs(root, locks=locks) if root.is_dir() else ([], [])
    warnings += left_out
    if not runs:
        warnings.append(f"realism: process: no run under {shown}: not computable, written as "
                        "null")
        return None
    camp = _campaign(campaign_file)
    plans = vrealism.planned(camp, paths.shown(campaign_file))
    for r in runs:
        warnings += r.problems
        if not r.complete:
            warnings.append(f"{r.run_id}: run not complete; analysed as it stands")
    groups = sorted({r.group for r in runs})
    if len(groups) != 1:
        warnings.append(f"realism: process: {shown}: runs of {len(groups)} interleave groups "
                        f"({', '.join(groups)}); expected one: not computable, written as null")
        return None
    key = groups[0]
    runs = _screened(key, runs, plans.get(key), warnings)
    if not runs or not set.intersection(*({(t.session_id, t.turn) for t in r.turns}
                                          for r in runs)):
        warnings.append(f"realism: process: stratum {key}: no turn measured on every server: "
                        "not computable, written as null")
        return None
    kept, dropped = _common_keys(runs, warnings, key)
    first_turn = _first_turns(runs)
    order = sorted({s for s, _ in kept}, key=lambda s: (first_turn[s], s))
    servers = [process.session_means(r.run_id, r.drafter, r.side,
                                     [t for t in r.turns if (t.session_id, t.turn) in kept],
                                     order) for r in runs]
    exact = [process.exact(d, kind, [(r.run_id, r.turns) for r in runs
                                     if r.drafter == d and r.side in sides])
             for kind, sides in process.SIDES.items()
             for d in sorted({r.drafter for r in runs} - {"none"})]
    for e in exact:
        if not e["equal"]:
            warnings.append(f"realism: process: drafter {e['drafter']}: the {e['side']} "
                            f"processes accepted differently on {e['n_differ']} of "
                            f"{e['n_turns']} turns (identical histories should not)")
    return contract.Process(
        stratum=key, campaign=paths.shown(campaign_file),
        protocol=_protocol(runs, order, len(kept), dropped),
        components=process.analyse(servers, bootstrap=bootstrap), exact=exact,
        bootstrap_resamples=bootstrap.resamples, bootstrap_seed=bootstrap.seed)


def build_realism(root: Path, *, campaign_file: Path = paths.REALISM_CAMPAIGN,
                  bootstrap: Bootstrap = BOOTSTRAP, locks: Path | None = None,
                  process_root: Path | None = None,
                  process_campaign: Path = paths.PROCESS_CAMPAIGN) -> contract.Realism:
    """The ``realism.json`` object of the runs under ``root`` (and the replicated stratum's
    under ``process_root``; None: no process study, ``process`` null), checked against the
    contract."""
    camp = _campaign(campaign_file)
    margins, groups = _declared(camp, campaign_file)
    runs, warnings = load_runs(root, locks=locks)
    proc = (None if process_root is None else
            process_study(process_root, process_campaign, warnings, locks=locks))
    result = analyse(runs, margins, groups=groups, bootstrap=bootstrap,
                     campaign=paths.shown(campaign_file),
                     plans=vrealism.planned(camp, paths.shown(campaign_file)), process=proc)
    result["process"] = proc
    result["echo"] = take_two_echo(root / "_superseded")
    if not result["echo"]:
        warnings.append(f"realism: echo: no drafted take-two run under "
                        f"{paths.shown(root / '_superseded')}: not computable, written as empty")
    plain = {k: files.to_plain(v, k) for k, v in result.items() if k != "warnings"}
    plain["warnings"] = sorted(set(warnings + result["warnings"]))
    return contract.validate(plain, source=f"realism analysis of {root}", error=AnalysisError)


def write_realism(root: Path = paths.REALISM_RUNS, out: Path = paths.REALISM,
                  process_root: Path = paths.PROCESS_RUNS) -> contract.Realism:
    """Build and write ``realism.json`` atomically (sorted keys, 6 significant digits)."""
    data = build_realism(root, process_root=process_root)
    files.write_text(out, files.dumps_json(data))
    return data
