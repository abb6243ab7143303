"""One run: start the server, warm up, send what the run's plan says, append results, resume.

The plan (what is sent, in order: :func:`artifact.workloads.plan`) is made below the campaign;
the runner executes it. A workload run's plan is counted on the server's own tokenizer
(:class:`~artifact.campaign.tokenizer.ServerTokenizer`, on a server started for it), written to
the run's ``sessions.jsonl`` once and replayed from there on every resume.

A run measures under :mod:`artifact.campaign.quiet`: it holds the host's measurement lock, waits
for a quiet machine, and records each request's contention. Everything that happens to the run
(invocations, gate verdicts, server starts, measured segments) goes to its ledger
(:mod:`artifact.campaign.events`), from which ``metrics.json`` is computed.

Results are appended and fsynced per request. A rerun after any interruption skips the
(prompt id, repeat) pairs already in ``results.jsonl``, so no completed request is lost or
duplicated. If the server dies mid-run it is restarted (the log records every start) and the
failed requests are retried, up to :data:`MAX_ATTEMPTS` attempts each; every failed attempt is
an error record. A run whose directory holds a different spec is moved aside to
``<runs dir>/_superseded/`` (never deleted) before it is measured anew.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from artifact import files as artifact_files
from artifact import hostlock, paths, records, toolchain
from artifact.campaign import events, quiet
from artifact.campaign.client import (
    Completed,
    Failed,
    chat_body,
    chat_complete,
    complete,
    request_body,
)
from artifact.campaign.fingerprint import (
    counter_delta,
    environment,
    local_executor,
    parse_metrics,
)
from artifact.campaign.gpu import GpuSampler
from artifact.campaign.memory import MemorySampler
from artifact.campaign.progress import Progress
from artifact.campaign.server import Server, ServerError, ServerFiles, argv_template, slots
from artifact.campaign.tokenizer import ServerTokenizer
from artifact.log import Log
from artifact.log import stderr as log_stderr
from artifact.spec import Campaign, RunSpec, SpecError
from artifact.workloads import (
    Inputs,
    PlannedSession,
    Prompt,
    RunPlan,
    Tokenizer,
    inputs,
    plan,
    session_from_json,
    session_to_json,
)

MAX_ATTEMPTS = 3
MAX_FAILED_STARTS = 3
# Drafters whose state outlives a request (ngram-mod's n-gram pool, ngram-cache's cache): a
# restart empties it mid-run (the analysis warns), and a prompt measured again would draft from
# its own earlier output, so a contended request of theirs is kept, flagged, never re-measured.
STATEFUL_DRAFTERS = frozenset({"ngram-mod", "ngram-cache"})
WARMUP_PROMPT = "Write one short sentence about the sea."
WARMUP_TOKENS = 16


@dataclass(frozen=True)
class Work:
    prompt: Prompt
    repeat: int
    attempt: int = 1
    remeasured: int = 0  # attempts made again because the machine was busy


@dataclass(frozen=True)
class SessionWork:
    """The turns of one planned session still to measure (workload runs), from ``turn`` on."""

    session: PlannedSession
    turns: tuple[int, ...]
    attempt: int = 1


@dataclass
class Tally:
    """What this invocation does to the run (the ledger keeps the rest)."""

    next_start: int = 1  # number of the next server start over the run's life
    measure_s: float = 0.0  # measured wall time of this invocation's segments

    @classmethod
    def resume(cls, run: Path) -> Tally:
        events.carry_legacy(run)
        return cls(next_start=events.totals(run).server_starts + 1)


def model_file(campaign: Campaign, key: str) -> Path:
    m = campaign.models[key]
    if m.builtin is not None:
        return toolchain.ensure_builtin(m.builtin)
    if m.path is not None:
        return Path(m.path)
    assert m.derive is not None
    return toolchain.derive_model(model_file(campaign, m.derive), m.quant)


def server_files(campaign: Campaign, spec: RunSpec) -> ServerFiles:
    binary = (Path(campaign.server_binary) if campaign.server_binary
              else toolchain.ensure_llama() / "bin" / "llama-server")
    draft = model_file(campaign, spec.draft_model) if spec.draft_model else None
    return ServerFiles(binary=binary, model=model_file(campaign, spec.target_model),
                       draft_model=draft)


def runs_root(campaign: Campaign) -> Path:
    """Where a campaign's runs go by default: the workload study's runs, the realism study's
    (sides deployed apart), the core study's (take three: cells, cost and pilot runs), the
    second model family's (Gemma: the campaigns ``gemma-calibration`` and ``gemma``) and the
    memory runs apart from the others."""
    if campaign.name in ("gemma", "gemma-calibration"):
        return paths.GEMMA_RUNS
    if campaign.runs and all(r.family == "workload" for r in campaign.runs):
        if campaign.name == "realism-process":
            return paths.PROCESS_RUNS  # the realism study's replicated server processes
        if any(r.workload is not None and r.workload.play is not None for r in campaign.runs):
            return paths.REALISM_RUNS  # workload realism, take three: sides deployed apart
        return paths.WORKLOAD_RUNS
    fams = {r.family for r in campaign.runs}
    if fams == {"memory"}:
        return paths.MEMORY_RUNS  # peak resident memory per configuration (issue 33)
    if fams & {"core", "cost", "pilot"} and fams <= {"core", "cost", "pilot", "control"}:
        return paths.CORE_RUNS
    return paths.RUNS


def runs_folder(runs_root: Path) -> Path:
    """``runs_root``, a folder to measure runs into (made when missing): :class:`SpecError`,
    one line, when it is a file (``doit campaign --runs-dir README.md``), checked before the
    host's lock is taken or anything is built."""
    return artifact_files.folder(runs_root, what="runs folder", error=SpecError)


