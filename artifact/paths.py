"""Every path the artifact reads or writes, in one place.

Paths are relative to the repository root (``ROOT``) so that nothing of one machine leaks into
committed files; the cache lives outside the repository, under ``$SPECDEC_CACHE`` or the user's
cache directory.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

EXPERIMENTS = ROOT / "experiments"
CAMPAIGNS = EXPERIMENTS / "campaigns"
RUNS = EXPERIMENTS / "runs"
WORKLOAD_RUNS = EXPERIMENTS / "runs-workload"  # the workload study's runs (issue 10)
REALISM_RUNS = EXPERIMENTS / "runs-realism"  # workload realism, take three (issue 28)
# the realism study's replicated server processes: three per side (issue 44)
PROCESS_RUNS = EXPERIMENTS / "runs-realism-process"
COST_RUNS = EXPERIMENTS / "runs-cost"  # forward time per step, one folder per model (issue 16)
PROMPTS = EXPERIMENTS / "prompts"
PROMPT_RECIPES = EXPERIMENTS / "prompt_sets.toml"
SESSION_LOCKS = EXPERIMENTS / "sessions"  # the id lock of each session set: <set>.txt
ANALYSIS = EXPERIMENTS / "analysis"
SUMMARY = ANALYSIS / "summary.json"
WORKLOAD = ANALYSIS / "workload.json"
ACCSPLIT = ANALYSIS / "accsplit.json"
REALISM = ANALYSIS / "realism.json"
REALISM_CAMPAIGN = CAMPAIGNS / "realism.toml"  # its [equivalence] margins, read by the analysis
PROCESS_CAMPAIGN = CAMPAIGNS / "realism-process.toml"  # the replicated stratum (issue 44)
COSTMODEL = ANALYSIS / "costmodel.json"
CORE = ANALYSIS / "core.json"  # the core study, take three (issue 29)
CLAIMS = EXPERIMENTS / "claims.toml"
STUDY = CAMPAIGNS / "cpu-study.toml"
REPRODUCTIONS = EXPERIMENTS / "reproductions"  # reruns of the study, beside the committed runs
# The committed runs, written by campaigns only (a reproduction never writes into them; nor into
# a committed reproduction's own runs, REPRODUCTIONS/<name>/runs)
# The core study, take three (issue 29): its cost and pilot runs, then its cells.
CORE_RUNS = EXPERIMENTS / "runs-core"
# what the cost model predicted for each of its cells, committed before they were measured
CORE_PREDICTIONS = EXPERIMENTS / "core-predictions.json"
# Gemma 3 270M (issue 44): its calibration and study runs, and the predictions made from the
# calibration alone before the study was measured
GEMMA_RUNS = EXPERIMENTS / "runs-gemma"
GEMMA_PREDICTIONS = EXPERIMENTS / "gemma-predictions.json"
MEMORY_RUNS = EXPERIMENTS / "runs-memory"  # peak resident memory per configuration (issue 33)
MEMORY = ANALYSIS / "memory.json"
COMMITTED_RUNS = (RUNS, COST_RUNS, REALISM_RUNS, WORKLOAD_RUNS, CORE_RUNS, MEMORY_RUNS,
                  PROCESS_RUNS, GEMMA_RUNS)

TEMPLATES = ROOT / "templates"
MANUSCRIPT = ROOT / "manuscript"
BUILD = MANUSCRIPT / "build"


def cache_dir() -> Path:
    """The per-user cache for built binaries and downloaded models (never inside the repo)."""
    env = os.environ.get("SPECDEC_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "specdec-artifact"


def shown(path: Path, *, outside: str = "path") -> str:
    """``path`` as a message or a committed file names it: relative to the repository.

    Outside the repository it is the resolved path, or with ``outside="name"`` only the file's
    name (for text that is committed, so that no path of one machine leaks into it).

    >>> shown(ROOT / "experiments" / "runs"), shown(Path("/elsewhere/x.json"), outside="name")
    ('experiments/runs', 'x.json')
    """
    p = path.resolve()
    if p.is_relative_to(ROOT):
        return p.relative_to(ROOT).as_posix()
    return p.name if outside == "name" else str(p)
