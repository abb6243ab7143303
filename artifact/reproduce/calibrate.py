"""A short calibration: how much slower (or faster) this machine is than the committed runs'.

The baseline run's first prompts are sent once more, with the baseline's own spec (same server
flags, same sampling, same number of tokens), to a fresh ``llama-server``; the ratio of their
end-to-end times here to the committed records' end-to-end times for the same prompts is the
factor that scales the committed runs' durations into an ETA. About 10-20 s on 2 cores. It
measures, so it holds this host's measurement lock (:func:`artifact.hostlock.measuring`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from artifact import records
from artifact.campaign.client import Completed, complete, request_body
from artifact.campaign.runner import WARMUP_PROMPT, WARMUP_TOKENS
from artifact.campaign.server import Server, ServerFiles
from artifact.errors import CalibrationError
from artifact.hostlock import measuring
from artifact.log import Log
from artifact.spec import RunSpec
from artifact.workloads import Prompt

N_PROMPTS = 2
LOG = "calibration.log"  # the server's log, for a person; not committed (it names machine paths)


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """Same requests, here and in the committed run."""

    run_id: str
    prompt_ids: tuple[str, ...]
    here_ms: float  # sum of end-to-end times measured now
    committed_ms: float  # sum of the committed records' end-to-end times
    wall_s: float  # what the calibration itself took (server start included)

    @property
    def scale(self) -> float:
        """Here over committed: 2.0 means this machine takes twice as long.

        >>> Calibration(run_id="r", prompt_ids=("a",), here_ms=300.0, committed_ms=200.0,
        ...             wall_s=5.0).scale
        1.5
        """
        return self.here_ms / self.committed_ms if self.committed_ms > 0 else 1.0

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "prompt_ids": list(self.prompt_ids),
                "here_ms": round(self.here_ms, 1), "committed_ms": round(self.committed_ms, 1),
                "scale": round(self.scale, 4), "wall_s": round(self.wall_s, 2)}


def committed_e2e(run_dir: Path) -> dict[str, float]:
    """End-to-end milliseconds per prompt id of a committed run (first repeat)."""
    recs, _ = records.read_results(run_dir, keep_events=False)
    return {r.prompt_id: r.e2e_ms for r in recs if r.repeat == 0}


def choose(prompts: Sequence[Prompt], committed: Mapping[str, float],
           n: int = N_PROMPTS) -> list[Prompt]:
    """The first ``n`` prompts of the set that the committed run also measured."""
    return [p for p in prompts if p.id in committed][:n]


def calibrate(files: ServerFiles, spec: RunSpec, prompts: Sequence[Prompt],
              committed: Mapping[str, float], log_dir: Path, *, wait: bool = True,
              say: Log | None = None) -> Calibration:
    """Start a server for ``spec``, warm it up, time ``prompts``; compare with ``committed``.

    Under this host's measurement lock: ``wait`` and ``say`` as in
    :func:`artifact.hostlock.measuring`.
    """
    t0 = time.perf_counter()
    log_dir.mkdir(parents=True, exist_ok=True)
    with measuring("reproduce calibration", wait=wait, say=say):
        server = Server(files, spec, log_dir / LOG)
        try:
            server.start()
            here = asyncio.run(_time(server, spec, prompts))
        finally:
            server.stop()
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
