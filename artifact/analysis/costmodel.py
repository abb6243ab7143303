"""The cost model of speculative decoding: a round's cost from measured forward times (issue 16).

Inputs: the step costs of each model (``experiments/runs-cost/<model>/steps.jsonl``, written by
:mod:`artifact.campaign.stepcost`: the server's ``prompt_ms`` of one forward pass over n tokens on
a cached prefix), and the counters of each drafted run of the CPU study (``metrics.json``'s
``/metrics`` deltas).

**Inputs checked** (:func:`read_costs`, by the rules of :mod:`artifact.analysis.validate`): one
folder per model (a second folder naming the same model is left out, both named); a row whose
step time is not finite, not above 0 or absurd, or whose width is not a count, is refused,
named by file, line and field; repeated (n, rep) rows keep the first copy; a model measured at
fewer than two distinct widths has no line to fit, and no fit (null, with a warning). Every such
finding is one line of ``costmodel.json``'s ``warnings``, classed by
:mod:`artifact.warning_classes` (a left-out folder, a refused or repeated row fail
``doit verify --strict``).

**Step cost.** Per model, the median ``prompt_ms`` at each n (clean requests only: ``prompt_n``
equal to n and the prefix found in the cache) and the least-squares line through those medians,
``c(n) = a + b·n``: ``a`` is what a forward pass costs whatever its width (weights read, fixed
overhead), ``b`` what each further token adds. Every cost below is read off the line, so
``c(1) = a + b``.

**A run's time.** A run generated N tokens (sum of ``timings.predicted_n``) in D verification
rounds that carried G drafted tokens, A of them accepted (``spec_decode_num_drafts_total``,
``..._num_draft_tokens_total``, ``..._accepted_tokens_total``). A round of g drafted tokens
yields its accepted tokens plus one, so N - A - D tokens came from undrafted steps. Then

    T  = (N - A - D)·c_t(1)  +  D·a_t + b_t·(G + D)  +  G·c_d(1)
    T0 = N·c_t(1)            predicted speedup = T0 / T

where the target verifies g + 1 tokens per round (summed over rounds: ``D·a_t + b_t·(G + D)``)
and a draft model runs one forward pass per drafted token (``G·c_d(1)``). An n-gram drafter's
lookup is taken as free (no forward pass; its cost is CPU work in the server that this model
does not see), so for those runs ``G·c_d(1) = 0``. What the model leaves out, and a measured
speedup below the prediction points to: the draft model's own prefill and its catching up on
accepted tokens, sampling and bookkeeping per round, and the server's work outside forward passes.

>>> t = StepFit(a_ms=10.0, b_ms=2.0, r2=1.0, n_points=3)
>>> # c(1) = 12; T0 = 100·12 = 1200; T = (100-40-20)·12 + 20·10 + 2·(60+20) + 60·12
>>> round(predict(n=100, d=20, g=60, a=40, target=t, draft=t), 4)  # 1200 / 1560
0.7692
>>> round(predict(n=100, d=20, g=60, a=40, target=t, draft=None), 4)  # 1200 / (1560 - 720)
1.4286
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import files, paths, records
from artifact.analysis import validate
from artifact.analysis.runs import Run, load_run
from artifact.errors import AnalysisError
from artifact.stats import ols

SCHEMA_VERSION = 1
STEPS = "steps.jsonl"  # mirrors artifact.campaign.stepcost.STEPS (analysis never imports campaign)
STUDY_FAMILIES = ("final", "curves", "ksweep")  # the CPU study's drafted runs
MIN_WIDTHS = 2  # distinct n a line needs
DRAFTS = "spec_decode_num_drafts_total"
DRAFT_TOKENS = "spec_decode_num_draft_tokens_total"
ACCEPTED = "spec_decode_num_accepted_tokens_total"


@dataclass(frozen=True, kw_only=True)
class StepFit:
    """``c(n) = a + b·n`` in ms, fitted to per-n medians."""

    a_ms: float
    b_ms: float
    r2: float
    n_points: int

    def cost_ms(self, n: int | float) -> float:
        """Forward time of one pass over ``n`` tokens.

        >>> StepFit(a_ms=10.0, b_ms=2.0, r2=1.0, n_points=2).cost_ms(4)
        18.0
        """
        return self.a_ms + self.b_ms * n


@dataclass(frozen=True, kw_only=True)
class ModelCost:
    """One model's step costs: the per-n medians, the fit, and what was left out."""

    model: str
    per_n: list[dict[str, float | int]]  # {"n", "median_ms", "count"}, by n
    fit: StepFit | None  # None: fewer than MIN_WIDTHS distinct n, no line to fit
    n_rows: int  # rows of steps.jsonl taken (refused ones are warnings)
    n_flagged: int  # left out: prompt_n != n, prefix not cached, or no timing
    n_contended: int  # kept (medians); a ~20 ms window's foreign CPU is tick-quantized
    foreign_cores_mean: float | None  # over the rows that carry it; None when none does


