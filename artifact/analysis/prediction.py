"""Predictions of the core study, take three (issue 29), from its calibration runs alone.

Written once, before the campaign of ``experiments/campaigns/core.toml`` is measured, and
committed (``experiments/core-predictions.json``): the paper then sets each cell's measured
speedup beside what was predicted for it. Inputs are the runs of
``experiments/campaigns/core-calibration.toml`` under ``experiments/runs-core/``; quiet requests
only (a contended request is left out, and counted).

**Cost per target** (runs ``cost-<target>-*``, all on held-out prompts):

- ``c1``: the decode step, the median of ``predicted_ms / (predicted_n - 1)`` over the no-draft
  requests (decoding as it runs).
- Verification rounds of known width: ngram-simple drafts k tokens that the server's synthetic
  acceptance accepts in full, so each round verifies ``g + 1`` tokens with logits for every one.
  A request of N tokens made D rounds carrying G drafted tokens, all accepted; its other
  ``U = N - 1 - G - D`` tokens came from plain decode steps (the first token comes from the
  prompt pass). The rounds' time ``y = predicted_ms - U·c1`` is fitted, over every such request,
  by ``y = a·D + b·(G + D)``: a round of width w costs ``v(w) = a + b·w``. ``a + b`` is checked
  against ``c1`` (the line at width 1 against the measured step).
- The draft model's round (``cost-<target>-draft-q2k``: the Q2_K draft at k = 3, all accepted):
  per request, ``q = (predicted_ms - U·c1 - a·D - b·(G + D)) / D``, the median over requests.

**Prediction per cell** (target, task, drafter). The pilot runs (``pilot-<task>-<drafter>``, on
the Q4_1 target) give per prompt N, G, A (accepted) and D. Acceptance is taken as the same on
every target (the same model; only its weights' precision differs). Per prompt,

    T0 = (N - 1)·c1        T = U·c1 + a·D + b·(G + D) + D·q [draft model only]

with ``U = N - 1 - A - D``; the predicted speedup is ``T0 / T``, and the cell's prediction the
mean over the pilot prompts. An n-gram lookup is priced at zero. The interval is for the mean
over the campaign's 30 new prompts: ``mean ± t(0.975, n - 1)·sqrt(var_boot + s²/30)``, where
``var_boot`` is the variance of the mean over a seeded bootstrap of the pilot prompts and of the
cost requests, and ``s`` the sd of the per-prompt predictions. A cell is predicted to pay when the
point is above 1; the interval says whether the campaign can tell. The file is checked by the
rules the core analysis reads it with (:mod:`artifact.analysis.validate.predictions`) before it
is written.

**Cost model v3** (issue 44, item 2) adds the price of the n-gram lookup, which v2 took as free:
``L``, ms per decode step, measured by :mod:`artifact.analysis.lookup` on the drafter's undrafted
prompts (where each step yields one token, so their extra ms per token is a price per step).
Every step of an n-gram drafter pays it, a plain step and a verification round alike:

    T = U·c1 + a·D + b·(G + D) + L·(U + D)          (n-gram drafters)

The verification of k tokens is still the line: a round that drafted g ≤ k tokens verifies
``w = g + 1`` and costs ``a + b·w``; k enters only through the pilot's G and D (how many tokens
each round carried), so a drafter at k = 16 is priced by the widths it actually drafted. The
bootstrap resamples the lookup's prompts with the rest. v3 predicts a family from its own
calibration (``--family``, :data:`FAMILIES`; its lookup from its pilots' undrafted prompts, each
cell also predicted within the looping and the not-looping pilot prompts,
:mod:`artifact.analysis.loops`), and re-predicts the committed core cells after the fact
(:func:`posthoc_cells`, lookup from the core runs: labelled post-hoc, never replacing the
committed predictions). The committed v2 file is what :func:`build` with ``model="v2"`` gives.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import files, paths, records
from artifact.analysis import lookup, loops
from artifact.analysis.validate import predictions as screen_predictions
from artifact.errors import AnalysisError, cli
from artifact.workloads import PromptSetError, ensure_prompt_set

SCHEMA = 1
OUT = paths.CORE_PREDICTIONS
TARGETS = ("q4_1", "q8_0", "f16")
TASKS = ("study", "edit")
DRAFTERS = ("ngram-mod", "ngram-mod-k16", "ngram-simple", "draft-q2k")
NEW_PROMPTS = 30  # prompts per task in the campaign
BOOT = 2000
SEED = 29
DRAFTS = "spec_decode_num_drafts_total"
MODEL_DRAFTER = "draft-q2k"  # the drafter whose rounds run a draft model (priced by q)
POSTHOC_NOTE = ("computed after the core runs, with the lookup priced from their undrafted "
                "prompts; beside the committed predictions, never replacing them")


@dataclass(frozen=True, kw_only=True)
class Family:
    """A model family's calibration: its runs' names and where its predictions go."""

    name: str
    targets: tuple[str, ...]  # the target quantizations, as named in the runs
    pilot_target: str  # the target the pilot runs ran on
    ks: tuple[int, ...] | None  # the synthetic-round k's; None: every cost-<target>-k<k> present
    runs: Path
    out: Path
    model: str  # cost model: "v2" (the committed SmolLM2 predictions) or "v3"
    calibration: str  # the campaign file that measures its calibration runs
    tasks: tuple[str, ...] = TASKS
    drafters: tuple[str, ...] = DRAFTERS


SMOLLM2 = Family(name="smollm2", targets=TARGETS, pilot_target="q4_1",
                 ks=(1, 2, 3, 4, 8, 16, 32, 64), runs=paths.CORE_RUNS, out=OUT, model="v2",
                 calibration="experiments/campaigns/core-calibration.toml")
GEMMA3 = Family(name="gemma3", targets=("q4_k_m", "q8_0", "f16"), pilot_target="q4_k_m",
                ks=None, runs=paths.GEMMA_RUNS, out=paths.GEMMA_PREDICTIONS, model="v3",
                calibration="experiments/campaigns/gemma-calibration.toml")
FAMILIES = {f.name: f for f in (SMOLLM2, GEMMA3)}


@dataclass(frozen=True)
class Req:
    """One quiet request: tokens, server decode time, drafted / accepted tokens and rounds."""

    prompt: str
    n: int
    ms: float
    g: int
    a: int
    d: int

    @property
    def plain(self) -> int:
        """Tokens from plain decode steps (the first comes from the prompt pass)."""
        return self.n - 1 - self.a - self.d


@dataclass(frozen=True)
class Cost:
    c1: float
    a: float
    b: float
    q: float

    def verify(self, g: int, d: int) -> float:
        return self.a * d + self.b * (g + d)


def _requests(run: Path) -> tuple[list[Req], int]:
    """Quiet requests of a run (the last quiet attempt per prompt and pass) and how many
    requests were left out as contended."""
    try:
        rows, contended = records.quiet_results(run, keep_events=False)
    except records.RecordError as err:
        raise AnalysisError(str(err)) from err
    out = []
    for r in rows:
        if r.metrics_delta is None:
            raise AnalysisError(f"{paths.shown(run / records.RESULTS)}: {r.prompt_id}: "
                                "metrics_delta: expected /metrics deltas per request")
        t = r.timings
        out.append(Req(r.prompt_id, t.predicted_n, t.predicted_ms, t.draft_n or 0,
                       t.draft_n_accepted or 0, int(r.metrics_delta.get(DRAFTS, 0))))
    return out, contended


def _c1(none: Sequence[Req]) -> float:
    return statistics.median(r.ms / (r.n - 1) for r in none)


def _line(c1: float, rounds: Sequence[Req]) -> tuple[float, float]:
    """Least squares of ``y = a·D + b·(G + D)`` with no intercept."""
    sxx = sxy = syy = sx_y = sy_y = 0.0
    for r in rounds:
        x1, x2 = float(r.d), float(r.g + r.d)
        y = r.ms - r.plain * c1
        sxx += x1 * x1
        sxy += x1 * x2
        syy += x2 * x2
        sx_y += x1 * y
        sy_y += x2 * y
    det = sxx * syy - sxy * sxy
    if det <= 0:
        raise AnalysisError("prediction: the verification rounds do not span two widths")
    return (syy * sx_y - sxy * sy_y) / det, (sxx * sy_y - sxy * sx_y) / det


def fit_cost(none: Sequence[Req], rounds: Sequence[Req], draft: Sequence[Req]) -> Cost:
    """A target's costs from its no-draft, synthetic-round and draft-model requests.

    >>> none = [Req("p", 101, 1000.0, 0, 0, 0)]  # c1 = 10 ms
    >>> # a = 6, b = 1: 16 rounds of width 6 after 4 plain steps; 10 rounds of width 9 after 10
    >>> rounds = [Req("p", 101, 4 * 10 + 16 * 6 + 96, 80, 80, 16),
    ...           Req("p", 101, 10 * 10 + 10 * 6 + 90, 80, 80, 10)]
    >>> draft = [Req("p", 101, 25 * 6 + 100 + 25 * 7.0, 75, 75, 25)]  # q = 7 ms per round
    >>> c = fit_cost(none, rounds, draft)
    >>> [round(x, 6) for x in (c.c1, c.a, c.b, c.q)]
    [10.0, 6.0, 1.0, 7.0]
    """
    c1 = _c1(none)
    a, b = _line(c1, rounds)
    q = statistics.median((r.ms - r.plain * c1 - a * r.d - b * (r.g + r.d)) / r.d
                          for r in draft if r.d > 0)
    return Cost(c1, a, b, q)


def speedup(r: Req, cost: Cost, *, model_draft: bool, lookup_ms: float = 0.0) -> float:
    """Predicted ``T0 / T`` of one pilot request on a target of cost ``cost``; ``lookup_ms``
    (v3) is paid on every decode step, plain or verifying (v2: 0).

    >>> c = Cost(c1=10.0, a=6.0, b=1.0, q=7.0)
    >>> r = Req("p", 101, 0.0, 80, 60, 10)  # U = 100 - 60 - 10 = 30 plain steps, 10 rounds
    >>> round(speedup(r, c, model_draft=False), 4)  # 1000 / (300 + 6·10 + 1·90)
    2.2222
    >>> round(speedup(r, c, model_draft=False, lookup_ms=1.0), 4)  # + 1 ms for each of 40 steps
    2.0408
    >>> round(speedup(Req("u", 101, 0.0, 0, 0, 0), c, model_draft=False, lookup_ms=0.5), 4)
    0.9524
    """
    t0 = (r.n - 1) * cost.c1
    t = r.plain * cost.c1 + cost.verify(r.g, r.d) + (r.d * cost.q if model_draft else 0.0)
    if lookup_ms:
        t += lookup_ms * (r.plain + r.d)
    return t0 / t


def _t975(df: int) -> float:
    from artifact.stats import t_quantile  # numpy: imported here, `doit` loads this package

    return t_quantile(0.975, df)


def _resampled_cost(cost_rows: tuple[Sequence[Req], Sequence[Req], Sequence[Req]],
                    rng: random.Random) -> Cost:
    """The costs fitted on one bootstrap draw of the cost requests; a draw whose rounds do not
    span two widths (few k's, few requests) has no line and is drawn again (the committed v2
    draws never met one, so they are unchanged)."""
    none, rounds, draft = cost_rows
    while True:
        try:
            return fit_cost([rng.choice(none) for _ in none], [rng.choice(rounds) for _ in rounds],
                            [rng.choice(draft) for _ in draft])
        except AnalysisError:
            continue


def predict_cell(pilot: Sequence[Req], cost_rows: tuple[Sequence[Req], Sequence[Req],
                 Sequence[Req]], cost: Cost, *, model_draft: bool,
                 rng: random.Random, lookup_extras: Sequence[float] = ()) -> dict[str, Any]:
    """A cell's prediction over the pilot prompts and its interval for the campaign's new
    prompts; ``lookup_extras`` (v3): the lookup's per-prompt prices, their mean paid per step
    and resampled with the rest (empty: v2, no lookup and the same draws as before)."""
    price = statistics.fmean(lookup_extras) if lookup_extras else 0.0
    per = [speedup(r, cost, model_draft=model_draft, lookup_ms=price) for r in pilot]
    mean = statistics.fmean(per)
    boots = []
    for _ in range(BOOT):
        c = _resampled_cost(cost_rows, rng)
        ps = [rng.choice(pilot) for _ in pilot]
        lk = (statistics.fmean(rng.choice(lookup_extras) for _ in lookup_extras)
              if lookup_extras else 0.0)
        boots.append(statistics.fmean(speedup(r, c, model_draft=model_draft, lookup_ms=lk)
                                      for r in ps))
    var = statistics.variance(boots)
    s = statistics.stdev(per) if len(per) > 1 else 0.0
    half = _t975(len(per) - 1) * math.sqrt(var + s * s / NEW_PROMPTS)
    return {"predicted": round(mean, 4), "lo": round(mean - half, 4),
            "hi": round(mean + half, 4), "sign": "pays" if mean > 1 else "loses",
            "n_pilot_prompts": len(per),
            "per_prompt": {r.prompt: round(x, 4) for r, x in zip(pilot, per, strict=True)},
            "pilot_alpha": round(sum(r.a for r in pilot) / max(1, sum(r.g for r in pilot)), 4),
            "pilot_drafted_prompts": sum(1 for r in pilot if r.g > 0)}


def _measured_pilot(pilot: Sequence[Req], none: Mapping[str, Req]) -> float | None:
    """The pilot's own measured speedup on Q4_1 (mean over prompts of the no-draft decode time
    over the drafter's), beside the model's prediction for the same requests."""
    xs = [none[r.prompt].ms / r.ms for r in pilot if r.prompt in none]
    return round(statistics.fmean(xs), 4) if xs else None


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ks_present(root: Path, target: str) -> tuple[int, ...]:
    """The synthetic-round k's measured on ``target``: every ``cost-<target>-k<k>`` with results.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> for k in (16, 2, 8):
    ...     (d / f"cost-t-k{k}").mkdir(); _ = (d / f"cost-t-k{k}" / "results.jsonl").write_text("")
    >>> (d / "cost-t-kx").mkdir()
    >>> _ks_present(d, "t")
    (2, 8, 16)
    """
    pre = f"cost-{target}-k"
    ks = sorted(int(p.name[len(pre):]) for p in root.glob(f"{pre}*")
                if p.name[len(pre):].isdigit() and (p / records.RESULTS).is_file())
    if len(ks) < 2:
        raise AnalysisError(f"{paths.shown(root)}: runs {pre}<k>: expected synthetic rounds at "
                            f"two widths at least (the verification line), found {len(ks)}")
    return tuple(ks)


def _prompt_texts(run: Path, warnings: list[str]) -> dict[str, str] | None:
    """The prompt texts of a run's prompt set (``config.json`` ``spec.prompt_set``), or None,
    named in ``warnings``, when the set is not drawn here (copy shares are then not measured)."""
    try:
        spec = records.read_json(run / records.CONFIG).get("spec")
    except records.RecordError as err:
        raise AnalysisError(str(err)) from err
    name = spec.get("prompt_set") if isinstance(spec, dict) else None
    if not isinstance(name, str):
        raise AnalysisError(f"{paths.shown(run / records.CONFIG)}: spec.prompt_set: expected "
                            "the name of the run's prompt set")
    try:
        prompts, _ = ensure_prompt_set(name, None)
    except PromptSetError as err:
        warnings.append(f"{paths.shown(run)}: copy shares not measured: {err}")
        return None
    return {p.id: p.text for p in prompts}


def _stratum(pilot: Sequence[Req], rows: tuple[Sequence[Req], Sequence[Req], Sequence[Req]],
             cost: Cost, *, model_draft: bool, rng: random.Random,
             extras: Sequence[float]) -> dict[str, Any]:
    """A cell's prediction within one stratum of pilot prompts (a point alone below two)."""
    if len(pilot) >= 2:
        cell = predict_cell(pilot, rows, cost, model_draft=model_draft, rng=rng,
                            lookup_extras=extras)
        return {k: cell[k] for k in ("predicted", "lo", "hi", "sign", "n_pilot_prompts")}
    if not pilot:
        return {"predicted": None, "lo": None, "hi": None, "sign": None, "n_pilot_prompts": 0}
    price = statistics.fmean(extras) if extras else 0.0
    x = round(speedup(pilot[0], cost, model_draft=model_draft, lookup_ms=price), 4)
    return {"predicted": x, "lo": None, "hi": None, "sign": "pays" if x > 1 else "loses",
            "n_pilot_prompts": 1}


