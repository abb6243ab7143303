"""The workload study: workload runs -> ``experiments/analysis/workload.json`` (pure statistics).

Each workload run is one condition: REAL sessions and their SYNTHETIC twins measured on one
server. Per turn bin and over all turns, the SYNTHETIC median of TTFT, TPOT and E2E latency is
compared with the REAL median as a percent difference, with a percentile-bootstrap interval over
**sessions** (whole sessions are resampled, on both sides at once: the sides are paired by
session id). REAL is replayed in every condition; REAL against REAL of two conditions is the
noise floor. Medians are lower medians (``inverted_cdf``), in the point estimate and in every
resample alike.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from artifact import files, paths, records
from artifact.analysis import validate
from artifact.analysis.params import BOOTSTRAP, Bootstrap
from artifact.analysis.runs import AnalysisError
from artifact.contract import workload as contract
from artifact.errors import RecordError
from artifact.sessionsets import find_recipe
from artifact.stats import cluster_weights, percentile_interval, weighted_median

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BIN_EDGES = (5, 10, 20, 30)  # turn index where the next bin starts
ALL = "all"


@dataclass(frozen=True)
class SideTurns:
    """One side of one condition as columns (``nan`` where a value is absent)."""

    session: list[str]
    turn: IntArray
    ttft_ms: FloatArray
    tpot_ms: FloatArray
    e2e_ms: FloatArray
    prompt_tokens: FloatArray
    prompt_chars: FloatArray
    cached_tokens: FloatArray
    output_tokens: FloatArray
    draft_n: FloatArray
    draft_accepted: FloatArray

    def take(self, mask: npt.NDArray[np.bool_]) -> SideTurns:
        idx = np.flatnonzero(mask)
        return SideTurns(session=[self.session[i] for i in idx], turn=self.turn[idx],
                         **{k: getattr(self, k)[idx] for k in _FLOATS})

    def metric(self, name: str) -> FloatArray:
        out: FloatArray = getattr(self, name)
        return out


_FLOATS = ("ttft_ms", "tpot_ms", "e2e_ms", "prompt_tokens", "prompt_chars", "cached_tokens",
           "output_tokens", "draft_n", "draft_accepted")


def side_turns(turns: Sequence[records.TurnResult]) -> SideTurns:
    """Columns of a side's turn records."""
    def col(values: Sequence[float | int | None]) -> FloatArray:
        return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)

    return SideTurns(
        session=[t.session_id for t in turns],
        turn=np.array([t.turn for t in turns], dtype=np.int64),
        ttft_ms=col([t.ttft_ms for t in turns]), tpot_ms=col([t.tpot_ms for t in turns]),
        e2e_ms=col([t.e2e_ms for t in turns]),
        prompt_tokens=col([t.prompt_tokens for t in turns]),
        prompt_chars=col([t.prompt_chars for t in turns]),
        cached_tokens=col([t.cached_tokens for t in turns]),
        output_tokens=col([t.output_tokens for t in turns]),
        draft_n=col([t.timings.draft_n for t in turns]),
        draft_accepted=col([t.timings.draft_n_accepted for t in turns]))


def bin_index(turn: npt.ArrayLike) -> IntArray:
    """Index into :data:`contract.BINS` of each 0-based turn.

    >>> bin_index([0, 4, 5, 19, 20, 29, 30, 45]).tolist()
    [0, 0, 1, 2, 3, 3, 4, 4]
    """
    out: IntArray = np.digitize(np.asarray(turn), BIN_EDGES).astype(np.int64)
    return out


def p50(x: FloatArray) -> float:
    """Lower median skipping ``nan`` (``nan`` when empty).

    >>> p50(np.array([4.0, 1.0, np.nan, 3.0, 2.0]))
    2.0
    """
    v = x[~np.isnan(x)]
    return float(np.quantile(v, 0.5, method="inverted_cdf")) if v.size else math.nan


def _mean(x: FloatArray) -> float:
    v = x[~np.isnan(x)]
    return float(v.mean()) if v.size else math.nan


def _ratio(num: FloatArray, den: FloatArray) -> float:
    ok = ~(np.isnan(num) | np.isnan(den))
    d = float(den[ok].sum())
    return float(num[ok].sum()) / d if d > 0 else math.nan