def per_n_medians(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, float | int]]:
    """Median ``prompt_ms`` per n over the clean rows (``problem`` null).

    >>> per_n_medians([{"n": 2, "prompt_ms": 5.0, "problem": None},
    ...                {"n": 1, "prompt_ms": 3.0, "problem": None},
    ...                {"n": 1, "prompt_ms": 4.0, "problem": None},
    ...                {"n": 1, "prompt_ms": 99.0, "problem": "prompt_n 9 != n 1"}])
    [{'count': 2, 'median_ms': 3.5, 'n': 1}, {'count': 1, 'median_ms': 5.0, 'n': 2}]
    """
    by_n: dict[int, list[float]] = {}
    for r in rows:
        if r.get("problem") is None and _is_num(r.get("prompt_ms")) and isinstance(r.get("n"), int):
            by_n.setdefault(int(r["n"]), []).append(float(r["prompt_ms"]))
    return [{"count": len(v), "median_ms": statistics.median(v), "n": n}
            for n, v in sorted(by_n.items())]


def fit_steps(per_n: Sequence[Mapping[str, float | int]]) -> StepFit:
    """The least-squares line through the per-n medians.

    >>> f = fit_steps([{"n": n, "median_ms": 9.0 + 8.0 * n} for n in (1, 2, 3, 4)])
    >>> f.a_ms, f.b_ms, f.r2, f.n_points
    (9.0, 8.0, 1.0, 4)
    """
    f = ols([float(p["n"]) for p in per_n], [float(p["median_ms"]) for p in per_n])
    return StepFit(a_ms=f.a, b_ms=f.beta, r2=f.r2, n_points=f.n)


def model_cost(model: str, rows: Sequence[Mapping[str, Any]]) -> ModelCost:
    """Medians, fit and counts of one model's ``steps.jsonl`` rows; no fit (None) below
    :data:`MIN_WIDTHS` distinct widths.

    >>> model_cost("m", [{"n": 1, "prompt_ms": 3.0, "problem": None}]).fit is None
    True
    """
    medians = per_n_medians(rows)
    foreign = [float(c["foreign_cores"]) for r in rows
               if isinstance(c := r.get("contention"), Mapping) and _is_num(c.get("foreign_cores"))]
    return ModelCost(
        model=model, per_n=medians, fit=fit_steps(medians) if len(medians) >= MIN_WIDTHS else None,
        n_rows=len(rows),
        n_flagged=sum(r.get("problem") is not None for r in rows),
        n_contended=sum(r.get("contended") is True for r in rows),
        foreign_cores_mean=statistics.fmean(foreign) if foreign else None)


def predict(*, n: float, d: float, g: float, a: float, target: StepFit,
            draft: StepFit | None) -> float:
    """Predicted speedup ``T0 / T`` of a run with N tokens, D rounds, G drafted, A accepted
    (``draft`` None: an n-gram drafter, whose drafting costs no forward pass)."""
    c1 = target.cost_ms(1)
    undrafted = n - a - d
    t = undrafted * c1 + d * target.a_ms + target.b_ms * (g + d)
    if draft is not None:
        t += g * draft.cost_ms(1)
    return (n * c1) / t if t > 0 else math.nan


def _is_num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


@dataclass(frozen=True, kw_only=True)
class Counters:
    n: int  # generated tokens, sum of predicted_n
    d: float  # verification rounds with a draft
    g: float  # drafted tokens
    a: float  # accepted tokens


