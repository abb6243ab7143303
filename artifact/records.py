"""Typed records and the run-directory format.

A run directory ``experiments/runs/<run>/`` holds:

``config.json``
    ``{"schema": 1, "run_id", "campaign", "spec": {...RunSpec...}, "spec_sha256",
    "prompt_set": {"name", "sha256", "n"}, "environment": {...}}``.
``results.jsonl``
    one :class:`Result` per completed request, appended and fsynced as it completes.
``errors.jsonl``
    one :class:`ErrorRecord` per failed attempt.
``server.log``
    the server's own log at ``-lv 4``. The runner writes marker lines of its own into it:
    ``[specdec-runner] warmup begin (server start N)`` before warm-up requests and
    ``[specdec-runner] measure begin (server start N)`` after them, so that only the
    ``draft acceptance`` / ``acc per pos`` lines after a ``measure begin`` belong to records.
``metrics.json``
    :class:`RunMetrics`: completion, counts, durations and ``/metrics`` deltas.
``vram.json``
    GPU samples, or ``{"gpu_present": false, "reason": ...}``; never invented zeros.
``events.jsonl``
    the run's own ledger, appended and fsynced as things happen, across runner invocations:
    ``invocation`` (a runner began work on the run: pid, records already done), ``gate`` (the
    quiet gate's verdict), ``server_start`` (number, load time), ``measure_begin`` and
    ``segment_end`` (a measured segment's wall time). ``metrics.json`` is computed from it, so a
    runner killed mid-run loses no server start and no measured time (a segment cut by a kill is
    counted up to its last completed request).

**Contention** (issue 16). Every request measured since the ledger existed carries
``contention``: the CPU used by everything outside the measuring process tree (runner and
servers) during its window, in cores (``foreign_cores``), with ``steal_cores``, the 1-minute
load average at its end (``load1``) and the mean CPU frequency (``cpu_mhz``, null where the
kernel does not say), or ``{"unavailable": <why>}`` where the OS has no ``/proc`` (never zeros).
``contended`` is true when ``foreign_cores`` exceeded the run's threshold
(``config.json: contention.threshold_cores``). A contended request may be measured again
(bounded); every attempt is kept, and the analysis uses the first uncontended one.

A **workload run** (``spec.family == "workload"``, issue 10; under ``experiments/runs-workload/``)
has the same files, and:

- ``config.json`` has ``"prompt_set": {"name": <session set>, "sha256": <of the id lock file>,
  "n": <ids>}`` and the spec's ``workload`` table (the synthetic knobs);
- ``sessions.jsonl``: the plan, written once before measuring and read back on resume: one line
  per (side, session) with the messages sent and, per turn, ``prompt_tokens``, ``prompt_chars``
  and ``n_predict`` (:mod:`artifact.workloads.sessionplan`);
- ``workload.json``: what planning found (sessions left out and why, characters per token per
  side, the calibrated density, the id Jaccard of the two sides);
- ``results.jsonl`` holds one :class:`TurnResult` per completed turn (key: side, session, turn);
  ``errors.jsonl`` one :class:`ErrorRecord` per failed attempt, with ``prompt_id`` =
  ``"<side>:<session>"`` and ``repeat`` = the turn.

Writing appends one JSON line and fsyncs; reading is tolerant: undecodable bytes and broken
lines are skipped and counted (:class:`JsonlRead`), never a crash. Results and turns are
decoded by msgspec straight into their classes, the JSON types checked as they are parsed; a
line that is not a record is counted, with its number and why (:class:`BadLine`, e.g.
``timings.ttft_ms: expected a number, got a string``).

**Bounds** (issue 46). In every file any reader here reads (results, turns, errors, events,
steps, plans), a line nested deeper than the parser can hold (about a thousand levels; a record
is four deep), or holding text that is not Unicode (a lone surrogate escape such as
``"\\ud800"``), is unreadable and counted, as broken JSON is: checked where a line is parsed
(:func:`_stdlib_row`, :func:`_line_record`, :func:`_json_object`). A count or an index (tokens,
repeats, attempts, turns, slots) is an integer an int32 holds, as llama-server counts
(:data:`Count`, checked by msgspec as it decodes a result or a turn; :func:`is_count` where a
plan's or a step's counts are checked): a record with ``draft_n`` of ``10**30`` is unreadable,
not one that drags a pooled acceptance to ``1e-28``.

A run's data lie in the repository: a run folder, or a file of one, that a symbolic link leads
out of it is refused in one line naming it and where it points (:class:`OutsideError`), both
where the analysis lists its runs (:func:`run_folders`) and where any of this module's readers
opens a file (:func:`in_repository`). Links that stay inside the repository are followed.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar

import msgspec

from artifact import files, paths
from artifact.errors import OutsideError as OutsideError
from artifact.errors import RecordError as RecordError

# the run-directory layout (artifact/runfiles.py), here too: records.CONFIG, records.run_folders
from artifact.runfiles import CONFIG as CONFIG
from artifact.runfiles import DRAFTERS as DRAFTERS
from artifact.runfiles import ERRORS as ERRORS
from artifact.runfiles import EVENTS as EVENTS
from artifact.runfiles import MEMORY as MEMORY
from artifact.runfiles import METRICS as METRICS
from artifact.runfiles import RESULTS as RESULTS
from artifact.runfiles import RUN_FILES as RUN_FILES
from artifact.runfiles import SERVER_LOG as SERVER_LOG
from artifact.runfiles import SESSIONS as SESSIONS
from artifact.runfiles import VRAM as VRAM
from artifact.runfiles import WORKLOAD as WORKLOAD
from artifact.runfiles import WORKLOAD_RUN_FILES as WORKLOAD_RUN_FILES
from artifact.runfiles import in_repository as in_repository
from artifact.runfiles import raw_run_files as raw_run_files
from artifact.runfiles import run_folders as run_folders

SCHEMA = 1
# A JSON number as it was written: an integer stays an int, a fraction is a float (a bool is
# neither). The typed reader keeps each as written, as ``json.loads`` does.
Number = int | float
# A count or an index (tokens, repeats, attempts, server starts, turns, slots): an integer an
# int32 holds, as llama-server counts tokens; msgspec checks the range as it decodes (a line
# beyond it is unreadable), at no cost a benchmark can see.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
Count = Annotated[int, msgspec.Meta(ge=INT32_MIN, le=INT32_MAX)]
# A sampling seed: what llama-server's uint32 seed holds (or a negative one, "random").
Seed = Annotated[int, msgspec.Meta(ge=INT32_MIN, le=2**32 - 1)]
MARKER_PREFIX = "[specdec-runner]"
WARMUP_MARKER = f"{MARKER_PREFIX} warmup begin"
MEASURE_MARKER = f"{MARKER_PREFIX} measure begin"


@dataclass(frozen=True, kw_only=True)
class Timings:
    """The server's own ``timings`` object of a finished ``/completion`` (server clock, ms)."""

    prompt_n: Count
    prompt_ms: Number
    predicted_n: Count
    predicted_ms: Number
    predicted_per_second: Number
    cache_n: Count
    draft_n: Count | None = None  # absent from the server's reply when nothing was drafted
    draft_n_accepted: Count | None = None


