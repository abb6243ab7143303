"""The acceptance-split study: why acceptance moves between runs of one configuration.

Raw runs of family ``accsplit`` -> ``experiments/analysis/accsplit.json`` (shape in
:mod:`artifact.contract.accsplit`). Sections, each a pure function of the per-request
observations (:mod:`.accsplit_obs`):

1. :func:`by_prompt_budget` - accepted per round per prompt and budget at batch 1.
2. :func:`by_window`, :func:`by_date` - the same cells across windows and dates; the windows of
   a configuration and budget compared as a family (Friedman, Holm-corrected pairs).
3. :func:`reconciliation` - client-side estimators against the server counter; sources.
4. :func:`length_split` - acceptance of the short budget and, ESTIMATED, of the later tokens,
   from the windows that ran both budgets; :func:`acceptance_figures` - the ways of summing
   accepted per round, side by side.
5. :func:`segment_split` - code vs prose, ESTIMATED from client steps, validated first.
6. :func:`batch_split`, :func:`batch_contrasts` - acceptance and speed by concurrent streams,
   inside the windows that ran several batches, against that window's batch 1 and no-draft
   control.
7. :func:`shift` - prompt and length steps of a move between two cells.

"Accepted per round" is the server's ``accepted / verification rounds`` (mean len - 1).

Units (:mod:`.accsplit_stats`): one prompt's requests share its text and, across budgets, seed
and prefix, so they are not independent; where requests share a prompt the prompt is the unit
(its requests reduced to one value, then Student-t over prompts, or a pooled ratio with prompts
as clusters). Where the question is about windows (how much a window moves acceptance), the
window is. Requests are never the unit of an interval.

Timing (ms per step, tok/s, client steps) is used only from quiet windows (their contention
record, or for windows measured before there was one, :data:`DECLARED_LOAD`), leaving out the
requests their record marks contended. Acceptance counts do not depend on timing and use every
window. A run of a drafter that keeps state across requests whose server restarted mid-run is
set aside from every statistic (its later requests drafted from an emptied pool).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from artifact import files, hostinfo, records
from artifact.analysis import accsplit_stats as S
from artifact.analysis import steps as _steps
from artifact.analysis.accsplit_obs import Obs, config_label, observe
from artifact.analysis.logs import pair
from artifact.analysis.runs import AnalysisError, Run, load_family
from artifact.contract import accsplit as C
from artifact.errors import MissingCellError as MissingCellError

FAMILY = "accsplit"
# The shift decomposition's two prompts, fixed before the data were seen: a chat prompt (A) to
# an input-grounded one (B), i.e. from free writing to quoting the input.
SHIFT_FROM = "chat/sharegpt-2Hj9Wtq_0"
SHIFT_TO = "grounded/HumanEval-59"
ALPHA = 0.05  # family-wise level of the window comparisons

# Windows measured before requests carried a contention record: whether their timings are
# quiet, and why. A window whose records carry contention is judged by them instead.
_SHARED = ("measured before requests carried a contention record, while builds and test suites "
           "shared the two cores (the no-draft control's time per token moved several-fold "
           "within and between these windows)")
_ALONE = ("measured before requests carried a contention record, with the machine to itself "
          "(no other job ran; the no-draft control's time per token steady)")
DECLARED_LOAD: Mapping[str, tuple[bool, str]] = {
    "w1": (False, _SHARED), "w2": (False, _SHARED), "w3": (False, _SHARED),
    "w4": (True, _ALONE), "w5": (True, _ALONE),
}


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


def timed(obs: Iterable[Obs]) -> list[Obs]:
    """The observations whose timings count: a quiet window, the request not contended."""
    return [o for o in obs if o.quiet_window and o.contended is not True]


def _unit_means(obs: Iterable[Obs], unit: Callable[[Obs], Any],
                get: Callable[[Obs], float | None]) -> list[float]:
    """One value per unit: the mean of its observations' finite values (units without one are
    left out), in the units' order."""
    by: dict[Any, list[float]] = defaultdict(list)
    for o in obs:
        v = get(o)
        if v is not None and math.isfinite(v):
            by[unit(o)].append(float(v))
    return [sum(v) / len(v) for _, v in sorted(by.items(), key=lambda kv: str(kv[0]))]


POSITIVE: S.Range = (0.0, math.inf)  # times, speeds and their ratios


def per_round(obs: Sequence[Obs]) -> S.Range | None:
    """Where accepted tokens per round lie: [0, k] (None when k is unknown)."""
    k = _depth(obs)
    return (0.0, float(k)) if k else None


