"""The acceptance-split study: why acceptance moves between runs of one configuration.

Raw runs of family ``accsplit`` -> ``experiments/analysis/accsplit.json`` (shape in
:mod:`artifact.contracts.accsplit`). Sections, each a pure function of the per-request
observations (:mod:`.accsplit_obs`):

1. :func:`by_prompt_budget` - accepted per round per prompt and budget at batch 1.
2. :func:`by_window`, :func:`by_date` - the same cells across windows and dates.
3. :func:`reconciliation` - client-side estimators against the server counter; sources.
4. :func:`length_split` - acceptance of the short budget and, ESTIMATED, of the later tokens.
5. :func:`segment_split` - code vs prose, ESTIMATED from client steps, validated first.
6. :func:`batch_split` - acceptance by concurrent streams (window w1 holds every batch).
7. :func:`shift` - prompt and length steps of a move between two cells.

"Accepted per round" is the server's ``accepted / verification rounds`` (mean len - 1). An
independent run is one (window, repeat) pass: its own server, its own seed.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import files
from artifact.analysis import accsplit_stats as S
from artifact.analysis import steps as _steps
from artifact.analysis.accsplit_obs import Obs, observe
from artifact.analysis.logs import pair
from artifact.analysis.runs import AnalysisError, Run, load_family
from artifact.contract import accsplit as C
from artifact.errors import MissingCellError as MissingCellError

FAMILY = "accsplit"
SHORT, LONG = 128, 256
# The shift decomposition's two prompts, fixed before the data were seen: a chat prompt (A) to
# an input-grounded one (B), i.e. from free writing to quoting the input.
SHIFT_FROM = "chat/sharegpt-2Hj9Wtq_0"
SHIFT_TO = "grounded/HumanEval-59"


Key = tuple[Any, ...]


def _group(obs: Iterable[Obs], key: Callable[[Obs], Key]) -> dict[Key, list[Obs]]:
    out: dict[Key, list[Obs]] = defaultdict(list)
    for o in obs:
        out[key(o)].append(o)
    return dict(sorted(out.items(), key=lambda kv: tuple(str(x) for x in kv[0])))


def _sum(xs: Iterable[float | int | None]) -> float:
    return float(sum(x for x in xs if x is not None))


def _pooled(obs: Sequence[Obs]) -> float:
    """Sum of accepted over sum of rounds (MEASURED counts)."""
    return S.ratio(_sum(o.accepted for o in obs), _sum(o.rounds for o in obs))


def _positions(obs: Sequence[Obs]) -> list[C.Value]:
    """Accepted at draft position i over rounds, pooled (MEASURED)."""
    with_pos = [o for o in obs if o.pos_accepted is not None and o.rounds]
    if not with_pos:
        return []
    depth = max(len(o.pos_accepted or ()) for o in with_pos)
    rounds = _sum(o.rounds for o in with_pos)
    return [S.value(S.ratio(_sum((o.pos_accepted or ())[i] if i < len(o.pos_accepted or ())
                                 else 0.0 for o in with_pos), rounds), S.MEASURED)
            for i in range(depth)]


def _run_unit(o: Obs) -> tuple[str | None, int]:
    return (o.window, o.repeat)


def drafted(obs: Iterable[Obs]) -> list[Obs]:
    return [o for o in obs if o.drafter != "none"]


def batch1(obs: Iterable[Obs]) -> list[Obs]:
    return [o for o in obs if o.batch == 1]


# --- 1. prompt x budget --------------------------------------------------------------------


def by_prompt_budget(obs: Sequence[Obs]) -> list[C.PromptBudgetRow]:
    """Per (configuration, prompt, budget) at batch 1; runs are the independent units."""
    rows: list[C.PromptBudgetRow] = []
    for (config, prompt, budget), g in _group(drafted(batch1(obs)),
                                              lambda o: (o.config, o.prompt_id, o.budget)).items():
        rows.append({
            "config": config, "prompt_id": prompt, "domain": g[0].domain, "budget": budget,
            "accepted_per_round": S.interval([o.accepted_per_round for o in g],
                                             kind=S.MEASURED, over="runs"),
            "pooled_accepted_per_round": S.value(_pooled(g), S.MEASURED),
            "draft_depth": S.value(S.ratio(_sum(o.drafted for o in g), _sum(o.rounds for o in g)),
                                   S.MEASURED),
            "per_position": _positions(g),
            "ms_per_step": S.interval([o.ms_per_step for o in g], kind=S.MEASURED, over="runs"),
            "dates": sorted({o.utc_date for o in g if o.utc_date}),
            "windows": sorted({o.window for o in g if o.window}),
            "runs": sorted({o.run_id for o in g}),
        })
    return rows


def by_config(obs: Sequence[Obs]) -> list[C.ConfigRow]:
    """Per (configuration, budget, batch): accepted per round pooled over prompts, per run."""
    rows: list[C.ConfigRow] = []
    for (config, budget, batch), g in _group(drafted(obs),
                                             lambda o: (o.config, o.budget, o.batch)).items():
        per_run = [_pooled(list(r)) for r in _group(g, _run_unit).values()]
        rows.append({
            "config": config, "budget": budget, "batch": batch, "n_requests": len(g),
            "pooled_accepted_per_round": S.value(_pooled(g), S.MEASURED),
            "accepted_per_round": S.interval(per_run, kind=S.MEASURED, over="runs"),
            "per_position": _positions(g),
            "windows": sorted({o.window for o in g if o.window}),
        })
    return rows


# --- 2. windows and dates ------------------------------------------------------------------


def by_window(obs: Sequence[Obs]) -> C.ByWindow:
    """Pooled acceptance per window, and each window's paired difference from the first."""
    b1 = drafted(batch1(obs))
    cells: list[C.WindowCell] = []
    for (config, budget, window), g in _group(b1, lambda o: (o.config, o.budget, o.window)
                                              ).items():
        cells.append({"config": config, "budget": budget, "window": window,
                      "dates": sorted({o.utc_date for o in g if o.utc_date}),
                      "n_requests": len(g),
                      "pooled_accepted_per_round": S.value(_pooled(g), S.MEASURED),
                      "accepted_per_round": S.interval([o.accepted_per_round for o in g],
                                                       kind=S.MEASURED, over="prompts")})
    windows = sorted({o.window for o in b1 if o.window})
    diffs: list[C.WindowDiff] = []
    if windows:
        first = windows[0]
        for (config, budget), g in _group(b1, lambda o: (o.config, o.budget)).items():
            per = {(o.window, o.prompt_id): o.accepted_per_round for o in g}
            for w in windows[1:]:
                d = [per[(w, p)] - per[(first, p)]  # type: ignore[operator]
                     for (ww, p) in per if ww == w and per.get((first, p)) is not None
                     and per[(w, p)] is not None]
                diffs.append({"config": config, "budget": budget, "window": w, "vs": first,
                              "diff": S.interval(d, kind=S.MEASURED, over="prompts")})
    spread = [S.interval([o.accepted_per_round for o in g], kind=S.MEASURED, over="windows")["sd"]
              for g in _group(b1, lambda o: (o.config, o.prompt_id, o.budget)).values()]
    sds = [x for x in spread if x is not None]
    return {"windows": windows, "cells": cells, "diff_from_first": diffs,
            "cell_sd_across_windows": S.value(sum(sds) / len(sds) if sds else math.nan,
                                              S.MEASURED)}


