"""The task graph of the artifact: `doit list` explains each task; `doit` rebuilds the paper.

Data flows one way: campaigns (llama-server) -> experiments/runs -> analysis -> tables,
figures, claims -> manuscript. A fresh clone has committed runs and an empty doit database:
a campaign run is up to date when its own files say so (complete, and measured for the spec
that the TOML gives now), so `doit` never reruns a campaign to rebuild the paper.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from doit import task_params
from doit.exceptions import TaskFailed

import artifact.bytecode  # noqa: F401  # first of ours: stale bytecode removed (see its docstring)
from artifact import paths
from artifact.analysis.task import (
    task_accsplit,
    task_analysis,
    task_core,
    task_costmodel,
    task_memory,
    task_realism,
    task_workload,
)
from artifact.doitreporter import Reporter
from artifact.errors import ArtifactError, doit_action, one_line
from artifact.filecheck import ContentChecker
from artifact.render.tasks import (
    task_arxiv,
    task_figures,
    task_manifest,
    task_manuscript,
    task_readme,
    task_tables,
    task_verify,
)

if TYPE_CHECKING:
    from artifact.spec import Campaign, RunSpec

__all__ = [
    "task_accsplit",
    "task_analysis",
    "task_arxiv",
    "task_campaign",
    "task_compare",
    "task_core",
    "task_costmodel",
    "task_figures",
    "task_kick",
    "task_manifest",
    "task_manuscript",
    "task_memory",
    "task_prompts",
    "task_readme",
    "task_realism",
    "task_reproduce",
    "task_sessions",
    "task_tables",
    "task_toolchain",
    "task_verify",
    "task_workload",
]

# `doit` alone rebuilds the paper from the committed runs; campaigns run only on request
# (`doit campaign`), or when a run is not current for its spec.
# File dependencies are up to date by content, not by a modification time that can be put back
# (artifact/filecheck.py).
# Independent tasks (the figures, the tables, the study analyses) run side by side, one process
# per core: a clean build from the raw runs took 11.7 s instead of 20.5 s on 2 cores, with an
# identical MANIFEST.sha256 (issue 32); `doit -n 1` runs them one at a time. A command that
# measures (a campaign, the kick, a reproduction) runs alone: nothing may share the CPU with it.
_MEASURES = {"campaign", "kick", "reproduce", "toolchain"}
DOIT_CONFIG = {
    "num_process": (1 if _MEASURES & {a.split(":")[0] for a in sys.argv[1:]}
                    else os.cpu_count() or 1),
    "par_type": "process",
    "check_file_uptodate": ContentChecker,
    # doit's console output; tells the checker which tasks run; `doit | head` exits
    "reporter": Reporter,
    # the realism chain (sessions, realism) first: the longest path to the figures; vars and
    # md-html named early (doit may still hand them out after figures already queued)
    "default_tasks": ["realism", "analysis", "accsplit", "workload", "costmodel", "core", "memory",
                      "manuscript:vars", "manuscript:md-html", "tables", "manuscript", "figures",
                      "verify", "manifest"],
}

# One build at a time in this tree (a second `doit` waits, saying so); `doit list`, `help` and
# `info` only read, and a test importing this file takes no lock.
_READ_ONLY = {"list", "help", "info", "strace", "dumpdb", "tabcompletion"}
_ARGV0 = Path(sys.argv[0])
if "doit" in (_ARGV0.name, _ARGV0.parent.name) and not _READ_ONLY & set(sys.argv[1:2]):
    from artifact import buildlock
    from artifact.log import stderr

    buildlock.hold(paths.ROOT / ".doit.lock", stderr("build"))

STUDY = paths.CAMPAIGNS / "cpu-study.toml"
WORKLOAD_STUDY = paths.CAMPAIGNS / "workload.toml"
KICK = paths.CAMPAIGNS / "kick.toml"
KICK_RUNS = paths.RUNS / "_kick"


def task_toolchain() -> dict[str, Any]:
    """Build llama-server and llama-quantize from the pinned sdist; take the pinned model.

    `doit toolchain --info` prints every pin (versions, sha256, cmake flags) and builds nothing.
    """
    from artifact import toolchain  # lazy like every task below: `doit` stays under a second

    def current(task: Any, values: Any) -> bool:
        if (task.options or {}).get("info"):
            return False  # --info always prints
        return toolchain.llama_is_built() and toolchain.model_path().is_file()

    def act(info: bool) -> bool:
        if info:
            print(toolchain.info())
            return True
        return bool(toolchain.ensure_all())

    return {
        "actions": [doit_action(act)],
        "params": [{"name": "info", "long": "info", "type": bool, "default": False,
                    "help": "print the pins and the cache state; build nothing"}],
        "uptodate": [current],
        "targets": [toolchain.server_binary(), toolchain.model_path()],
        "verbosity": 2,
    }


def task_prompts() -> Iterator[dict[str, Any]]:
    """Draw the prompt sets of experiments/prompt_sets.toml from HumanEval and ShareGPT V3."""
    from artifact.workloads import prompts  # Jinja, the dataset packages

    try:
        recipes = prompts.load_recipes()
    except ArtifactError as err:  # the paper build does not need the recipes: say it on request
        yield _invalid(err, paths.PROMPT_RECIPES)
        return
    for name in recipes:
        dest = prompts.prompt_set_path(name)

        def build(name: str = name, dest: Path = dest) -> None:
            from artifact import toolchain  # only when a prompt set is drawn

            recipe = prompts.load_recipes()[name]
            sha = prompts.write_prompt_set(
                prompts.build_prompt_set(recipe, toolchain.ensure_model()), dest)
            print(f"{name}: {sum(recipe.counts.values())} prompts, sha256 {sha}")

        yield {"name": name, "actions": [doit_action(build)], "file_dep": [paths.PROMPT_RECIPES],
               "targets": [dest], "clean": True}


def _campaign_tasks(file: Path, runs_root: Path, executor: str | None = None,
                    wait: bool = True) -> Iterator[dict[str, Any]]:
    from artifact.spec import load_campaign

    try:
        camp = load_campaign(file, executor_kind=executor)
    except ArtifactError as err:  # `doit list` and the paper build go on; `doit campaign` says it
        yield _invalid(err, file)
        return
    if camp.executor.kind == "slurm":
        yield from _slurm_tasks(camp, runs_root, executor, wait)
        return
    for spec in camp.runs:

        def measure(spec_id: str = spec.run_id) -> None:
            from artifact.executors.local import LocalExecutor  # httpx, asyncio
            from artifact.log import stderr

            fresh = load_campaign(file)
            # an interleaved run is measured with every run of its group not yet current
            LocalExecutor(fresh, runs_root).submit(fresh.run(spec_id), stderr("campaign"))

        group = f" (interleave group {spec.interleave})" if spec.interleave else ""
        yield {
            "name": spec.run_id,
            "doc": f"{spec.family}: {spec.drafter}" + (f" k={spec.k}" if spec.k else "") + group,
            "actions": [doit_action(measure)],
            # Up to date when the run's own files say so (complete, same spec hash, same
            # prompt-set content): this survives a fresh clone, unlike doit's database.
            "uptodate": [lambda spec=spec: _run_is_current(spec, runs_root)],
            # No targets: the analysis reads run files, and a target there would make doit
            # start a campaign to rebuild the paper. The paper build never measures.
        }


def _run_is_current(spec: RunSpec, runs_root: Path) -> bool:
    """The runner's verdict, imported when asked (httpx, asyncio): not on every `doit`."""
    from artifact.campaign import runner

    return runner.run_is_current(spec, runs_root)