def recorded_config(run: Path) -> dict[str, Any] | None:
    try:
        return records.read_json(run / records.CONFIG)
    except records.RecordError:
        return None


def run_is_current(spec: RunSpec, runs_root: Path = paths.RUNS) -> bool:
    """A run is up to date when its own files say so: complete, and measured for this spec."""
    run = records.run_dir(runs_root, spec.run_id)
    config = recorded_config(run)
    if config is None or not _same_protocol(config, spec):
        return False
    try:
        metrics = records.read_json(run / records.METRICS)
    except records.RecordError:
        return False
    if not metrics.get("complete"):
        return False
    # ... and the records say so too: as many readable (prompt, repeat) pairs as expected
    n_set = config.get("prompt_set", {}).get("n")
    if not isinstance(n_set, int):
        return False
    if spec.workload is not None:  # turns: a readable record of every planned turn
        planned = records.read_plan(run)  # a damaged plan is never a smaller, finished one
        if planned is None or planned.n_bad_lines or not planned.turns:
            return False
        kept = config.get("session_ids")  # a subset of sessions: its own turns
        turns = {k for k in planned.turns if not isinstance(kept, list)
                 or k[0].split(":", 1)[1] in kept}
        return bool(turns) and turns <= _done_keys(run, spec)
    return len(_done_keys(run, spec)) >= n_set * spec.repeats


def _same_protocol(config: dict[str, Any], spec: RunSpec) -> bool:
    return (config.get("spec_sha256") == spec.sha256
            and config.get("server_argv") == argv_template(spec))


def supersede_if_changed(run: Path, spec: RunSpec, runs_root: Path, say: Log) -> bool:
    """Move a run measured for another spec aside (as :func:`run` does); True if moved."""
    config = recorded_config(run)
    if config is None or _same_protocol(config, spec):
        return False
    _supersede(run, runs_root, say)
    return True


def superseded_dir(runs_root: Path) -> Path:
    """Where earlier data of a changed run goes: beside the runs it came from, never deleted."""
    return runs_root / "_superseded"


def _supersede(run: Path, runs_root: Path, say: Log) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    dest = superseded_dir(runs_root) / f"{run.name}-{stamp}"
    n = 1
    while dest.exists():  # two supersessions in one second keep both
        n += 1
        dest = superseded_dir(runs_root) / f"{run.name}-{stamp}-{n}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(run), str(dest))
    say(f"{run.name}: its spec changed; earlier data moved to {paths.shown(dest)}")
    return dest


_say: Log = log_stderr("campaign")


