"""Raw runs to ``summary.json`` (schema in ``docs/summary-schema.md``).

The output is plain JSON with sorted keys and floats rounded to 6 significant digits
(:mod:`artifact.files`), so equal inputs give equal bytes. A value that could not be computed
(``nan``) becomes ``null`` and a warning naming where it is; ``None`` in a result means "not
applicable" (no drafter, no GPU) and is written as ``null`` without a warning.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from artifact import files
from artifact.analysis import breakeven as _breakeven
from artifact.analysis import final as _final
from artifact.analysis import positions as _positions
from artifact.analysis import runcache
from artifact.analysis.logs import Pairing, pair
from artifact.analysis.params import BOOTSTRAP, Bootstrap
from artifact.analysis.pooling import check_same_hardware
from artifact.analysis.runs import SPURIOUS_TOK_PER_S, AnalysisError, Run, load_runs
from artifact.contract import summary as contract
from artifact.contract.summary import Environment, LogPairing, Parameters, PositionsEntry, RunEntry

# Families analysed by their own study module, not by summary.json (accsplit -> accsplit.json).
OWN_ANALYSIS = frozenset({"accsplit"})
ENV_FIELDS = (
    "os",
    "llama_cpp_version",
    "binary_sha256",
    "model_sha256",
    "cpu_model",
    "cpu_cores",
    "gpu",
    "python",
    "packages",
)


def _nan_warnings(nan_paths: Sequence[str]) -> list[str]:
    """One warning per section entry (e.g. ``final.<run>``) listing the null values in it."""
    grouped: dict[str, list[str]] = defaultdict(list)
    for p in nan_paths:
        head, _, rest = p.partition(".")
        run, _, field = rest.partition(".")
        grouped[f"{head}.{run}"].append(field or "(value)")
    return [
        f"{where}: not computable, written as null: {', '.join(sorted(fields))}"
        for where, fields in grouped.items()
    ]


def _environment(runs: Sequence[Run], warnings: list[str]) -> Environment | None:
    """The final runs' fingerprint: the first run's, checked equal across runs.

    ``model_sha256`` maps model keys to hashes and runs use different models, so it is merged
    over the runs; only a key with two different hashes is a warning.
    """
    finals = [r for r in runs if r.desc.family == "final"] or list(runs)
    if not finals:
        return None
    first = finals[0]
    env: dict[str, Any] = {f: first.desc.environment.get(f) for f in ENV_FIELDS}
    models: dict[str, Any] = {}
    model_from: dict[str, str] = {}
    for r in finals:
        shas = r.desc.environment.get("model_sha256")
        for key, sha in sorted(shas.items()) if isinstance(shas, Mapping) else []:
            if key in models and models[key] != sha:
                warnings.append(
                    f"environment: model_sha256[{key}] differs between runs "
                    f"{model_from[key]} and {r.desc.run_id}"
                )
                continue
            models.setdefault(key, sha)
            model_from.setdefault(key, r.desc.run_id)
    env["model_sha256"] = models
    for r in finals[1:]:
        for f in ENV_FIELDS:
            if f != "model_sha256" and r.desc.environment.get(f) != env[f]:
                warnings.append(
                    f"environment: {f} differs between runs {first.desc.run_id} "
                    f"and {r.desc.run_id}"
                )
    starts = sorted(
        s for r in finals if isinstance(s := r.desc.environment.get("start_time"), str)
    )
    return Environment(
        os=env["os"],
        llama_cpp_version=env["llama_cpp_version"],
        binary_sha256=env["binary_sha256"],
        model_sha256=models,
        cpu_model=env["cpu_model"],
        cpu_cores=env["cpu_cores"],
        gpu=env["gpu"],
        python=env["python"],
        packages=env["packages"],
        start_time_first=starts[0] if starts else None,
        start_time_last=starts[-1] if starts else None,
    )


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


def _run_entry(run: Run, pairing: Pairing) -> RunEntry:
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


def _run_positions(run: Run, p: Pairing, bootstrap: Bootstrap) -> PositionsEntry | None:
    """Per-position acceptance of a run's included records and their paired log entries."""
    keep = [i for i, bad in enumerate(run.spurious) if not bad]
    return _positions.position_stats(run.desc.run_id, [run.records[i] for i in keep],
                                     [p.entry_of[i] for i in keep], bootstrap=bootstrap)


