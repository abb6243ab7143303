"""Per-side deployments measured together: turn-major rounds over live servers (issue 28).

A workload run with ``deploy = "per-side"`` expands into one run per side (REAL-A, REAL-B, each
synthetic twin; :func:`artifact.spec.per_side`), each with its own ``llama-server``: its own
n-gram pool, its own KV cache, and no other side's text, ever. The runs of every drafter of a
stratum form one interleave group and are measured here, all servers alive at once:

- every server plays the same sessions in the same (the plan's seeded) order, so two servers
  of one drafter that play the same text (REAL-A and REAL-B) have identical histories;
- the sessions go in chunks of ``concurrency`` sessions; for each chunk and turn, one **round**
  sends that turn of the chunk's sessions to every server of the group, one server at a time,
  the chunk's sessions at once on that server's slots (at concurrency 1: one request in
  flight). A speedup is then a ratio of servers measured seconds apart;
- a round's order of servers is a row of a Williams design (``round_servers``, planned below
  the campaign with ``rounds`` in the workload planning package), the rows
  shuffled once by seed and label: over the rounds every server takes every place equally
  often and follows every other server equally often. Each record keeps its place
  (``round_pos``).

A turn is never measured again: its session's cache and its drafter's state have moved on. A
contended turn stays recorded as such; the analysis drops that (session, turn) from every side.
Failures are retried, and a dead server restarted, as in :mod:`artifact.campaign.interleave`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import httpx

from artifact import records
from artifact.campaign import quiet
from artifact.campaign.client import Completed, chat_body, chat_complete
from artifact.campaign.live import LiveServer
from artifact.campaign.progress import Progress
from artifact.campaign.runner import (
    MAX_ATTEMPTS,
    Prepared,
    SessionWork,
    _record_failure,
    _turn_result,
)
from artifact.errors import SpecError
from artifact.log import Log
from artifact.workloads import PlannedSession, Round, round_servers, rounds


def session_order(preps: Sequence[Prepared]) -> list[PlannedSession]:
    """The sessions every run of the group plays, in the plan's order (the first run's); a run
    whose plan holds other sessions, or the same in another order, is a :class:`SpecError`:
    the runs' histories must be the same."""
    def ids(p: Prepared) -> list[str]:
        return [s.session_id for s in sorted(p.plan.sessions, key=lambda s: s.order)]

    first = ids(preps[0])
    for p in preps[1:]:
        if ids(p) != first:
            raise SpecError(f"interleave group of {preps[0].spec.run_id}: run {p.spec.run_id} "
                            "plans other sessions or another order; every per-side server must "
                            "play the same sessions in the same order")
    return sorted(preps[0].plan.sessions, key=lambda s: s.order)


class Deployment:
    """One per-side run inside the group: its live server, its sessions, what is left."""

    def __init__(self, live: LiveServer, sessions: dict[str, PlannedSession],
                 pending: set[tuple[str, int]], condition: str) -> None:
        self.live = live
        self.sessions = sessions  # session id -> this run's planned session
        self.pending = pending  # (session id, turn) still to measure
        self.condition = condition


async def play_rounds(label: str, preps: Sequence[Prepared], live: dict[str, LiveServer],
                      client: httpx.AsyncClient, progress: Progress, say: Log,
                      cond: quiet.Conditions, own: Callable[[], list[int]],
                      max_sessions: int | None = None) -> None:
    """Send every pending turn of the group's runs, round by round (see the module)."""
    order = session_order(preps)
    first = preps[0].spec
    deps: dict[str, Deployment] = {}
    for p in preps:
        w = p.spec.workload
        assert w is not None and w.play is not None
        knobs = dict(w.sides())[w.play]
        pending = {(sw.session.session_id, t) for sw in p.pending
                   if isinstance(sw, SessionWork) for t in sw.turns}
        deps[p.spec.run_id] = Deployment(
            live[p.spec.run_id], {s.session_id: s for s in p.plan.sessions}, pending,
            "real" if knobs is None else knobs.condition)
    for rnd in rounds(order, first.concurrency, max_sessions):
        todo = [rid for rid in round_servers(label, first.seed, rnd.number, list(deps))
                if any((sid, rnd.turn) in deps[rid].pending for sid in rnd.sessions)]
        for pos, rid in enumerate(todo):
            await _play(client, deps[rid], rnd, pos, own, progress, say, cond)


async def _play(client: httpx.AsyncClient, dep: Deployment, rnd: Round, pos: int,
                own: Callable[[], list[int]], progress: Progress, say: Log,
                cond: quiet.Conditions) -> None:
    """One round on one server: the turn of each of the chunk's sessions, at once, each on its
    own slot (its place in the chunk)."""
    lv = dep.live
    jobs = [(slot, dep.sessions[sid]) for slot, sid in enumerate(rnd.sessions)
            if (sid, rnd.turn) in dep.pending and rnd.turn < len(dep.sessions[sid].turns)]
    await asyncio.gather(*(_turn(client, lv, dep, s, rnd.turn, slot, pos, own, progress, say,
                                 cond) for slot, s in jobs))


async def _turn(client: httpx.AsyncClient, lv: LiveServer, dep: Deployment,
                s: PlannedSession, turn: int, slot: int, pos: int, own: Callable[[], list[int]],
                progress: Progress, say: Log, cond: quiet.Conditions) -> None:
    """One turn of one session on one server; retried after failures (a dead server is
    started again), never measured again once completed."""
    spec = lv.prep.spec
    pt = s.turns[turn]
    body = chat_body(s.messages(turn), n_predict=pt.n_predict, slot=slot, spec=spec)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if not lv.server.alive():
            await lv.restart(client, say)
        window = quiet.Window(own, cond.threshold_cores)
        sent_unix = time.time()
        out = await chat_complete(client, lv.server.base_url, body, spec.timeout_s)
        busy, contended = window.close()
        lv.served = True
        if isinstance(out, Completed):
            records.append_jsonl(lv.prep.path / records.RESULTS, replace(_turn_result(
                s, turn, out, dep.condition, slot=slot, attempt=attempt, start_no=lv.n,
                sent_unix=sent_unix, queue_ms=0.0),
                contention=busy, contended=contended, round_pos=pos))
            lv.measure_s += out.e2e_ms / 1000
            break
        _record_failure(lv.prep.path, s.key, turn, attempt, out, lv.n, sent_unix)
    dep.pending.discard((s.session_id, turn))
    progress.advance()