def by_date(obs: Sequence[Obs]) -> C.ByDate:
    """Pooled acceptance per (configuration, budget, UTC date) at batch 1."""
    b1 = drafted(batch1(obs))
    dates = sorted({o.utc_date for o in batch1(obs) if o.utc_date})
    cells: list[C.DateCell] = [{"config": c, "budget": b, "date": d, "n_requests": len(g),
              "pooled_accepted_per_round": S.value(_pooled(g), S.MEASURED)}
             for (c, b, d), g in _group(b1, lambda o: (o.config, o.budget, o.utc_date)).items()]
    return {"dates": dates, "n_dates": len(dates), "one_date": len(dates) == 1, "cells": cells}


# --- 3. reconciliation ---------------------------------------------------------------------


def reconciliation(obs: Sequence[Obs]) -> C.Reconciliation:
    """Each client estimator minus the server's accepted per round, per configuration.

    For the no-draft control the server's figure is 0 accepted tokens per step by construction.
    Also: client steps against the server's (answer tokens - accepted), and the agreement of
    the per-request sources.
    """
    rows: list[C.ReconRow] = []
    for config, g in _group(batch1(obs), lambda o: (o.config,)).items():
        control = g[0].drafter == "none"
        ref = [0.0 if control else o.accepted_per_round for o in g]
        server = S.interval(ref, kind=S.MEASURED, over="requests")
        if control:  # zero by construction: a value, not an interval
            server = {**server, "sd": None, "low": None, "high": None,
                      "ci_reason": "no draft: zero by construction"}
        est: dict[str, C.EstimatorResult] = {}
        for name in _steps.ESTIMATORS:
            vals = [getattr(o.est, name) for o in g]
            est[name] = {
                "value": S.interval(vals, kind=S.ESTIMATED, over="requests"),
                "bias": S.interval([v - r if r is not None else None
                                    for v, r in zip(vals, ref, strict=True)],
                                   kind=S.ESTIMATED, over="requests"),
            }
        rows.append({
            "config": config[0], "n_requests": len(g), "server_accepted_per_round": server,
            "estimators": est,
            "steps_minus_server_steps": S.interval(
                [o.steps.steps - o.server_steps for o in g], kind=S.ESTIMATED, over="requests"),
        })
    return {"rows": rows, "sources": cross_check(obs)}