def per_round_diff(obs: Sequence[Obs]) -> S.Range | None:
    """Where a difference of accepted tokens per round lies: [-k, k]."""
    k = _depth(obs)
    return (-float(k), float(k)) if k else None


def over_prompts(obs: Sequence[Obs], get: Callable[[Obs], float | None], *,
                 kind: C.Kind, within: S.Range | None = None) -> C.Interval:
    """Per-prompt means of ``get``, Student-t over prompts."""
    return S.interval(_unit_means(obs, lambda o: o.prompt_id, get), kind=kind, over="prompts",
                      within=within)


def over_windows(obs: Sequence[Obs], get: Callable[[Obs], float | None], *,
                 kind: C.Kind, within: S.Range | None = None) -> C.Interval:
    """Per-window means of ``get``, Student-t over windows."""
    return S.interval(_unit_means(obs, lambda o: o.window, get), kind=kind, over="windows",
                      within=within)


def pooled_over(obs: Sequence[Obs], unit: Callable[[Obs], Any], over: str) -> C.Interval:
    """Sum accepted / sum rounds, its interval with ``unit`` as clusters (t-ratio), within
    [0, k]."""
    units = [(_sum(o.accepted for o in g), _sum(o.rounds for o in g))
             for g in _group(obs, lambda o: (unit(o),)).values()]
    return S.ratio_interval(units, kind=S.MEASURED, over=over, within=per_round(obs))


def _no_interval(reason: str, *, kind: C.Kind, over: str) -> C.Interval:
    return C.Interval(n=0, mean=None, sd=None, low=None, high=None, ci_reason=reason,
                      kind=kind, over=over, method="t")


# --- 1. prompt x budget --------------------------------------------------------------------


def by_prompt_budget(obs: Sequence[Obs]) -> list[C.PromptBudgetRow]:
    """Per (configuration, prompt, budget) at batch 1; windows are the units."""
    rows: list[C.PromptBudgetRow] = []
    for (config, prompt, budget), g in _group(drafted(batch1(obs)),
                                              lambda o: (o.config, o.prompt_id, o.budget)).items():
        rows.append({
            "config": config, "prompt_id": prompt, "domain": g[0].domain, "budget": budget,
            "accepted_per_round": over_windows(g, lambda o: o.accepted_per_round,
                                               kind=S.MEASURED, within=per_round(g)),
            "pooled_accepted_per_round": S.value(_pooled(g), S.MEASURED),
            "draft_depth": S.value(S.ratio(_sum(o.drafted for o in g), _sum(o.rounds for o in g)),
                                   S.MEASURED),
            "per_position": _positions(g),
            "ms_per_step": over_windows(timed(g), lambda o: o.ms_per_step, kind=S.MEASURED,
                                        within=POSITIVE),
            "dates": sorted({o.utc_date for o in g if o.utc_date}),
            "windows": sorted({o.window for o in g if o.window}),
            "runs": sorted({o.run_id for o in g}),
        })
    return rows


def by_config(obs: Sequence[Obs]) -> list[C.ConfigRow]:
    """Per (configuration, budget, batch): accepted per round pooled over prompts and windows,
    its interval over prompts, and per window over windows."""
    rows: list[C.ConfigRow] = []
    for (config, budget, batch), g in _group(drafted(obs),
                                             lambda o: (o.config, o.budget, o.batch)).items():
        per_window = [_pooled(w) for w in _group(g, lambda o: (o.window,)).values()]
        rows.append({
            "config": config, "budget": budget, "batch": batch, "n_requests": len(g),
            "pooled_accepted_per_round": S.value(_pooled(g), S.MEASURED),
            "pooled_over_prompts": pooled_over(g, lambda o: o.prompt_id, "prompts"),
            "accepted_per_round": S.interval(per_window, kind=S.MEASURED, over="windows",
                                             within=per_round(g)),
            "per_position": _positions(g),
            "windows": sorted({o.window for o in g if o.window}),
        })
    return rows


# --- 2. windows and dates ------------------------------------------------------------------