def side_stats(s: SideTurns) -> contract.Side:
    return contract.Side(
        n_turns=len(s.session), ttft_ms_p50=p50(s.ttft_ms), tpot_ms_p50=p50(s.tpot_ms),
        e2e_ms_p50=p50(s.e2e_ms), prompt_tokens_mean=_mean(s.prompt_tokens),
        prompt_chars_mean=_mean(s.prompt_chars),
        chars_per_token=_ratio(s.prompt_chars, s.prompt_tokens),
        cached_tokens_mean=_mean(s.cached_tokens), output_tokens_mean=_mean(s.output_tokens),
        acceptance=_ratio(s.draft_accepted, s.draft_n),
        n_drafted=int(np.sum(s.draft_n > 0)))


def pct(a: float, b: float) -> float:
    """``100 (b / a - 1)``; ``nan`` when ``a`` is 0 or either is ``nan``.

    >>> pct(200.0, 250.0), pct(0.0, 1.0)
    (25.0, nan)
    """
    if math.isnan(a) or math.isnan(b) or a == 0:
        return math.nan
    return 100.0 * (b / a - 1.0)


def paired_diff(a: SideTurns, b: SideTurns, metric: str, *, rng: np.random.Generator,
                bootstrap: Bootstrap) -> contract.Interval:
    """Median of ``b`` against median of ``a`` in percent, with a bootstrap over sessions.

    Each resample draws sessions with replacement from those present on either side; a
    session's turns enter both sides' medians with the session's multiplicity.
    """
    va, vb = a.metric(metric), b.metric(metric)
    point = pct(p50(va), p50(vb))
    sessions = sorted(set(a.session) | set(b.session))
    if len(sessions) < 2 or math.isnan(point):
        return contract.Interval(pct=point, lo=math.nan, hi=math.nan)
    index = {s: i for i, s in enumerate(sessions)}
    ga = np.array([index[s] for s in a.session], dtype=np.int64)
    gb = np.array([index[s] for s in b.session], dtype=np.int64)
    w = cluster_weights(len(sessions), rng=rng, n_resamples=bootstrap.resamples)
    ka, kb = ~np.isnan(va), ~np.isnan(vb)
    ma = weighted_median(va[ka], w[:, ga[ka]])
    mb = weighted_median(vb[kb], w[:, gb[kb]])
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = np.where(ma > 0, 100.0 * (mb / ma - 1.0), math.nan)
    lo, hi = percentile_interval(draws, confidence=bootstrap.confidence)
    return contract.Interval(pct=point, lo=lo, hi=hi)


def _rng(bootstrap: Bootstrap, *key: str) -> np.random.Generator:
    return np.random.default_rng([bootstrap.seed, zlib.crc32("/".join(key).encode())])


def compare(a: SideTurns, b: SideTurns, *, key: str, bootstrap: Bootstrap
            ) -> tuple[dict[str, contract.Interval], dict[str, dict[str, contract.Interval]]]:
    """Aggregate and per-bin differences of ``b`` against ``a`` for every metric."""
    agg = {m: paired_diff(a, b, m, rng=_rng(bootstrap, key, ALL, m), bootstrap=bootstrap)
           for m in contract.METRICS}
    bins: dict[str, dict[str, contract.Interval]] = {}
    ba, bb = bin_index(a.turn), bin_index(b.turn)
    for i, name in enumerate(contract.BINS):
        sa, sb = a.take(ba == i), b.take(bb == i)
        bins[name] = {m: paired_diff(sa, sb, m, rng=_rng(bootstrap, key, name, m),
                                     bootstrap=bootstrap) for m in contract.METRICS}
    return agg, bins


def bin_entry(real: SideTurns, synth: SideTurns,
              diff: dict[str, contract.Interval]) -> contract.Bin:
    r, s = side_stats(real), side_stats(synth)
    return contract.Bin(
        n_sessions=len(set(real.session) | set(synth.session)), real=r, synthetic=s, diff=diff,
        prompt_tokens_diff_pct=pct(_nan(r["prompt_tokens_mean"]), _nan(s["prompt_tokens_mean"])),
        prompt_chars_diff_pct=pct(_nan(r["prompt_chars_mean"]), _nan(s["prompt_chars_mean"])))