def cross_check(obs: Sequence[Obs]) -> list[C.SourceCheck]:
    """Where two sources count the same thing for one request, how often they disagree."""
    pairs: list[tuple[str, str, Callable[[Obs], tuple[float | None, float | None]]]] = [
        ("accepted", "metrics vs reply", lambda o: (o.accepted if o.source == "metrics"
                                                    else None, o.accepted_reply)),
        ("drafted", "metrics vs reply", lambda o: (o.drafted if o.source == "metrics"
                                                   else None, o.drafted_reply)),
        ("accepted", "metrics vs log", lambda o: (o.accepted if o.source == "metrics"
                                                  else None, o.accepted_log)),
        ("drafted", "metrics vs log", lambda o: (o.drafted if o.source == "metrics"
                                                 else None, o.drafted_log)),
        ("rounds", "metrics vs log", lambda o: (o.rounds if o.source == "metrics"
                                                else None, o.rounds_log)),
        ("accepted", "reply vs log", lambda o: (o.accepted_reply, o.accepted_log)),
    ]
    out: list[C.SourceCheck] = []
    for what, sources, get in pairs:
        both = [(a, b) for a, b in (get(o) for o in drafted(obs)
                                    if o.accepted_reply is not None or o.source == "metrics")
                if a is not None and b is not None]
        diffs = [abs(a - b) for a, b in both]
        out.append({"quantity": what, "sources": sources, "n_compared": len(both),
                    "n_disagree": sum(d > 0 for d in diffs),
                    "max_abs_diff": S.value(max(diffs) if diffs else math.nan, S.MEASURED)})
    return out


# --- 4. length split -----------------------------------------------------------------------


def length_split(obs: Sequence[Obs]) -> list[C.LengthRow]:
    """Short-budget acceptance and the ESTIMATED acceptance of the tokens past it.

    late = (mean accepted_L - mean accepted_S) / (mean rounds_L - mean rounds_S), over group
    means; its interval is over runs, one late value per run that has both budgets.
    """
    rows: list[C.LengthRow] = []
    b1 = drafted(batch1(obs))
    for (config,), g in _group(b1, lambda o: (o.config,)).items():
        for prompt in [None, *sorted({o.prompt_id for o in g})]:
            cell = [o for o in g if prompt is None or o.prompt_id == prompt]
            s = [o for o in cell if o.budget == SHORT]
            lo = [o for o in cell if o.budget == LONG]
            rows.append(_late(config, prompt or "all prompts", s, lo))
    return rows


def _mean(xs: Sequence[float | int | None]) -> float:
    v = [float(x) for x in xs if x is not None]
    return sum(v) / len(v) if v else math.nan