def by_window(obs: Sequence[Obs]) -> C.ByWindow:
    """Pooled acceptance per window, and the windows compared as a family."""
    b1 = drafted(batch1(obs))
    cells: list[C.WindowCell] = []
    for (config, budget, window), g in _group(b1, lambda o: (o.config, o.budget, o.window)
                                              ).items():
        cells.append({"config": config, "budget": budget, "window": window,
                      "dates": sorted({o.utc_date for o in g if o.utc_date}),
                      "n_requests": len(g),
                      "pooled_accepted_per_round": S.value(_pooled(g), S.MEASURED),
                      "accepted_per_round": over_prompts(g, lambda o: o.accepted_per_round,
                                                         kind=S.MEASURED,
                                                         within=per_round(g))})
    spread = [over_windows(g, lambda o: o.accepted_per_round, kind=S.MEASURED)["sd"]
              for g in _group(b1, lambda o: (o.config, o.prompt_id, o.budget)).values()]
    sds = [x for x in spread if x is not None]
    return {"windows": sorted({o.window for o in b1 if o.window}), "cells": cells,
            "families": window_families(obs),
            "cell_sd_across_windows": S.value(sum(sds) / len(sds) if sds else math.nan,
                                              S.MEASURED)}


def window_families(obs: Sequence[Obs]) -> list[C.WindowFamily]:
    """Per configuration and budget at batch 1, do windows differ? One omnibus test over
    prompts x windows (Friedman, prompts as blocks, on each request's accepted per round; the
    prompts with a value in every window), and every pair of windows paired by prompt (t over
    the prompts with a value in both, Holm-corrected over the pairs)."""
    out: list[C.WindowFamily] = []
    for (config, budget), g in _group(drafted(batch1(obs)),
                                      lambda o: (o.config, o.budget)).items():
        windows = sorted({o.window for o in g if o.window})
        if len(windows) < 2:
            continue
        cell: dict[tuple[str, str], list[float]] = defaultdict(list)
        for o in g:
            v = o.accepted_per_round
            if o.window and v is not None and math.isfinite(v):
                cell[(o.prompt_id, o.window)].append(v)
        per = {k: sum(v) / len(v) for k, v in cell.items()}
        prompts = sorted({p for p, _ in per})
        complete = [p for p in prompts if all((p, w) in per for w in windows)]
        omnibus = S.friedman([[per[(p, w)] for w in windows] for p in complete])
        pairs: list[tuple[str, str, list[float | None]]] = [
            (a, b, [per[(p, b)] - per[(p, a)] for p in prompts
                    if (p, a) in per and (p, b) in per])
            for a, b in itertools.combinations(windows, 2)]
        ps = [S.paired_p(d) for _, _, d in pairs]
        adjusted = S.holm(ps)
        rows: list[C.WindowPair] = [
            {"a": a, "b": b, "diff": S.interval(d, kind=S.MEASURED, over="prompts",
                                                within=per_round_diff(g)),
             "p": p if math.isfinite(p) else None,
             "p_holm": q if math.isfinite(q) else None,
             "differs": math.isfinite(q) and q < ALPHA}
            for (a, b, d), p, q in zip(pairs, ps, adjusted, strict=True)]
        out.append({"config": config, "budget": budget, "windows": windows,
                    "prompts": complete, "omnibus": omnibus, "pairs": rows,
                    "n_differ": sum(r["differs"] for r in rows)})
    return out


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
    """Each client estimator minus the server's accepted per round, per configuration at batch
    1, from quiet requests only (the estimators read arrival times), per-prompt means over
    prompts.

    For the no-draft control the server's figure is 0 accepted tokens per step by construction.
    Also: client steps against the server's (answer tokens - accepted), and the agreement of
    the per-request sources (all requests: counts do not depend on timing).
    """
    rows: list[C.ReconRow] = []
    for config, every in _group(batch1(obs), lambda o: (o.config,)).items():
        g = timed(every)
        control = every[0].drafter == "none"

        def ref(o: Obs, control: bool = control) -> float | None:
            return 0.0 if control else o.accepted_per_round

        server = over_prompts(g, ref, kind=S.MEASURED)
        if control and server["n"]:  # zero by construction: a value, not an interval
            server = {**server, "sd": None, "low": None, "high": None,
                      "ci_reason": "no draft: zero by construction"}
        est: dict[str, C.EstimatorResult] = {}
        for name in _steps.ESTIMATORS:
            def get(o: Obs, name: str = name) -> float:
                return float(getattr(o.est, name))

            def bias(o: Obs, get: Callable[[Obs], float] = get) -> float | None:
                r = ref(o)
                return get(o) - r if r is not None else None

            est[name] = {"value": over_prompts(g, get, kind=S.ESTIMATED),
                         "bias": over_prompts(g, bias, kind=S.ESTIMATED)}
        rows.append({
            "config": config[0], "n_requests": len(g), "n_not_quiet": len(every) - len(g),
            "windows": sorted({o.window for o in g if o.window}),
            "server_accepted_per_round": server, "estimators": est,
            "steps_minus_server_steps": over_prompts(
                g, lambda o: float(o.steps.steps - o.server_steps), kind=S.ESTIMATED),
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


# --- 4. length split and the ways of summing -------------------------------------------------


def _depth(obs: Sequence[Obs]) -> int:
    """The drafter's draft depth k (accepted per round lies in [0, k])."""
    ks = {o.k for o in obs if o.k}
    if ks:
        return max(k for k in ks if k is not None)
    return max((len(o.pos_accepted or ()) for o in obs), default=0)


def _cut(x: float, k: int) -> tuple[float, bool]:
    """``x`` cut to ``[0, k]`` and whether it was (``nan`` stays ``nan``)."""
    if not math.isfinite(x):
        return x, False
    y = min(max(x, 0.0), float(k))
    return y, y != x


def length_split(obs: Sequence[Obs]) -> list[C.LengthRow]:
    """Short-budget acceptance and the ESTIMATED acceptance of the tokens past it, per
    configuration and each longer budget, from the windows that ran both at batch 1.

    Requests are matched by (window, prompt, repeat) across the two budgets (same seed: the
    short answer is usually the start of the long). Per prompt, counts are pooled over its
    matched requests: late = (sum acc_L - sum acc_S) / (sum rounds_L - sum rounds_S), cut to
    [0, k]; undefined where the long budget added no round. The interval is over prompts.
    """
    rows: list[C.LengthRow] = []
    for (config,), g in _group(drafted(batch1(obs)), lambda o: (o.config,)).items():
        budgets = sorted({o.budget for o in g})
        if len(budgets) < 2:
            continue
        short, k = budgets[0], _depth(g)
        for long in budgets[1:]:
            s = {(o.window, o.prompt_id, o.repeat): o for o in g if o.budget == short}
            lo = {(o.window, o.prompt_id, o.repeat): o for o in g if o.budget == long}
            keys = sorted(set(s) & set(lo), key=str)
            if keys:
                rows.append(_late(config, short, long, k, [s[x] for x in keys],
                                  [lo[x] for x in keys]))
    return rows


def _late(config: str, short: int, long: int, k: int, s: Sequence[Obs],
          lo: Sequence[Obs]) -> C.LengthRow:
    def late(a: Sequence[Obs], b: Sequence[Obs]) -> float:
        d_rounds = _sum(o.rounds for o in b) - _sum(o.rounds for o in a)
        if d_rounds <= 0:
            return math.nan
        return (_sum(o.accepted for o in b) - _sum(o.accepted for o in a)) / d_rounds

    by_prompt: list[float] = []
    n_cut = n_undefined = 0
    for prompt in sorted({o.prompt_id for o in s}):
        x, was = _cut(late([o for o in s if o.prompt_id == prompt],
                           [o for o in lo if o.prompt_id == prompt]), k)
        if math.isnan(x):
            n_undefined += 1
            continue
        n_cut += was
        by_prompt.append(x)
    iv, iv_cut = S.clipped(S.interval(by_prompt, kind=S.ESTIMATED, over="prompts"), 0.0,
                           float(k))
    overall, _ = _cut(late(s, lo), k)
    return {
        "config": config, "short_budget": short, "long_budget": long,
        "windows": sorted({o.window for o in s if o.window}), "k": k,
        "short": pooled_over(s, lambda o: o.prompt_id, "prompts"),
        "long": pooled_over(lo, lambda o: o.prompt_id, "prompts"),
        "late": S.value(overall, S.ESTIMATED),
        "late_by_prompt": iv, "n_prompts_cut": n_cut, "n_prompts_undefined": n_undefined,
        "interval_cut": iv_cut, "n_short": len(s), "n_long": len(lo),
        "short_is_prefix_of_long": sum(b.text.startswith(a.text) for a, b in zip(s, lo,
                                                                                   strict=True)),
        "n_pairs": len(s),
    }


FIGURE_DEFINITIONS: Mapping[str, str] = {
    "pooled": "sum of accepted tokens over sum of verification rounds, all requests; each "
              "round weighs alike, so requests with many rounds weigh more (interval: prompts "
              "as clusters, t-ratio). The headline.",
    "mean_of_windows": "each window's pooled ratio, then the mean over windows (windows weigh "
                       "alike; interval over windows)",
    "mean_of_prompts": "each prompt's pooled ratio over its windows, then the mean over "
                       "prompts (prompts weigh alike; interval over prompts)",
    "mean_of_requests": "each request's accepted / rounds (requests without a round left "
                        "out), the mean per prompt, then over prompts (a request with one "
                        "round weighs as much as one with fifty; interval over prompts)",
}


def acceptance_figures(obs: Sequence[Obs]) -> C.AcceptanceFigures:
    """Per configuration and budget at batch 1, the same requests summed four ways."""
    rows: list[C.FigureRow] = []
    for (config, budget), g in _group(drafted(batch1(obs)),
                                      lambda o: (o.config, o.budget)).items():
        per_window = [_pooled(w) for w in _group(g, lambda o: (o.window,)).values()]
        per_prompt = [_pooled(w) for w in _group(g, lambda o: (o.prompt_id,)).values()]
        rows.append({
            "config": config, "budget": budget, "n_requests": len(g),
            "n_prompts": len({o.prompt_id for o in g}),
            "n_windows": len({o.window for o in g}),
            "pooled": pooled_over(g, lambda o: o.prompt_id, "prompts"),
            "mean_of_windows": S.interval(per_window, kind=S.MEASURED, over="windows",
                                          within=per_round(g)),
            "mean_of_prompts": S.interval(per_prompt, kind=S.MEASURED, over="prompts",
                                          within=per_round(g)),
            "mean_of_requests": over_prompts(g, lambda o: o.accepted_per_round,
                                             kind=S.MEASURED, within=per_round(g)),
        })
    return {"headline": "pooled", "definitions": dict(FIGURE_DEFINITIONS), "rows": rows}


# --- 5. segments ---------------------------------------------------------------------------


def segment_split(obs: Sequence[Obs]) -> list[C.SegmentRow]:
    """Code vs prose accepted per step, ESTIMATED from client steps, after its validation;
    quiet requests only (client steps come from arrival times).

    Validation: on answers that are one segment only, the estimator (tokens per client step - 1,
    the first step left out) against the server's accepted per round (0 for the no-draft
    control), per-prompt means over prompts.
    """
    rows: list[C.SegmentRow] = []
    for (config,), every in _group(batch1(obs), lambda o: (o.config,)).items():
        g = timed(every)
        single = [o for o in g if (o.code.tokens == 0) != (o.prose.tokens == 0)]

        def bias(o: Obs) -> float | None:
            r = 0.0 if o.drafter == "none" else o.accepted_per_round
            return o.est.tokens_per_step - r if r is not None else None

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
                     "validation_bias": over_prompts(single, bias, kind=S.ESTIMATED),
                     "segments": seg})
    return rows