def _nan(x: float | None) -> float:
    return math.nan if x is None else x


@dataclass(frozen=True)
class WorkloadRun:
    """One loaded workload run: its turns screened (:mod:`artifact.analysis.validate`)."""

    run_id: str
    condition: str
    style: str
    prefix_tokens: int
    recurrent: bool
    cpt_target: float | None
    plan: dict[str, object]
    real: SideTurns
    synthetic: SideTurns
    n_errors: int
    duration_s: float | None
    complete: bool
    start_time: str  # when measuring began (config.json environment): the campaign's order
    protocol: contract.Protocol
    path: Path | None = None  # the run folder
    config_run_id: str | None = None  # config.json's run_id (a copy of a folder repeats it)
    problems: tuple[str, ...] = ()  # one-line warnings met while loading


def _typed_field(table: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    """``spec.workload.<name>`` of a JSON type (a boolean is never a number)."""
    v = table[name]
    if isinstance(v, bool) != (kind is bool) or not isinstance(v, kind):
        raise TypeError(f"spec.workload.{name}: expected "
                        f"{getattr(kind, '__name__', 'a number')}, got {v!r}")
    return v


def load_workload_run(run: Path) -> WorkloadRun:
    """A workload run directory; a config that cannot be used, or a plan (``sessions.jsonl``)
    missing or damaged, is an :class:`AnalysisError` (the run is then left out).

    Its turns are screened by the rules every study shares: unreadable lines counted, impossible
    values, turns off the plan and repeated turns excluded, sessions measured on one side only
    left out of the comparison; each a warning in ``problems``.
    """
    where = f"{run.name}/{records.CONFIG}"
    try:
        config = records.read_json(run / records.CONFIG)
        spec = config["spec"]
        w = spec["workload"]
        if not isinstance(spec, dict) or not isinstance(w, dict):
            raise TypeError("spec.workload: expected an object")
        cond = _typed_field(w, "condition", str)
        style = _typed_field(w, "style", str)
        prefix = _typed_field(w, "prefix_tokens", int)
        rec = _typed_field(w, "recurrent", bool)
        cpt = w["chars_per_token"]
        if cpt is not None:
            cpt = float(_typed_field(w, "chars_per_token", (int, float)))
        env = config.get("environment")
        start = str(env.get("start_time", "")) if isinstance(env, dict) else ""
        recipe = find_recipe(str(spec["prompt_set"]))
        protocol = contract.Protocol(
            drafter=str(spec["drafter"]), k=spec["k"], n_predict_cap=int(spec["n_predict"]),
            ctx_size=int(spec["ctx_size"]), concurrency=int(spec["concurrency"]),
            threads=int(spec["threads"]), temperature=float(spec["temperature"]),
            session_set=str(spec["prompt_set"]),
            clip_chars=recipe.clip_chars if recipe else None,
            max_turns=recipe.max_turns if recipe else None,
            block=int(_typed_field(w, "block", int)))
    except (RecordError, KeyError, TypeError, ValueError, AttributeError) as err:
        raise AnalysisError(f"{where}: not a workload run's config ({err})") from err
    name = run.name
    planned = records.read_plan(run)
    if planned is None:
        raise AnalysisError(f"run {name}: {records.SESSIONS}: missing; its turns cannot be "
                            "checked against the plan")
    if planned.n_bad_lines:
        raise AnalysisError(f"run {name}: {records.SESSIONS}: {planned.n_bad_lines} unreadable "
                            "line(s): the plan is damaged and its turns cannot be checked")
    try:
        plan = records.read_json(run / records.WORKLOAD)
    except RecordError:
        plan = {}
    try:
        metrics = records.read_json(run / records.METRICS)
    except RecordError:
        metrics = {}
    problems: list[str] = []
    turns, n_bad = records.read_turns(run, keep_events=False)
    if n_bad:
        problems.append(f"run {name}: {records.RESULTS}: {n_bad} unreadable line(s) skipped")
    errors = records.read_jsonl(run / records.ERRORS)
    if errors.n_bad_lines:
        problems.append(f"run {name}: {records.ERRORS}: {errors.n_bad_lines} unreadable "
                        "line(s) skipped")
    excluded = validate.screen(turns, key=lambda t: t.key,
                               label=lambda t: f"{t.key[0]}#{t.turn}",
                               problem=lambda t: validate.turn_problem(t, planned), where=name,
                               warnings=problems)
    kept = [t for t, x in zip(turns, excluded, strict=True) if not x]
    odd = validate.one_sided({side: {t.session_id for t in kept if t.side == side}
                              for side in records.SIDES}, name, problems)
    kept = [t for t in kept if t.session_id not in odd]
    measure_s = metrics.get("measure_s")
    rid = config.get("run_id")
    return WorkloadRun(
        run_id=name, condition=cond, style="real text" if rec else style,
        prefix_tokens=prefix, recurrent=rec, cpt_target=cpt, plan=plan,
        real=side_turns([t for t in kept if t.side == "real"]),
        synthetic=side_turns([t for t in kept if t.side == "synthetic"]),
        n_errors=len(errors.rows),
        duration_s=float(measure_s) if isinstance(measure_s, int | float)
        and not isinstance(measure_s, bool) else None,
        complete=metrics.get("complete") is True, start_time=start, protocol=protocol,
        path=run, config_run_id=rid if isinstance(rid, str) else None,
        problems=tuple(problems))


def _plan_cpt(plan: dict[str, object], key: str) -> float | None:
    cpt = plan.get("chars_per_token")
    v = cpt.get(key) if isinstance(cpt, dict) else None
    return float(v) if isinstance(v, int | float) else None


def condition_entry(run: WorkloadRun, bootstrap: Bootstrap) -> contract.Condition:
    agg, bins = compare(run.real, run.synthetic, key=run.condition, bootstrap=bootstrap)
    br, bs = bin_index(run.real.turn), bin_index(run.synthetic.turn)
    jac = run.plan.get("id_jaccard")
    left = run.plan.get("problems")
    return contract.Condition(
        run_id=run.run_id, protocol=run.protocol, style=run.style, prefix_tokens=run.prefix_tokens,
        recurrent=run.recurrent,
        chars_per_token_target=_plan_cpt(run.plan, "target"),
        chars_per_token_real=_plan_cpt(run.plan, "real"),
        chars_per_token_synthetic=_plan_cpt(run.plan, "synthetic"),
        id_jaccard=float(jac) if isinstance(jac, int | float) else None,
        n_sessions=len(set(run.real.session) | set(run.synthetic.session)),
        n_turns=len(run.real.session), n_errors=run.n_errors, duration_s=run.duration_s,
        sessions_left_out=[str(x) for x in left] if isinstance(left, list) else [],
        bins={name: bin_entry(run.real.take(br == i), run.synthetic.take(bs == i), bins[name])
              for i, name in enumerate(contract.BINS)},
        aggregate=bin_entry(run.real, run.synthetic, agg))


def knobs_text(run: WorkloadRun) -> str:
    """What the synthetic side changed, in words (for the ablation table)."""
    if run.recurrent:
        return "real text of the other sessions"
    cpt = "the real chars/token" if run.cpt_target is None else f"{run.cpt_target:g} chars/token"
    out = f"{run.style} filler at {cpt}"
    return out + (f", shared {run.prefix_tokens}-token prefix" if run.prefix_tokens else "")


def noise_floor(runs: Sequence[WorkloadRun], bootstrap: Bootstrap) -> contract.NoiseFloor:
    pairs: list[contract.Floor] = []
    for a, b in combinations(runs, 2):
        agg, bins = compare(a.real, b.real, key=f"floor/{a.condition}/{b.condition}",
                            bootstrap=bootstrap)
        pairs.append(contract.Floor(a=a.condition, b=b.condition, bins=bins, aggregate=agg))
    floor: dict[str, dict[str, float | None]] = {}
    for name in (*contract.BINS, ALL):
        floor[name] = {}
        for m in contract.METRICS:
            vals = [abs(p) for f in pairs if (p := _nan((f["aggregate"] if name == ALL
                                                         else f["bins"][name])[m]["pct"]))
                    == p]
            floor[name][m] = max(vals) if vals else math.nan
    return contract.NoiseFloor(pairs=pairs, max_abs_pct=floor)


def ablation(runs: Sequence[WorkloadRun], conds: dict[str, contract.Condition],
             floor: contract.NoiseFloor) -> list[contract.AblationRow]:
    rows = []
    for run in runs:
        diff = conds[run.condition]["aggregate"]["diff"]
        beyond: dict[str, bool | None] = {}
        for m in contract.METRICS:
            d, f = diff[m], floor["max_abs_pct"][ALL][m]
            if d["pct"] is None or d["lo"] is None or d["hi"] is None or f is None \
                    or any(math.isnan(x) for x in (d["pct"], d["lo"], d["hi"], f)):
                beyond[m] = None
            else:
                beyond[m] = abs(d["pct"]) > f and (d["lo"] > 0 or d["hi"] < 0)
        rows.append(contract.AblationRow(condition=run.condition, knobs=knobs_text(run),
                                         diff=diff, beyond_floor=beyond))
    return rows


def analyse(runs: Sequence[WorkloadRun], *, bootstrap: Bootstrap = BOOTSTRAP
            ) -> contract.Workload:
    warnings: list[str] = []
    for r in runs:
        if not r.complete:
            warnings.append(f"{r.run_id}: run not complete; analysed as it stands")
        if len(r.real.session) != len(r.synthetic.session):
            warnings.append(f"{r.run_id}: {len(r.real.session)} REAL turns, "
                            f"{len(r.synthetic.session)} SYNTHETIC")
    conds = {r.condition: condition_entry(r, bootstrap) for r in runs}
    floor = noise_floor(runs, bootstrap)
    return contract.Workload(
        schema_version=contract.SCHEMA_VERSION, conditions=conds,
        order=[r.condition for r in runs], noise_floor=floor,
        ablation=ablation(runs, conds, floor),
        parameters=contract.Parameters(bootstrap_resamples=bootstrap.resamples,
                                       bootstrap_seed=bootstrap.seed,
                                       confidence=bootstrap.confidence,
                                       bins=list(contract.BINS)),
        warnings=warnings)


def load_workload_runs(root: Path) -> tuple[list[WorkloadRun], list[str]]:
    """Every workload run under ``root`` (``_``-prefixed folders skipped) in the order they
    were measured, and one warning line per problem: a run left out, a record excluded. A copy
    of a run folder (same run_id) and a second run of one condition are left out."""
    runs: list[WorkloadRun] = []
    warnings: list[str] = []
    for sub in records.run_folders(root):
        if not (sub / records.CONFIG).exists():
            warnings.append(f"run {sub.name}: no {records.CONFIG}; not a run, skipped")
            continue
        try:
            run = load_workload_run(sub)
        except AnalysisError as err:
            warnings.append(f"{err}; run skipped")
            continue
        warnings.extend(run.problems)
        runs.append(run)

    def folder(r: WorkloadRun) -> Path:
        return r.path or Path(r.run_id)

    runs = validate.unique_runs(runs, run_id=lambda r: r.config_run_id or r.run_id,
                                folder=folder, warnings=warnings)
    runs = validate.unique_runs(runs, run_id=lambda r: r.condition, folder=folder,
                                warnings=warnings, what="condition")
    runs.sort(key=lambda r: (r.start_time, r.run_id))
    return runs, warnings


def build_workload(root: Path, *, bootstrap: Bootstrap = BOOTSTRAP) -> contract.Workload:
    """The ``workload.json`` object of the runs under ``root``, checked against the contract."""
    runs, warnings = load_workload_runs(root)
    result = analyse(runs, bootstrap=bootstrap)
    plain = {k: files.to_plain(v, k) for k, v in result.items() if k != "warnings"}
    plain["warnings"] = sorted(set(warnings + result["warnings"]))
    return contract.validate(plain, source=f"workload analysis of {root}", error=AnalysisError)


def write_workload(root: Path = paths.WORKLOAD_RUNS, out: Path = paths.WORKLOAD
                   ) -> contract.Workload:
    """Build and write ``workload.json`` atomically (sorted keys, 6 significant digits)."""
    data = build_workload(root)
    files.write_text(out, files.dumps_json(data))
    return data