def run(campaign: Campaign, spec: RunSpec, *, runs_root: Path = paths.RUNS,
        show_progress: bool = True, say: Log = _say,
        executor: dict[str, Any] | None = None,
        prompt_ids: frozenset[str] | None = None,
        progress_suffix: Callable[[float], str] | None = None,
        cond: quiet.Conditions | None = None,
        sessions: int | None = None) -> records.RunMetrics:
    """Measure one run (or finish an interrupted one); return its metrics.

    ``executor`` is the provenance recorded in ``config.json`` (default: this machine, local).
    ``prompt_ids`` limits the run to those prompts of its set (a reduced reproduction); the
    run's ``config.json`` then records them as ``prompt_ids``. ``sessions`` limits a workload
    run to the first so many sessions of its plan, in play order
    (:meth:`~artifact.workloads.RunPlan.first_sessions`); ``config.json`` records the number as
    ``sessions`` and the sessions as ``session_ids``. ``progress_suffix`` extends the
    progress line (see :class:`Progress`). ``cond``: the measurement conditions (default:
    :meth:`quiet.Conditions.from_env`).
    """
    runs_folder(runs_root)
    cond = cond if cond is not None else quiet.Conditions.from_env()
    with hostlock.measuring(f"run {spec.run_id}", wait=cond.wait_for_lock, say=say):
        return _run_locked(campaign, spec, runs_root=runs_root, show_progress=show_progress,
                           say=say, executor=executor, prompt_ids=prompt_ids,
                           progress_suffix=progress_suffix, cond=cond, sessions=sessions)


@dataclass
class Prepared:
    """A run ready to measure: its folder (config written, earlier spec moved aside) and work."""

    spec: RunSpec
    path: Path
    files: ServerFiles
    plan: RunPlan  # what the run sends, in order
    expected: set[tuple[str, int]]
    pending: deque[Work | SessionWork]
    complete: bool  # nothing pending and metrics.json said complete

    @property
    def prompts(self) -> list[Prompt]:
        """The prompts sent, in order (none for a workload run)."""
        return self.plan.prompts


def prepare(campaign: Campaign, spec: RunSpec, *, runs_root: Path, say: Log,
            executor: dict[str, Any] | None = None,
            prompt_ids: frozenset[str] | None = None, sessions: int | None = None) -> Prepared:
    """Make the run's folder current for ``spec``, get its plan (``sessions``: its first so many
    sessions, see :func:`run`) and list what is left to measure."""
    run_path = records.run_dir(runs_root, spec.run_id)
    files = server_files(campaign, spec)
    drawn = inputs(spec, model=files.model, prompt_ids=prompt_ids)
    config = recorded_config(run_path)
    subset = sorted(prompt_ids) if prompt_ids is not None else None
    if config is not None and (not _same_protocol(config, spec)
                               or config.get("prompt_set", {}).get("sha256") != drawn.sha256
                               or config.get("prompt_ids") != subset
                               or config.get("sessions") != sessions):
        _supersede(run_path, runs_root, say)
        config = None
    run_path.mkdir(parents=True, exist_ok=True)
    if config is None:
        config = _config(campaign, spec, files, drawn, executor, subset, sessions)
        records.write_json(run_path / records.CONFIG, config)
    try:
        previous = records.read_json(run_path / records.METRICS)
    except records.RecordError:
        previous = {}
    planned = _plan(files, spec, run_path, say, prompt_ids, drawn)
    if sessions is not None:  # the first sessions in play order: recorded before measuring
        planned = planned.first_sessions(sessions)
        if config.get("session_ids") != planned.session_ids:
            config["session_ids"] = planned.session_ids
            records.write_json(run_path / records.CONFIG, config)
    pending = _pending(planned, _done_keys(run_path, spec))
    return Prepared(spec=spec, path=run_path, files=files, plan=planned,
                    expected=planned.keys, pending=pending,
                    complete=not pending and bool(previous.get("complete")))


def _config(campaign: Campaign, spec: RunSpec, files: ServerFiles, drawn: Inputs,
            executor: dict[str, Any] | None, subset: list[str] | None,
            sessions: int | None = None) -> dict[str, Any]:
    """The run's ``config.json``: where it is measured (the environment's fingerprint, the
    executor), then what is measured (the server's argv, the spec, the inputs drawn)."""
    models = {spec.target_model: files.model}
    if spec.draft_model and files.draft_model:
        models[spec.draft_model] = files.draft_model
    config: dict[str, Any] = {
        "environment": environment(files.binary, models),
        "executor": executor if executor is not None else local_executor(),
        "schema": records.SCHEMA, "run_id": spec.run_id, "campaign": campaign.name,
        "pool_mixed_hardware": campaign.pool_mixed_hardware,
        "server_argv": argv_template(spec),
        "spec": spec.as_dict(), "spec_sha256": spec.sha256,
        "prompt_set": {"name": drawn.name, "sha256": drawn.sha256, "n": drawn.n},
    }
    if subset is not None:
        config["prompt_ids"] = subset
    if sessions is not None:  # a workload run's first sessions (their ids once planned)
        config["sessions"] = sessions
    return config