# --- 6. batch ------------------------------------------------------------------------------


def _server_tok_s(o: Obs) -> float:
    return S.ratio(o.answer_tokens, o.predicted_ms) * 1000.0


def _batch_windows(obs: Sequence[Obs]) -> list[str]:
    return [w for (w,), g in _group(obs, lambda o: (o.window,)).items()
            if w is not None and len({o.batch for o in g}) > 1]


def batch_split(obs: Sequence[Obs]) -> list[C.BatchRow]:
    """Acceptance and speed by concurrent streams, inside each window that ran several batches
    (speeds from quiet windows only, contended requests left out)."""
    rows: list[C.BatchRow] = []
    for w in _batch_windows(obs):
        for (config, budget, batch), g in _group(
                [o for o in obs if o.window == w], lambda o: (o.config, o.budget, o.batch)
        ).items():
            t = timed(g)
            quiet = all(o.quiet_window for o in g)

            def speed(get: Callable[[Obs], float], t: list[Obs] = t,
                      quiet: bool = quiet) -> C.Interval:
                if not quiet:
                    return _no_interval("window not quiet: timings not used",
                                        kind=S.MEASURED, over="prompts")
                return over_prompts(t, get, kind=S.MEASURED, within=POSITIVE)

            rows.append({
                "config": config, "budget": budget, "batch": batch, "window": w,
                "n_requests": len(g),
                "pooled_accepted_per_round": S.value(
                    _pooled(g) if g[0].drafter != "none" else math.nan, S.MEASURED),
                "accepted_per_round": over_prompts(g, lambda o: o.accepted_per_round,
                                                   kind=S.MEASURED, within=per_round(g)),
                "per_position": _positions(g),
                "quiet": quiet,
                "server_tok_per_s": speed(_server_tok_s),
                "client_tok_per_s": speed(lambda o: o.steps.decode_tok_per_s),
                "source": sorted({o.source for o in g}),
            })
    return rows