def _late(config: str, prompt: str, s: Sequence[Obs], lo: Sequence[Obs]) -> C.LengthRow:
    def late(a: Sequence[Obs], b: Sequence[Obs]) -> float:
        return S.ratio(_mean([o.accepted for o in b]) - _mean([o.accepted for o in a]),
                       _mean([o.rounds for o in b]) - _mean([o.rounds for o in a]))

    units = sorted({_run_unit(o) for o in s} & {_run_unit(o) for o in lo}, key=str)
    per_run = [late([o for o in s if _run_unit(o) == u], [o for o in lo if _run_unit(o) == u])
               for u in units]
    same = [(a, b) for a in s for b in lo if (a.run_id.split("-")[0], a.prompt_id, a.repeat)
            == (b.run_id.split("-")[0], b.prompt_id, b.repeat)]
    return {
        "config": config, "prompt_id": prompt,
        "short": S.value(S.ratio(_mean([o.accepted for o in s]), _mean([o.rounds for o in s])),
                         S.MEASURED),
        "long": S.value(S.ratio(_mean([o.accepted for o in lo]), _mean([o.rounds for o in lo])),
                        S.MEASURED),
        "late": S.value(late(s, lo), S.ESTIMATED),
        "late_per_run": S.interval(per_run, kind=S.ESTIMATED, over="runs"),
        "n_short": len(s), "n_long": len(lo),
        "short_is_prefix_of_long": sum(b.text.startswith(a.text) for a, b in same),
        "n_pairs": len(same),
    }


# --- 5. segments ---------------------------------------------------------------------------


def segment_split(obs: Sequence[Obs]) -> list[C.SegmentRow]:
    """Code vs prose accepted per step, ESTIMATED from client steps, after its validation.

    Validation: on answers that are one segment only, the estimator (tokens per client step - 1)
    against the server's accepted per round (0 for the no-draft control).
    """
    rows: list[C.SegmentRow] = []
    for (config,), g in _group(batch1(obs), lambda o: (o.config,)).items():
        single = [o for o in g if (o.code.tokens == 0) != (o.prose.tokens == 0)]
        ref = [0.0 if o.drafter == "none" else o.accepted_per_round for o in single]
        bias = [o.est.tokens_per_step - r if r is not None else None
                for o, r in zip(single, ref, strict=True)]
        both = [o for o in g if o.code.tokens and o.prose.tokens]
        seg: dict[str, C.SegmentStats] = {}
        for name in ("code", "prose"):
            parts = [getattr(o, name) for o in g]
            tokens, steps_ = sum(p.tokens for p in parts), sum(p.steps for p in parts)
            ms = sum(p.ms for p in parts)
            seg[name] = {
                "tokens": tokens, "steps": steps_,
                "accepted_per_step": S.value(S.ratio(tokens, steps_) - 1.0, S.ESTIMATED),
                "tok_per_s": S.value(S.ratio(tokens, ms) * 1000.0, S.MEASURED),
                "answers_with_segment": sum(getattr(o, name).tokens > 0 for o in g),
            }
        rows.append({"config": config, "n_answers": len(g), "n_both_segments": len(both),
                     "n_single_segment": len(single),
                     "validation_bias": S.interval(bias, kind=S.ESTIMATED, over="requests"),
                     "segments": seg})
    return rows


# --- 6. batch ------------------------------------------------------------------------------


def batch_split(obs: Sequence[Obs]) -> list[C.BatchRow]:
    """Acceptance by concurrent streams, inside the window that holds every batch."""
    batches_of = _group(obs, lambda o: (o.window,))
    windows = [w for (w,), g in batches_of.items() if len({o.batch for o in g}) > 1]
    rows: list[C.BatchRow] = []
    for w in windows:
        for (config, budget, batch), g in _group(
                [o for o in obs if o.window == w], lambda o: (o.config, o.budget, o.batch)
        ).items():
            rows.append({
                "config": config, "budget": budget, "batch": batch, "window": w,
                "n_requests": len(g),
                "pooled_accepted_per_round": S.value(
                    _pooled(g) if g[0].drafter != "none" else math.nan, S.MEASURED),
                "accepted_per_round": S.interval([o.accepted_per_round for o in g],
                                                 kind=S.MEASURED, over="prompts"),
                "per_position": _positions(g),
                "server_tok_per_s": S.interval(
                    [S.ratio(o.answer_tokens, o.predicted_ms) * 1000.0 for o in g],
                    kind=S.MEASURED, over="prompts"),
                "client_tok_per_s": S.interval([o.steps.decode_tok_per_s for o in g],
                                               kind=S.MEASURED, over="prompts"),
                "source": sorted({o.source for o in g}),
            })
    return rows