@dataclass(frozen=True, kw_only=True)
class Result:
    """One completed request, as written to ``results.jsonl``.

    Client times are ``time.perf_counter_ns`` intervals in ms; ``sent_unix_s`` is a label only.
    ``queue_ms`` is time spent in the client waiting for a free stream (not latency);
    ``event_ms`` holds the arrival of every stream event after the request was sent
    (events are not tokens: tokens accepted in one verification step arrive back to back).
    """

    prompt_id: str
    domain: str
    prompt_sha256: str
    repeat: Count
    attempt: Count
    server_start: Count
    sent_unix_s: Number
    queue_ms: Number
    ttft_ms: Number | None
    e2e_ms: Number
    event_ms: list[Number]
    timings: Timings
    stop_type: str
    alpha: Number | None  # draft_n_accepted / draft_n, None when nothing was drafted
    # Later fields (absent from records written before they existed, read as None):
    event_text: list[str] | None = None  # streamed text of each event, parallel to event_ms
    seed: Seed | None = None  # the request's sampling seed
    window: str | None = None  # the run's measurement window label (spec.window)
    utc_date: str | None = None  # UTC date the request was sent, YYYY-MM-DD (a label)
    # /metrics counter deltas over this request alone (spec.metrics_per_request)
    metrics_delta: dict[str, Number] | None = None
    # How busy the machine was during this request (see the module docstring), and whether
    # that exceeded the run's threshold; None in records written before they existed.
    contention: dict[str, Any] | None = None
    contended: bool | None = None
    # Interleaved runs (spec.interleave): the request's position in its prompt's round, where
    # every run of the group sends that prompt once, in a seeded order.
    round_pos: Count | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.prompt_id, self.repeat)


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    """One completed turn of a multi-turn session (workload runs), as in ``results.jsonl``.

    ``prompt_tokens`` is the templated prompt counted with the server's ``/tokenize`` when
    planned; ``cached_tokens`` is the server's ``cache_n`` (prompt tokens reused from the slot);
    ``tpot_ms`` is ``(e2e_ms - ttft_ms) / (output_tokens - 1)``, None with fewer than 2 tokens.
    ``order`` is the session's position in the run's seeded interleaved order.
    """

    session_id: str
    side: str  # "real" | "synthetic"
    condition: str
    turn: Count
    order: Count
    slot: Count
    attempt: Count
    server_start: Count
    sent_unix_s: Number
    queue_ms: Number
    prompt_chars: Count
    prompt_tokens: Count
    cached_tokens: Count
    output_tokens: Count
    n_predict: Count
    ttft_ms: Number | None
    tpot_ms: Number | None
    e2e_ms: Number
    event_ms: list[Number]
    timings: Timings
    stop_type: str
    alpha: Number | None
    # The turn's own contention window (issue 17; None in workload runs measured before).
    contention: dict[str, Any] | None = None
    contended: bool | None = None
    # Per-side deployments measured together (issue 28): this server's place in the turn's
    # round over the group's servers (None elsewhere).
    round_pos: Count | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (f"{self.side}:{self.session_id}", self.turn)