def _invalid(err: ArtifactError, file: Path) -> dict[str, Any]:
    """A subtask standing for an input file that cannot be read, named after it
    (``campaign:invalid-cpu-study``: two failing files never collide): it fails with the one
    line. The paper build depends on none of these, so a typo in a campaign or in the
    uncommitted experiments/site.toml stops only the task that needs it."""
    line = one_line(err)

    def fail() -> TaskFailed:
        return TaskFailed(f"error: {line}")

    return {"name": f"invalid-{file.stem}", "doc": f"cannot be built: {line}", "actions": [fail],
            "uptodate": [False]}




_F = TypeVar("_F", bound=Callable[..., Any])


def _task_params(defs: list[dict[str, Any]]) -> Callable[[_F], _F]:
    """doit's ``@task_params`` (options of ``doit campaign ...``), typed for mypy."""
    deco: Callable[[_F], _F] = task_params(defs)
    return deco


def _slurm_tasks(camp: Campaign, runs_root: Path, executor: str | None,
                 wait: bool) -> Iterator[dict[str, Any]]:
    """One job per run (`campaign:<run>` submits it), then `campaign:_jobs` watches them all."""
    from artifact.campaign import runner
    from artifact.executors import slurm  # submitit, httpx
    from artifact.spec import load_campaign

    file = camp.file
    try:
        slurm.local_only(camp.runs, paths.shown(file))
    except ArtifactError as err:
        yield _invalid(err, file)
        return
    if camp.executor.slurm.runs_dir and runs_root == paths.RUNS:
        runs_root = Path(camp.executor.slurm.runs_dir)

    def watch() -> bool:
        fresh = load_campaign(file, executor_kind=executor)
        sc = slurm.SlurmCampaign(fresh, runs_root)
        sts = sc.watch(fresh.runs, slurm.say_stderr, wait=wait)
        if not wait:
            print("jobs submitted; `doit campaign` again shows their progress and collects them")
            return True
        for line in slurm.summary_lines(sts, runs_root):
            print(line)
        return not any(st.state == "failed" for st in sts)

    for spec in camp.runs:

        def submit(spec_id: str = spec.run_id) -> None:
            fresh = load_campaign(file, executor_kind=executor)
            slurm.SlurmCampaign(fresh, runs_root).submit(fresh.run(spec_id), slurm.say_stderr)

        yield {
            "name": spec.run_id,
            "doc": f"{spec.family}: {spec.drafter}" + (f" k={spec.k}" if spec.k else "")
                   + " (Slurm job)",
            "actions": [doit_action(submit)],
            "uptodate": [lambda spec=spec: runner.run_is_current(spec, runs_root)],
        }
    # After every submission: the progress view over the jobs, and the summary.
    yield {"name": "_jobs", "doc": "progress of the campaign's Slurm jobs; waits for them",
           "actions": [doit_action(watch)], "task_dep": [f"campaign:{s.run_id}" for s in camp.runs],
           "uptodate": [False], "verbosity": 2}