def _speedup(drafts: Sequence[Obs], control: Sequence[Obs]) -> C.Interval:
    """Per prompt, mean server tok/s over the control's mean server tok/s; over prompts."""
    base = dict(zip(sorted({o.prompt_id for o in control}),
                    _unit_means(control, lambda o: o.prompt_id, _server_tok_s), strict=False))
    mine = {p: v for p, v in zip(sorted({o.prompt_id for o in drafts}),
                                 _unit_means(drafts, lambda o: o.prompt_id, _server_tok_s),
                                 strict=False)}
    return S.interval([mine[p] / base[p] for p in sorted(set(mine) & set(base))
                       if base[p] > 0], kind=S.MEASURED, over="prompts", within=POSITIVE)


def batch_contrasts(obs: Sequence[Obs]) -> list[C.BatchContrast]:
    """Batch b against batch 1 inside one window: acceptance paired by prompt, and speed
    against the no-draft control at the same batch where the window ran one (quiet windows)."""
    out: list[C.BatchContrast] = []
    for w in _batch_windows(obs):
        inside = [o for o in obs if o.window == w]
        quiet = all(o.quiet_window for o in inside)
        for (config, budget), g in _group(drafted(inside), lambda o: (o.config, o.budget)
                                          ).items():
            one = [o for o in g if o.batch == 1]
            for b in sorted({o.batch for o in g} - {1}):
                at_b = [o for o in g if o.batch == b]
                if not one:
                    continue
                ref = dict(zip(sorted({o.prompt_id for o in one}),
                               _unit_means(one, lambda o: o.prompt_id,
                                           lambda o: o.accepted_per_round), strict=False))
                diffs = [v - ref[p] for p, v in zip(
                    sorted({o.prompt_id for o in at_b}),
                    _unit_means(at_b, lambda o: o.prompt_id, lambda o: o.accepted_per_round),
                    strict=False) if p in ref]
                ctrl = [o for o in inside if o.drafter == "none" and o.budget == budget]
                ctrl_b = [o for o in ctrl if o.batch == b]
                ctrl_1 = [o for o in ctrl if o.batch == 1]
                has = bool(ctrl_b)
                note = ("" if has and quiet else
                        f"no no-draft control at batch {b} in {w}: no speedup"
                        if not has else f"{w} not quiet: timings not used")
                out.append({
                    "config": config, "budget": budget, "window": w, "batch": b,
                    "acceptance_diff": S.interval(diffs, kind=S.MEASURED, over="prompts",
                                                  within=per_round_diff(g)),
                    "has_control": has,
                    "speedup": _speedup(timed(at_b), timed(ctrl_b)) if has and quiet else None,
                    "speedup_b1": (_speedup(timed(one), timed(ctrl_1))
                                   if ctrl_1 and has and quiet else None),
                    "note": note,
                })
    return out


