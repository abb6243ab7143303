"""The Slurm executor: one run = one job, submitted with submitit, watched through squeue.

``submit`` sends a run that is not current as one job (:class:`~artifact.executors.slurm_job.
MeasureJob`) unless the run's ledger (``<run>/slurm.jsonl``, :mod:`artifact.executors.ledger`)
names a job that Slurm still holds (pending, running, requeued, completing): a second
``doit campaign`` while jobs are queued submits nothing. ``watch`` shows a progress view over
the jobs (pending / running / done / failed, each run's own progress read from its run
directory) until none is left in the queue, then the same per-run summary as a local campaign.
A job that ended without completing its run is said in one line, with why and its Slurm log.

Why submitit: it pickles the job and, on a time-out or preemption signal, checkpoints and
requeues it (``scontrol requeue``); the sbatch script it submits is written by
:mod:`artifact.executors.slurm_script`, every value checked or quoted. The runner's
append-and-resume makes the requeued job continue where the first stopped. Job states are read
with ``squeue`` (which every Slurm answers, with or without accounting); ``sacct`` is asked
only for the final state of a job that ``squeue`` has already forgotten.

Layout under the runs directory (``_``-prefixed: the analysis skips it)::

    <runs>/<run>/slurm.jsonl              the run's job ledger (kept with the run)
    <runs>/_slurm/logs/<run>/<job>_0_log.out   the job's Slurm log (stdout and stderr)
    <runs>/_slurm/locks/<run>.lock        held by the job measuring the run
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import submitit

from artifact import paths, records
from artifact.campaign.runner import run_is_current, runs_folder, supersede_if_changed
from artifact.errors import ArtifactError, SpecError
from artifact.executor_spec import SlurmSettings
from artifact.executors import RunStatus, ledger, progress
from artifact.executors.slurm_job import MeasureJob
from artifact.executors.slurm_script import job_script
from artifact.log import Log
from artifact.log import stderr as log_stderr
from artifact.spec import Campaign, RunSpec

# States in which Slurm still holds a job (it may yet run, or is running, or is cleaning up):
# a run with such a job is never submitted again.
ALIVE = frozenset({
    "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
    "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
})
RUNNING = frozenset({"CONFIGURING", "RUNNING", "COMPLETING", "SIGNALING", "STAGE_OUT"})


class SlurmError(ArtifactError):
    """Slurm cannot be reached or refused a submission; one line saying which."""


@dataclass(frozen=True)
class JobState:
    job_id: str
    state: str  # squeue's %T, e.g. PENDING, RUNNING, CANCELLED
    node: str  # %N, empty while pending
    reason: str  # %r, e.g. Resources, Priority, None


def _run_cmd(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    if shutil.which(cmd[0]) is None:
        raise SlurmError(f"{cmd[0]} not found: the Slurm executor needs the Slurm client "
                         "commands (run on a login node, or install slurm-client)")
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
    except subprocess.TimeoutExpired as err:
        raise SlurmError(f"{' '.join(cmd[:2])} did not answer in 60 s") from err


def squeue(job_ids: Sequence[str]) -> dict[str, JobState]:
    """The states Slurm still holds for these jobs (finished ones for MinJobAge seconds)."""
    ids = sorted({j for j in job_ids if j})
    if not ids:
        return {}
    proc = _run_cmd(["squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", "%i|%T|%N|%r"])
    if proc.returncode != 0:
        if "Invalid job id" in proc.stderr:
            return {}  # every one of them is gone from the controller's memory
        said = (proc.stderr or proc.stdout).strip().splitlines() or ["(no output)"]
        raise SlurmError(f"squeue failed (exit {proc.returncode}): {said[-1]}")
    out: dict[str, JobState] = {}
    for line in proc.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 4:
            out[parts[0]] = JobState(parts[0], parts[1], parts[2], parts[3])
    return out


def sacct_state(job_id: str) -> str | None:
    """The final state of a job ``squeue`` no longer knows (accounting, or the jobcomp file)."""
    for extra in ([], ["-c"]):
        try:
            proc = _run_cmd(["sacct", *extra, "-n", "-P", "-X", "-o", "JobID,State",
                             "-j", job_id])
        except SlurmError:
            return None
        for line in proc.stdout.splitlines():
            jid, _, state = line.partition("|")
            if jid.strip() == job_id and state.strip():
                return state.strip().split()[0]
    return None


def _minutes(t: str) -> int:
    """sbatch --time to whole minutes.

    >>> [_minutes(t) for t in ("90", "1:30:00", "2-00", "1-2:03", "10:30")]
    [90, 90, 2880, 1563, 11]
    """
    days, _, rest = t.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if days:
        h, m, s = [*parts, 0, 0][:3]
        return int(days) * 1440 + h * 60 + m + math.ceil(s / 60)
    if len(parts) == 3:
        return parts[0] * 60 + parts[1] + math.ceil(parts[2] / 60)
    if len(parts) == 2:
        return parts[0] + math.ceil(parts[1] / 60)
    return parts[0]


class _Submitter(submitit.SlurmExecutor):
    """submitit's executor, its job script written by :func:`~artifact.executors.slurm_script.
    job_script` (every value checked or quoted; no ``--time`` unless one was asked for)."""

    def __init__(self, folder: Path, settings: SlurmSettings, job_name: str) -> None:
        super().__init__(folder=folder)
        # written now, so that a value it refuses stops the submission before anything else
        self.script = job_script(settings, job_name=job_name, folder=Path(self.folder),
                                 chdir=paths.ROOT, python=sys.executable)

    def _make_submission_file_text(self, command: str, uid: str) -> str:
        return self.script


def local_only(specs: Sequence[RunSpec], where: str) -> None:
    """Refuse interleaved runs: a Slurm job measures one run, and a group must be measured
    together on one host. One line naming the file and a run."""
    grouped = [s for s in specs if s.interleave is not None]
    if grouped:
        raise SpecError(f"{where}: run {grouped[0].run_id} is in interleave group "
                        f"{grouped[0].interleave!r}, which measures on one host: run it with "
                        "--executor local (a Slurm job measures one run)")


class SlurmCampaign:
    """Submit and watch the runs of one campaign as Slurm jobs (an
    :class:`~artifact.executors.Executor`)."""

    def __init__(self, campaign: Campaign, runs_root: Path,
                 settings: SlurmSettings | None = None) -> None:
        self.campaign = campaign
        self.runs_root = runs_folder(runs_root)
        self.settings = settings or campaign.executor.slurm
        base = Path(self.settings.log_dir) if self.settings.log_dir else runs_root / "_slurm"
        self.log_root = base / "logs" if not self.settings.log_dir else base
        self.lock_dir = runs_root / "_slurm" / "locks"
        self._controller_up = False

    # -- submission ---------------------------------------------------------------------------
    def _executor(self, run_id: str) -> _Submitter:
        s = self.settings
        try:
            ex = _Submitter(self.log_root / run_id, s, f"{s.job_name}-{run_id}")
        except RuntimeError as err:
            raise SlurmError(f"{err} (the Slurm executor needs sbatch and srun)") from err
        if s.time is not None:  # submitit counts time-outs against it; the script has its own
            ex.update_parameters(time=_minutes(s.time))
        return ex

    def _ping(self) -> None:
        """The controller answers (else one line, before sbatch says it in four)."""
        if self._controller_up:
            return
        proc = _run_cmd(["scontrol", "ping"])
        if proc.returncode != 0 or "UP" not in proc.stdout:
            said = (proc.stderr or proc.stdout).strip().splitlines() or ["(no output)"]
            raise SlurmError(f"the Slurm controller does not answer (scontrol ping: {said[-1]});"
                             " is SLURM_CONF right?")
        self._controller_up = True

    def live_job(self, spec: RunSpec) -> JobState | None:
        """The job Slurm still holds for this run, if any (from the run's ledger)."""
        views = ledger.jobs(ledger.read(self.runs_root / spec.run_id))
        if not views:
            return None
        last = views[-1].job_id
        st = squeue([last]).get(last)
        return st if st is not None and st.state in ALIVE else None

    def submit(self, spec: RunSpec, say: Log) -> str | None:
        """Submit one run unless it is current or Slurm still holds a job for it."""
        if run_is_current(spec, self.runs_root):
            return None
        live = self.live_job(spec)
        if live is not None:
            say(f"{spec.run_id}: job {live.job_id} is {live.state.lower()}; not submitted again")
            return None
        self._ping()
        ex = self._executor(spec.run_id)
        run_dir = self.runs_root / spec.run_id
        supersede_if_changed(run_dir, spec, self.runs_root, say)
        job = MeasureJob(str(self.campaign.file.resolve()), spec.run_id,
                         str(self.runs_root.resolve()), str(self.lock_dir.resolve()))
        t0 = time.time()
        try:
            sj = ex.submit(job)
        except (subprocess.CalledProcessError, submitit.core.utils.FailedJobError) as err:
            detail = getattr(err, "stderr", None) or getattr(err, "output", None) or err
            if isinstance(detail, bytes):
                detail = detail.decode(errors="replace")
            said = str(detail).strip().splitlines() or ["(no output)"]
            raise SlurmError(f"{spec.run_id}: sbatch refused the job: {said[-1]}") from err
        sbatch_s = time.time() - t0
        log = paths.shown(Path(str(sj.paths.stdout)))
        ledger.append(run_dir, ledger.submitted(sj.job_id, t0, sbatch_s, log))
        say(f"{spec.run_id}: submitted as job {sj.job_id} (log: {log})")
        return str(sj.job_id)

    # -- watching -----------------------------------------------------------------------------
    def statuses(self, specs: Sequence[RunSpec]) -> list[RunStatus]:
        views = {s.run_id: ledger.jobs(ledger.read(self.runs_root / s.run_id)) for s in specs}
        last = {rid: v[-1] for rid, v in views.items() if v}
        states = squeue([j.job_id for j in last.values()])
        out = []
        for spec in specs:
            run = self.runs_root / spec.run_id
            n_done, n_exp = progress(run, spec)
            job = last.get(spec.run_id)
            if run_is_current(spec, self.runs_root):
                out.append(RunStatus(spec.run_id, "done", job.job_id if job else None,
                                     job.nodes[-1] if job and job.nodes else None, n_done,
                                     n_exp, log=job.log if job else None))
                continue
            if job is None:
                out.append(RunStatus(spec.run_id, "to submit", None, None, n_done, n_exp))
                continue
            st = states.get(job.job_id)
            node = (st.node if st and st.node else None) or (job.nodes[-1] if job.nodes else None)
            if st is not None and st.state in ALIVE:
                state = "running" if st.state in RUNNING else "pending"
                out.append(RunStatus(spec.run_id, state, job.job_id, node if state ==
                                     "running" else None, n_done, n_exp,
                                     why=st.reason if state == "pending" else None,
                                     log=job.log))
                continue
            final = st.state if st is not None else sacct_state(job.job_id)
            why = job.failed or (f"Slurm state {final}" if final else
                                 "the job ended without completing the run")
            if job.failed and final and final != "FAILED":
                why = f"{why} (Slurm state {final})"
            out.append(RunStatus(spec.run_id, "failed", job.job_id, node, n_done, n_exp,
                                 why=why, log=job.log))
        return out

    def watch(self, specs: Sequence[RunSpec], say: Log, *, wait: bool = True,
              poll_s: float | None = None) -> list[RunStatus]:
        """Show progress over the jobs until Slurm holds none of them (or once, not waiting)."""
        poll = self.settings.poll_s if poll_s is None else poll_s
        shown: dict[str, tuple[str, int]] = {}
        while True:
            sts = self.statuses(specs)
            for st in sts:
                key = (st.state, _decile(st))
                if shown.get(st.run_id) != key:
                    shown[st.run_id] = key
                    say(st.line())
            alive = [s for s in sts if s.state in ("pending", "running")]
            if not wait or not alive:
                counts = {k: sum(s.state == k for s in sts)
                          for k in ("pending", "running", "done", "failed", "to submit")}
                say("jobs: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
                return sts
            time.sleep(poll)


def _decile(st: RunStatus) -> int:
    return 10 * st.n_done // st.n_expected if st.n_expected else st.n_done


def summary_lines(sts: Sequence[RunStatus], runs_root: Path) -> list[str]:
    """The per-run summary a local campaign prints, and one line per failed job."""
    lines = []
    for st in sts:
        if st.state == "failed":
            lines.append(f"FAILED {st.failure()}")
            continue
        try:
            m = records.read_json(runs_root / st.run_id / records.METRICS)
        except records.RecordError:
            lines.append(f"{st.run_id}: {st.state} ({st.n_done}/{st.n_expected or '?'} "
                         "requests so far)")
            continue
        lines.append(f"{st.run_id}: {m.get('n_results')}/{m.get('n_expected')} requests, "
                     f"{m.get('n_errors')} errors, {float(m.get('measure_s', 0.0)):.1f} s "
                     f"measured, complete={m.get('complete')}")
    return lines


say_stderr: Log = log_stderr("slurm")
