"""Where a campaign's runs execute: the engines beside the runner, behind one small interface.

An :class:`Executor` has a run measured (``submit``) and says where runs stand (``watch``).
Every engine measures through the same runner (:func:`artifact.campaign.runner.run`) into the
same run directories, under the same measurement lock and quiet gate; it decides only where and
when. The campaign command (``python -m artifact.campaign``) and ``doit campaign`` choose one
by the campaign's ``[executor] kind`` (:mod:`artifact.executor_spec`):

``local`` (:mod:`.local`, the default)
    measures on this machine, now: a run of an interleave group with the group's runs not yet
    current.
``slurm`` (:mod:`.slurm`, with :mod:`.slurm_job`, :mod:`.slurm_script`, :mod:`.ledger`)
    one run = one Slurm job, submitted with submitit and watched through ``squeue``.

A third engine is one more module here with these two methods, and its kind in
:data:`artifact.executor_spec.KINDS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from artifact import records
from artifact.log import Log
from artifact.spec import RunSpec


@dataclass(frozen=True)
class RunStatus:
    """Where one run stands under an executor (a job's fields only where there is a job)."""

    run_id: str
    state: str  # "done" | "pending" | "running" | "failed" | "to submit"
    job_id: str | None
    node: str | None
    n_done: int
    n_expected: int | None
    why: str | None = None  # pending reason, or why the job failed
    log: str | None = None

    def line(self) -> str:
        prog = f"{self.n_done}/{self.n_expected if self.n_expected is not None else '?'}"
        job = f"job {self.job_id}" if self.job_id else "no job"
        where = f" on {self.node}" if self.node else ""
        why = (f" ({self.why})" if self.why and self.why != "None" and self.state == "pending"
               else "")
        return f"{self.run_id:28s} {self.state:9s} {prog:>7s}  {job}{where}{why}"

    def failure(self) -> str:
        """One line: the run, the job, why it failed and where its Slurm log is."""
        return (f"{self.run_id}: job {self.job_id} failed{' on ' + self.node if self.node else ''}"
                f" after {self.n_done}/{self.n_expected or '?'} requests: {self.why}; "
                f"log: {self.log}")


class Executor(Protocol):
    """An engine that runs measure on (local, Slurm)."""

    def submit(self, spec: RunSpec, say: Log) -> None:
        """Have one run measured, unless it is current (local: now, to the end; Slurm: one
        job, unless Slurm still holds one for it)."""
        ...

    def watch(self, specs: Sequence[RunSpec], say: Log, *,
              wait: bool = True) -> list[RunStatus]:
        """Where the runs stand; with ``wait``, once none of them is still measuring."""
        ...


def progress(run: Path, spec: RunSpec) -> tuple[int, int | None]:
    """(requests recorded, requests expected) of a run directory, from its own files."""
    n = None
    try:
        ps = records.read_json(run / records.CONFIG).get("prompt_set", {})
    except records.RecordError:
        ps = None
    if isinstance(ps, dict) and isinstance(ps.get("n"), int):
        n = ps["n"] * spec.repeats
    keys = {(r.get("prompt_id"), r.get("repeat"))
            for r in records.iter_jsonl(run / records.RESULTS) if r is not None}
    return len(keys), n


__all__ = ["Executor", "RunStatus", "progress"]