@dataclass(frozen=True, kw_only=True)
class ErrorRecord:
    """One failed attempt: a failure is data, not a crash."""

    prompt_id: str
    repeat: int
    attempt: int
    server_start: int
    reason: str  # "http_status" | "stream_error" | "truncated" | "timeout" | "connect" | ...
    status: int | None
    detail: str
    sent_unix_s: float


@dataclass(frozen=True, kw_only=True)
class RunMetrics:
    """``metrics.json``: what the run did, as a whole."""

    complete: bool
    n_expected: int
    n_results: int
    n_errors: int
    server_starts: int
    measure_s: float  # wall time of measured segments, model load and warm-up excluded
    model_load_s: list[float]  # one per server start: spawn until /health is ok
    warmup_s: list[float]
    concurrency: int
    slots: int
    metrics_delta: dict[str, float] = field(default_factory=dict)
    accepted_per_pos_delta: dict[str, float] = field(default_factory=dict)
    # Issue 16: runner invocations that worked on the run (1 = measured in one go), the quiet
    # gate's verdicts (one per invocation), and the run's contention over its requests
    # (:func:`artifact.campaign.contention.run_summary`); None in runs measured before.
    invocations: int | None = None
    gates: list[dict[str, Any]] | None = None
    contention: dict[str, Any] | None = None


@dataclass(frozen=True)
class JsonlRead:
    """Rows of a JSONL file with a count of the lines that could not be read."""

    rows: list[dict[str, Any]]
    n_bad_lines: int


def to_json(obj: Any) -> Any:
    """Dataclass to plain JSON-able data."""
    return asdict(obj) if hasattr(obj, "__dataclass_fields__") else obj