@_task_params([
    {"name": "file", "long": "file", "type": str, "default": "",
     "help": "campaign file (default: experiments/campaigns/cpu-study.toml)"},
    {"name": "runs_dir", "long": "runs-dir", "type": str, "default": "",
     "help": "where run directories go (default: experiments/runs, or the Slurm runs_dir)"},
    {"name": "executor", "long": "executor", "type": str, "default": "",
     "help": "local or slurm (default: [executor] of the campaign or experiments/site.toml)"},
    {"name": "no_wait", "long": "no-wait", "type": bool, "default": False,
     "help": "Slurm: submit the jobs and return; a later `doit campaign` collects them"},
])
def task_campaign(file: str = "", runs_dir: str = "", executor: str = "",
                  no_wait: bool = False) -> Iterator[dict[str, Any]]:
    """Measure the CPU study (experiments/campaigns/cpu-study.toml): only runs not yet current.

    With the Slurm executor each run is one job; `doit campaign` submits, shows the jobs'
    progress and waits (`--no-wait`: submit and return; a later call collects)."""
    study = Path(file) if file else STUDY
    if study.exists():
        yield from _campaign_tasks(study, Path(runs_dir) if runs_dir else paths.RUNS,
                                   executor or None, not no_wait)
    if not file and WORKLOAD_STUDY.exists():  # the workload study: doit campaign:workload-<c>
        yield from _campaign_tasks(WORKLOAD_STUDY, paths.WORKLOAD_RUNS)


