"""The job ledger of a run measured through Slurm: ``<run>/slurm.jsonl``.

One JSON line per event, appended and fsynced like the run's records, so that a run directory
says itself which jobs measured it and whether one is still queued (no double submission)::

    {"event": "submitted", "job_id": "41", "unix_s": ..., "sbatch_s": 0.08, "log": "..."}
    {"event": "started",   "job_id": "41", "unix_s": ..., "node": "node1", "restarts": 0,
     "hardware": {"cpu_model": ..., "cpu_cores": ..., "gpu": ..., "gpu_driver": ...}}
    {"event": "checkpoint", "job_id": "41", ...}    (time-out or preemption: requeued)
    {"event": "failed",    "job_id": "41", "reason": "node node1: ..."}
    {"event": "finished",  "job_id": "41", "complete": true}

A run measured by the local executor has no ledger.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import records

LEDGER = "slurm.jsonl"


def event(kind: str, job_id: str, node: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"event": kind, "job_id": str(job_id), "unix_s": round(time.time(), 3)}
    if node is not None:
        out["node"] = node
    return {**out, **extra}


def submitted(job_id: str, t0: float, sbatch_s: float, log: str) -> dict[str, Any]:
    return {"event": "submitted", "job_id": str(job_id), "unix_s": round(t0, 3),
            "sbatch_s": round(sbatch_s, 3), "log": log}


def started(job_id: str, node: str, restarts: int, hw: dict[str, Any]) -> dict[str, Any]:
    return event("started", job_id, node, restarts=restarts, hardware=hw)


def failed(job_id: str, node: str, reason: str) -> dict[str, Any]:
    return event("failed", job_id, node, reason=reason)


def finished(job_id: str, node: str, complete: bool) -> dict[str, Any]:
    return event("finished", job_id, node, complete=complete)


def append(run_dir: Path, row: dict[str, Any]) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    records.append_jsonl(run_dir / LEDGER, row)


def read(run_dir: Path) -> list[dict[str, Any]]:
    return [r for r in records.read_jsonl(run_dir / LEDGER).rows if isinstance(r, dict)]


@dataclass(frozen=True)
class JobView:
    """What the ledger says about one job of a run."""

    job_id: str
    submitted_unix_s: float | None
    log: str | None
    started_unix_s: list[float]  # one per start (requeues start again)
    nodes: list[str]
    failed: str | None  # the job's own one-line reason, when it said one
    finished: bool | None  # complete flag when the job ended normally


def jobs(rows: list[dict[str, Any]]) -> list[JobView]:
    """The jobs of a ledger in submission order."""
    order: list[str] = []
    by: dict[str, dict[str, Any]] = {}
    for r in rows:
        jid = str(r.get("job_id", ""))
        if not jid:
            continue
        if jid not in by:
            order.append(jid)
            by[jid] = {"sub": None, "log": None, "starts": [], "nodes": [], "failed": None,
                       "finished": None}
        j = by[jid]
        kind = r.get("event")
        if kind == "submitted":
            j["sub"], j["log"] = r.get("unix_s"), r.get("log")
        elif kind == "started":
            j["starts"].append(r.get("unix_s"))
            j["nodes"].append(str(r.get("node")))
            j["failed"], j["finished"] = None, None  # a requeued job starts afresh
        elif kind == "failed":
            j["failed"] = str(r.get("reason", ""))
        elif kind == "finished":
            j["finished"] = bool(r.get("complete"))
    return [JobView(job_id=jid, submitted_unix_s=by[jid]["sub"], log=by[jid]["log"],
                    started_unix_s=[s for s in by[jid]["starts"] if isinstance(s, float | int)],
                    nodes=by[jid]["nodes"], failed=by[jid]["failed"],
                    finished=by[jid]["finished"]) for jid in order]
