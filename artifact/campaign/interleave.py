"""Interleaved runs: a group measured prompt-major over live servers (issue 16).

A comparison between runs measured one after another absorbs the machine's drift: on a shared
machine, minutes apart, decode rates differ by several percent idle and by 5-19x under load.
The runs of one ``interleave`` group are measured together instead: every run's server is
started and warmed up, then each prompt goes to every run of the group in turn, in an order
shuffled per prompt by a seed, before the next prompt. A drafter and its baseline see the same
prompt seconds apart, and neither is always first. Each server still sees the prompts in the
set's order (a drafter with state, like ``ngram-mod``, sees the same history as on its own), and
with ``repeats`` > 1 every pass starts on freshly started servers (:func:`_fresh_pass`): a pass
never copies from the text of an earlier one.
The order of a round is planned with the runs' requests (:func:`artifact.workloads.round_order`).

Everything else is as in :mod:`artifact.campaign.runner`: the same run folders, records,
ledger, resumption, error retries and restarts, under the same conditions
(:mod:`artifact.campaign.quiet`). A run's ``measure_s`` is the sum of its own requests' wall
times (its requests alternate with the group's).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from artifact import hostlock, paths, records
from artifact.campaign import events, quiet
from artifact.campaign.client import Completed
from artifact.campaign.deployments import play_rounds, session_order
from artifact.campaign.gpu import GpuSampler
from artifact.campaign.live import LiveServer
from artifact.campaign.progress import Progress
from artifact.campaign.runner import (
    MAX_ATTEMPTS,
    Prepared,
    SessionWork,
    Tally,
    Work,
    _metrics,
    own_pids,
    prepare,
    runs_folder,
    send_prompt,
)
from artifact.campaign.server import Server
from artifact.errors import SpecError
from artifact.log import Log
from artifact.log import stderr as log_stderr
from artifact.spec import Campaign, RunSpec
from artifact.workloads import round_order, rounds

_say: Log = log_stderr("campaign")


def groups(specs: Sequence[RunSpec]) -> list[list[RunSpec]]:
    """The specs in measuring units, in campaign order: one interleave group, or one lone run.

    >>> from artifact.spec import RunSpec
    >>> def s(i, g): return RunSpec(run_id=i, campaign="c", family="final", target_model="m",
    ...     target="t", target_quant="Q", drafter="none", draft_model=None, draft_quant=None,
    ...     k=None, p_min=None, ctx_size=8, temperature=0.0, top_k=1, top_p=1.0, seed=1,
    ...     n_predict=8, prompt_set="p", concurrency=1, repeats=1, threads=1, n_gpu_layers=0,
    ...     warmup=0, timeout_s=1.0, interleave=g)
    >>> [[x.run_id for x in u] for u in groups([s("a", "g"), s("b", None), s("c", "g")])]
    [['a', 'c'], ['b']]
    """
    out: list[list[RunSpec]] = []
    index: dict[str, int] = {}
    for spec in specs:
        if spec.interleave is None:
            out.append([spec])
        elif spec.interleave in index:
            out[index[spec.interleave]].append(spec)
        else:
            index[spec.interleave] = len(out)
            out.append([spec])
    return out


def _check(label: str, specs: Sequence[RunSpec]) -> None:
    first = specs[0]
    for s in specs[1:]:
        if (s.workload is None) != (first.workload is None):
            raise SpecError(f"interleave group {label!r}: runs {first.run_id} and {s.run_id}: "
                            "a group is all prompt runs or all per-side workload runs")
        for name in ("prompt_set", "repeats", "seed", "concurrency"):
            if getattr(s, name) != getattr(first, name):
                raise SpecError(f"interleave group {label!r}: runs {first.run_id} and "
                                f"{s.run_id} differ in {name}; a group sends the same prompts "
                                "to every run")


def run_group(campaign: Campaign, specs: Sequence[RunSpec], *, runs_root: Path = paths.RUNS,
              show_progress: bool = True, say: Log = _say,
              cond: quiet.Conditions | None = None,
              prompt_ids: frozenset[str] | None = None,
              progress_suffix: Callable[[float], str] | None = None,
              max_sessions: int | None = None, sessions: int | None = None,
              ) -> dict[str, records.RunMetrics]:
    """Measure (or finish) the runs of one interleave group; return each run's metrics.

    ``prompt_ids`` and ``progress_suffix``: as for :func:`artifact.campaign.runner.run` (a
    reduced reproduction measures a group on a subset of its prompts). ``max_sessions``: a
    group of per-side workload runs (:mod:`artifact.campaign.deployments`) measures only its
    first so many sessions (a calibration). ``sessions``: each run is its plan's first so many
    sessions, complete when they are measured (a reproduction's subset; see
    :func:`artifact.campaign.runner.run`)."""
    label = specs[0].interleave or specs[0].run_id
    _check(label, specs)
    runs_folder(runs_root)
    cond = cond if cond is not None else quiet.Conditions.from_env()
    what = f"interleaved group {label} ({len(specs)} runs)"
    with hostlock.measuring(what, wait=cond.wait_for_lock, say=say):
        preps = [prepare(campaign, s, runs_root=runs_root, say=say, prompt_ids=prompt_ids,
                         sessions=sessions) for s in specs]
        todo = [p for p in preps if not p.complete]
        for p in preps:
            Tally.resume(p.path)
        if todo:
            with quiet.measuring(what, [p.path for p in todo], cond, say):
                _measure_locked(label, todo, show_progress, say, cond, progress_suffix,
                                max_sessions)
        return {p.spec.run_id: _metrics(p.path, p.spec, p.expected, cond) for p in preps}


def _measure_locked(label: str, todo: list[Prepared], show_progress: bool, say: Log,
                    cond: quiet.Conditions,
                    progress_suffix: Callable[[float], str] | None = None,
                    max_sessions: int | None = None) -> None:
    n_expected = sum(len(p.expected) for p in todo)
    n_pending = sum(_units(p) for p in todo)
    if max_sessions is not None:  # a calibration: the first sessions' turns only
        calib = {(sid, r.turn) for r in rounds(session_order(todo), todo[0].spec.concurrency,
                                               max_sessions) for sid in r.sessions}
        n_expected = n_pending = sum(
            len({(w.session.session_id, t) for w in p.pending if isinstance(w, SessionWork)
                 for t in w.turns} & calib) for p in todo)
    for p in todo:
        events.record(p.path, "invocation", done=len(p.expected) - len(p.pending))
    progress = Progress(f"group {label}", n_expected, n_expected - n_pending, show_progress,
                        suffix=progress_suffix)
    servers = {p.spec.run_id: Server(p.files, p.spec, p.path / records.SERVER_LOG)
               for p in todo}
    try:
        with GpuSampler() as gpu:
            asyncio.run(_measure(label, todo, servers, progress, say, cond, max_sessions))
        for p in todo:
            try:
                prev = records.read_json(p.path / records.VRAM)
            except records.RecordError:
                prev = None
            records.write_json(p.path / records.VRAM, gpu.record(prev))
    finally:
        for s in servers.values():
            s.stop()
        progress.close()


async def _measure(label: str, todo: list[Prepared], servers: dict[str, Server],
                   progress: Progress, say: Log, cond: quiet.Conditions,
                   max_sessions: int | None = None) -> None:
    live = {p.spec.run_id: LiveServer(p, servers[p.spec.run_id]) for p in todo}
    own = own_pids(*servers.values())
    first = todo[0].spec
    async with httpx.AsyncClient(limits=httpx.Limits(
            max_connections=first.concurrency + 1)) as client:
        for lv in live.values():
            await lv.start(client, say)
        if first.workload is not None:  # per-side deployments: turn-major rounds
            await play_rounds(label, todo, live, client, progress, say, cond, own,
                              max_sessions)
        else:
            await _prompt_major(label, live, client, progress, say, cond, own)
        for lv in live.values():
            await lv.end_segment(client)


async def _prompt_major(label: str, live: dict[str, LiveServer], client: httpx.AsyncClient,
                        progress: Progress, say: Log, cond: quiet.Conditions,
                        own: Callable[[], list[int]]) -> None:
    """Each prompt to every run of the group in turn, in a seeded order, pass after pass."""
    preps = [lv.prep for lv in live.values()]
    pending = {rid: {(w.prompt.id, w.repeat): w for w in lv.prep.pending
                     if isinstance(w, Work)} for rid, lv in live.items()}
    first = preps[0].spec
    prompts = max((p.prompts for p in preps), key=len)
    for rep in range(first.repeats):
        await _fresh_pass(client, rep, live, pending, first.repeats, say)
        for prompt in prompts:
            key = (prompt.id, rep)
            rids = [rid for rid in live if key in pending[rid]]
            order = round_order(label, first.seed, rep, prompt.id, rids)
            for pos, rid in enumerate(order):
                await _one(client, live[rid], pending[rid].pop(key), pos, own, progress,
                           say, cond)


def _units(p: Prepared) -> int:
    """What a prepared run has left: requests, or turns."""
    return sum(len(w.turns) if isinstance(w, SessionWork) else 1 for w in p.pending)


async def _fresh_pass(client: httpx.AsyncClient, rep: int, live: dict[str, LiveServer],
                      pending: dict[str, dict[tuple[str, int], Work]], rep_count: int,
                      say: Log) -> None:
    """Each pass is a fresh deployment: a server that has answered a measured request is
    restarted before its next pass, so that a drafter with state across requests (ngram-mod's
    pool) never sees the text of an earlier pass (MEASUREMENT.md: a pool remembers). Every pass
    then starts from the same empty state, and greedy passes must agree."""
    for rid, lv in live.items():
        if lv.served and any(r == rep for _, r in pending[rid]):
            await lv.end_segment(client)
            lv.server.stop()
            await lv.start(client, say)
        if rep_count > 1 and any(r == rep for _, r in pending[rid]):
            events.record(lv.prep.path, "pass_begin", n=lv.n, repeat=rep)


async def _one(client: httpx.AsyncClient, lv: LiveServer, w: Work, pos: int, own: Any,
               progress: Progress, say: Log, cond: quiet.Conditions) -> None:
    """One prompt on one run: retried after errors, measured again when contended."""
    while True:
        if not lv.server.alive():
            await lv.end_segment(client)
            await lv.start(client, say)
        out, again = await send_prompt(client, lv.server, lv.prep.spec, w, lv.prep.path, lv.n,
                                       cond, own, free_ns=time.perf_counter_ns(),
                                       round_pos=pos)
        lv.served = True
        if isinstance(out, Completed):
            lv.measure_s += out.e2e_ms / 1000
            if not again:
                progress.advance()
                return
            w = replace(w, attempt=w.attempt + 1, remeasured=w.remeasured + 1)
            continue
        if w.attempt >= MAX_ATTEMPTS:
            progress.advance()
            return
        w = replace(w, attempt=w.attempt + 1)
