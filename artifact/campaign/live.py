"""One run's live server inside a group measured together (:mod:`artifact.campaign.interleave`,
:mod:`artifact.campaign.deployments`): its start number over the run's life, its counters at the
segment's start, and the wall time of its own requests."""

from __future__ import annotations

from typing import Any

import httpx

from artifact.campaign import events
from artifact.campaign.fingerprint import counter_delta
from artifact.campaign.runner import (
    MAX_FAILED_STARTS,
    Prepared,
    Tally,
    _metrics_snapshot,
    start_server,
)
from artifact.campaign.server import Server, ServerError
from artifact.log import Log


class LiveServer:
    """One run's server inside the group: its start number, counters and measured time."""

    def __init__(self, prep: Prepared, server: Server) -> None:
        self.prep = prep
        self.server = server
        self.tally = Tally.resume(prep.path)
        self.n = 0
        self.before: dict[str, float] = {}
        self.measure_s = 0.0
        self.failed_starts = 0
        self.served = False  # a measured request since the last start

    async def start(self, client: httpx.AsyncClient, say: Log) -> None:
        while True:
            try:
                self.n = await start_server(client, self.server, self.prep.spec,
                                            self.prep.path, self.tally, mode="interleaved")
                break
            except ServerError:
                self.failed_starts += 1
                if self.failed_starts >= MAX_FAILED_STARTS:
                    raise
        if self.n > 1:
            say(f"{self.prep.spec.run_id}: server start {self.n}")
        self.before = await _metrics_snapshot(client, self.server)
        self.measure_s = 0.0
        self.served = False

    async def end_segment(self, client: httpx.AsyncClient) -> None:
        delta: dict[str, Any] = {}
        if self.server.alive():
            delta = counter_delta(self.before, await _metrics_snapshot(client, self.server))
        events.record(self.prep.path, "segment_end", n=self.n,
                      measure_s=round(self.measure_s, 3), delta=delta)

    async def restart(self, client: httpx.AsyncClient, say: Log) -> None:
        """End the segment of a server that died (its counters are lost with it) and start it
        again."""
        await self.end_segment(client)
        await self.start(client, say)