def counters(run: Run) -> Counters | None:
    """A run's N, D, G and A; None when ``metrics.json`` lacks a counter."""
    delta = (run.metrics or {}).get("metrics_delta") or {}
    vals: list[Any] = [delta.get(k) for k in (DRAFTS, DRAFT_TOKENS, ACCEPTED)]
    nums = [float(v) for v in vals if _is_num(v)]
    if len(nums) != len(vals):
        return None
    d, g, a = nums
    return Counters(n=sum(r.timings.predicted_n for r in run.records), d=d, g=g, a=a)


def run_entry(run: Run, costs: Mapping[str, ModelCost],
              measured: Mapping[str, Any] | None) -> dict[str, Any]:
    """One drafted run: its counters, the predicted speedup and the measured one (or why not)."""
    desc = run.desc
    c = counters(run)
    entry: dict[str, Any] = {
        "drafter": desc.drafter, "label": desc.label, "family": desc.family, "k": desc.k,
        "target_model": desc.target_model, "draft_model": desc.draft_model,
        "draft_quant": desc.draft_quant,
        "draft_cost": "model" if desc.draft_model else "none (n-gram lookup, no forward pass)",
        "N": None, "D": None, "G": None, "A": None, "acceptance": None, "mean_draft": None,
        "predicted_speedup": None, "reason": None, "extrapolated": None,
        "measured_speedup": None, "measured_ratio_of_means": None,
    }
    if measured is not None:
        entry["measured_speedup"] = measured.get("mean_ratio")
        entry["measured_ratio_of_means"] = measured.get("ratio_of_means")
    if c is None:
        entry["reason"] = "metrics.json has no speculative-decoding counters"
        return entry
    entry.update({"N": c.n, "D": c.d, "G": c.g, "A": c.a,
                  "acceptance": c.a / c.g if c.g else None,
                  "mean_draft": c.g / c.d if c.d else None})
    target = costs.get(desc.target_model or "")
    draft = costs.get(desc.draft_model) if desc.draft_model else None
    if target is None:
        entry["reason"] = f"no step costs measured for the target {desc.target_model}"
    elif desc.draft_model and draft is None:
        entry["reason"] = f"no step costs measured for the draft {desc.draft_model}"
    elif target.fit is None:
        entry["reason"] = f"the step costs of the target {desc.target_model} cannot be fitted"
    elif draft is not None and draft.fit is None:
        entry["reason"] = f"the step costs of the draft {desc.draft_model} cannot be fitted"
    else:
        entry["predicted_speedup"] = predict(n=c.n, d=c.d, g=c.g, a=c.a, target=target.fit,
                                             draft=draft.fit if draft else None)
        widest = max((int(p["n"]) for p in target.per_n), default=0)
        # the mean round verifies more tokens than were measured: its cost is extrapolated
        entry["extrapolated"] = bool(c.d and c.g / c.d + 1 > widest)
    return entry


def model_entry(mc: ModelCost) -> dict[str, Any]:
    """One model of ``costmodel.json``: its fit (null fields when it has none) and counts."""
    f = mc.fit
    return {"a_ms": f.a_ms if f else None, "b_ms": f.b_ms if f else None,
            "r2": f.r2 if f else None, "n_points": f.n_points if f else len(mc.per_n),
            "c1_ms": f.cost_ms(1) if f else None, "per_n": mc.per_n,
            "n_rows": mc.n_rows, "n_flagged": mc.n_flagged, "n_contended": mc.n_contended,
            "foreign_cores_mean": mc.foreign_cores_mean}


def unfitted(costs: Mapping[str, ModelCost]) -> list[str]:
    """One warning per model with too few distinct widths for a line (its fit is null).

    >>> (w,) = unfitted({"m": model_cost("m", [{"n": 1, "prompt_ms": 3.0, "problem": None}])})
    >>> print(w.replace(": ", ":\\n"))
    costmodel:
    model m:
    step cost not computable, written as null:
    1 distinct width (n = 1) among its clean rows, a line needs 2
    """
    out = []
    for k in sorted(costs):
        mc = costs[k]
        if mc.fit is None:
            ns = ", ".join(str(p["n"]) for p in mc.per_n)
            out.append(f"costmodel: model {k}: step cost not computable, written as null: "
                       f"{len(mc.per_n)} distinct width{'' if len(mc.per_n) == 1 else 's'}"
                       f"{f' (n = {ns})' if ns else ''} among its clean rows, a line needs "
                       f"{MIN_WIDTHS}")
    return out