def append_jsonl(path: Path, obj: Any) -> None:
    """Append one JSON line and fsync it, so a crash never loses a completed record.

    After a crash mid-write the file may end in a torn line; the record then starts on a fresh
    line, so the torn line alone is unreadable (and counted), never the record after it.
    """
    line = json.dumps(to_json(obj), sort_keys=True, separators=(",", ":")) + "\n"
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = "\n" + line
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (temp file + rename), sorted keys, trailing newline."""
    # allow_nan: a raw file keeps what was measured; the analysis reads NaN as not computable
    files.write_json(path, to_json(obj), allow_nan=True)


def iter_jsonl(path: Path) -> Iterator[dict[str, Any] | None]:
    """Stream a JSONL file: each line's object, or None for an undecodable or broken line."""
    for _, obj in iter_jsonl_numbered(path):
        yield obj


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The lines of ``path`` that are not blank, each with its number (from 1; blank lines are
    counted, not given); none when there is no file. A file in the repository by name and
    outside it in fact is refused (:func:`in_repository`), as by :func:`read_json`."""
    in_repository(path)
    if not path.exists():
        return
    with path.open("rb") as f:
        for line, raw in enumerate(f, 1):
            if raw.strip():
                yield line, raw


_UNTYPED = msgspec.json.Decoder()


def _json_object(raw: bytes) -> dict[str, Any] | None:
    """One line's JSON object, or None: msgspec parses it, and the stdlib what msgspec refuses
    (NaN, Infinity, a number beyond a float's range), so the line reads as :func:`json.loads`
    reads it, within the bounds every reader keeps (:func:`_stdlib_row`: not nested deeper
    than the parser holds, its text Unicode).

    >>> _json_object(b'{"a": NaN}'), _json_object(b'{"a": "\\\\ud800"}')
    ({'a': nan}, None)
    >>> _json_object(b'{"a": ' + b'[' * 100_000 + b']' * 100_000 + b'}') is None
    True
    """
    try:
        obj = _UNTYPED.decode(raw if raw.isascii() else raw.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError):
        return None
    except msgspec.DecodeError:
        try:
            obj = _stdlib_row(raw)
        except TypeError:
            return None
    return obj if isinstance(obj, dict) else None


def iter_jsonl_numbered(path: Path) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """:func:`iter_jsonl` with each line's number (from 1; blank lines are skipped but counted),
    for messages that name the line.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_bytes(b'{"a": 1}\\n\\n{"a": \\xff\\n{"a": NaN}\\n')
    >>> list(iter_jsonl_numbered(p))
    [(1, {'a': 1}), (3, None), (4, {'a': nan})]

    A file in the repository by name and outside it in fact is refused
    (:func:`in_repository`), as by :func:`read_json`.
    """
    for line, raw in _lines(path):
        yield line, _json_object(raw)


def read_jsonl(path: Path) -> JsonlRead:
    """Read JSONL tolerantly: missing file is empty; bad bytes or broken lines are counted.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_bytes(b'{"a": 1}\\n{"a": \\xff\\n[1]\\n{"a": 2}\\n')
    >>> r = read_jsonl(p)
    >>> [row["a"] for row in r.rows], r.n_bad_lines
    ([1, 2], 2)
    """
    rows = list(iter_jsonl(path))
    good = [r for r in rows if r is not None]
    return JsonlRead(good, len(rows) - len(good))


SIDES = ("real", "synthetic")
# The interleaved design's sides (issue 17): REAL replays and one side per synthetic condition.
_SIDE = re.compile(r"real-[a-d]|synthetic-[a-z0-9][a-z0-9+-]*")


def valid_side(side: Any) -> bool:
    """A side of a workload run.

    >>> [valid_side(s) for s in ("real", "real-b", "synthetic-code+prefix", "realx", 3)]
    [True, True, True, False, False]
    """
    return isinstance(side, str) and (side in SIDES or _SIDE.fullmatch(side) is not None)


_INT = "integer"


def is_count(v: Any) -> bool:
    """``v`` is a JSON integer that an int32 holds (:data:`Count`), never a bool: what the
    untyped readers (plans, steps) take as a count, as the typed ones do.

    >>> is_count(3), is_count(-1), is_count(10**30), is_count(True), is_count(2.0)
    (True, True, False, False, False)
    """
    return isinstance(v, int) and not isinstance(v, bool) and INT32_MIN <= v <= INT32_MAX


def _typed(v: Any, kind: str) -> bool:
    """``v`` is a JSON integer an int32 holds (``kind`` "integer", :func:`is_count`) or a
    number, never a bool."""
    if isinstance(v, bool):
        return False
    return is_count(v) if kind == _INT else isinstance(v, int | float)


LATER_RESULT_FIELDS = frozenset({"event_text", "seed", "window", "utc_date", "metrics_delta",
                                 "contention", "contended", "round_pos"})
CONTENTION_FIELDS = ("foreign_cores", "steal_cores", "load1", "cpu_mhz")


def _check_contention(c: Any, contended: Any) -> None:
    """A record's contention fields: numbers (finite, not negative) or null, or "unavailable".

    >>> _check_contention({"foreign_cores": 0.02, "steal_cores": 0.0, "load1": 0.1,
    ...                    "cpu_mhz": None}, False)
    >>> _check_contention({"unavailable": "no /proc on this OS"}, None)
    >>> _check_contention({"foreign_cores": float("nan")}, True)
    Traceback (most recent call last):
    ...
    TypeError: contention.foreign_cores: expected a finite number >= 0, got nan
    """
    if contended is not None and not isinstance(contended, bool):
        raise TypeError(f"contended: expected true, false or null, got {contended!r}")
    if c is None:
        return
    if not isinstance(c, dict):
        raise TypeError(f"contention: expected an object, got {c!r}")
    if "unavailable" in c:
        if not isinstance(c["unavailable"], str):
            raise TypeError("contention.unavailable: expected a string")
        return
    for k, v in c.items():
        if k not in CONTENTION_FIELDS:
            raise TypeError(f"contention.{k}: unknown field")
        if v is None and k != "foreign_cores":
            continue
        if isinstance(v, bool) or not isinstance(v, int | float) or not finite(v) or v < 0:
            raise TypeError(f"contention.{k}: expected a finite number >= 0, got {v!r}")
    if "foreign_cores" not in c:
        raise TypeError("contention.foreign_cores: missing")


# Stored times are rounded (the runner to 1 us): an event this close after the end is rounding.
EVENT_SLACK_MS = 0.01


def event_problem(event_ms: list[Number], e2e_ms: Number | None) -> str | None:
    """Why a record's event arrival times cannot be measurements, or None: each finite, not
    negative, in arrival order, none after the end of the request (beyond rounding).

    >>> event_problem([1.0, 2.0, 2.0], 3.0) is None
    True
    >>> event_problem([1.0, float("nan")], 3.0)
    'event_ms[1] nan negative or not finite'
    >>> event_problem([2.0, 1.0], 3.0)
    'event_ms[1] 1.0 before event_ms[0] 2.0'
    """
    if not event_ms:
        return None
    # The common case at C speed: a finite sum (so no value is NaN or infinite), the first not
    # negative, and sorting changes nothing (finite values in order), so every one is finite
    # and not negative; otherwise the loop names the first that is not.
    prev = event_ms[-1]
    if not (event_ms[0] >= 0 and _finite_sum(event_ms) and sorted(event_ms) == event_ms):
        problem = _first_event_problem(event_ms)
        if problem is not None:
            return problem
    if e2e_ms is not None and finite(e2e_ms) and prev > e2e_ms + EVENT_SLACK_MS:
        return f"event_ms[{len(event_ms) - 1}] {prev!r} after the end of the request " \
               f"(e2e_ms {e2e_ms!r})"
    return None


def finite(v: Number) -> bool:
    """``v`` is a finite number; an integer too large for a float (JSON allows any number of
    digits) is not.

    >>> finite(1.5), finite(float("nan")), finite(10**400)
    (True, False, False)
    """
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _finite_sum(values: list[Number]) -> bool:
    """The sum of ``values`` is finite: none is NaN or infinite (an overflow, or an integer too
    large for a float, gives False: the caller then checks one by one)."""
    try:
        return math.isfinite(sum(values))
    except OverflowError:
        return False


def _first_event_problem(event_ms: list[Number]) -> str | None:
    """The first event that is not finite, negative or out of order, or None."""
    prev: Number = 0.0
    for i, v in enumerate(event_ms):
        if not finite(v) or v < 0:
            return f"event_ms[{i}] {v!r} negative or not finite"
        if v < prev:
            return f"event_ms[{i}] {v!r} before event_ms[{i - 1}] {prev!r}"
        prev = v
    return None


# ---- typed decoding (issue 32) -----------------------------------------------------------------
#
# A line of results.jsonl is decoded by msgspec straight into its record class: one reusable
# Decoder per class parses the bytes and checks each field's JSON type in C (a missing field, a
# bool or a string where a number goes, a float where an integer goes: the line is unreadable).
# What msgspec refuses and ``json.loads`` reads (NaN and Infinity, a number beyond a float's
# range) is read again by the stdlib and converted by msgspec from the Python objects
# (:func:`_from_row`): the verdict and the values are those of ``json.loads`` and these types,
# within the bounds of issue 46 (the module docstring), whichever parser reads the line
# (tests/test_records.py holds the reader to the checks it replaced). The rules that are not
# JSON types (a side's name, one text per event, the contention fields) are
# :func:`_result_rules` and :func:`_turn_rules`; impossible values are the analysis's
# (:mod:`artifact.analysis.validate`).
_R = TypeVar("_R", "Result", "TurnResult")


@dataclass(frozen=True)
class BadLine:
    """A line of a JSONL file that is not a record: its number (from 1) and why, in the
    project's words (``timings.ttft_ms: expected a number, got a string``)."""

    line: int
    why: str


@dataclass(frozen=True)
class TypedRead(Generic[_R]):
    """The records of a JSONL file, and the lines that are not records."""

    records: list[_R]
    bad: list[BadLine]


def _result_rules(r: Result) -> None:
    """What makes a :class:`Result` of the right JSON types unreadable still (TypeError)."""
    if r.event_text is not None and len(r.event_text) != len(r.event_ms):
        raise TypeError("event_text: expected a string per event")
    if r.contention is not None or r.contended is not None:
        _check_contention(r.contention, r.contended)


def _turn_rules(t: TurnResult) -> None:
    """What makes a :class:`TurnResult` of the right JSON types unreadable still (TypeError)."""
    if not valid_side(t.side):
        raise TypeError(f"side: expected real, synthetic, real-a..real-d or synthetic-<condition>, "
                        f"got {t.side!r}")
    if t.contention is not None or t.contended is not None:
        _check_contention(t.contention, t.contended)


@dataclass(frozen=True)
class _Kind(Generic[_R]):
    """How to read one record class: its reusable decoder and its rules beyond JSON types. A
    field with no default must be present, even when it may be null (``ttft_ms``).

    ``texts_foreign``: the class has no ``event_text``, yet a row that carries one anyway must
    carry a string per event, as a result's (the rule results and turns have always shared).
    The decoder skips a field its class lacks, so a line that may name it (it says
    ``event_text``, or holds an escape that could spell it) is read by the stdlib path, where
    :func:`_from_row` sees the whole row.
    """

    cls: type[_R]
    rules: Callable[[_R], None]
    texts_foreign: bool = False

    @functools.cached_property
    def decoder(self) -> msgspec.json.Decoder[_R]:
        """Made on first use: reading the class's fields costs milliseconds, which a no-op
        ``doit`` (it imports this module, reads no record) need not pay."""
        return msgspec.json.Decoder(self.cls)


_RESULT = _Kind(Result, _result_rules)
_TURN = _Kind(TurnResult, _turn_rules, texts_foreign=True)

_EXPECTED = re.compile(r"Expected `(?P<want>[^`]*)`, got `(?P<got>[^`]*)`")
_BOUND = re.compile(r"Expected `(?P<want>[^`]*)` (?P<op>[<>]=) (?P<bound>-?[0-9]+)")
_MISSING = re.compile(r"Object missing required field `(?P<name>[^`]*)`")
_WORDS = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
          "null": "null", "object": "an object", "array": "an array"}