def _run_locked(campaign: Campaign, spec: RunSpec, *, runs_root: Path, show_progress: bool,
                say: Log, executor: dict[str, Any] | None, prompt_ids: frozenset[str] | None,
                progress_suffix: Callable[[float], str] | None,
                cond: quiet.Conditions, sessions: int | None = None) -> records.RunMetrics:
    prep = prepare(campaign, spec, runs_root=runs_root, say=say, executor=executor,
                   prompt_ids=prompt_ids, sessions=sessions)
    return execute(prep, show_progress=show_progress, say=say, progress_suffix=progress_suffix,
                   cond=cond)


def execute(prep: Prepared, *, show_progress: bool, say: Log,
            progress_suffix: Callable[[float], str] | None,
            cond: quiet.Conditions) -> records.RunMetrics:
    """Measure what a prepared run has pending, in its plan's order, on one server (restarted
    when it dies); write and return the run's metrics."""
    spec, run_path, pending, expected = prep.spec, prep.path, prep.pending, prep.expected
    tally = Tally.resume(run_path)  # carries a run measured before the ledger into one
    if prep.complete:
        return _metrics(run_path, spec, expected, cond)
    n_expected = len(expected)
    n_pending = sum(len(w.turns) if isinstance(w, SessionWork) else 1 for w in pending)
    server = Server(prep.files, spec, run_path / records.SERVER_LOG)
    with quiet.measuring(f"run {spec.run_id}", [run_path], cond, say):
        events.record(run_path, "invocation", done=n_expected - n_pending)
        progress = Progress(spec.run_id, n_expected, n_expected - n_pending, show_progress,
                            suffix=progress_suffix)
        try:
            servers = own_pids(server)
            with GpuSampler() as gpu, MemorySampler(lambda: servers()[1:]) as memory:
                asyncio.run(_measure(server, spec, pending, run_path, tally, progress, say,
                                     cond))
            records.write_json(run_path / records.VRAM,
                               gpu.record(_previous(run_path / records.VRAM)))
            records.write_json(run_path / records.MEMORY,
                               memory.record(_previous(run_path / records.MEMORY)))
        finally:
            server.stop()
            progress.close()
            metrics = _metrics(run_path, spec, expected, cond)
    return metrics


def _done_keys(run: Path, spec: RunSpec) -> set[tuple[str, int]]:
    """Keys of the records already in ``results.jsonl`` (what a resume skips)."""
    if spec.workload is None:
        return {r.key for r in records.read_results(run, keep_events=False)[0]}
    return {r.key for r in records.read_turns(run, keep_events=False)[0]}


def _plan(files: ServerFiles, spec: RunSpec, run: Path, say: Log,
          prompt_ids: frozenset[str] | None, drawn: Inputs) -> RunPlan:
    """The run's plan (:func:`artifact.workloads.plan`). A workload run's is read back from
    ``sessions.jsonl``, or made once on a server started for it (tokenizer and chat template
    only; nothing is measured) and written there."""
    if spec.workload is None:
        return plan(spec, model=files.model, prompt_ids=prompt_ids)
    path = run / records.SESSIONS
    if path.exists():
        read = records.read_jsonl(path)
        checked = records.read_plan(run)
        bad = read.n_bad_lines or (checked.n_bad_lines if checked is not None else 0)
        if bad:  # measuring the readable part would leave the rest unmeasured for good
            raise records.RecordError(
                f"{paths.shown(path)}: {bad} unreadable line(s): the run's plan is damaged; "
                "move the run folder aside to plan and measure it again")
        return RunPlan(inputs=drawn, sessions=[session_from_json(r) for r in read.rows])

    @contextlib.contextmanager
    def server_tokenizer() -> Iterator[Tokenizer]:
        server = Server(files, spec, run / records.SERVER_LOG)
        server.start()
        server.mark(f"{records.MARKER_PREFIX} plan begin (tokenizer and template only)")
        tok = ServerTokenizer(server.base_url)
        try:
            yield tok
        finally:
            tok.close()
            server.stop()

    p = plan(spec, tokenizer=server_tokenizer)
    for line in p.summary["problems"]:
        say(line)
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    for s in p.sessions:
        records.append_jsonl(tmp, session_to_json(s))
    tmp.replace(path)
    records.write_json(run / records.WORKLOAD, p.summary)
    return p


