"""Two run sets, analysed like with like: the same runs, the same prompts.

A run set is a folder of run directories (``experiments/runs``) or a reproduction folder (its
``runs/`` inside, plus ``reproduction.json``). To compare a reproduction of a subset with the
committed runs, the reference is cut down to the reproduction's runs and, run by run, to the
prompts that run measured (its ``config.json: prompt_ids``), and both go through the same
analysis (``summary.json`` and the manuscript's variables). Raw per-run statistics are computed
here from the records, for the side-by-side tables.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import files, paths, records
from artifact.analysis.logs import pair
from artifact.analysis.runs import Run, load_runs
from artifact.analysis.summary import OWN_ANALYSIS, summarize_runs
from artifact.errors import AnalysisError, RunSetError
from artifact.reproduce import plan
from artifact.reproduce.host import Hardware, hardware, software


@dataclass(frozen=True, kw_only=True)
class RunSet:
    """An analysed set of runs."""

    name: str  # how the report names it, e.g. "committed" or a reproduction folder's name
    root: Path  # the folder holding the run directories
    runs: tuple[Run, ...]
    summary: Mapping[str, Any]  # summary.json's content (artifact.contract.summary.Summary)
    variables: Mapping[str, Any]
    hardware: Hardware
    software: Mapping[str, Any]
    manifest: Mapping[str, Any] | None  # reproduction.json, when a reproduction
    warnings: tuple[str, ...]
    all_run_ids: tuple[str, ...] = ()  # every run under ``root``, before any cut
    own_runs: tuple[Run, ...] = ()  # runs of the acceptance split (their own analysis)

    @property
    def run_ids(self) -> tuple[str, ...]:
        return tuple(r.desc.run_id for r in (*self.runs, *self.own_runs))


def runs_folder(path: Path) -> tuple[Path, dict[str, Any] | None]:
    """The run directories' folder of ``path`` and its reproduction manifest, if any."""
    if (path / plan.MANIFEST).exists():
        return path / plan.RUNS, plan.read_manifest(path)
    if not path.is_dir():
        raise RunSetError(f"{path}: not a folder of runs nor a reproduction folder")
    return path, None


def prompt_ids(run: Run) -> frozenset[str] | None:
    """The prompts a run was limited to (``config.json: prompt_ids``), ``None`` for all."""
    try:
        ids = records.read_json(run.path / records.CONFIG).get("prompt_ids")
    except (ValueError, FileNotFoundError):
        return None
    return frozenset(str(i) for i in ids) if isinstance(ids, list) else None


def restrict(run: Run, keep_ids: frozenset[str]) -> Run:
    """The run with only the records (and their log entries and errors) of ``keep_ids``.

    Log entries are matched to records on the whole run first, so the kept records keep their
    own per-position acceptance.
    """
    keep = [i for i, r in enumerate(run.records) if r.prompt_id in keep_ids]
    log = run.log
    if log is not None and run.desc.drafter != "none":
        p = pair(run.records, log, where=run.desc.run_id)
        if p.ok:
            log = [e for i in keep if (e := p.entry_of[i]) is not None]
    return dataclasses.replace(
        run, records=[run.records[i] for i in keep], spurious=[run.spurious[i] for i in keep],
        errors=[e for e in run.errors if e.get("prompt_id") in keep_ids], log=log)


def _cut(run: Run, keep_ids: frozenset[str] | None) -> Run:
    return run if keep_ids is None else restrict(run, keep_ids)


def load(path: Path, *, name: str | None = None, like: RunSet | None = None) -> RunSet:
    """Analyse the runs under ``path``; with ``like``, only its runs and their prompts."""
    from artifact.render import model
    from artifact.render import vars as rvars

    root, manifest = runs_folder(path)
    try:
        runs, warnings = load_runs(root)
    except AnalysisError as err:
        raise RunSetError(str(err)) from err
    if not runs:
        raise RunSetError(_no_runs(path, root))
    every = tuple(r.desc.run_id for r in runs)
    # runs of a study with its own analysis are not the summary's: the acceptance split's go
    # through theirs (a claim on them is "not run" unless a reproduction has them); the
    # workload study's live in their own runs root and are not compared here
    own = [r for r in runs if r.desc.family in OWN_ANALYSIS]  # the acceptance split's
    runs = [r for r in runs if r.desc.family not in OWN_ANALYSIS]
    if like is not None:
        wanted = {r.desc.run_id: prompt_ids(r) for r in (*like.runs, *like.own_runs)}
        missing = sorted(set(wanted) - {r.desc.run_id for r in (*runs, *own)})
        warnings += [f"run {m}: not in {path.name}; compared on one side only" for m in missing]
        runs = [_cut(r, wanted[r.desc.run_id]) for r in runs if r.desc.run_id in wanted]
        own = [r for r in own if r.desc.run_id in wanted]
        if not runs and not own:
            raise RunSetError(f"{path}: none of the runs of {like.name} is in it")
    summary = summarize_runs(runs, warnings, source=f"runs of {path.name}")
    variables = dict(rvars.compute(model.from_json(summary, str(root))))
    if own:
        keep = (wanted if like is not None else {r.desc.run_id: None for r in own})
        variables["accsplit"] = _accsplit_variables(root, {r.desc.run_id: keep[r.desc.run_id]
                                                           for r in own})
    realism = _realism_variables(root, like)
    if realism is not None:  # per-side realism runs: the rl- claims' variables
        variables["realism"] = realism
    env: Mapping[str, Any] = summary["environment"] or (own[0].desc.environment if own else {})
    sets = sorted({f"{r.desc.prompt_set} {r.desc.prompt_set_sha256[:12]}" for r in runs})
    if name is None:
        name = "committed" if path.resolve() == paths.RUNS.resolve() else path.resolve().name
    return RunSet(name=name, root=root, runs=tuple(runs), summary=summary,
                  variables=variables,
                  hardware=hardware({**env, "host": _host([*runs, *own])}),
                  software={**software(env), "prompt_sets": sets},
                  manifest=manifest, warnings=tuple(summary["warnings"]),
                  all_run_ids=every, own_runs=tuple(own))