# --- 7. shift decomposition ----------------------------------------------------------------


def shift(obs: Sequence[Obs], *, config: str, a: str, b: str, short: int = SHORT,
          long: int = LONG) -> C.ShiftRow:
    """From (A, short) to (B, long) through (B, short): prompt step, length step, total.

    Each step is a difference of accepted per round within a run (window, repeat), so its
    interval is over runs. A cell without runs is a :class:`MissingCellError`.
    """
    b1 = [o for o in batch1(obs) if o.config == config]
    cells = {}
    for name, prompt, budget in (("a_short", a, short), ("b_short", b, short),
                                 ("b_long", b, long)):
        got = {_run_unit(o): o.accepted_per_round for o in b1
               if o.prompt_id == prompt and o.budget == budget}
        if not got:
            raise MissingCellError(f"accsplit shift: cell ({config}, {prompt}, {budget} tokens, "
                                   "batch 1) has no runs")
        cells[name] = got
    units = sorted(set(cells["a_short"]) & set(cells["b_short"]) & set(cells["b_long"]), key=str)

    def diffs(x: str, y: str) -> list[float | None]:
        out: list[float | None] = []
        for u in units:
            vx, vy = cells[x][u], cells[y][u]
            out.append(vy - vx if vx is not None and vy is not None else None)
        return out

    def mean_cell(name: str) -> C.Value:
        return S.value(_mean(list(cells[name].values())), S.MEASURED)

    return {
        "config": config, "from_cell": {"prompt_id": a, "budget": short},
        "via_cell": {"prompt_id": b, "budget": short}, "to_cell": {"prompt_id": b, "budget": long},
        "a_short": mean_cell("a_short"), "b_short": mean_cell("b_short"),
        "b_long": mean_cell("b_long"),
        "prompt_step": S.interval(diffs("a_short", "b_short"), kind=S.MEASURED, over="runs"),
        "length_step": S.interval(diffs("b_short", "b_long"), kind=S.MEASURED, over="runs"),
        "total": S.interval(diffs("a_short", "b_long"), kind=S.MEASURED, over="runs"),
    }


# --- assembly ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    obs: list[Obs]
    runs: list[Run]
    warnings: list[str]


def load(runs_root: Path, keep: Mapping[str, frozenset[str] | None] | None = None) -> Loaded:
    """Every ``accsplit`` run's observations (log lines paired to records).

    Only run directories whose ``config.json`` says family ``accsplit`` are read in full. With
    ``keep`` (run id -> its prompt ids, ``None`` for all), only those runs and prompts: a
    reference cut to what a reproduction measured.
    """
    if not runs_root.is_dir():
        raise AnalysisError(f"{runs_root}: runs directory not found")
    obs: list[Obs] = []
    runs: list[Run] = []
    # read and screened as every study's runs are (artifact.analysis.validate): one per run id
    found, warnings = load_family(runs_root, FAMILY, keep_events=True,
                                  only=None if keep is None else frozenset(keep))
    for run in found:
        prompts = keep.get(run.path.name) if keep is not None else None
        runs.append(run)
        p = pair(run.records, run.log or [], where=run.desc.run_id)
        if not p.ok and p.problem and run.desc.drafter != "none":
            warnings.append(p.problem)
        for rec, entry, bad in zip(run.records, p.entry_of, run.spurious, strict=True):
            if not bad and (prompts is None or rec.prompt_id in prompts):
                obs.append(observe(run.desc, rec, entry))
    return Loaded(obs=obs, runs=runs, warnings=warnings)


