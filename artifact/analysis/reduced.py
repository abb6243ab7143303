"""One run reduced to what ``summary.json`` needs of it: statistics, not records.

Every number of the summary that comes from one run's records alone is computed here, once per
run: its entry under ``runs`` (with the server-log pairing), its own warnings, its final-family
statistics, its per-position acceptance with bootstrap intervals, and the per-key and
per-prompt rates that speedups and break-even fits match against another run's. What is left to
the summary (:func:`artifact.analysis.summary.analyse`) works on these reductions: choosing each
run's baseline, matching the rates, pooling the environment. So a reduction kept by content
(:func:`artifact.analysis.runcache.load_reduced`) stands for the whole run, and adding one run
to a thousand reads and reduces one run.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from artifact import records
from artifact.analysis import final as _final
from artifact.analysis import parts as _parts
from artifact.analysis import positions as _positions
from artifact.analysis.logs import Pairing, pair
from artifact.analysis.params import Bootstrap
from artifact.analysis.runs import Run, RunDescription
from artifact.contract import summary as contract
from artifact.contract.summary import FinalEntry, LogPairing, PositionsEntry, RunEntry

Rates = dict[tuple[str, int], float]
# the families whose rates a speedup or a control matches (summary.analyse)
RATE_FAMILIES = frozenset({"final", "control", "baseline"})
PerPrompt = dict[str, tuple[float, float]]


@dataclass(frozen=True, kw_only=True)
class Reduced:
    """A run's share of the summary (see the module's docstring); ``path``, ``desc``,
    ``metrics`` and ``problems`` are the loaded run's own."""

    path: Path
    desc: RunDescription
    metrics: dict[str, Any] | None
    problems: list[str]
    warnings: list[str]  # the run's own warnings, as the summary states them
    # tok/s per (prompt id, repeat) of the timed records: None -> all of them, else one domain
    # (RATE_FAMILIES only; empty for the others)
    rates: dict[str | None, Rates]
    drafted_by_prompt: PerPrompt  # per prompt: (mean alpha, mean tok/s) with an alpha (ksweep)
    timed_by_prompt: PerPrompt  # the same over every timed record (baseline)
    domain_of: dict[str, str]  # prompt id -> domain, of the timed records (ksweep)
    # section -> the run's entry there, plain, checked and rendered: what the summary splices
    # in (:mod:`artifact.analysis.parts`); runs, and final or positions where the run has one
    parts: dict[str, _parts.Part]

    @property
    def entry(self) -> RunEntry:
        """The run's entry under ``runs`` (plain: floats rounded, not computable ones None)."""
        value: RunEntry = self.parts["runs"].value
        return value

    @property
    def final(self) -> FinalEntry | None:
        """Family final only: the run's statistics (plain)."""
        part = self.parts.get("final")
        return None if part is None else part.value

    @property
    def positions(self) -> PositionsEntry | None:
        """Curves and ksweep runs that drafted, paired with the log: per-position acceptance
        (plain)."""
        part = self.parts.get("positions")
        return None if part is None else part.value


def _mean_load(metrics: Mapping[str, Any] | None) -> float | None:
    loads = (metrics or {}).get("model_load_s")
    vals = [float(v) for v in loads or [] if isinstance(v, int | float)]
    return math.fsum(vals) / len(vals) if vals else None


def _contention(run: Run) -> contract.Contention | None:
    """The run's contention over its included records, or None when none carries it."""
    got = [r.contention for r in run.included if r.contention is not None]
    if not got:
        return None
    fc = np.asarray([float(c["foreign_cores"]) for c in got if "unavailable" not in c])
    m = run.metrics or {}
    th = (m.get("contention") or {}).get("threshold_cores")
    gates = m.get("gates")

    def vals(key: str) -> list[float]:
        return [float(c[key]) for c in got if isinstance(c.get(key), int | float)]

    def stat(xs: list[float], f: Any) -> float | None:
        return float(f(xs)) if xs else None

    return {
        "n": len(got),
        "n_unavailable": len(got) - len(fc),
        "n_contended": run.n_contended,
        "threshold_cores": float(th) if isinstance(th, int | float) else None,
        "foreign_cores_mean": float(fc.mean()) if fc.size else None,
        "foreign_cores_median": float(np.median(fc)) if fc.size else None,
        "foreign_cores_p95": float(np.percentile(fc, 95)) if fc.size else None,
        "foreign_cores_max": float(fc.max()) if fc.size else None,
        "steal_cores_max": stat(vals("steal_cores"), max),
        "load1_max": stat(vals("load1"), max),
        "cpu_mhz_min": stat(vals("cpu_mhz"), min),
        "cpu_mhz_max": stat(vals("cpu_mhz"), max),
        "gate_passed": (all(bool(g.get("passed")) for g in gates if isinstance(g, Mapping))
                        if isinstance(gates, list) and gates else None),
    }


