"""Break-even acceptance of the ksweep runs: the alpha at which drafting pays for itself.

Per ksweep run (pooled and per domain), OLS of tok/s on alpha over per-prompt observations
(a prompt's records averaged), ``tok/s = a + beta * alpha``; the break-even acceptance is where
the line meets the baseline's mean tok/s, ``alpha_be = (baseline - a) / beta``, with Fieller's
interval (:func:`artifact.stats.fieller`: a ratio whose slope may be uncertain; null when
unbounded) and, for comparison, the delta-method interval from the covariance of ``(a, beta)``.

The baseline is the one run of family ``baseline`` with drafter ``none`` whose protocol
matches: target, target_quant, ctx_size, prompt_set_sha256, n_predict and sampling. Its mean
is taken over the prompt ids it shares with the ksweep run (per-prompt means, averaged).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from artifact import stats
from artifact.analysis.reduced import Reduced
from artifact.analysis.runs import PROTOCOL_FIELDS as PROTOCOL_FIELDS
from artifact.analysis.runs import L, describe_diff, protocol_diff
from artifact.contract.summary import BreakevenEntry, Fit, FitStatus

MIN_POINTS = 3


def find_baseline(run: L, runs: Sequence[L]) -> tuple[L | None, FitStatus, str | None]:
    """``(baseline, status, problem)``: the matching baseline run, or why there is none."""
    cands = [r for r in runs if r.desc.family == "baseline" and r.desc.drafter == "none"]
    where = f"run {run.desc.run_id}: breakeven"
    match = [r for r in cands if not protocol_diff(run.desc, r.desc)]
    if len(match) == 1:
        return match[0], "ok", None
    if len(match) > 1:
        names = " and ".join(r.desc.run_id for r in match)
        return None, "ambiguous_baseline", f"{where}: two matching baselines ({names}); no fit"
    if not cands:
        return None, "no_baseline", f"{where}: no baseline run (family baseline, drafter none)"
    nearest = min(cands, key=lambda r: (len(protocol_diff(run.desc, r.desc)), r.desc.run_id))
    return None, "no_baseline", (
        f"{where}: no matching baseline; nearest {nearest.desc.run_id} differs in "
        f"{describe_diff(run.desc, nearest.desc)}"
    )


def _null_fit(n: int, status: FitStatus, base: float | None = None) -> Fit:
    return Fit(
        n=n,
        status=status,
        baseline_tok_per_s=base,
        a=None,
        beta=None,
        r2=None,
        alpha_be=None,
        alpha_be_ci_low=None,
        alpha_be_ci_high=None,
        alpha_be_delta_low=None,
        alpha_be_delta_high=None,
    )


def fit(
    points: Mapping[str, tuple[float, float]],
    baseline: Mapping[str, float] | None,
    *,
    status: FitStatus = "ok",
) -> Fit:
    """Fit one group's per-prompt points against the baseline's per-prompt tok/s.

    ``status`` other than ``"ok"`` (no usable baseline) gives no fit.
    """
    keys = sorted(points)
    n = len(keys)
    if status != "ok" or baseline is None:
        return _null_fit(n, status if status != "ok" else "no_baseline")
    shared = [p for p in keys if p in baseline]
    base = math.fsum(baseline[p] for p in shared) / len(shared) if shared else math.nan
    if n < MIN_POINTS:
        return _null_fit(n, "too_few_points", base)
    x = np.array([points[p][0] for p in keys])
    y = np.array([points[p][1] for p in keys])
    f = stats.ols(x, y)
    if not (math.isfinite(f.a) and math.isfinite(f.beta)) or f.beta == 0.0:
        return _null_fit(n, "degenerate", base)
    be = stats.breakeven(f, base) if shared else None
    # Fieller's interval is unbounded when the slope is within noise of 0: null, said so in
    # the schema, not a value that could not be computed
    lo, hi = stats.fieller(f, base) if shared else (math.nan, math.nan)
    unbounded = bool(shared) and math.isnan(lo)
    return Fit(
        n=n,
        status="ok",
        baseline_tok_per_s=base,
        a=f.a,
        beta=f.beta,
        r2=f.r2,
        alpha_be=be.x if be else math.nan,
        alpha_be_ci_low=None if unbounded else lo,
        alpha_be_ci_high=None if unbounded else hi,
        alpha_be_delta_low=be.low if be else math.nan,
        alpha_be_delta_high=be.high if be else math.nan,
    )


def breakeven_run(run: Reduced, runs: Sequence[Reduced]) -> tuple[BreakevenEntry, list[str]]:
    """Break-even fits of one ksweep run (pooled and per domain) and its warnings."""
    base_run, status, problem = find_baseline(run, runs)
    warnings = [problem] if problem else []
    # a fit of tok/s: contended requests left out (Run.timed, as the reduction's rates)
    points = run.drafted_by_prompt
    base_pp = ({p: t for p, (_, t) in base_run.timed_by_prompt.items()} if base_run else None)
    domain_of = run.domain_of
    pooled = fit(points, base_pp, status=status)
    by_domain = {
        d: fit({p: v for p, v in points.items() if domain_of[p] == d}, base_pp, status=status)
        for d in sorted(set(domain_of.values()))
    }
    n_matched = len(set(points) & set(base_pp)) if base_pp is not None else 0
    if base_pp is not None and n_matched == 0:
        warnings.append(
            f"run {run.desc.run_id}: breakeven: baseline {base_run.desc.run_id if base_run else ''}"
            " shares no prompt id; no break-even"
        )
    return (
        BreakevenEntry(
            baseline_run=base_run.desc.run_id if base_run else None,
            baseline_tok_per_s=pooled["baseline_tok_per_s"],
            n_matched=n_matched,
            ctx_size=run.desc.ctx_size,
            k=run.desc.k,
            drafter=run.desc.drafter,
            pooled=pooled,
            by_domain=by_domain,
        ),
        warnings,
    )