def _price_doc(p: lookup.Price | None, source: str) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"ms_per_step": round(p.ms, 4), "lo": None if p.lo is None else round(p.lo, 4),
            "hi": None if p.hi is None else round(p.hi, 4), "n_prompts": p.n, "from": source}


def _lookups(root: Path, family: Family,
             warnings: list[str]) -> dict[str, tuple[tuple[float, ...], dict[str, Any]]]:
    """Each n-gram drafter's lookup price from the family's pilots (both tasks' undrafted
    prompts); a drafter with none takes the price pooled over the n-gram drafters, and says so."""
    out: dict[str, tuple[tuple[float, ...], dict[str, Any]]] = {}
    ngram = [d for d in family.drafters if d != MODEL_DRAFTER]
    for d in ngram:
        p = lookup.price(((root / f"pilot-{t}-{d}", root / f"pilot-{t}-none")
                          for t in family.tasks), warnings)
        if p is not None:
            out[d] = (p.extras, _price_doc(p, "its pilots' undrafted prompts") or {})
    if not out:
        raise AnalysisError(f"{paths.shown(root)}: pilot-<task>-<drafter>: no n-gram drafter "
                            "left a pilot prompt undrafted: the lookup cannot be priced")
    pooled = tuple(x for extras, _ in out.values() for x in extras)
    for d in ngram:
        if d not in out:
            warnings.append(f"{paths.shown(root)}: pilot-<task>-{d}: every pilot prompt drafted; "
                            "its lookup priced as the n-gram drafters' pooled price")
            out[d] = (pooled, _price_doc(lookup.price_of(pooled),
                                         "the n-gram drafters' pooled undrafted prompts") or {})
    return out