def run_entry(run: Run, pairing: Pairing) -> RunEntry:
    """The run's entry under ``runs`` of the summary."""
    d = run.desc
    m = run.metrics or {}
    measure = m.get("measure_s")
    return {
        "family": d.family,
        "target": d.target,
        "target_quant": d.target_quant,
        "drafter": d.drafter,
        "draft_model": d.draft_model,
        "draft_quant": d.draft_quant,
        "k": d.k,
        "p_min": d.p_min,
        "ctx_size": d.ctx_size,
        "n_predict": d.n_predict,
        "prompt_set": d.prompt_set,
        "prompt_set_sha256": d.prompt_set_sha256,
        "sampling": d.sampling,
        "concurrency": d.concurrency,
        "label": d.label,
        "n_records": len(run.records),
        "n_excluded": run.n_excluded,
        "n_bad_lines": run.n_bad_lines,
        "n_errors": len(run.errors),
        "complete": bool(m.get("complete", False)),
        "measure_s": float(measure) if isinstance(measure, int | float) else math.nan,
        "model_load_s": _mean_load(run.metrics),
        "log_pairing": LogPairing(
            n_lines=pairing.n_lines,
            n_records=pairing.n_records,
            max_abs_alpha_diff=pairing.max_abs_alpha_diff,
            ok=pairing.ok,
        ),
        "interleave": d.interleave,
        "contention": _contention(run),
    }


def per_prompt(recs: Sequence[records.Result], *, drafted: bool) -> dict[str, tuple[float, float]]:
    """Per prompt id: (mean alpha, mean tok/s); with ``drafted`` only records with an alpha."""
    acc: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in recs:
        if drafted and r.alpha is None:
            continue
        acc[r.prompt_id].append(
            (r.alpha if r.alpha is not None else math.nan, r.timings.predicted_per_second)
        )
    return {
        p: (math.fsum(a for a, _ in v) / len(v), math.fsum(t for _, t in v) / len(v))
        for p, v in acc.items()
    }


def _pairing(run: Run) -> Pairing:
    rid = run.desc.run_id
    if run.log is not None and run.desc.drafter != "none":
        return pair(run.records, run.log, where=rid)
    n_alpha = sum(r.alpha is not None for r in run.records)
    return Pairing(
        n_lines=0,
        n_records=n_alpha,
        max_abs_alpha_diff=None,
        ok=n_alpha == 0,
        entry_of=[None] * len(run.records),
        problem=(None if n_alpha == 0
                 else f"run {rid}: no server.log for {n_alpha} record(s) with alpha"),
    )


def _positions_of(run: Run, p: Pairing, bootstrap: Bootstrap) -> PositionsEntry | None:
    """Per-position acceptance of a run's included records and their paired log entries."""
    keep = [i for i, bad in enumerate(run.spurious) if not bad]
    return _positions.position_stats(run.desc.run_id, [run.records[i] for i in keep],
                                     [p.entry_of[i] for i in keep], bootstrap=bootstrap)


def reduce(run: Run, bootstrap: Bootstrap) -> Reduced:
    """The reduction of a loaded run (``bootstrap``: the per-position intervals' parameters)."""
    rid = run.desc.run_id
    p = _pairing(run)
    warnings = [p.problem] if p.problem else []
    if not run.records:
        warnings.append(f"run {rid}: no readable records ({len(run.errors)} error(s))")
    elif run.n_excluded == len(run.records):
        warnings.append(f"run {rid}: every record excluded for spurious timings")
    entry = run_entry(run, p)
    if run.n_contended:
        ce = entry["contention"]
        th = ce["threshold_cores"] if ce is not None else None
        warnings.append(f"run {rid}: {run.n_contended} of {len(run.included)} request(s) "
                        "contended (foreign CPU above "
                        + (f"{th:g} cores" if th is not None else "the run's threshold")
                        + "); left out of timing statistics, kept for acceptance")
    final = (_final.final_stats(run, p.entry_of, pairing_ok=p.ok)
             if run.desc.family == "final" else None)
    positions = None
    if run.desc.family in ("curves", "ksweep") and run.desc.drafter != "none" and p.ok:
        positions = _positions_of(run, p, bootstrap)
        if positions is None and p.n_records:
            warnings.append(f"run {rid}: server.log has no acc per pos vectors")
    # Only what the summary matches across runs is kept, for the families it matches, so that a
    # reduction does not grow with its run's records: rates for speedups and controls (their
    # runs and baselines), per-prompt means for break-even fits (ksweep runs, their baselines).
    family = run.desc.family
    timed = run.timed  # timing statistics leave contended requests out (Run.timed)
    rates: dict[str | None, Rates] = {}
    if family in RATE_FAMILIES:
        rates[None] = _final.per_key_rate(timed)
        for d in sorted({r.domain for r in timed}):
            rates[d] = _final.per_key_rate([r for r in timed if r.domain == d])
    ksweep = family == "ksweep"
    own: dict[str, tuple[Any, Any]] = {"runs": (entry, RunEntry), "final": (final, FinalEntry),
           "positions": (positions, PositionsEntry)}
    return Reduced(
        path=run.path, desc=run.desc, metrics=run.metrics, problems=run.problems,
        warnings=warnings, rates=rates,
        drafted_by_prompt=per_prompt(timed, drafted=True) if ksweep else {},
        timed_by_prompt=per_prompt(timed, drafted=False) if family == "baseline" else {},
        domain_of={r.prompt_id: r.domain for r in timed} if ksweep else {},
        parts={s: _parts.make(s, rid, obj, tp) for s, (obj, tp) in own.items() if obj is not None},
    )