def _expected(types: str) -> str:
    """msgspec's ``int | float | null`` in words: ``a number or null``."""
    names = types.split(" | ")
    if {"int", "float"} <= set(names):
        names = ["number" if n == "int" else n for n in names if n != "float"]
    return " or ".join("a number" if n == "number" else _WORDS.get(n, n) for n in names)


def _why(err: msgspec.ValidationError) -> str:
    """msgspec's message as one line in the project's words: the field, what was expected.

    >>> class T(msgspec.Struct):
    ...     t: dict[str, list[int | float | None]]
    >>> def w(raw):
    ...     try:
    ...         msgspec.json.decode(raw, type=T)
    ...     except msgspec.ValidationError as err:
    ...         return _why(err)
    >>> w(b'{"t": {"a": [1, "x"]}}')
    't[...][1]: expected a number or null, got a string'
    >>> w(b'{}')
    't: missing'
    >>> w(b'[]')
    'expected an object, got an array'
    """
    text, _, at = str(err).partition(" - at `$")
    field = at.rstrip("`").lstrip(".")
    if (m := _EXPECTED.fullmatch(text)) is not None:
        text = f"expected {_expected(m['want'])}, got {_expected(m['got'])}"
    elif (m := _BOUND.fullmatch(text)) is not None:
        text = f"expected {_expected(m['want'])} {m['op']} {m['bound']}"
        if m["want"] == "int":
            text += " (an int32, as llama-server counts)"
    elif (m := _MISSING.fullmatch(text)) is not None:
        field, text = ".".join(filter(None, (field, m["name"]))), "missing"
    else:
        text = text[:1].lower() + text[1:]
    return f"{field}: {text}" if field else text