def build(root: Path, family: Family = SMOLLM2, *, model: str | None = None) -> dict[str, Any]:
    """The family's predictions from its calibration runs under ``root`` (cost model
    ``model``, by default the family's own: v2 for SmolLM2, as committed; v3 for Gemma)."""
    model = model or family.model
    v3 = model == "v3"
    used: dict[str, str] = {}
    left_out: dict[str, int] = {}
    warnings: list[str] = []

    def load(run_id: str) -> list[Req]:
        run = root / run_id
        if not (run / records.RESULTS).is_file():
            raise AnalysisError(f"{paths.shown(run)}: no results; measure "
                                f"{family.calibration} first")
        rows, busy = _requests(run)
        used[run_id] = _sha(run / records.RESULTS)
        if busy:
            left_out[run_id] = busy
        if not rows:
            raise AnalysisError(f"{paths.shown(run)}: no quiet request")
        return rows

    rng = random.Random(SEED)
    costs: dict[str, Any] = {}
    fits: dict[str, tuple[Cost, tuple[list[Req], list[Req], list[Req]]]] = {}
    for t in family.targets:
        none = load(f"cost-{t}-none")
        ks = family.ks or _ks_present(root, t)
        by_k = {k: load(f"cost-{t}-k{k}") for k in ks}
        rounds = [r for k in ks for r in by_k[k] if r.d > 0]
        draft = load(f"cost-{t}-draft-q2k")
        cost = fit_cost(none, rounds, draft)
        fits[t] = (cost, (none, rounds, draft))
        widths = {}
        for k in ks:
            rs = [r for r in by_k[k] if r.d > 0]
            if rs:
                w = sum(r.g + r.d for r in rs) / sum(r.d for r in rs)
                per_round = sum(r.ms - r.plain * cost.c1 for r in rs) / sum(r.d for r in rs)
                widths[str(k)] = {"mean_width": round(w, 2), "round_ms": round(per_round, 2),
                                  "line_ms": round(cost.a + cost.b * w, 2)}
        costs[t] = {"c1_ms": round(cost.c1, 3), "a_ms": round(cost.a, 3),
                    "b_ms": round(cost.b, 3), "line_at_1_ms": round(cost.a + cost.b, 3),
                    "draft_round_ms": round(cost.q, 3), "per_k": widths,
                    "n_rounds_requests": len(rounds)}
    prices = _lookups(root, family, warnings) if v3 else {}
    looping: dict[str, dict[str, loops.Shares]] = {}
    cells = []
    measured_key = f"pilot_measured_{family.pilot_target}"
    for task in family.tasks:
        none_pilot = {r.prompt: r for r in load(f"pilot-{task}-none")}
        if v3:
            run = root / f"pilot-{task}-none"
            looping[task] = loops.run_shares(run, _prompt_texts(run, warnings), warnings)
        for drafter in family.drafters:
            pilot = load(f"pilot-{task}-{drafter}")
            measured = _measured_pilot(pilot, none_pilot)
            model_draft = drafter == MODEL_DRAFTER
            extras = prices[drafter][0] if v3 and not model_draft else ()
            for t in family.targets:
                cost, rows = fits[t]
                cell = predict_cell(pilot, rows, cost, model_draft=model_draft, rng=rng,
                                    lookup_extras=extras)
                out = {"target": t, "task": task, "drafter": drafter, **cell,
                       measured_key: measured if t == family.pilot_target else None}
                if v3:
                    out["lookup_ms_per_token"] = (round(statistics.fmean(extras), 4)
                                                  if extras else None)
                    shares = looping[task]
                    out["strata"] = {
                        name: _stratum([r for r in pilot if r.prompt in shares
                                        and shares[r.prompt].loops is want], rows, cost,
                                       model_draft=model_draft, rng=rng, extras=extras)
                        for name, want in (("looping", True), ("not_looping", False))}
                cells.append(out)
    doc: dict[str, Any] = {
        "schema": SCHEMA, "made_utc": datetime.datetime.now(datetime.UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "method": "artifact/analysis/prediction.py", "new_prompts": NEW_PROMPTS,
        "bootstrap": BOOT, "seed": SEED, "inputs": dict(sorted(used.items())),
        "left_out_contended": left_out, "costs": costs, "cells": cells}
    if v3:
        doc.update(family=family.name, cost_model="v3",
                   lookup={d: p[1] for d, p in sorted(prices.items())},
                   loops={"rule": f"self-repetition >= {loops.LOOP_SHARE} (n = {loops.N})",
                          "by_task": {t: {"summary": loops.summary(sh),
                                          "outputs": {p: {"tokens": s.tokens,
                                                          "self_repetition": s.self_repetition,
                                                          "copy_share": s.copy_share,
                                                          "loops": s.loops}
                                                      for p, s in sh.items()}}
                                      for t, sh in looping.items()}},
                   warnings=sorted(warnings))
    return doc


def _read_core(root: Path, run_id: str, warnings: list[str]) -> Path:
    run = root / run_id
    if not (run / records.RESULTS).is_file():
        raise AnalysisError(f"{paths.shown(run)}: no results; the post-hoc predictions need "
                            "the core runs (experiments/campaigns/core.toml)")
    return run


def posthoc_cells(root: Path = paths.CORE_RUNS) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Cost model v3's post-hoc prediction of every committed SmolLM2 core cell, by (target,
    task, drafter): v2's inputs (pilot runs, cost runs) plus each n-gram drafter's lookup price
    on that target, from the core runs' undrafted prompts of both tasks
    (``<target>-<task>-<drafter>`` against ``<target>-<task>-none``, passes averaged per prompt
    first). Computed after the runs (:data:`POSTHOC_NOTE`); the committed predictions stay."""
    warnings: list[str] = []
    prices: dict[tuple[str, str], tuple[float, ...]] = {}
    for t in TARGETS:
        for d in DRAFTERS:
            if d == MODEL_DRAFTER:
                continue
            p = lookup.price(((_read_core(root, f"{t}-{task}-{d}", warnings),
                               _read_core(root, f"{t}-{task}-none", warnings))
                              for task in TASKS), warnings)
            if p is None:
                raise AnalysisError(f"{paths.shown(root)}: {t}-*-{d}: no undrafted prompt in "
                                    "the core runs: the lookup cannot be priced")
            prices[(t, d)] = p.extras
    rng = random.Random(SEED)
    fits = {}
    for t in TARGETS:
        none = _requests(root / f"cost-{t}-none")[0]
        rounds = [r for k in SMOLLM2.ks or () for r in _requests(root / f"cost-{t}-k{k}")[0]
                  if r.d > 0]
        draft = _requests(root / f"cost-{t}-draft-q2k")[0]
        fits[t] = (fit_cost(none, rounds, draft), (none, rounds, draft))
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for task in TASKS:
        for d in DRAFTERS:
            pilot = _requests(root / f"pilot-{task}-{d}")[0]
            for t in TARGETS:
                cost, rows = fits[t]
                extras = prices.get((t, d), ())
                cell = predict_cell(pilot, rows, cost, model_draft=d == MODEL_DRAFTER, rng=rng,
                                    lookup_extras=extras)
                out[(t, task, d)] = {
                    **{k: cell[k] for k in ("predicted", "lo", "hi", "sign")},
                    "lookup_ms_per_token": (round(statistics.fmean(extras), 4)
                                            if extras else None),
                    "method": "v3-posthoc"}
    return out


@cli
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m artifact.analysis.prediction",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", choices=sorted(FAMILIES), default=SMOLLM2.name,
                    help="the model family (default smollm2: the committed core predictions, "
                    "cost model v2; gemma3: v3 from its own calibration)")
    ap.add_argument("--runs", type=Path, default=None,
                    help="folder of the calibration runs (default: the family's, "
                    "experiments/runs-core or experiments/runs-gemma)")
    ap.add_argument("--out", type=Path, default=None, help="where the predictions go "
                    "(default: experiments/core-predictions.json or gemma-predictions.json)")
    args = ap.parse_args(argv)
    family = FAMILIES[args.family]
    out = args.out or family.out
    doc = build(args.runs or family.runs, family)
    # what the core analysis would refuse (Gemma's tasks and drafters are SmolLM2's names)
    screen_predictions.check(doc, paths.shown(out), targets=family.targets)
    files.write_text(out, json.dumps(doc, indent=1, sort_keys=False) + "\n")
    key = f"pilot_measured_{family.pilot_target}"
    for c in doc["cells"]:
        print(f"{c['target']:6s} {c['task']:6s} {c['drafter']:14s} {c['predicted']:.3f} "
              f"[{c['lo']:.3f}, {c['hi']:.3f}] {c['sign']}"
              + (f"  (pilot measured {c[key]:.3f})" if c[key] is not None else ""))
    for w in doc.get("warnings", []):
        print(f"warning: {w}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