def _pending(planned: RunPlan, done: set[tuple[str, int]]) -> deque[Work | SessionWork]:
    """What is left to measure, in the plan's order: requests, or the turns of each session."""
    pending: deque[Work | SessionWork] = deque(
        Work(r.prompt, r.repeat) for r in planned.requests if r.key not in done)
    for s in planned.sessions:
        left = tuple(t.turn for t in s.turns if (s.key, t.turn) not in done)
        if left:
            pending.append(SessionWork(s, left))
    return pending


def _metrics(run: Path, spec: RunSpec, expected: set[tuple[str, int]],
             cond: quiet.Conditions) -> records.RunMetrics:
    """Write ``metrics.json`` from the run's ledger and records; ``complete`` is computed from the
    records that can be read back, so a record lost to a torn line is measured again on the next
    run, never assumed done."""
    done = _done_keys(run, spec)
    complete = expected <= done
    n_expected = len(expected)
    errors = records.read_jsonl(run / records.ERRORS).rows
    results = (records.read_results(run, keep_events=False)[0] if spec.workload is None
               else [])
    turns = (records.read_turns(run, keep_events=False)[0] if spec.workload is not None
             else [])
    t = events.totals(run, results)
    per_pos = {k.split('"')[1]: v for k, v in t.delta.items()
               if "per_pos" in k and '"' in k}
    m = records.RunMetrics(
        complete=complete, n_expected=n_expected, n_results=len(done),
        n_errors=len(errors), server_starts=t.server_starts,
        measure_s=t.measure_s, model_load_s=t.model_load_s,
        warmup_s=t.warmup_s, concurrency=spec.concurrency, slots=slots(spec),
        metrics_delta=t.delta, accepted_per_pos_delta=per_pos,
        invocations=t.invocations or None, gates=t.gates or None,
        contention=quiet.run_contention([*results, *turns], cond.threshold_cores))
    records.write_json(run / records.METRICS, m)
    return m


async def _metrics_snapshot(client: httpx.AsyncClient, server: Server) -> dict[str, float]:
    try:
        resp = await client.get(f"{server.base_url}/metrics", timeout=10.0)
    except httpx.TransportError:
        return {}
    return parse_metrics(resp.text) if resp.status_code == 200 else {}


async def start_server(client: httpx.AsyncClient, server: Server, spec: RunSpec, run: Path,
                       tally: Tally, *, mode: str) -> int:
    """Start (or restart) a run's server, warm it up and mark the measured segment's beginning;
    every step goes to the run's ledger first. Returns the start's number over the run's life."""
    n = tally.next_start
    tally.next_start += 1
    load_s = round(server.start(), 3)
    server.mark(f"{records.WARMUP_MARKER} (server start {n})")
    t_w = time.perf_counter()
    warm = dict(request_body(spec, WARMUP_PROMPT), n_predict=WARMUP_TOKENS)
    for _ in range(spec.warmup):
        await complete(client, server.base_url, warm, spec.timeout_s)
    events.record(run, "server_start", n=n, load_s=load_s,
                  warmup_s=round(time.perf_counter() - t_w, 3))
    await asyncio.sleep(0.2)  # let the server's log of the warm-up reach the file
    server.mark(f"{records.MEASURE_MARKER} (server start {n})")
    events.record(run, "measure_begin", n=n, mode=mode)
    return n