def task_sessions() -> dict[str, Any] | None:
    """Draw the session sets of experiments/session_sets.toml from ShareGPT V3 (the id locks)."""
    from artifact.workloads import sessions

    if not sessions.SESSION_RECIPES.exists():
        return None
    try:
        names = list(sessions.load_recipes())
    except sessions.SessionError as err:  # a bad recipe file fails this task only, when asked
        def fail(message: str = str(err)) -> bool:
            print(f"error: {message}", file=sys.stderr)
            return False

        return {"actions": [fail], "uptodate": [False]}

    def build() -> None:  # every set in one pass over the dataset (decoded once, 0.3 s)
        recipes = sessions.load_recipes()
        for name, ids in sessions.select_all(recipes, sessions.conversations()).items():
            print(f"{name}: {len(ids)} sessions, sha256 "
                  f"{sessions.write_id_lock(recipes[name], ids, sessions.lock_path(name))}")

    return {"actions": [doit_action(build)], "file_dep": [sessions.SESSION_RECIPES],
            "targets": [sessions.lock_path(n) for n in names]}


def task_kick() -> dict[str, Any]:
    """Kick the tires: a tiny real campaign (3 prompts x 3 configurations) end to end, ~1 min."""

    def kick() -> None:
        from artifact.campaign import runner  # httpx, only when the kick runs
        from artifact.spec import load_campaign

        shutil.rmtree(KICK_RUNS, ignore_errors=True)
        camp = load_campaign(KICK)
        for spec in camp.runs:
            m = runner.run(camp, spec, runs_root=KICK_RUNS)
            print(f"{spec.run_id}: {m.n_results}/{m.n_expected} requests, {m.n_errors} errors, "
                  f"{m.measure_s:.1f} s measured")
        _kick_report()

    return {"actions": [doit_action(kick)], "task_dep": ["toolchain"], "uptodate": [False],
            "verbosity": 2}


def _kick_report() -> None:
    """Print tok/s, acceptance and speedup of the kick runs, through the real analysis."""
    from artifact.analysis import build_summary  # numpy, scipy

    summary = build_summary(KICK_RUNS)

    def fmt(x: object) -> str:
        return f"{x:.3g}" if isinstance(x, float | int) else "-"

    print(f"  {'run':24s} {'tok/s':>7s} {'alpha':>6s} {'speedup':>8s}")
    for run_id, res in sorted(summary["final"].items()):
        o = res["overall"]
        alpha = o["alpha"]["mean"] if o["alpha"] else None
        speedup = summary["speedup"].get(run_id)
        print(f"  {run_id:24s} {fmt(o['tok_per_s']['mean']):>7s} {fmt(alpha):>6s} "
              f"{fmt(speedup['overall']['mean_ratio'] if speedup else None):>8s}")
    for w in summary["warnings"]:
        print(f"  warning: {w}")


