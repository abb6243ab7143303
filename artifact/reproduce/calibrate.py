"""A short calibration: how much slower (or faster) this machine is than the committed runs'.

The baseline run's first prompts are sent once more, with the baseline's own spec (same server
flags, same sampling, same number of tokens), to a fresh ``llama-server``; the ratio of their
end-to-end times here to the committed records' end-to-end times for the same prompts is the
factor that scales the committed runs' durations into an ETA. About 10-20 s on 2 cores. It
measures, so it holds this host's measurement lock (:func:`artifact.hostlock.measuring`).

A study of sessions compares like with like too: its no-draft run's first sessions in play
order (those of the reproduction's subset, at most :data:`N_SESSIONS`), every turn, replayed
from the committed run's own plan (``sessions.jsonl``) on a fresh server of that run's spec,
against the committed records of the same (session, turn) pairs (:func:`calibrate_sessions`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from artifact import records
from artifact.campaign.client import (
    Completed,
    chat_body,
    chat_complete,
    complete,
    request_body,
)
from artifact.campaign.runner import WARMUP_PROMPT, WARMUP_TOKENS
from artifact.campaign.server import Server, ServerFiles
from artifact.errors import CalibrationError
from artifact.hostlock import measuring
from artifact.log import Log
from artifact.spec import RunSpec
from artifact.workloads import PlannedSession, Prompt, session_from_json

N_PROMPTS = 2
N_SESSIONS = 2  # a study of sessions: at most this many sessions (every turn of each)
LOG = "calibration.log"  # the server's log, for a person; not committed (it names machine paths)


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """Same requests, here and in the committed run."""

    run_id: str
    prompt_ids: tuple[str, ...]
    here_ms: float  # sum of end-to-end times measured now
    committed_ms: float  # sum of the committed records' end-to-end times
    wall_s: float  # what the calibration itself took (server start included)
    session_ids: tuple[str, ...] = ()  # a study of sessions: the sessions replayed
    n_turns: int = 0  # ... and their turns (each timed here and in the committed run)

    @property
    def scale(self) -> float:
        """Here over committed: 2.0 means this machine takes twice as long.

        >>> Calibration(run_id="r", prompt_ids=("a",), here_ms=300.0, committed_ms=200.0,
        ...             wall_s=5.0).scale
        1.5
        """
        return self.here_ms / self.committed_ms if self.committed_ms > 0 else 1.0

    def as_dict(self) -> dict[str, Any]:
        d = {"run_id": self.run_id, "prompt_ids": list(self.prompt_ids),
             "here_ms": round(self.here_ms, 1), "committed_ms": round(self.committed_ms, 1),
             "scale": round(self.scale, 4), "wall_s": round(self.wall_s, 2)}
        if self.session_ids:
            d.update(session_ids=list(self.session_ids), turns=self.n_turns)
        return d


def committed_e2e(run_dir: Path) -> dict[str, float]:
    """End-to-end milliseconds per prompt id of a committed run (first repeat)."""
    recs, _ = records.read_results(run_dir, keep_events=False)
    return {r.prompt_id: r.e2e_ms for r in recs if r.repeat == 0}


def choose(prompts: Sequence[Prompt], committed: Mapping[str, float],
           n: int = N_PROMPTS) -> list[Prompt]:
    """The first ``n`` prompts of the set that the committed run also measured."""
    return [p for p in prompts if p.id in committed][:n]


def _served(files: ServerFiles, spec: RunSpec, log_dir: Path,
            play: Callable[[Server], Coroutine[Any, Any, list[float]]], *, wait: bool,
            say: Log | None) -> list[float]:
    """Under this host's measurement lock, start a server for ``spec``, ``play`` it (the
    times it returns), stop it."""
    log_dir.mkdir(parents=True, exist_ok=True)
    with measuring("reproduce calibration", wait=wait, say=say):
        server = Server(files, spec, log_dir / LOG)
        try:
            server.start()
            return asyncio.run(play(server))
        finally:
            server.stop()


def calibrate(files: ServerFiles, spec: RunSpec, prompts: Sequence[Prompt],
              committed: Mapping[str, float], log_dir: Path, *, wait: bool = True,
              say: Log | None = None) -> Calibration:
    """Start a server for ``spec``, warm it up, time ``prompts``; compare with ``committed``.

    Under this host's measurement lock: ``wait`` and ``say`` as in
    :func:`artifact.hostlock.measuring`.
    """
    t0 = time.perf_counter()
    here = _served(files, spec, log_dir, lambda server: _time(server, spec, prompts),
                   wait=wait, say=say)
    ids = tuple(p.id for p in prompts)
    return Calibration(run_id=spec.run_id, prompt_ids=ids, here_ms=sum(here),
                       committed_ms=sum(committed[i] for i in ids),
                       wall_s=time.perf_counter() - t0)


async def _time(server: Server, spec: RunSpec, prompts: Sequence[Prompt]) -> list[float]:
    out: list[float] = []
    async with httpx.AsyncClient() as client:
        warm = dict(request_body(spec, WARMUP_PROMPT), n_predict=WARMUP_TOKENS)
        for _ in range(max(spec.warmup, 1)):
            await complete(client, server.base_url, warm, spec.timeout_s)
        for p in prompts:
            res = await complete(client, server.base_url, request_body(spec, p.text),
                                 spec.timeout_s)
            if not isinstance(res, Completed):
                raise CalibrationError(f"calibration request {p.id} failed: {res.reason} "
                                       f"({res.detail})")
            out.append(res.e2e_ms)
    return out


# --- a study of sessions ------------------------------------------------------------------


def committed_turns(run_dir: Path) -> dict[tuple[str, int], float]:
    """End-to-end milliseconds per (session id, turn) of a committed workload run (its first
    completed attempt)."""
    turns, _ = records.read_turns(run_dir, keep_events=False)
    out: dict[tuple[str, int], float] = {}
    for t in sorted(turns, key=lambda t: t.attempt):
        out.setdefault((t.session_id, t.turn), t.e2e_ms)
    return out


def committed_plan(run_dir: Path) -> list[PlannedSession]:
    """The sessions a committed workload run played, in play order (its ``sessions.jsonl``;
    none when it has none)."""
    path = run_dir / records.SESSIONS
    if not path.is_file():
        return []
    read = records.read_jsonl(path)
    if read.n_bad_lines:  # a damaged plan is no plan to replay
        return []
    return sorted((session_from_json(r) for r in read.rows), key=lambda s: s.order)


def choose_sessions(planned: Sequence[PlannedSession],
                    committed: Mapping[tuple[str, int], float],
                    n: int = N_SESSIONS) -> list[PlannedSession]:
    """The first ``n`` sessions in play order whose every turn the committed run measured."""
    whole = [s for s in planned if s.turns
             and all((s.session_id, t.turn) in committed for t in s.turns)]
    return whole[:n]


def calibrate_sessions(files: ServerFiles, spec: RunSpec, sessions: Sequence[PlannedSession],
                       committed: Mapping[tuple[str, int], float], log_dir: Path, *,
                       wait: bool = True, say: Log | None = None) -> Calibration:
    """Start a server for ``spec`` (a workload run's), warm it up, play ``sessions`` turn by
    turn on one slot; compare with the ``committed`` records of the same turns."""
    t0 = time.perf_counter()
    here = _served(files, spec, log_dir, lambda server: _time_turns(server, spec, sessions),
                   wait=wait, say=say)
    keys = [(s.session_id, t.turn) for s in sessions for t in s.turns]
    return Calibration(run_id=spec.run_id, prompt_ids=(), here_ms=sum(here),
                       committed_ms=sum(committed[k] for k in keys),
                       wall_s=time.perf_counter() - t0,
                       session_ids=tuple(s.session_id for s in sessions), n_turns=len(keys))


async def _time_turns(server: Server, spec: RunSpec,
                      sessions: Sequence[PlannedSession]) -> list[float]:
    out: list[float] = []
    async with httpx.AsyncClient() as client:
        warm = dict(request_body(spec, WARMUP_PROMPT), n_predict=WARMUP_TOKENS)
        for _ in range(max(spec.warmup, 1)):
            await complete(client, server.base_url, warm, spec.timeout_s)
        for s in sessions:
            for t in s.turns:
                body = chat_body(s.messages(t.turn), n_predict=t.n_predict, slot=0, spec=spec)
                res = await chat_complete(client, server.base_url, body, spec.timeout_s)
                if not isinstance(res, Completed):
                    raise CalibrationError(f"calibration turn {t.turn} of session "
                                           f"{s.session_id} failed: {res.reason} "
                                           f"({res.detail})")
                out.append(res.e2e_ms)
    return out