def protocol(loaded: Loaded) -> C.Protocol:
    """What was run, when: windows with their UTC span and wall time, dates, cells."""
    windows: dict[str, dict[str, Any]] = {}
    for run in loaded.runs:
        recs = run.included  # an excluded record's times are not measurements
        if not recs:
            continue
        w = recs[0].window or "none"
        start = str(run.desc.environment.get("start_time", ""))
        t0 = dt.datetime.fromisoformat(start).timestamp() if start else min(
            r.sent_unix_s for r in recs)
        t1 = max(r.sent_unix_s + r.e2e_ms / 1000.0 for r in recs)
        cur = windows.setdefault(w, {"start": t0, "end": t1, "runs": 0, "measure_s": 0.0,
                                     "dates": set()})
        cur["start"], cur["end"] = min(cur["start"], t0), max(cur["end"], t1)
        cur["runs"] += 1
        cur["measure_s"] += float((run.metrics or {}).get("measure_s", 0.0))
        cur["dates"] |= {r.utc_date for r in recs if r.utc_date}

    def iso(t: float) -> str:
        return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    out_w: dict[str, C.WindowInfo] = {
        w: {"start_utc": iso(v["start"]), "end_utc": iso(v["end"]), "runs": v["runs"],
                 "wall_s": S.value(v["end"] - v["start"], S.MEASURED),
                 "measure_s": S.value(v["measure_s"], S.MEASURED),
                 "dates": sorted(v["dates"]),
                 "no_draft_ms_per_token": S.interval(
                     [x.ms_per_step for x in batch1(loaded.obs)
                      if x.window == w and x.drafter == "none"],
                     kind=S.MEASURED, over="requests")}
        for w, v in sorted(windows.items())}
    o = loaded.obs
    return {
        "windows": out_w,
        "wall_s_total": S.value(sum(v["end"] - v["start"] for v in windows.values()),
                                S.MEASURED),
        "dates": sorted({x.utc_date for x in o if x.utc_date}),
        "configs": sorted({x.config for x in o}),
        "budgets": sorted({x.budget for x in o}),
        "batches": sorted({x.batch for x in o}),
        "prompts": [{"prompt_id": p, "domain": d}
                    for p, d in sorted({(x.prompt_id, x.domain) for x in o})],
        "n_requests": len(o),
        "n_runs": len(loaded.runs),
        "temperature": sorted({r.desc.sampling["temperature"] for r in loaded.runs}),
        "step_rule": {"floor_ms": _steps.FLOOR_MS, "fraction": _steps.FRACTION},
    }


def analyse(loaded: Loaded, warnings: list[str]) -> dict[str, Any]:
    """The whole study as plain data (before rounding); problems are appended to
    ``warnings``."""
    o = loaded.obs
    if not o:
        raise AnalysisError("accsplit: no runs of family 'accsplit' to analyse")
    configs = sorted({x.config for x in drafted(o)})
    shifts: list[C.ShiftRow] = []
    for c in configs:  # a campaign not yet complete lacks cells: its warning names the cell
        try:
            shifts.append(shift(o, config=c, a=SHIFT_FROM, b=SHIFT_TO))
        except MissingCellError as err:
            warnings.append(f"{err}; decomposition left out")
    return {
        "protocol": protocol(loaded),
        "by_config": by_config(o),
        "by_prompt_budget": by_prompt_budget(o),
        "by_window": by_window(o),
        "by_date": by_date(o),
        "reconciliation": reconciliation(o),
        "length_split": length_split(o),
        "segment_split": segment_split(o),
        "batch_split": batch_split(o),
        "shift": shifts,
    }


def build(runs_root: Path, keep: Mapping[str, frozenset[str] | None] | None = None
          ) -> C.AccSplit:
    """``accsplit.json`` as plain JSON data (6 significant digits), checked against the
    contract before anything is written (``keep``: as for :func:`load`)."""
    loaded = load(runs_root, keep)
    warnings = list(loaded.warnings)
    result = analyse(loaded, warnings)
    nan_paths: list[str] = []
    plain = {k: files.to_plain(v, k, nan_paths) for k, v in result.items()}
    plain["schema_version"] = C.SCHEMA_VERSION
    plain["warnings"] = sorted(set(warnings))
    return C.validate(plain, source=f"accsplit of {runs_root}", error=AnalysisError)


def write(runs_root: Path, out_path: Path) -> C.AccSplit:
    """Build ``accsplit.json`` and write it atomically (canonical bytes); returns it."""
    data = build(runs_root)
    files.write_text(out_path, files.dumps_json(data))
    return data