def _from_row(row: Any, kind: _Kind[_R]) -> _R:
    """The record of a decoded row (TypeError saying why it is not one)."""
    if kind.texts_foreign and isinstance(row, dict) and row.get("event_text") is not None:
        text, events = row["event_text"], row.get("event_ms")
        if not (isinstance(text, list) and isinstance(events, list)
                and len(text) == len(events) and all(isinstance(x, str) for x in text)):
            raise TypeError("event_text: expected a string per event")
    try:
        rec = msgspec.convert(row, kind.cls, strict=True)
    except msgspec.ValidationError as err:
        raise TypeError(_why(err)) from None
    except RecursionError:
        raise TypeError(TOO_DEEP) from None
    kind.rules(rec)
    return rec


def _line_record(raw: bytes, kind: _Kind[_R]) -> _R:
    """The record of one line (TypeError saying why it is not one): decoded by msgspec, or,
    where msgspec refuses the line, parsed by the stdlib and converted (:func:`_from_row`)."""
    if kind.texts_foreign and (b"event_text" in raw or b"\\" in raw):
        return _from_row(_stdlib_row(raw), kind)
    try:
        rec = kind.decoder.decode(raw if raw.isascii() else raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise TypeError("not UTF-8 text") from None
    except RecursionError:  # caught, not prevented: a check of every line's depth costs time
        raise TypeError(TOO_DEEP) from None
    except msgspec.MsgspecError:
        return _from_row(_stdlib_row(raw), kind)
    kind.rules(rec)
    return rec


# Issue 46: what no reader takes, whichever parser reads the line. msgspec refuses a lone
# surrogate escape itself (the line comes here); both parsers raise RecursionError on a line
# nested deeper than the interpreter's recursion limit (about a thousand levels, less the
# stack in use), which is caught where each is called: a check of every line's depth would
# cost about a fifth of a typed decode, and no record is more than four levels deep.
TOO_DEEP = "nested deeper than the parser can hold"
NOT_UNICODE = "not Unicode text (a lone surrogate escape, \\ud800 to \\udfff)"
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _lone_surrogate(obj: Any) -> bool:
    """Whether a parsed line holds a string (a value or a key) with a lone surrogate, which no
    UTF-8 encodes: a summary naming it could not be written.

    >>> _lone_surrogate({"a": ["ok", {"\\u00e9": 1}]}), _lone_surrogate({"a": ["\\udc00"]})
    (False, True)
    """
    stack = [obj]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(v, dict):
            stack += v.keys()
            stack += v.values()
        elif isinstance(v, list):
            stack += v
    return False


def _stdlib_row(raw: bytes) -> Any:
    """One line as :func:`json.loads` reads it, within the bounds every reader keeps (TypeError
    when it cannot: not UTF-8, not JSON, :data:`TOO_DEEP`, :data:`NOT_UNICODE`).

    >>> row = _stdlib_row(b'{"a": 1e400, "b": "\\\\ud83d\\\\ude00"}')  # a pair is Unicode
    >>> row["a"], row["b"] == chr(0x1F600)
    (inf, True)
    >>> _stdlib_row(b'{"domain": "\\\\ud800"}')
    Traceback (most recent call last):
    ...
    TypeError: not Unicode text (a lone surrogate escape, \\ud800 to \\udfff)
    """
    try:
        row = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise TypeError("not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise TypeError(f"not JSON ({err.msg} at column {err.colno})") from None
    except RecursionError:
        raise TypeError(TOO_DEEP) from None
    # a lone surrogate comes only from an escape: the walk is for lines that hold one
    if _SURROGATE_ESCAPE.search(raw) is not None and _lone_surrogate(row):
        raise TypeError(NOT_UNICODE)
    return row


def _drop_events(rec: Result | TurnResult) -> None:
    """Drop a record's per-event times and texts (one per token), unless their values break
    :func:`event_problem`: then they stay, for the analysis to exclude the record as impossible
    (the same rule whether events are kept or not). ``rec`` is fresh from the decoder, seen by
    no one yet: its frozen fields are set as a dataclass's own ``__init__`` sets them."""
    if event_problem(rec.event_ms, rec.e2e_ms) is None:
        object.__setattr__(rec, "event_ms", [])
        if isinstance(rec, Result):
            object.__setattr__(rec, "event_text", None)


def _read_typed(path: Path, kind: _Kind[_R], keep_events: bool) -> TypedRead[_R]:
    """Each line of ``path`` as a record of ``kind``, events dropped unless ``keep_events``
    (:func:`_drop_events`); a line that is not one is a :class:`BadLine`."""
    out: list[_R] = []
    bad: list[BadLine] = []
    for line, raw in _lines(path):
        try:
            rec = _line_record(raw, kind)
        except TypeError as err:
            bad.append(BadLine(line, str(err)))
            continue
        if not keep_events:
            _drop_events(rec)
        out.append(rec)
    return TypedRead(out, bad)


def result_from_row(row: dict[str, Any]) -> Result:
    """Typed :class:`Result` from a decoded row (a TypeError says why it is not one: a field
    missing or of the wrong JSON type, or breaking :func:`_result_rules`).

    >>> result_from_row({"prompt_id": 3})
    Traceback (most recent call last):
    ...
    TypeError: prompt_id: expected a string, got an integer
    """
    return _from_row(row, _RESULT)


def turn_from_row(row: dict[str, Any]) -> TurnResult:
    """Typed :class:`TurnResult` from a decoded row (a TypeError says why it is not one, as
    :func:`result_from_row`).

    >>> turn_from_row({"session_id": "s", "timings": None})
    Traceback (most recent call last):
    ...
    TypeError: timings: expected an object, got null
    """
    return _from_row(row, _TURN)


def read_results(run: Path, *, keep_events: bool = True) -> tuple[list[Result], int]:
    """Results of a run and the number of lines that could not be read as a :class:`Result`.

    ``keep_events=False`` drops the per-event arrival times and texts (one per token) line by
    line, which keeps memory, and so time, linear in the number of records for the analysis.
    """
    read = _read_typed(run / RESULTS, _RESULT, keep_events)
    return read.records, len(read.bad)


def quiet_results(run: Path, *, keep_events: bool = True) -> tuple[list[Result], int]:
    """A run's quiet requests, the last quiet attempt of each (prompt, repeat), and the number
    of contended requests left out; a line that is not a result is a :class:`RecordError`
    naming the first such line and why."""
    read = _read_typed(run / RESULTS, _RESULT, keep_events)
    if read.bad:
        first = read.bad[0]
        raise RecordError(f"{paths.shown(run / RESULTS)}: {len(read.bad)} lines are not "
                          f"results (line {first.line}: {first.why})")
    keep: dict[tuple[str, int], Result] = {}
    contended = 0
    for r in read.records:
        if r.contended:
            contended += 1
        else:
            keep[r.key] = r
    return list(keep.values()), contended


def run_dir(root: Path, run_id: str) -> Path:
    """The folder of run ``run_id`` under ``root``; the id must be a safe name that stays inside.

    >>> run_dir(Path("runs"), "final-none").as_posix()
    'runs/final-none'
    >>> run_dir(Path("runs"), "..")
    Traceback (most recent call last):
    ...
    artifact.errors.RecordError: run id '..': expected letters, digits, '.', '_' or '-', ...
    """
    if not files.is_safe_name(run_id):
        raise RecordError(f"run id {run_id!r}: expected letters, digits, '.', '_' or '-', "
                          "starting with a letter or digit")
    return files.inside(root, run_id, error=RecordError, what="run id")


def read_turns(run: Path, *, keep_events: bool = True) -> tuple[list[TurnResult], int]:
    """Turn records of a workload run and the number of lines that could not be read."""
    read = _read_typed(run / RESULTS, _TURN, keep_events)
    return read.records, len(read.bad)


@dataclass(frozen=True, kw_only=True)
class PlanTurn:
    """One planned turn of ``sessions.jsonl``: what its record must say it sent."""

    prompt_tokens: int
    prompt_chars: int
    n_predict: int


@dataclass(frozen=True)
class Plan:
    """A workload run's plan: turn key (``"<side>:<session>"``, turn) -> planned turn, and the
    lines of ``sessions.jsonl`` that could not be read as a planned session."""

    turns: dict[tuple[str, int], PlanTurn]
    n_bad_lines: int

    @property
    def sessions(self) -> set[str]:
        return {k for k, _ in self.turns}


_PLAN_TURN_KINDS = {"turn": _INT, "prompt_tokens": _INT, "prompt_chars": _INT,
                    "n_predict": _INT}


def read_plan(run: Path) -> Plan | None:
    """``sessions.jsonl`` of a workload run (None when there is none); a line that is not a
    planned session (undecodable, a field missing or mistyped, a side not valid_side, a
    turn repeated) is counted, never skipped silently: a damaged plan is not a smaller one.

    >>> import tempfile, pathlib
    >>> run = pathlib.Path(tempfile.mkdtemp())
    >>> t = {"turn": 0, "prompt_tokens": 9, "prompt_chars": 30, "n_predict": 4}
    >>> append_jsonl(run / SESSIONS, {"session_id": "a", "side": "real", "turns": [t]})
    >>> with (run / SESSIONS).open("ab") as f:
    ...     _ = f.write(b'{"session_id": "b", \\xff\\n')
    >>> p = read_plan(run)
    >>> sorted(p.turns), p.n_bad_lines
    ([('real:a', 0)], 1)
    """
    path = run / SESSIONS
    if not path.exists():
        return None
    turns: dict[tuple[str, int], PlanTurn] = {}
    bad = 0
    for row in iter_jsonl(path):
        got = _plan_row(row)
        if got is None or any(k in turns for k in got):
            bad += 1
            continue
        turns.update(got)
    return Plan(turns, bad)


def _plan_row(row: dict[str, Any] | None) -> dict[tuple[str, int], PlanTurn] | None:
    if row is None or not isinstance(row.get("session_id"), str) \
            or not valid_side(row.get("side")) or not isinstance(row.get("turns"), list):
        return None
    key = f"{row['side']}:{row['session_id']}"
    out: dict[tuple[str, int], PlanTurn] = {}
    for t in row["turns"]:
        if not isinstance(t, dict) or not all(_typed(t.get(k), kind)
                                              for k, kind in _PLAN_TURN_KINDS.items()):
            return None
        if (key, t["turn"]) in out:
            return None
        out[(key, t["turn"])] = PlanTurn(prompt_tokens=t["prompt_tokens"],
                                         prompt_chars=t["prompt_chars"], n_predict=t["n_predict"])
    return out


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON object file (raises :class:`RecordError` naming the file when it is not one;
    :class:`OutsideError` when it leads out of the repository, :func:`in_repository`)."""
    in_repository(path)
    obj: dict[str, Any] = files.read_json(path, RecordError, where=path.name)
    return obj
