"""The doit task of the analysis stage (``dodo.py`` imports :func:`task_analysis`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from doit.tools import config_changed

from artifact import files, imports, paths, runfiles
from artifact.analysis.params import BOOTSTRAP
from artifact.errors import doit_action

RUN_FILES = runfiles.RUN_FILES


@doit_action
def _write(runs: Path, out: Path) -> None:
    from artifact.analysis.runcache import CACHE
    from artifact.analysis.summary import write_summary  # numpy/scipy only when it runs
    from artifact.log import stderr

    # runs kept reduced, by content: a new run is read, the others come from the cache
    summary = write_summary(runs, out, cache=CACHE)  # doit must not store it: nothing returned
    for rid, c in sorted(summary["controls"].items()):  # the noise control, every time
        o = c["overall"]
        stderr("analysis")(f"noise control: {rid} over {c['baseline_run']}: mean ratio "
              f"{_fmt(o['mean_ratio'])}, median {_fmt(o['median_ratio'])} "
              f"({o['n_matched']} prompts; 1 = no drift)")
    say_warnings("analysis", summary["warnings"])


def say_warnings(stage: str, warnings: list[str]) -> None:
    """Once, grouped by class, when an analysis runs (listed again in report.md); every
    analysis task says its own, the same way."""
    from artifact import warning_classes
    from artifact.log import stderr

    if warnings:
        log = stderr(stage)
        log(f"{len(warnings)} warning(s):")
        for line in warning_classes.lines(warnings):
            log(f"  {line}")


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def task_analysis() -> dict[str, Any]:
    """Statistics of every raw run -> experiments/analysis/summary.json."""
    # The run files as they are: no campaign task has them as targets, so building the paper
    # never starts a measurement (a missing or unfinished run is a warning, run left out).
    deps = runfiles.raw_run_paths(paths.RUNS)
    # every file the action imports, transitively: records.py (it parses the results),
    # stats.py, the contract (a new SCHEMA_VERSION is a changed file: the task reruns; the
    # contract itself is not imported here, issue 32), files.py, ...
    code = [str(p) for p in imports.closure("artifact.analysis.summary")]
    params = {
        "bootstrap_resamples": BOOTSTRAP.resamples,
        "bootstrap_seed": BOOTSTRAP.seed,
        "confidence": BOOTSTRAP.confidence,
    }
    return {
        "actions": [(_write, [paths.RUNS, paths.SUMMARY])],
        "file_dep": deps + code,
        "targets": [str(paths.SUMMARY)],
        "uptodate": [config_changed(params)],
        "clean": True,
    }


# what the workload analysis reads of a run: the plan (sessions.jsonl) included
WORKLOAD_RUN_FILES = (runfiles.CONFIG, runfiles.RESULTS, runfiles.ERRORS, runfiles.METRICS,
                      runfiles.WORKLOAD, runfiles.SESSIONS)


@doit_action
def _write_workload(runs: Path, out: Path) -> None:
    from artifact.analysis.workload import write_workload  # numpy only when it runs

    say_warnings("workload", write_workload(runs, out)["warnings"])


def task_workload() -> dict[str, Any]:
    """Workload study: REAL vs SYNTHETIC sessions -> experiments/analysis/workload.json."""
    deps = sorted(str(p) for p in paths.WORKLOAD_RUNS.glob("*/*")
                  if p.name in WORKLOAD_RUN_FILES)
    code = [str(p) for p in imports.closure("artifact.analysis.workload")]
    params = {  # the contract's SCHEMA_VERSION: in the code (its source), as in task_analysis
        "bootstrap_resamples": BOOTSTRAP.resamples,
        "bootstrap_seed": BOOTSTRAP.seed,
        "confidence": BOOTSTRAP.confidence,
    }
    return {
        "actions": [(_write_workload, [paths.WORKLOAD_RUNS, paths.WORKLOAD])],
        "file_dep": deps + code,
        "targets": [str(paths.WORKLOAD)],
        "uptodate": [config_changed(params)],
        "clean": True,
    }


@doit_action
def _write_realism(runs: Path, out: Path) -> None:
    from artifact.analysis.realism import write_realism  # numpy only when it runs

    say_warnings("realism", write_realism(runs, out)["warnings"])


def task_realism() -> dict[str, Any]:
    """Workload realism, take three: every side its own server, per drafter, with verdicts
    against the campaign file's margins, and the process variance component from the
    replicated stratum (take four) -> experiments/analysis/realism.json."""
    from artifact.analysis.params import REALISM_BOOTSTRAP as B

    deps = sorted(str(p) for p in paths.REALISM_RUNS.glob("*/*")
                  if p.name in WORKLOAD_RUN_FILES)
    deps += sorted(str(p) for p in paths.PROCESS_RUNS.glob("*/*")  # the replicated stratum
                   if p.name in WORKLOAD_RUN_FILES)
    deps += sorted(str(p) for p in paths.SESSION_LOCKS.glob("*.txt"))  # the turns' id locks
    deps.append(str(paths.REALISM_CAMPAIGN))  # its [equivalence] margins
    deps.append(str(paths.PROCESS_CAMPAIGN))  # the replicated stratum's plan
    code = [str(p) for p in imports.closure("artifact.analysis.realism")]
    params = {"bootstrap_resamples": B.resamples,  # SCHEMA_VERSION: in the code, as above
              "bootstrap_seed": B.seed, "confidence": B.confidence}
    return {
        "actions": [(_write_realism, [paths.REALISM_RUNS, paths.REALISM])],
        "file_dep": deps + code,
        "targets": [str(paths.REALISM)],
        "uptodate": [config_changed(params)],
        "clean": True,
    }


@doit_action
def _write_accsplit(runs: Path, out: Path) -> None:
    from artifact.analysis.accsplit import write  # numpy/scipy only when it runs

    say_warnings("accsplit", write(runs, out)["warnings"])


def accsplit_runs(root: Path = paths.RUNS) -> list[Path]:
    """Run directories of the acceptance-split study (family ``accsplit`` in config.json)."""
    return _family_runs(("accsplit",), root)


def task_accsplit() -> dict[str, Any]:
    """Acceptance-split study: its raw runs -> experiments/analysis/accsplit.json."""
    deps = sorted(str(p) for run in accsplit_runs() for p in run.iterdir()
                  if p.name in RUN_FILES)
    code = [str(p) for p in imports.closure("artifact.analysis.accsplit")]
    return {
        "actions": [(_write_accsplit, [paths.RUNS, paths.ACCSPLIT])],
        "file_dep": deps + code,
        "targets": [str(paths.ACCSPLIT)],
        "clean": True,
    }


# Mirrors artifact.analysis.costmodel (STEPS, STUDY_FAMILIES), which imports numpy: doit imports
# this module on every `doit list` (a test checks the two agree).
COST_STEPS = "steps.jsonl"
COST_FAMILIES = ("final", "curves", "ksweep")


@doit_action
def _write_costmodel(steps: Path, runs: Path, summary: Path, out: Path) -> None:
    from artifact.analysis.costmodel import write  # numpy only when it runs

    write(steps, runs, summary, out)


def _no_steps() -> None:
    from artifact.log import stderr

    stderr("costmodel")(f"no step costs under {paths.shown(paths.COST_RUNS)}: measure them with "
                        "`python -m artifact.campaign.stepcost`; costmodel.json not written")


def task_costmodel() -> dict[str, Any]:
    """Cost model: measured step costs + the CPU study's drafted runs -> costmodel.json."""
    steps = sorted(p for model in paths.COST_RUNS.glob(f"*/{COST_STEPS}")
                   for p in (model, model.parent / runfiles.CONFIG))
    if not steps:
        return {"actions": [_no_steps], "uptodate": [False], "verbosity": 2}
    runs = sorted(str(p) for run in _family_runs(COST_FAMILIES) for p in run.iterdir()
                  if p.name in (runfiles.CONFIG, runfiles.RESULTS, runfiles.METRICS))
    code = [str(p) for p in imports.closure("artifact.analysis.costmodel")]
    return {
        "actions": [(_write_costmodel, [paths.COST_RUNS, paths.RUNS, paths.SUMMARY,
                                        paths.COSTMODEL])],
        "file_dep": [str(p) for p in steps] + runs + [str(paths.SUMMARY)] + code,
        "targets": [str(paths.COSTMODEL)],
        "clean": True,
    }