# --- 7. shift decomposition ----------------------------------------------------------------


def shift(obs: Sequence[Obs], *, config: str, a: str, b: str, short: int,
          long: int) -> C.ShiftRow:
    """From (A, short) to (B, long) through (B, short): prompt step, length step, total.

    Each step is a difference of accepted per round within a window, so its interval is over
    the windows that hold all three cells. A cell without runs is a :class:`MissingCellError`.
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
        return S.value(_mean([cells[name][u] for u in units]), S.MEASURED)

    return {
        "config": config, "from_cell": {"prompt_id": a, "budget": short},
        "via_cell": {"prompt_id": b, "budget": short}, "to_cell": {"prompt_id": b, "budget": long},
        "a_short": mean_cell("a_short"), "b_short": mean_cell("b_short"),
        "b_long": mean_cell("b_long"),
        "windows": sorted({str(u[0]) for u in units}),
        "prompt_step": S.interval(diffs("a_short", "b_short"), kind=S.MEASURED, over="windows",
                                  within=per_round_diff(b1)),
        "length_step": S.interval(diffs("b_short", "b_long"), kind=S.MEASURED, over="windows",
                                  within=per_round_diff(b1)),
        "total": S.interval(diffs("a_short", "b_long"), kind=S.MEASURED, over="windows",
                            within=per_round_diff(b1)),
    }


def _mean(xs: Sequence[float | int | None]) -> float:
    v = [float(x) for x in xs if x is not None]
    return sum(v) / len(v) if v else math.nan


# --- assembly ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    obs: list[Obs]
    runs: list[Run]
    warnings: list[str]
    set_aside: list[C.SetAside] = dataclasses.field(default_factory=list)
    load: dict[str, C.WindowLoad] = dataclasses.field(default_factory=dict)


def set_aside_condition(run: Run) -> str:
    """A run's condition in words, for prose: ``ngram-mod k=4 at batch 1, 128-token answers,
    window w1``."""
    windows = sorted({r.window for r in run.records if r.window})
    where = f", window {', '.join(windows)}" if windows else ""
    return (f"{config_label(run.desc)} at batch {run.desc.concurrency}, "
            f"{run.desc.n_predict}-token answers{where}")


def _recorded(r: records.Result) -> bool:
    return r.contention is not None and "unavailable" not in r.contention


def _foreign_cores(r: records.Result) -> float | None:
    """The request's foreign CPU (cores) from its contention record; None without one."""
    v = r.contention.get("foreign_cores") if isinstance(r.contention, dict) else None
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def machine(run: Run) -> str:
    """The machine a run measured on, as its fingerprint names it: CPU model and cores."""
    return hostinfo.machine_name(run.desc.environment)