def build(costs: Mapping[str, ModelCost], runs: Sequence[Run],
          speedups: Mapping[str, Any], warnings: Sequence[str] = ()) -> dict[str, Any]:
    """``costmodel.json``'s content (floats rounded to 6 significant digits, NaN to null);
    ``warnings``: what reading the inputs found (:func:`read_costs`), with the models that
    cannot be fitted (:func:`unfitted`), sorted, once each."""
    drafted = [r for r in runs if r.desc.family in STUDY_FAMILIES and r.desc.drafter != "none"]
    data = {
        "schema": SCHEMA_VERSION,
        "fit": "ordinary least squares through the per-n medians of prompt_ms",
        "models": {k: model_entry(costs[k]) for k in sorted(costs)},
        "runs": {r.desc.run_id: run_entry(r, costs, (speedups.get(r.desc.run_id) or {})
                                          .get("overall")) for r in drafted},
        "warnings": sorted({*warnings, *unfitted(costs)}),
    }
    plain: dict[str, Any] = files.to_plain(data)
    return plain


# --- reading (the edges) ---------------------------------------------------------------------


def steps_files(root: Path = paths.COST_RUNS) -> list[Path]:
    """Every ``<root>/<model>/steps.jsonl``, sorted."""
    return [p / STEPS for p in records.run_folders(root) if (p / STEPS).is_file()]


def read_costs(root: Path = paths.COST_RUNS) -> tuple[dict[str, ModelCost], list[str]]:
    """Each model's :class:`ModelCost`, keyed by the model key its ``config.json`` names, and
    one warning line per finding: a second folder of the same model (left out; the folder named
    after the key is kept, else the first by name), unreadable lines, refused and repeated rows
    (:func:`artifact.analysis.validate.screen_steps`). A folder whose ``config.json`` names no
    model is an :class:`AnalysisError`."""
    found: list[tuple[str, Path]] = []
    for steps in steps_files(root):
        try:
            model = records.read_json(steps.parent / records.CONFIG).get("model")
        except records.RecordError as err:
            raise AnalysisError(f"{steps.parent.name}: {err}") from err
        if not isinstance(model, str) or not model:
            raise AnalysisError(f"{steps.parent.name}/{records.CONFIG}: model: expected the "
                                f"model key (a string), got {model!r}")
        found.append((model, steps))
    warnings: list[str] = []
    kept = validate.unique_runs(found, run_id=lambda m: m[0], folder=lambda m: m[1].parent,
                                warnings=warnings, what="model")
    out: dict[str, ModelCost] = {}
    for model, steps in kept:
        rows = validate.screen_steps(list(records.iter_jsonl_numbered(steps)),
                                     f"{steps.parent.name}/{STEPS}", warnings)
        out[model] = model_cost(model, rows)
    return out, warnings


def study_runs(root: Path = paths.RUNS) -> list[Run]:
    """The CPU study's drafted runs under ``root`` (families final, curves, ksweep)."""
    out = []
    for config in (p / records.CONFIG for p in records.run_folders(root)):
        if not config.is_file():
            continue
        spec = records.read_json(config).get("spec", {})
        if spec.get("family") in STUDY_FAMILIES and spec.get("drafter") != "none":
            out.append(load_run(config.parent))
    return out


def read_speedups(summary: Path = paths.SUMMARY) -> dict[str, Any]:
    """``summary.json``'s speedup section; empty when the summary is not there."""
    if not summary.exists():
        return {}
    sp = records.read_json(summary).get("speedup", {})
    return sp if isinstance(sp, dict) else {}


def write(steps_root: Path, runs_root: Path, summary: Path, out: Path) -> dict[str, Any]:
    """Build ``costmodel.json`` from the files and write it atomically (canonical bytes)."""
    costs, warnings = read_costs(steps_root)
    data = build(costs, study_runs(runs_root), read_speedups(summary), warnings)
    files.write_json(out, data)
    return data