@doit_action
def _write_memory(runs: Path, out: Path) -> None:
    from artifact.analysis.memory import write
    from artifact.log import stderr

    say = stderr("memory")
    data = write(runs, out)
    for w in data["warnings"]:
        say(w)


def _no_memory() -> None:
    from artifact.log import stderr

    stderr("memory")(f"no memory runs under {paths.shown(paths.MEMORY_RUNS)}: measure them "
                     "with `doit campaign --file experiments/campaigns/memory.toml --runs-dir "
                     "experiments/runs-memory`; memory.json not written")


def task_memory() -> dict[str, Any]:
    """Memory: each configuration's peak resident memory (the memory runs) -> memory.json."""
    deps = runfiles.raw_run_paths(paths.MEMORY_RUNS, (runfiles.CONFIG, runfiles.MEMORY))
    if not deps:
        return {"actions": [_no_memory], "uptodate": [False], "verbosity": 2}
    code = [str(p) for p in imports.closure("artifact.analysis.memory")]
    return {
        "actions": [(_write_memory, [paths.MEMORY_RUNS, paths.MEMORY])],
        "file_dep": deps + code,
        "targets": [str(paths.MEMORY)],
        "clean": True,
    }


def _family_runs(families: tuple[str, ...], root: Path = paths.RUNS) -> list[Path]:
    """Run directories whose config.json names one of ``families``."""
    out = []
    for config in sorted(root.glob(f"*/{runfiles.CONFIG}")):
        if config.parent.name.startswith((".", "_")):
            continue
        if _family(config) in families:
            out.append(config.parent)
    return out