def _per_window(runs: Sequence[Run], get: Callable[[Run], str | None]) -> dict[str, set[str]]:
    """Per window (of its included requests): the values ``get`` gives of its runs."""
    by: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        value = get(run)
        for w in {r.window or "none" for r in run.included}:
            if value:
                by[w].add(value)
    return by


def window_machines(runs: Sequence[Run]) -> dict[str, str]:
    """Per window (of its included requests): the machine(s) its runs measured on."""
    return {w: "; ".join(sorted(m)) for w, m in sorted(_per_window(runs, machine).items())}


def _binary(run: Run) -> str | None:
    sha = run.desc.environment.get("binary_sha256")
    return sha if isinstance(sha, str) else None


def _one_machine(out: dict[str, C.WindowLoad], machines: Mapping[str, str]) -> None:
    """Timing figures pool the quiet windows of one machine: where quiet windows ran on
    several, those of the machine with the most quiet windows (then: the most with a contention
    record) are kept and the others marked not quiet, with the reason."""
    quiet = [w for w in out if out[w]["quiet"]]
    count: dict[str, tuple[int, int]] = {}
    for w in quiet:
        n, rec = count.get(machines.get(w, ""), (0, 0))
        count[machines.get(w, "")] = (n + 1, rec + (out[w]["source"] == "record"))
    if len(count) < 2:
        return
    keep = max(count, key=lambda m: (*count[m], m))
    for w in quiet:
        if machines.get(w, "") != keep:
            out[w]["quiet"] = False
            out[w]["other_machine"] = True
            out[w]["reason"] += (f"; but measured on {machines.get(w) or 'an unknown machine'}: "
                                 f"timing figures pool the quiet windows of one machine "
                                 f"({keep}, {count[keep][0]} windows)")


def window_load(runs: Sequence[Run]) -> dict[str, C.WindowLoad]:
    """Per window: quiet by its contention record where its requests carry one, else by
    :data:`DECLARED_LOAD`, else not quiet; of quiet windows on several machines, only one
    machine's count (:func:`_one_machine`)."""
    recs: dict[str, list[records.Result]] = defaultdict(list)
    for run in runs:
        for r in run.included:
            recs[r.window or "none"].append(r)
    out: dict[str, C.WindowLoad] = {}
    for w, rs in sorted(recs.items()):
        n_cont = sum(r.contended is True for r in rs)
        foreign = sorted(x for r in rs if (x := _foreign_cores(r)) is not None)
        source: Literal["record", "declared", "none"]
        if any(_recorded(r) for r in rs):
            quiet, source = True, "record"
            why = (f"contention recorded per request; {n_cont} of {len(rs)} contended, left "
                   "out of timing")
        elif w in DECLARED_LOAD:
            (quiet, why), source = DECLARED_LOAD[w], "declared"
        else:
            quiet, source = False, "none"
            why = "no contention record and no declaration: timings not used"
        out[w] = {"quiet": quiet, "source": source, "n_requests": len(rs),
                  "n_contended": n_cont, "other_machine": False,
                  "foreign_cores_median": statistics.median(foreign) if foreign else None,
                  "foreign_cores_max": foreign[-1] if foreign else None, "reason": why}
    _one_machine(out, window_machines(runs))
    return out