async def _measure(server: Server, spec: RunSpec, pending: deque[Work | SessionWork], run: Path,
                   tally: Tally, progress: Progress, say: Log, cond: quiet.Conditions) -> None:
    failed_starts = 0
    while pending:
        async with httpx.AsyncClient(limits=httpx.Limits(
                max_connections=spec.concurrency + 1)) as client:
            try:
                n = await start_server(client, server, spec, run, tally, mode="sequential")
            except ServerError:
                failed_starts += 1
                if failed_starts >= MAX_FAILED_STARTS:
                    raise
                continue
            if n > 1:
                say(f"{spec.run_id}: server start {n} ({len(pending)} work items left)")
            before = await _metrics_snapshot(client, server)
            t_m = time.perf_counter()
            await _segment(client, server, spec, pending, run, n, progress, cond)
            measure_s = time.perf_counter() - t_m
            delta = (counter_delta(before, await _metrics_snapshot(client, server))
                     if server.alive() else {})
            events.record(run, "segment_end", n=n, measure_s=round(measure_s, 3), delta=delta)
        if server.alive():
            server.stop()


def _previous(path: Path) -> dict[str, Any] | None:
    """What an earlier invocation of a resumed run wrote there, if anything."""
    try:
        return records.read_json(path)
    except records.RecordError:
        return None


def own_pids(*servers: Server) -> Callable[[], list[int]]:
    """The measuring process tree: this process and the live servers."""
    def pids() -> list[int]:
        return [os.getpid()] + [s.proc.pid for s in servers if s.proc is not None]
    return pids


async def send_prompt(client: httpx.AsyncClient, server: Server, spec: RunSpec, w: Work,
                      run: Path, start_no: int, cond: quiet.Conditions, own: Callable[[],
                      list[int]], *, free_ns: int, round_pos: int | None = None,
                      ) -> tuple[Completed | Failed, bool]:
    """Send one prompt request, append its record (or error record); return the outcome and
    whether it should be measured again (contended, attempts left, a stateless drafter)."""
    body = request_body(spec, w.prompt.text, w.repeat)
    before = (await _metrics_snapshot(client, server)
              if spec.metrics_per_request else None)
    window = quiet.Window(own, cond.threshold_cores)
    sent_unix = time.time()
    dispatch_ns = time.perf_counter_ns()
    out = await complete(client, server.base_url, body, spec.timeout_s)
    busy, contended = window.close()
    if not isinstance(out, Completed):
        _record_failure(run, w.prompt.id, w.repeat, w.attempt, out, start_no, sent_unix)
        return out, False
    delta = None
    if before is not None:  # the request's own counters (concurrency 1 only)
        after = await _metrics_snapshot(client, server)
        delta = counter_delta(before, after) if before and after else None
    records.append_jsonl(run / records.RESULTS, records.Result(
        prompt_id=w.prompt.id, domain=w.prompt.domain,
        prompt_sha256=w.prompt.sha256, repeat=w.repeat, attempt=w.attempt,
        server_start=start_no, sent_unix_s=round(sent_unix, 3),
        queue_ms=round((dispatch_ns - free_ns) / 1e6, 3), ttft_ms=out.ttft_ms,
        e2e_ms=out.e2e_ms, event_ms=out.event_ms, timings=out.timings,
        stop_type=out.stop_type, alpha=out.alpha, event_text=out.event_text,
        seed=body["seed"], window=spec.window, utc_date=utc_date(sent_unix),
        metrics_delta=delta, contention=busy, contended=contended, round_pos=round_pos))
    again = (bool(contended) and w.remeasured < cond.remeasure_contended
             and spec.drafter not in STATEFUL_DRAFTERS)
    return out, again


