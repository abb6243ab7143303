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
from artifact.analysis.validate import predictions as screen_predictions
from artifact.errors import AnalysisError, cli

SCHEMA = 1
OUT = paths.CORE_PREDICTIONS
TARGETS = ("q4_1", "q8_0", "f16")
TASKS = ("study", "edit")
DRAFTERS = ("ngram-mod", "ngram-mod-k16", "ngram-simple", "draft-q2k")
NEW_PROMPTS = 30  # prompts per task in the campaign
BOOT = 2000
SEED = 29
DRAFTS = "spec_decode_num_drafts_total"


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


def speedup(r: Req, cost: Cost, *, model_draft: bool) -> float:
    """Predicted ``T0 / T`` of one pilot request on a target of cost ``cost``."""
    t0 = (r.n - 1) * cost.c1
    t = r.plain * cost.c1 + cost.verify(r.g, r.d) + (r.d * cost.q if model_draft else 0.0)
    return t0 / t


def _t975(df: int) -> float:
    from artifact.stats import t_quantile  # numpy: imported here, `doit` loads this package

    return t_quantile(0.975, df)


def predict_cell(pilot: Sequence[Req], cost_rows: tuple[Sequence[Req], Sequence[Req],
                 Sequence[Req]], cost: Cost, *, model_draft: bool,
                 rng: random.Random) -> dict[str, Any]:
    per = [speedup(r, cost, model_draft=model_draft) for r in pilot]
    mean = statistics.fmean(per)
    boots = []
    none, rounds, draft = cost_rows
    for _ in range(BOOT):
        c = fit_cost([rng.choice(none) for _ in none], [rng.choice(rounds) for _ in rounds],
                     [rng.choice(draft) for _ in draft])
        ps = [rng.choice(pilot) for _ in pilot]
        boots.append(statistics.fmean(speedup(r, c, model_draft=model_draft) for r in ps))
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


def build(root: Path) -> dict[str, Any]:
    used: dict[str, str] = {}
    left_out: dict[str, int] = {}

    def load(run_id: str) -> list[Req]:
        run = root / run_id
        if not (run / records.RESULTS).is_file():
            raise AnalysisError(f"{paths.shown(run)}: no results; measure "
                                "experiments/campaigns/core-calibration.toml first")
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
    for t in TARGETS:
        none = load(f"cost-{t}-none")
        ks = (1, 2, 3, 4, 8, 16, 32, 64)
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
    cells = []
    for task in TASKS:
        none_pilot = {r.prompt: r for r in load(f"pilot-{task}-none")}
        for drafter in DRAFTERS:
            pilot = load(f"pilot-{task}-{drafter}")
            measured = _measured_pilot(pilot, none_pilot)
            for t in TARGETS:
                cost, rows = fits[t]
                cell = predict_cell(pilot, rows, cost, model_draft=drafter == "draft-q2k",
                                    rng=rng)
                cells.append({"target": t, "task": task, "drafter": drafter, **cell,
                              "pilot_measured_q4_1": measured if t == "q4_1" else None})
    return {"schema": SCHEMA, "made_utc": datetime.datetime.now(datetime.UTC).strftime(
                "%Y-%m-%dT%H:%M:%SZ"),
            "method": "artifact/analysis/prediction.py", "new_prompts": NEW_PROMPTS,
            "bootstrap": BOOT, "seed": SEED, "inputs": dict(sorted(used.items())),
            "left_out_contended": left_out, "costs": costs, "cells": cells}


@cli
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m artifact.analysis.prediction",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=Path, default=paths.CORE_RUNS,
                    help="folder of the calibration runs (default experiments/runs-core)")
    ap.add_argument("--out", type=Path, default=OUT, help="where the predictions go "
                    "(default experiments/core-predictions.json)")
    args = ap.parse_args(argv)
    doc = build(args.runs)
    screen_predictions.check(doc, paths.shown(args.out))  # what the core analysis would refuse
    files.write_text(args.out, json.dumps(doc, indent=1, sort_keys=False) + "\n")
    for c in doc["cells"]:
        print(f"{c['target']:5s} {c['task']:6s} {c['drafter']:14s} {c['predicted']:.3f} "
              f"[{c['lo']:.3f}, {c['hi']:.3f}] {c['sign']}"
              + (f"  (pilot measured {c['pilot_measured_q4_1']:.3f})"
                 if c["pilot_measured_q4_1"] is not None else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