def load(runs_root: Path, keep: Mapping[str, frozenset[str] | None] | None = None) -> Loaded:
    """Every ``accsplit`` run's observations (log lines paired to records).

    Only run directories whose ``config.json`` says family ``accsplit`` are read in full. With
    ``keep`` (run id -> its prompt ids, ``None`` for all), only those runs and prompts: a
    reference cut to what a reproduction measured. A stateful drafter's run whose server
    restarted while it measured is set aside (a warning names it).
    """
    if not runs_root.is_dir():
        raise AnalysisError(f"{runs_root}: runs directory not found")
    obs: list[Obs] = []
    runs: list[Run] = []
    set_aside: list[C.SetAside] = []
    # read and screened as every study's runs are (artifact.analysis.validate): one per run id
    found, warnings = load_family(runs_root, FAMILY, keep_events=True,
                                  only=None if keep is None else frozenset(keep))
    for run in found:
        prompts = keep.get(run.path.name) if keep is not None else None
        runs.append(run)
        if run.restarted_stateful:
            why = (f"{run.desc.drafter} keeps state across requests and its server started "
                   f"{run.measured_starts} times while the run measured: the requests after a "
                   "restart drafted from an emptied pool")
            set_aside.append({"run_id": run.desc.run_id, "reason": why,
                              "condition": set_aside_condition(run)})
            warnings.append(f"run {run.desc.run_id}: set aside from the acceptance-split "
                            f"statistics: {why}")
            continue
        p = pair(run.records, run.log or [], where=run.desc.run_id)
        if not p.ok and p.problem and run.desc.drafter != "none":
            warnings.append(p.problem)
        for rec, entry, bad in zip(run.records, p.entry_of, run.spurious, strict=True):
            if not bad and (prompts is None or rec.prompt_id in prompts):
                obs.append(observe(run.desc, rec, entry))
    loads = window_load(runs)
    obs = [dataclasses.replace(o, quiet_window=loads[o.window or "none"]["quiet"])
           for o in obs]
    return Loaded(obs=obs, runs=runs, warnings=warnings, set_aside=set_aside, load=loads)


def protocol(loaded: Loaded) -> C.Protocol:
    """What was run, when: windows with their UTC span, wall time and load, dates, cells."""
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

    loads = loaded.load or window_load(loaded.runs)
    machines = window_machines(loaded.runs)
    binaries = _per_window(loaded.runs, _binary)
    out_w: dict[str, C.WindowInfo] = {
        w: {"start_utc": iso(v["start"]), "end_utc": iso(v["end"]), "runs": v["runs"],
                 "wall_s": S.value(v["end"] - v["start"], S.MEASURED),
                 "measure_s": S.value(v["measure_s"], S.MEASURED),
                 "dates": sorted(v["dates"]),
                 "no_draft_ms_per_token": S.interval(
                     [x.ms_per_step for x in batch1(loaded.obs)
                      if x.window == w and x.drafter == "none"],
                     kind=S.MEASURED, over="requests", within=POSITIVE),
                 "load": loads.get(w, {"quiet": False, "source": "none", "n_requests": 0,
                                       "n_contended": 0, "other_machine": False,
                                       "foreign_cores_median": None,
                                       "foreign_cores_max": None,
                                       "reason": "no included request"}),
                 "machine": machines.get(w, "unknown CPU"),
                 "binary_sha256": sorted(binaries.get(w, set()))}
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
        "set_aside": list(loaded.set_aside),
        "timing_windows": sorted(w for w, x in out_w.items() if x["load"]["quiet"]),
        "temperature": sorted({r.desc.sampling["temperature"] for r in loaded.runs}),
        "step_rule": {"floor_ms": _steps.FLOOR_MS, "fraction": _steps.FRACTION},
    }


def shifts(obs: Sequence[Obs], warnings: list[str]) -> list[C.ShiftRow]:
    """The shift decomposition per drafted configuration and longer budget (a campaign not yet
    complete lacks cells: its warning names the cell)."""
    out: list[C.ShiftRow] = []
    budgets = sorted({x.budget for x in batch1(obs)})
    for c in sorted({x.config for x in drafted(obs)}):
        for long in budgets[1:]:
            try:
                out.append(shift(obs, config=c, a=SHIFT_FROM, b=SHIFT_TO, short=budgets[0],
                                 long=long))
            except MissingCellError as err:
                warnings.append(f"{err}; decomposition left out")
    return out


def analyse(loaded: Loaded, warnings: list[str]) -> dict[str, Any]:
    """The whole study as plain data (before rounding); problems are appended to
    ``warnings``."""
    o = loaded.obs
    if not o:
        raise AnalysisError("accsplit: no runs of family 'accsplit' to analyse")
    for w, x in sorted((loaded.load or {}).items()):
        if x["source"] == "none":
            warnings.append(f"accsplit: window {w}: {x['reason']}")
    return {
        "protocol": protocol(loaded),
        "by_config": by_config(o),
        "by_prompt_budget": by_prompt_budget(o),
        "by_window": by_window(o),
        "by_date": by_date(o),
        "reconciliation": reconciliation(o),
        "length_split": length_split(o),
        "acceptance_figures": acceptance_figures(o),
        "segment_split": segment_split(o),
        "batch_split": batch_split(o),
        "batch_contrasts": batch_contrasts(o),
        "shift": shifts(o, warnings),
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