_FAMILIES: dict[str, tuple[files.FileStat, object]] = {}


def _family(config: Path) -> object:
    """The ``spec.family`` a run's config.json names (None when unreadable), remembered for the
    file's unchanged settled ``stat`` (:func:`artifact.files.settled_stat`): two tasks ask, and
    a test may rewrite it between two asks."""
    import json  # the standard library's; doit imports this module on every `doit list`

    key = str(config)
    try:
        seen = files.settled_stat(key)
    except OSError:
        return None
    hit = _FAMILIES.get(key)
    if seen is not None and hit is not None and hit[0] == seen:
        return hit[1]
    try:
        family = json.loads(config.read_text(encoding="utf-8")).get("spec", {}).get("family")
    except (OSError, ValueError, AttributeError):
        family = None
    if seen is not None:
        _FAMILIES[key] = (seen, family)
    return family


# The core study's runs: <target>-<task>-<drafter> under experiments/runs-core (its cost and
# pilot runs there feed the committed predictions, not this analysis). Mirrors
# artifact.contract.core's TARGETS and TASKS (a test checks the two agree): this module is
# imported on every `doit list` and stays light.
CORE_GROUPS = tuple(f"{t}-{k}" for t in ("q4_1", "q8_0", "f16") for k in ("study", "edit"))


@doit_action
def _write_core(runs: Path, out: Path, predictions: Path) -> None:
    from artifact.analysis.core import write  # scipy only when it runs
    from artifact.analysis.prediction import posthoc_cells

    say_warnings("core", write(runs, out, predictions,
                               posthoc=posthoc_cells(runs))["warnings"])


GEMMA_GROUPS = tuple(f"{t}-{k}" for t in ("q4_k_m", "q8_0", "f16") for k in ("study", "edit"))


def core_run_files(root: Path = paths.CORE_RUNS,
                   groups: tuple[str, ...] = (*CORE_GROUPS, "cost", "pilot")) -> list[Path]:
    """The raw files the core analysis reads of each run of a (target, task) group, and of the
    calibration runs cost model v3's post-hoc predictions read."""
    return sorted(p for g in groups for run in root.glob(f"{g}-*") if run.is_dir()
                  for p in run.iterdir() if p.name in (runfiles.CONFIG, runfiles.RESULTS))


def task_core() -> dict[str, Any]:
    """Core study, take three: the measured cells beside their committed predictions ->
    experiments/analysis/core.json."""
    deps = [str(p) for p in core_run_files()]
    # the second family (Gemma), once measured: its groups and its committed predictions
    deps += [str(p) for p in core_run_files(paths.GEMMA_RUNS, GEMMA_GROUPS)]
    deps += [str(p) for p in (paths.GEMMA_PREDICTIONS,) if p.is_file()]
    # the code includes artifact/contract/core.py: a new SCHEMA_VERSION reruns the task
    code = sorted({str(p) for m in ("artifact.analysis.core", "artifact.analysis.prediction")
                   for p in imports.closure(m)})
    return {
        "actions": [(_write_core, [paths.CORE_RUNS, paths.CORE, paths.CORE_PREDICTIONS])],
        "file_dep": [*deps, str(paths.CORE_PREDICTIONS), *code],
        "targets": [str(paths.CORE)],
        "clean": True,
    }