def analyse(runs: Sequence[Run], *, bootstrap: Bootstrap = BOOTSTRAP,
            cache: Path | None = None) -> contract.Summary:
    """The summary of loaded runs, before rounding (a float may still be ``nan``); ``cache``:
    where results of one run alone are kept (:func:`runcache.derived`)."""
    warnings: list[str] = []
    out: contract.Summary = {
        "schema_version": contract.SCHEMA_VERSION,
        "environment": None,
        "runs": {},
        "final": {},
        "speedup": {},
        "positions": {},
        "breakeven": {},
        "controls": {},
        "parameters": Parameters(
            bootstrap_resamples=bootstrap.resamples,
            bootstrap_seed=bootstrap.seed,
            confidence=bootstrap.confidence,
            spurious_tok_per_s=SPURIOUS_TOK_PER_S,
        ),
        "warnings": warnings,
    }
    pairings: dict[str, Pairing] = {}
    for run in runs:
        rid = run.desc.run_id
        if run.log is not None and run.desc.drafter != "none":
            p = pair(run.records, run.log, where=rid)
        else:
            n_alpha = sum(r.alpha is not None for r in run.records)
            p = Pairing(
                n_lines=0,
                n_records=n_alpha,
                max_abs_alpha_diff=None,
                ok=n_alpha == 0,
                entry_of=[None] * len(run.records),
                problem=None
                if n_alpha == 0
                else f"run {rid}: no server.log for {n_alpha} record(s) with alpha",
            )
        if p.problem:
            warnings.append(p.problem)
        pairings[rid] = p
        if not run.records:
            warnings.append(f"run {rid}: no readable records ({len(run.errors)} error(s))")
        elif run.n_excluded == len(run.records):
            warnings.append(f"run {rid}: every record excluded for spurious timings")
        out["runs"][rid] = _run_entry(run, p)
        if run.n_contended:
            ce = out["runs"][rid]["contention"]
            th = ce["threshold_cores"] if ce is not None else None
            warnings.append(f"run {rid}: {run.n_contended} of {len(run.included)} request(s) "
                            "contended (foreign CPU above "
                            + (f"{th:g} cores" if th is not None else "the run's threshold")
                            + "); left out of timing statistics, kept for acceptance")

    finals = [r for r in runs if r.desc.family == "final"]
    for run in finals:
        rid = run.desc.run_id
        fs = _final.final_stats(run, pairings[rid].entry_of, pairing_ok=pairings[rid].ok)
        out["final"][rid] = fs
        if run.desc.drafter != "none":
            base, problem = _final.speedup_baseline(run, finals)
            if problem:
                warnings.append(problem)
            if base is not None:
                out["speedup"][rid] = _final.speedup(run, base)

    # The noise control: each control run (a no-draft repeat) over the baseline measured
    # beside it (final no-draft, or family baseline), the same matched-ratio statistic.
    bases = [r for r in runs if r.desc.family in ("final", "baseline")]
    for run in runs:
        if run.desc.family != "control":
            continue
        base, problem = _final.speedup_baseline(run, bases)
        if problem:
            warnings.append(problem.replace(": speedup:", ": control:"))
        if base is not None:
            out["controls"][run.desc.run_id] = _final.speedup(run, base)

    for run in runs:
        rid = run.desc.run_id
        if run.desc.family not in ("curves", "ksweep") or run.desc.drafter == "none":
            continue
        p = pairings[rid]
        if not p.ok:
            continue  # the pairing problem is already a warning
        ps = runcache.derived(run, f"positions {bootstrap}",
                              functools.partial(_run_positions, run, p, bootstrap), cache)
        if ps is None:
            if p.n_records:
                warnings.append(f"run {rid}: server.log has no acc per pos vectors")
            continue
        out["positions"][rid] = ps

    for run in runs:
        if run.desc.family != "ksweep":
            continue
        res, ws = _breakeven.breakeven_run(run, runs)
        warnings.extend(ws)
        out["breakeven"][run.desc.run_id] = res

    out["environment"] = _environment(runs, warnings)
    return out


def build_summary(
    runs_root: Path, *, bootstrap: Bootstrap = BOOTSTRAP, cache: Path | None = None
) -> contract.Summary:
    """Every run under ``runs_root`` analysed: the ``summary.json`` object (plain JSON data),
    checked against the contract before anything is written.

    Runs of a study with its own analysis (:data:`OWN_ANALYSIS` families) are left out.
    ``cache``: loaded runs are kept there by content (:mod:`artifact.analysis.runcache`), so
    that a run already seen is not read again; the result is the same bytes.
    """
    runs, warnings = load_runs(runs_root, load=functools.partial(runcache.load, cache=cache))
    elsewhere = {f"run {r.path.name}:" for r in runs if r.desc.family in OWN_ANALYSIS}
    warnings = [w for w in warnings if not any(w.startswith(e) for e in elsewhere)]
    runs = [r for r in runs if r.desc.family not in OWN_ANALYSIS]
    return summarize_runs(runs, warnings, source=f"summary of {runs_root}", bootstrap=bootstrap,
                          cache=cache)


def summarize_runs(
    runs: Sequence[Run], warnings: Sequence[str] = (), *, source: str = "summary",
    bootstrap: Bootstrap = BOOTSTRAP, cache: Path | None = None,
) -> contract.Summary:
    """Loaded runs analysed (``warnings``: those met while loading them), checked against the
    contract (``source`` names them in its one-line errors)."""
    check_same_hardware(runs)
    result = analyse(runs, bootstrap=bootstrap, cache=cache)
    nan_paths: list[str] = []
    plain = {k: files.to_plain(v, k, nan_paths) for k, v in result.items() if k != "warnings"}
    plain["warnings"] = sorted(set(list(warnings) + result["warnings"]
                                   + _nan_warnings(nan_paths)))
    return contract.validate(plain, source=source, error=AnalysisError)


def dumps(summary: Mapping[str, Any]) -> str:
    """The canonical text of a summary: sorted keys, two-space indent, trailing newline."""
    return files.dumps_json(summary)


def write_summary(runs_root: Path, out_path: Path, *, cache: Path | None = None
                  ) -> contract.Summary:
    """Build the summary and write it atomically to ``out_path``; returns it."""
    summary = build_summary(runs_root, cache=cache)
    files.write_text(out_path, dumps(summary))
    return summary
