"""Raw runs to ``summary.json`` (schema in ``docs/summary-schema.md``).

The output is plain JSON with sorted keys and floats rounded to 6 significant digits
(:mod:`artifact.files`), so equal inputs give equal bytes. A value that could not be computed
(``nan``) becomes ``null`` and a warning naming where it is; ``None`` in a result means "not
applicable" (no drafter, no GPU) and is written as ``null`` without a warning.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from artifact import files
from artifact.analysis import breakeven as _breakeven
from artifact.analysis import final as _final
from artifact.analysis import runcache
from artifact.analysis.params import BOOTSTRAP, Bootstrap
from artifact.analysis.parts import SECTIONS, Part, render
from artifact.analysis.pooling import check_same_hardware
from artifact.analysis.reduced import Reduced, reduce
from artifact.analysis.runs import SPURIOUS_TOK_PER_S, AnalysisError, Run, load_runs_with
from artifact.contract import summary as contract
from artifact.contract.summary import Environment, Parameters

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


def _environment(runs: Sequence[Reduced], warnings: list[str]) -> Environment | None:
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


def analyse(runs: Sequence[Reduced], *, bootstrap: Bootstrap = BOOTSTRAP) -> contract.Summary:
    """The summary of reduced runs (:func:`artifact.analysis.reduced.reduce`): each run's own
    entries as its reduction made them plain, the pooled sections before rounding (a float may
    still be ``nan``); ``bootstrap``: the parameters the reductions were made with, recorded."""
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
    for run in runs:
        rid = run.desc.run_id
        warnings.extend(run.warnings)
        out["runs"][rid] = run.entry
        if run.final is not None:
            out["final"][rid] = run.final
        if run.positions is not None:
            out["positions"][rid] = run.positions

    finals = [r for r in runs if r.desc.family == "final"]
    for run in finals:
        if run.desc.drafter != "none":
            base, problem = _final.speedup_baseline(run, finals)
            if problem:
                warnings.append(problem)
            if base is not None:
                out["speedup"][run.desc.run_id] = _final.speedup(run.rates, base.rates,
                                                                   base.desc.run_id)

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
            out["controls"][run.desc.run_id] = _final.speedup(run.rates, base.rates,
                                                                base.desc.run_id)

    for run in runs:
        if run.desc.family != "ksweep":
            continue
        res, ws = _breakeven.breakeven_run(run, runs)
        warnings.extend(ws)
        out["breakeven"][run.desc.run_id] = res

    out["environment"] = _environment(runs, warnings)
    return out


def _build(runs_root: Path, bootstrap: Bootstrap, cache: Path | None, workers: int | None = None
           ) -> tuple[contract.Summary, dict[str, dict[str, Part]]]:
    with runcache.remembered(cache, runs_root) as memo:
        runs, warnings = load_runs_with(runs_root, runcache.loader(
            runs_root, bootstrap=bootstrap, cache=cache, memo=memo, workers=workers))
    elsewhere = {f"run {r.path.name}:" for r in runs if r.desc.family in OWN_ANALYSIS}
    warnings = [w for w in warnings if not any(w.startswith(e) for e in elsewhere)]
    runs = [r for r in runs if r.desc.family not in OWN_ANALYSIS]
    return _summarize(runs, warnings, source=f"summary of {runs_root}", bootstrap=bootstrap)


def build_summary(
    runs_root: Path, *, bootstrap: Bootstrap = BOOTSTRAP, cache: Path | None = None,
    workers: int | None = None,
) -> contract.Summary:
    """Every run under ``runs_root`` analysed: the ``summary.json`` object (plain JSON data),
    checked against the contract before anything is written.

    Runs of a study with its own analysis (:data:`OWN_ANALYSIS` families) are left out. Each run
    is reduced as it is read (:mod:`artifact.analysis.reduced`), so its records are not all
    held at once; ``cache``: the reductions are kept there by content
    (:mod:`artifact.analysis.runcache`), so that a run already seen is not read again; the
    result is the same bytes. Many runs to reduce are reduced in a pool of ``workers``
    processes, one per core by default (:func:`artifact.analysis.runcache.loader`): the same
    bytes again.
    """
    return _build(runs_root, bootstrap, cache, workers)[0]


def summarize_runs(
    runs: Sequence[Run], warnings: Sequence[str] = (), *, source: str = "summary",
    bootstrap: Bootstrap = BOOTSTRAP,
) -> contract.Summary:
    """Loaded runs analysed (``warnings``: those met while loading them), checked against the
    contract (``source`` names them in its one-line errors)."""
    return summarize_reduced([reduce(r, bootstrap) for r in runs], warnings, source=source,
                             bootstrap=bootstrap)


def summarize_reduced(runs: Sequence[Reduced], warnings: Sequence[str] = (), *,
                      source: str = "summary", bootstrap: Bootstrap = BOOTSTRAP
                      ) -> contract.Summary:
    """:func:`summarize_runs` of runs already reduced with ``bootstrap``."""
    return _summarize(runs, warnings, source=source, bootstrap=bootstrap)[0]


def summarize_text(runs: Sequence[Reduced], warnings: Sequence[str] = (), *,
                   source: str = "summary", bootstrap: Bootstrap = BOOTSTRAP
                   ) -> tuple[contract.Summary, str]:
    """:func:`summarize_reduced`, and the summary's canonical text (:func:`dumps`).

    Each run's own entries (:data:`artifact.analysis.parts.SECTIONS`) were made plain, checked
    and rendered when the run was reduced: they are taken as they are, not rounded, checked and
    encoded again, so that a summary of many cached runs costs about its pooled sections.
    """
    summary, given = _summarize(runs, warnings, source=source, bootstrap=bootstrap)
    return summary, render(summary, given)


def _summarize(runs: Sequence[Reduced], warnings: Sequence[str], *, source: str,
               bootstrap: Bootstrap) -> tuple[contract.Summary, dict[str, dict[str, Part]]]:
    """The checked summary, and the runs' parts it holds (section -> run id -> part)."""
    check_same_hardware(runs)
    result = analyse(runs, bootstrap=bootstrap)
    given = {s: {r.desc.run_id: r.parts[s] for r in runs if s in r.parts} for s in SECTIONS}
    # each run's own entries are its reduction's parts, already plain and checked
    nan_paths = [p for section in given.values() for part in section.values()
                 for p in part.nan_paths]
    sections: Mapping[str, Any] = result
    plain: dict[str, Any] = {k: v if k in given else files.to_plain(v, k, nan_paths)
                             for k, v in sections.items() if k != "warnings"}
    checked = [s for s in SECTIONS if all(part.fits for part in given[s].values())]
    plain["warnings"] = sorted(set(list(warnings) + result["warnings"]
                                   + _nan_warnings(nan_paths)))
    summary = contract.validate(plain, source=source, error=AnalysisError, checked=checked)
    return summary, given


def dumps(summary: Mapping[str, Any]) -> str:
    """The canonical text of a summary: sorted keys, two-space indent, trailing newline."""
    return files.dumps_json(summary)


def write_summary(runs_root: Path, out_path: Path, *, cache: Path | None = None
                  ) -> contract.Summary:
    """Build the summary and write it atomically to ``out_path``; returns it."""
    summary, given = _build(runs_root, BOOTSTRAP, cache)
    files.write_text(out_path, render(summary, given))
    return summary