def task_reproduce() -> dict[str, Any]:
    """Rerun a study beside its committed runs (experiments/reproductions/), then compare.

    --study first|core|accsplit|realism|all: the study, with its own campaign, reference runs
    and claims (default: first); --kick: its smallest run set through the whole pipeline;
    --runs PATTERN, --windows W (repeatable), --prompts-per-domain N, --sessions N: a subset;
    --strict: fail on a failed claim; --dry-run: only the calibration, the plan and its ETA.
    --budget 60m: the runs testing the most claims within the time (with --dry-run: the plan).
    Rerunning the same command resumes an unfinished reproduction.
    """

    def act(runs: list[str], kick: bool, prompts_per_domain: int, into: str, campaign: str,
            strict: bool, dry_run: bool, no_wait: bool, study: str, windows: list[str],
            sessions: int, budget: str) -> bool:
        from artifact.reproduce.command import main

        argv = ["run", *(f"--runs={r}" for r in runs), *(f"--windows={w}" for w in windows)]
        if study:
            argv.append(f"--study={study}")
        if sessions:
            argv.append(f"--sessions={sessions}")
        if budget:
            argv.append(f"--budget={budget}")
        if campaign:
            argv.append(f"--campaign={campaign}")
        argv += ["--kick"] * kick + ["--strict"] * strict + ["--dry-run"] * dry_run
        argv += ["--no-wait"] * no_wait
        if prompts_per_domain:
            argv.append(f"--prompts-per-domain={prompts_per_domain}")
        if into:
            argv.append(f"--into={into}")
        return main(argv) == 0

    return {
        "actions": [act],
        "params": [
            {"name": "study", "long": "study", "type": str, "default": "",
             "help": "first, core, accsplit, realism or all: the study to reproduce, with its "
                     "own campaign file, reference runs and claims (default: first)"},
            {"name": "runs", "long": "runs", "type": list, "default": [],
             "help": "reproduce only the runs matching this glob (repeatable)"},
            {"name": "windows", "long": "windows", "type": list, "default": [],
             "help": "only the runs of this measurement window (repeatable; accsplit)"},
            {"name": "sessions", "long": "sessions", "type": int, "default": 0,
             "help": "only the first N sessions of each run (realism; --dry-run only for now)"},
            {"name": "budget", "long": "budget", "type": str, "default": "",
             "help": "e.g. 60m: the runs (and prompts per domain) that test the most claims "
                     "within this time on this machine; printed, then run"},
            {"name": "kick", "long": "kick", "type": bool, "default": False,
             "help": "the study's smallest run set through its whole pipeline (first: 3 runs, "
                     "1 prompt per domain)"},
            {"name": "prompts_per_domain", "long": "prompts-per-domain", "type": int,
             "default": 0, "help": "only the first N prompts of each domain (0: all)"},
            {"name": "into", "long": "into", "type": str, "default": "",
             "help": "the reproduction folder (default: experiments/reproductions/"
                     "<hardware>-<date>[-<label>])"},
            {"name": "campaign", "long": "campaign", "type": str, "default": "",
             "help": "another campaign file whose runs to rerun (default: the study's)"},
            {"name": "strict", "long": "strict", "type": bool, "default": False,
             "help": "fail on a failed or violated claim, or any failure on the same hardware"},
            {"name": "dry_run", "long": "dry-run", "type": bool, "default": False,
             "help": "calibrate and print the plan with its ETA; measure nothing else"},
            {"name": "no_wait", "long": "no-wait", "type": bool, "default": False,
             "help": "if another measurement holds this host's lock, fail at once instead "
                     "of waiting for it"},
        ],
        # No task_dep on the toolchain: the selection (--runs, --kick) is checked first, in
        # one line, and llama-server is built on demand only when something will be measured.
        "uptodate": [False],  # measuring is never skipped as up to date; it resumes instead
        "verbosity": 2,
    }


def task_compare() -> dict[str, Any]:
    """Compare two run sets side by side: `doit compare A B` (runs or reproduction folders)."""

    def act(sets: list[str], strict: bool, out: str) -> bool:
        from artifact.reproduce.command import main

        # doit gives pos_arg every word after the task's name: `A B --strict` too
        opts = [s for s in sets if s.startswith("-")]
        sets = [s for s in sets if not s.startswith("-")]
        strict = strict or "--strict" in opts
        out = next((o.partition("=")[2] for o in opts if o.startswith("--out=")), out)
        unknown = [o for o in opts if o != "--strict" and not o.startswith("--out=")]
        if unknown:
            print(f"error: doit compare: unknown option {unknown[0]} (options: --strict, "
                  "--out=DIR)", file=sys.stderr)
            return False
        if len(sets) != 2:
            print("error: doit compare: give two run sets, A (reference) and B",
                  file=sys.stderr)
            return False
        argv = ["compare", *sets, *(["--strict"] if strict else []),
                *([f"--out={out}"] if out else [])]
        return main(argv) == 0

    return {
        "actions": [act],
        "pos_arg": "sets",
        "params": [
            {"name": "campaign", "long": "campaign", "type": str, "default": "",
             "help": "the campaign file whose runs to rerun (default: "
                     "experiments/campaigns/cpu-study.toml), e.g. "
                     "experiments/campaigns/accsplit.toml"},
            {"name": "strict", "long": "strict", "type": bool, "default": False,
             "help": "fail on a failed or violated claim, or any failure on the same hardware"},
            {"name": "out", "long": "out", "type": str, "default": "",
             "help": "where the report goes (default: B's report/ folder)"},
        ],
        "uptodate": [False],  # a gate is never skipped as up to date
        "verbosity": 2,
    }