def _realism_variables(root: Path, like: RunSet | None) -> Any:
    """The realism study's variables of the per-side runs under ``root`` (with ``like``: cut
    to its runs and the sessions each played; :mod:`artifact.reproduce.realism_runs`)."""
    from artifact.reproduce import realism_runs  # numpy/scipy only when a set has such runs

    if not realism_runs.has_realism_runs(root):
        return None
    return realism_runs.variables(root, realism_runs.kept(like.root) if like else None)


def _no_runs(path: Path, root: Path) -> str:
    """Why ``path`` gave no run to compare: no run folder, or none complete (an interrupted
    reproduction: its runs are kept, and finished by rerunning its command)."""
    found = [p.name for p in records.run_folders(root) if (p / records.CONFIG).is_file()]
    if not found:
        return f"{path}: no runs (run folders with a {records.CONFIG}) in it"
    return (f"{path}: no complete run to compare: {len(found)} run folder(s) with a "
            f"{records.CONFIG}, none complete ({records.METRICS} missing or not complete: "
            f"{', '.join(found[:3])}{', ...' if len(found) > 3 else ''}); finish them first "
            "(rerun the reproduction's command to resume)")


def _host(runs: Sequence[Run]) -> Any:
    """The runs' extended fingerprint (``environment.host``) when every run recorded the same
    one; ``None`` (not known) when one did not record it or two differ."""
    hosts = [r.desc.environment.get("host") for r in runs]
    if not hosts or not all(isinstance(h, Mapping) for h in hosts):
        return None
    return hosts[0] if all(h == hosts[0] for h in hosts[1:]) else None


def _accsplit_variables(root: Path, keep: Mapping[str, frozenset[str] | None]) -> Any:
    """The manuscript's ``accsplit`` variables of these acceptance-split runs and prompts."""
    from artifact.analysis import accsplit  # numpy/scipy only when a run set has such runs
    from artifact.render import accsplit_vars

    try:
        data = accsplit.build(root, keep)
    except AnalysisError as err:
        raise RunSetError(str(err)) from err
    return files.to_plain(accsplit_vars.compute(data))


def pair_of(reference: Path, reproduction: Path, *, names: tuple[str, str] | None = None
            ) -> tuple[RunSet, RunSet]:
    """The reproduction, and the reference cut to its runs and prompts."""
    b = load(reproduction, name=names[1] if names else None)
    a = load(reference, name=names[0] if names else None, like=b)
    return a, b


# --- raw statistics per run -----------------------------------------------------------------

RAW_STATS = ("n", "tok_per_s_mean", "tok_per_s_median", "ttft_ms_median", "e2e_ms_median",
             "alpha_pooled", "n_drafted", "tokens_generated", "errors", "e2e_s_total")


def _median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else math.nan


def raw_stats(run: Run) -> dict[str, float]:
    """Descriptive statistics of a run's included records (spurious-timing ones left out)."""
    recs = run.included
    tps = [r.timings.predicted_per_second for r in recs]
    ttft = [r.ttft_ms for r in recs if r.ttft_ms is not None]
    drafted = [r for r in recs if r.timings.draft_n]
    acc = sum(r.timings.draft_n_accepted or 0 for r in drafted)
    gen = sum(r.timings.draft_n or 0 for r in drafted)
    return {
        "n": float(len(recs)),
        "tok_per_s_mean": _mean(tps),
        "tok_per_s_median": _median(tps),
        "ttft_ms_median": _median(ttft),
        "e2e_ms_median": _median([r.e2e_ms for r in recs]),
        "alpha_pooled": acc / gen if gen else math.nan,  # pooled over drafted tokens
        "n_drafted": float(len(drafted)),
        "tokens_generated": float(sum(r.timings.predicted_n for r in recs)),
        "errors": float(len(run.errors)),
        "e2e_s_total": sum(r.e2e_ms for r in recs) / 1000.0,
    }


def same_outputs(a: Run, b: Run) -> tuple[int, int]:
    """(prompts whose token and draft counts are identical in both runs, prompts in both).

    At temperature 0 the generated tokens, and so these counts, depend on the model and the
    build only: a difference is a hardware-independent discrepancy, not a speed difference.
    """
    def key(r: records.Result) -> tuple[int, int | None, int | None]:
        t = r.timings
        return (t.predicted_n, t.draft_n, t.draft_n_accepted)

    ka = {(r.prompt_id, r.repeat): key(r) for r in a.records}
    kb = {(r.prompt_id, r.repeat): key(r) for r in b.records}
    both = set(ka) & set(kb)
    return sum(ka[k] == kb[k] for k in both), len(both)
