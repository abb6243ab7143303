"""Per-configuration statistics of the final runs, and speedups against their no-draft run."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from artifact import records, stats
from artifact.analysis.logs import LogEntry
from artifact.analysis.runs import L, Run, describe_diff, protocol_diff
from artifact.contract.summary import Center, FinalEntry, Location, Ratios, SpeedupEntry, Stats


def _loc(values: Sequence[float]) -> Location:
    s = stats.summarize(np.asarray(values, dtype=np.float64))
    return Location(mean=s.mean, median=s.median, p95=s.p95)


def _center(values: Sequence[float]) -> Center:
    s = stats.summarize(np.asarray(values, dtype=np.float64))
    return Center(mean=s.mean, median=s.median)


def gpu_peaks(vram: Mapping[str, Any] | None) -> tuple[float | None, float | None]:
    """Peak memory (MiB) and power (W) from ``vram.json``; ``None`` when no GPU was measured.

    >>> gpu_peaks({"gpu_present": True, "samples": [
    ...     {"t_s": 0, "mem_used_mib": 10, "power_w": 50}, {"t_s": 1, "mem_used_mib": 12,
    ...     "power_w": None}]})
    (12.0, 50.0)
    >>> gpu_peaks({"gpu_present": False, "reason": "no nvidia-smi"})
    (None, None)
    """
    if not vram or not vram.get("gpu_present"):
        return (None, None)
    samples = vram.get("samples") or []

    def peak(key: str) -> float | None:
        vals = [
            float(s[key])
            for s in samples
            if isinstance(s, Mapping) and isinstance(s.get(key), int | float)
        ]
        return max(vals) if vals else None

    return (peak("mem_used_mib"), peak("power_w"))


def _stats(
    recs: Sequence[records.Result],
    entries: Sequence[LogEntry | None],
    *,
    drafted: bool,
    tau_ok: bool,
    n_errors: int,
    peaks: tuple[float | None, float | None],
    duration_s: float | None,
) -> Stats:
    tau: float | None = None
    if drafted and tau_ok:
        lens = [e.mean_len for e in entries if e is not None and e.mean_len is not None]
        tau = float(np.mean(lens)) if lens else math.nan
    alphas = [r.alpha for r in recs if r.alpha is not None]
    return Stats(
        n=len(recs),
        n_drafted=len(alphas),
        alpha_pooled=_pooled(recs) if drafted else None,
        # timing statistics leave contended requests out; acceptance keeps them
        tok_per_s=_loc([r.timings.predicted_per_second for r in recs if r.contended is not True]),
        alpha=_center(alphas) if drafted else None,
        tau_mean=tau,
        ttft_ms=_loc([r.ttft_ms for r in recs
                      if r.ttft_ms is not None and r.contended is not True]),
        peak_gpu_mem_mib=peaks[0],
        peak_power_w=peaks[1],
        duration_s=duration_s,
        n_errors=n_errors,
    )


def _pooled(recs: Sequence[records.Result]) -> float | None:
    """Accepted over drafted tokens, each summed over the requests; None when none drafted.

    >>> from types import SimpleNamespace as R
    >>> rs = [R(timings=R(draft_n=g, draft_n_accepted=a)) for a, g in ((1, 4), (9, 12))]
    >>> _pooled(rs), _pooled(rs[:0])  # (1 + 9) / (4 + 12); the mean per request is 0.5
    (0.625, None)
    """
    drafted = sum(r.timings.draft_n or 0 for r in recs)
    accepted = sum(r.timings.draft_n_accepted or 0 for r in recs if r.timings.draft_n)
    return accepted / drafted if drafted else None


def final_stats(run: Run, entry_of: Sequence[LogEntry | None], *, pairing_ok: bool) -> FinalEntry:
    """Stats of one run, overall and per domain, over its non-spurious records.

    GPU peaks and duration are run-level: they appear in ``overall`` and are ``None`` per
    domain. A domain's errors are those of prompts whose domain a record shows.
    """
    keep = [i for i, bad in enumerate(run.spurious) if not bad]
    drafted = run.desc.drafter != "none"
    measure = (run.metrics or {}).get("measure_s")
    duration = float(measure) if isinstance(measure, int | float) else math.nan
    domain_of = {r.prompt_id: r.domain for r in run.records}
    errors_by_domain: dict[str, int] = defaultdict(int)
    for e in run.errors:
        d = domain_of.get(str(e.get("prompt_id")))
        if d is not None:
            errors_by_domain[d] += 1
    overall = _stats(
        [run.records[i] for i in keep],
        [entry_of[i] for i in keep],
        drafted=drafted,
        tau_ok=pairing_ok,
        n_errors=len(run.errors),
        peaks=gpu_peaks(run.vram),
        duration_s=duration,
    )
    groups: dict[str, list[int]] = defaultdict(list)
    for i in keep:
        groups[run.records[i].domain].append(i)
    by_domain = {
        d: _stats(
            [run.records[i] for i in idx],
            [entry_of[i] for i in idx],
            drafted=drafted,
            tau_ok=pairing_ok,
            n_errors=errors_by_domain.get(d, 0),
            peaks=(None, None),
            duration_s=None,
        )
        for d, idx in sorted(groups.items())
    }
    return FinalEntry(overall=overall, by_domain=by_domain)


def per_key_rate(recs: Sequence[records.Result]) -> dict[tuple[str, int], float]:
    """Mean tok/s per ``(prompt_id, repeat)`` (duplicates of a key are averaged)."""
    acc: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in recs:
        acc[r.key].append(r.timings.predicted_per_second)
    return {k: math.fsum(v) / len(v) for k, v in acc.items()}


def _speedup(num: Mapping[Any, float], den: Mapping[Any, float]) -> Ratios:
    m = stats.matched_ratios(num, den)
    return Ratios(
        n_matched=m.n_matched,
        mean_ratio=m.mean_ratio,
        median_ratio=m.median_ratio,
        ratio_of_means=m.ratio_of_means,
    )


def speedup(rates: Mapping[str | None, Mapping[tuple[str, int], float]],
            baseline: Mapping[str | None, Mapping[tuple[str, int], float]],
            baseline_run: str) -> SpeedupEntry:
    """tok/s of a run over ``baseline``, matched per ``(prompt_id, repeat)``: ``rates`` and
    ``baseline`` are :func:`per_key_rate` of each run's timed records (contended requests carry
    no timing: Run.timed), under None for all of them and under each domain for its own."""
    base = baseline[None]
    overall = _speedup(rates[None], base)
    by_domain = {d: _speedup(rates[d], base) for d in sorted(k for k in rates if k is not None)}
    return SpeedupEntry(baseline_run=baseline_run, overall=overall, by_domain=by_domain)


def speedup_baseline(run: L, finals: Sequence[L]) -> tuple[L | None, str | None]:
    """The final no-draft run with the same protocol (:data:`PROTOCOL_FIELDS`: model, context,
    prompt set, answer length, sampling), or a one-line problem naming what differs."""
    where = f"run {run.desc.run_id}: speedup"
    cands = [b for b in finals if b.desc.drafter == "none"]
    match = [b for b in cands if not protocol_diff(run.desc, b.desc)]
    if len(match) == 1:
        return match[0], None
    if len(match) > 1:
        names = ", ".join(b.desc.run_id for b in match)
        return None, (f"{where}: several final no-draft baselines with the same protocol "
                      f"({names}); keep one; no speedup")
    if not cands:
        return None, f"{where}: no final no-draft run (family final, drafter none); no speedup"
    nearest = min(cands, key=lambda b: (len(protocol_diff(run.desc, b.desc)), b.desc.run_id))
    return None, (f"{where}: baseline {nearest.desc.run_id} measured another protocol: "
                  f"{describe_diff(run.desc, nearest.desc)}; no speedup")
