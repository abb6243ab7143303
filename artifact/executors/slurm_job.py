"""What one Slurm job does on its node: check the toolchain, then measure (or resume) one run.

The job is a :class:`MeasureJob` pickled by submitit (by its import path,
``artifact.executors.slurm_job.MeasureJob``); it imports this package from the repository the
campaign was submitted from (the job's working directory), so the nodes must see that checkout
and its Python environment (a shared filesystem, as on any cluster).

Before anything is measured the node is checked, and a node that cannot measure fails fast with
one line naming the node and what is missing (:class:`NodeError`): the ``llama-server`` binary
(the campaign's own, or the pinned build in the toolchain cache) must be there and start
(``--version``), every model file must be there (the pinned model with its pinned sha256), and a
run already begun must be resumed on the same hardware (:mod:`artifact.hardware`) unless the
campaign allows pooling mixed hardware.

A file lock per run (``<runs>/_slurm/locks/<run>.lock``) keeps two jobs of one run (a requeued
job whose first copy still runs on a node that lost its slurmd) from writing the same run:
the second waits, then resumes or finds the run complete. When Slurm signals a time-out or a
preemption, submitit calls :meth:`MeasureJob.checkpoint` and requeues the job; the runner's
append-and-resume does the rest, so no record is lost or duplicated.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import submitit

from artifact import hardware, toolchain
from artifact.campaign.fingerprint import cpu_model
from artifact.campaign.gpu import gpu_driver, gpu_name
from artifact.campaign.runner import recorded_config, run
from artifact.errors import ArtifactError
from artifact.executors import ledger
from artifact.log import Log
from artifact.log import stderr as log_stderr
from artifact.spec import Campaign, RunSpec, load_campaign

VERSION_TIMEOUT_S = 60


class NodeError(ArtifactError):
    """This node cannot measure the run; one line naming the node and what is missing."""


def node_name() -> str:
    return os.environ.get("SLURMD_NODENAME") or platform.node()


def node_hardware() -> dict[str, Any]:
    """This node's hardware fingerprint fields, as ``config.json: environment`` records them."""
    return {"cpu_model": cpu_model(), "cpu_cores": os.cpu_count(), "gpu": gpu_name(),
            "gpu_driver": gpu_driver()}


def _binary(campaign: Campaign, node: str) -> Path:
    if campaign.server_binary:
        binary = Path(campaign.server_binary)
        if not binary.is_file():
            raise NodeError(f"node {node}: llama-server not found at {binary} "
                            "([server] binary of the campaign)")
        return binary
    binary = toolchain.server_binary()
    if not toolchain.llama_is_built():
        raise NodeError(f"node {node}: the pinned llama-server is not built in the toolchain "
                        f"cache {toolchain.llama_dir()} (run `doit toolchain` where the nodes "
                        "see it and set [executor.slurm] cache_dir, or name your own build in "
                        "[server] binary)")
    return binary


def _check_starts(binary: Path, node: str) -> None:
    try:
        proc = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                              check=False, timeout=VERSION_TIMEOUT_S)
    except OSError as err:
        raise NodeError(f"node {node}: {binary} does not start ({err.strerror})") from err
    except subprocess.TimeoutExpired as err:
        raise NodeError(f"node {node}: {binary} --version did not return in "
                        f"{VERSION_TIMEOUT_S} s") from err
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise NodeError(f"node {node}: {binary} --version failed (exit {proc.returncode}): "
                        f"{tail[0]}")


def _check_model(campaign: Campaign, key: str, node: str) -> None:
    m = campaign.models[key]
    if m.builtin is not None:
        path, sha = toolchain.builtin_file(m.builtin)
        if not path.is_file() or toolchain.sha256_file(path) != sha:
            raise NodeError(f"node {node}: model {key}: the pinned GGUF is missing or differs "
                            f"at {path} (run `doit toolchain` where the nodes see it)")
    elif m.path is not None:
        if not Path(m.path).is_file():
            raise NodeError(f"node {node}: model {key}: file not found: {m.path}")
    else:
        assert m.derive is not None
        _check_model(campaign, m.derive, node)
        if not toolchain.quantize_binary().is_file():
            raise NodeError(f"node {node}: model {key} is derived with llama-quantize, not "
                            f"found at {toolchain.quantize_binary()}")


