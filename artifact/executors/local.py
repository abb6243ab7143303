"""The local executor: runs measure on this machine, now, one measuring unit at a time.

A unit is a lone run or the runs of one interleave group (:func:`artifact.campaign.interleave.
groups`): a group is measured together, prompt-major over its live servers
(:func:`~artifact.campaign.interleave.run_group`), a lone run by the runner
(:func:`~artifact.campaign.runner.run`). Nothing runs in the background, so ``watch`` only reads
where each run stands from its own files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from artifact import records
from artifact.campaign import quiet
from artifact.campaign.interleave import run_group
from artifact.campaign.runner import run, run_is_current
from artifact.executors import RunStatus, progress
from artifact.log import Log
from artifact.spec import Campaign, RunSpec


class LocalExecutor:
    """Measure the runs of one campaign on this machine (an :class:`~artifact.executors.
    Executor`)."""

    def __init__(self, campaign: Campaign, runs_root: Path, *,
                 cond: quiet.Conditions | None = None, show_progress: bool = True,
                 max_sessions: int | None = None) -> None:
        self.campaign = campaign
        self.max_sessions = max_sessions  # per-side groups: a calibration's first sessions
        self.runs_root = runs_root
        self.cond = cond  # None: quiet.Conditions.from_env(), per unit
        self.show_progress = show_progress

    def measure(self, unit: Sequence[RunSpec], say: Log) -> dict[str, records.RunMetrics]:
        """Measure (or finish) one unit: the runs of an interleave group together, or one run;
        return each run's metrics."""
        if unit[0].interleave is not None:
            return run_group(self.campaign, list(unit), runs_root=self.runs_root,
                             show_progress=self.show_progress, say=say, cond=self.cond,
                             max_sessions=self.max_sessions)
        return {unit[0].run_id: run(self.campaign, unit[0], runs_root=self.runs_root,
                                    show_progress=self.show_progress, say=say,
                                    cond=self.cond)}

    def submit(self, spec: RunSpec, say: Log) -> None:
        """Measure one run now; a run of an interleave group with every run of its group that
        is not current."""
        if spec.interleave is None:
            self.measure([spec], say)
            return
        self.measure([s for s in self.campaign.runs if s.interleave == spec.interleave
                      and (s.run_id == spec.run_id or not run_is_current(s, self.runs_root))],
                     say)

    def watch(self, specs: Sequence[RunSpec], say: Log, *,
              wait: bool = True) -> list[RunStatus]:
        """Where each run stands: done when its files say it is current, else to submit
        (nothing measures in the background, so there is nothing to wait for)."""
        out = []
        for spec in specs:
            n_done, n_expected = progress(self.runs_root / spec.run_id, spec)
            state = "done" if run_is_current(spec, self.runs_root) else "to submit"
            out.append(RunStatus(spec.run_id, state, None, None, n_done, n_expected))
        return out
