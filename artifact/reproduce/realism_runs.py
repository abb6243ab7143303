"""The realism study's variables of a run set, like with like: the same runs, the same sessions.

A run set holding per-side realism runs (:mod:`artifact.analysis.realism`) gets the
manuscript's ``realism`` variables, from which the ``rl-`` claims are read. A reproduction may
have rerun each run's first sessions only (``config.json: session_ids``, in play order): the
reference is then cut to the reproduction's runs and, run by run, to those sessions' turns, and
both sides go through the same analysis (the campaign file's margins and strata; no replicated
process stratum, which a reproduction does not rerun).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from artifact import files, paths, records
from artifact.analysis import realism
from artifact.analysis.runs import AnalysisError
from artifact.analysis.validate import realism as vrealism
from artifact.errors import RunSetError, SpecError
from artifact.spec import load_campaign

Keep = Mapping[str, frozenset[str] | None]  # run id -> the sessions it played (None: all)


def has_realism_runs(root: Path) -> bool:
    """True when a run folder under ``root`` is a per-side realism run (its spec plays one side
    of a workload)."""
    for run in records.run_folders(root):
        try:
            spec = records.read_json(run / records.CONFIG).get("spec")
        except (records.RecordError, ValueError, FileNotFoundError):
            continue
        w = spec.get("workload") if isinstance(spec, dict) else None
        if isinstance(w, dict) and w.get("play") is not None:
            return True
    return False


def sessions_of(run: Path) -> frozenset[str] | None:
    """The sessions a run was limited to (``config.json: session_ids``), ``None`` for all."""
    try:
        ids = records.read_json(run / records.CONFIG).get("session_ids")
    except (records.RecordError, ValueError, FileNotFoundError):
        return None
    return frozenset(str(i) for i in ids) if isinstance(ids, list) else None


def kept(root: Path) -> dict[str, frozenset[str] | None]:
    """Each per-side run under ``root`` and the sessions it played: what a reference is cut to."""
    runs, _ = realism.load_runs(root)
    return {r.run_id: sessions_of(root / r.run_id) for r in runs}


def variables(root: Path, keep: Keep | None = None, *,
              campaign_file: Path = paths.REALISM_CAMPAIGN) -> Any:
    """The ``realism`` variables of the per-side runs under ``root`` (``keep``: only these runs,
    each on its sessions), or ``None`` when there is none to analyse."""
    runs, warnings = realism.load_runs(root)
    if keep is not None:
        runs = [_cut(r, keep[r.run_id]) for r in runs if r.run_id in keep]
    if not runs:
        return None
    try:
        margins, groups = realism.margins_of(campaign_file)
        camp = load_campaign(campaign_file, read_site=False)
        result = realism.analyse(runs, margins, groups=groups, campaign=paths.shown(campaign_file),
                                 plans=vrealism.planned(camp, paths.shown(campaign_file)))
    except (AnalysisError, SpecError) as err:
        raise RunSetError(str(err)) from err
    plain = {k: files.to_plain(v, k) for k, v in result.items() if k != "warnings"}
    plain["warnings"] = sorted(set(warnings + result["warnings"]))
    from artifact.contract import realism as contract  # only for a run set of the study
    from artifact.render import realism as rrealism

    checked = contract.validate(plain, source=f"realism analysis of {paths.shown(root)}",
                                error=RunSetError)
    return files.to_plain(rrealism.variables(checked))


def _cut(run: realism.SideRun, sessions: frozenset[str] | None) -> realism.SideRun:
    if sessions is None:
        return run
    return dataclasses.replace(run, turns=[t for t in run.turns if t.session_id in sessions])