def check_node(campaign: Campaign, spec: RunSpec, node: str) -> None:
    """Fail fast, before any measurement, on a node that lacks the run's toolchain."""
    binary = _binary(campaign, node)
    _check_starts(binary, node)
    for key in (spec.target_model, spec.draft_model):
        if key is not None:
            _check_model(campaign, key, node)


def check_same_hardware(campaign: Campaign, run_dir: Path, node: str) -> None:
    """A run begun elsewhere resumes only on the same hardware (unless pooling is allowed)."""
    config = recorded_config(run_dir)
    if config is None or campaign.pool_mixed_hardware:
        return
    began = config.get("environment", {})
    diff = hardware.differing(began, node_hardware())
    if diff:
        here = hardware.fingerprint(node_hardware())
        there = hardware.fingerprint(began)
        fields = ", ".join(f"{f} {there[f]!r} there, {here[f]!r} here" for f in diff)
        raise NodeError(f"node {node}: run {run_dir.name} was begun on other hardware "
                        f"({fields}); constrain the jobs to one kind of node "
                        "([executor.slurm] constraint) or set [campaign] pool_mixed_hardware")


@contextlib.contextmanager
def run_lock(lock_dir: Path, run_id: str, say: Log) -> Iterator[None]:
    """Hold ``<lock_dir>/<run_id>.lock`` (POSIX lock, works across NFS clients)."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    with (lock_dir / f"{run_id}.lock").open("a+") as f:
        waited = False
        while True:
            try:
                fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if not waited:
                    say(f"{run_id}: another job holds the run's lock; waiting for it")
                    waited = True
                time.sleep(2.0)
        try:
            yield
        finally:
            fcntl.lockf(f, fcntl.LOCK_UN)


_say: Log = log_stderr("slurm-job")


class MeasureJob(submitit.helpers.Checkpointable):
    """One run of a campaign as one Slurm job (resumable: requeue simply runs it again)."""

    def __init__(self, campaign_file: str, run_id: str, runs_root: str, lock_dir: str) -> None:
        self.campaign_file = campaign_file
        self.run_id = run_id
        self.runs_root = runs_root
        self.lock_dir = lock_dir

    def __call__(self) -> dict[str, Any]:
        runs_root = Path(self.runs_root)
        run_dir = runs_root / self.run_id
        job_id = os.environ.get("SLURM_JOB_ID", "?")
        node = node_name()
        restarts = int(os.environ.get("SLURM_RESTART_COUNT", "0") or 0)
        ledger.append(run_dir, ledger.started(job_id, node, restarts, node_hardware()))
        try:
            camp = load_campaign(Path(self.campaign_file), executor_kind="slurm")
            spec = camp.run(self.run_id)
            check_node(camp, spec, node)
            with run_lock(Path(self.lock_dir), self.run_id, _say):
                check_same_hardware(camp, run_dir, node)
                provenance = {"name": "slurm", "job_id": job_id, "node": node,
                              "partition": os.environ.get("SLURM_JOB_PARTITION"),
                              "cluster": os.environ.get("SLURM_CLUSTER_NAME")}
                m = run(camp, spec, runs_root=runs_root, executor=provenance, say=_say)
        except (ArtifactError, KeyError) as err:
            reason = str(err) if not isinstance(err, KeyError) else f"no run {self.run_id!r}"
            ledger.append(run_dir, ledger.failed(job_id, node, reason))
            _say(reason)
            raise
        except Exception as err:
            ledger.append(run_dir, ledger.failed(job_id, node, f"{type(err).__name__}: {err}"))
            raise
        ledger.append(run_dir, ledger.finished(job_id, node, m.complete))
        _say(f"{self.run_id}: {m.n_results}/{m.n_expected} requests, {m.n_errors} errors, "
             f"{m.measure_s:.1f} s measured, complete={m.complete}")
        return {"complete": m.complete, "n_results": m.n_results}

    def checkpoint(self, *args: Any, **kwargs: Any) -> submitit.helpers.DelayedSubmission:
        """Time-out or preemption: requeue the same job; the runner resumes from its files."""
        run_dir = Path(self.runs_root) / self.run_id
        ledger.append(run_dir, ledger.event("checkpoint", os.environ.get("SLURM_JOB_ID", "?"),
                                            node_name()))
        return submitit.helpers.DelayedSubmission(self)


__all__ = ["MeasureJob", "NodeError", "check_node", "check_same_hardware"]