async def _segment(client: httpx.AsyncClient, server: Server, spec: RunSpec,
                   pending: deque[Work | SessionWork], run: Path, start_no: int,
                   progress: Progress, cond: quiet.Conditions) -> None:
    """Send pending work on ``spec.concurrency`` streams until done or the server dies.

    Sessions are taken in the plan's seeded order; stream ``i`` sends a session's turns to slot
    ``n i + j`` for the ``j``-th of the run's ``n`` sides (REAL, SYNTHETIC; or the interleaved
    design's replays and conditions), so a session keeps its slot (and its cached prefix) from
    turn to turn, and each side's slot keeps that side's cache between sessions.
    """
    died = False
    own = own_pids(server)
    side_names = [n for n, _ in spec.workload.played()] if spec.workload is not None else []
    conditions = ({n: (c.condition if c is not None else "real")
                   for n, c in spec.workload.played()} if spec.workload is not None
                  and spec.workload.interleaved else {})

    async def prompt(w: Work, free_ns: int) -> None:
        nonlocal died
        out, again = await send_prompt(client, server, spec, w, run, start_no, cond, own,
                                       free_ns=free_ns)
        if isinstance(out, Completed):
            if again:
                pending.appendleft(replace(w, attempt=w.attempt + 1,
                                           remeasured=w.remeasured + 1))
            else:
                progress.advance()
            return
        if not server.alive():
            died = True
        if w.attempt < MAX_ATTEMPTS:
            pending.appendleft(replace(w, attempt=w.attempt + 1))
        else:
            progress.advance()

    async def session(w: SessionWork, slot: int, free_ns: int) -> None:
        nonlocal died
        s = w.session
        assert spec.workload is not None
        turns, attempt = list(w.turns), w.attempt
        while turns:
            pt = s.turns[turns[0]]
            body = chat_body(s.messages(pt.turn), n_predict=pt.n_predict, slot=slot, spec=spec)
            window = quiet.Window(own, cond.threshold_cores)
            sent_unix = time.time()
            dispatch_ns = time.perf_counter_ns()
            out = await chat_complete(client, server.base_url, body, spec.timeout_s)
            busy, contended = window.close()
            if isinstance(out, Completed):
                records.append_jsonl(run / records.RESULTS, replace(_turn_result(
                    s, pt.turn, out, conditions.get(s.side, spec.workload.condition),
                    slot=slot, attempt=attempt,
                    start_no=start_no, sent_unix=sent_unix,
                    queue_ms=round((dispatch_ns - free_ns) / 1e6, 3)),
                    contention=busy, contended=contended))
                progress.advance()
                turns.pop(0)
                attempt = 1
                free_ns = time.perf_counter_ns()
                continue
            _record_failure(run, s.key, pt.turn, attempt, out, start_no, sent_unix)
            if attempt >= MAX_ATTEMPTS:
                turns.pop(0)
                progress.advance()
                attempt = 0
            if not server.alive():
                died = True
                if turns:
                    pending.appendleft(SessionWork(s, tuple(turns), attempt + 1))
                return
            attempt += 1
            free_ns = time.perf_counter_ns()

    async def stream(slot: int) -> None:
        while pending and not died:
            w = pending.popleft()
            free_ns = time.perf_counter_ns()
            if isinstance(w, SessionWork):
                n = len(side_names)
                await session(w, n * slot + side_names.index(w.session.side), free_ns)
            else:
                await prompt(w, free_ns)

    await asyncio.gather(*(stream(i) for i in range(spec.concurrency)))


def _turn_result(s: PlannedSession, turn: int, out: Completed, condition: str, *, slot: int,
                 attempt: int, start_no: int, sent_unix: float,
                 queue_ms: float) -> records.TurnResult:
    pt = s.turns[turn]
    n_out = out.timings.predicted_n
    tpot = None
    if out.ttft_ms is not None and n_out > 1:
        tpot = round((out.e2e_ms - out.ttft_ms) / (n_out - 1), 3)
    return records.TurnResult(
        session_id=s.session_id, side=s.side, condition=condition, turn=turn, order=s.order,
        slot=slot, attempt=attempt, server_start=start_no, sent_unix_s=round(sent_unix, 3),
        queue_ms=queue_ms, prompt_chars=pt.prompt_chars, prompt_tokens=pt.prompt_tokens,
        cached_tokens=out.timings.cache_n, output_tokens=n_out, n_predict=pt.n_predict,
        ttft_ms=out.ttft_ms, tpot_ms=tpot, e2e_ms=out.e2e_ms, event_ms=out.event_ms,
        timings=out.timings, stop_type=out.stop_type, alpha=out.alpha)


def utc_date(unix_s: float) -> str:
    """The UTC calendar date of a wall-clock time, a label only.

    >>> utc_date(0.0)
    '1970-01-01'
    """
    return dt.datetime.fromtimestamp(unix_s, dt.UTC).strftime("%Y-%m-%d")


def _record_failure(run: Path, prompt_id: str, repeat: int, attempt: int, out: Failed,
                    start_no: int, sent_unix: float) -> None:
    records.append_jsonl(run / records.ERRORS, records.ErrorRecord(
        prompt_id=prompt_id, repeat=repeat, attempt=attempt, server_start=start_no,
        reason=out.reason, status=out.status, detail=out.detail,
        sent_unix_s=round(sent_unix, 3)))
