"""A run's own ledger, ``events.jsonl``: what happened to the run, across runner invocations.

Every invocation, quiet-gate verdict, server start and measured segment is appended and fsynced
as it happens, so ``metrics.json`` (written at the end of an invocation) can always be computed
again from it: a runner killed with ``kill -9`` loses no server start and no measured time. A
segment cut by a kill has no ``segment_end``; its time is counted up to its last completed
request (:func:`totals`).

Events (``event`` names the kind; every event has ``unix_s`` and ``pid``):

``legacy``          the metrics of a run measured before the ledger existed, carried over once
``invocation``      a runner began work on the run (``done``: records already there)
``gate``            the quiet gate's verdict (:class:`artifact.campaign.contention.GateResult`)
``server_start``    ``n`` (1, 2, ... over the run's life), ``load_s``, ``warmup_s``
``measure_begin``   ``n``, ``mode`` (``sequential``: one run on its server; ``interleaved``:
                    the run's requests alternate with its group's)
``segment_end``     ``n``, ``measure_s``, ``delta`` (the server's ``/metrics`` counter deltas)
``pass_begin``      ``n``, ``repeat``: an interleaved pass begins on server start ``n`` (each
                    pass of a group with repeats gets freshly started servers)
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from artifact import records


def record(run: Path, kind: str, **fields: Any) -> None:
    """Append one event to the run's ledger (fsynced)."""
    records.append_jsonl(run / records.EVENTS, {"event": kind, "unix_s": round(time.time(), 3),
                                                "pid": os.getpid(), **fields})


@dataclass
class Totals:
    """What a run did over its whole life, from its ledger."""

    invocations: int = 0
    server_starts: int = 0
    measure_s: float = 0.0
    model_load_s: list[float] = field(default_factory=list)
    warmup_s: list[float] = field(default_factory=list)
    delta: dict[str, float] = field(default_factory=dict)
    gates: list[dict[str, Any]] = field(default_factory=list)
    cut_segments: int = 0  # segments ended by a kill (no segment_end), counted from records

    def add_delta(self, d: dict[str, Any]) -> None:
        for k, v in d.items():
            if isinstance(v, int | float) and math.isfinite(v):
                self.delta[k] = self.delta.get(k, 0.0) + float(v)


def _num(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0


def totals(run: Path, results: Sequence[records.Result] = ()) -> Totals:
    """A run's totals from ``events.jsonl``; ``results`` (its records) date the cut segments.

    >>> import tempfile
    >>> run = Path(tempfile.mkdtemp())
    >>> record(run, "invocation", done=0)
    >>> record(run, "server_start", n=1, load_s=0.5, warmup_s=0.2)
    >>> record(run, "measure_begin", n=1, mode="sequential")
    >>> record(run, "segment_end", n=1, measure_s=3.0, delta={"x": 2})
    >>> t = totals(run)
    >>> t.invocations, t.server_starts, t.measure_s, t.delta
    (1, 1, 3.0, {'x': 2.0})
    """
    t = Totals()
    open_: dict[int, dict[str, Any]] = {}
    for row in records.read_jsonl(run / records.EVENTS).rows:
        kind = row.get("event")
        if kind == "legacy":
            t.server_starts += int(_num(row.get("server_starts")))
            t.measure_s += _num(row.get("measure_s"))
            t.model_load_s += [_num(v) for v in row.get("model_load_s") or []]
            t.warmup_s += [_num(v) for v in row.get("warmup_s") or []]
            t.add_delta(row.get("delta") or {})
        elif kind == "invocation":
            t.invocations += 1
        elif kind == "gate":
            t.gates.append({k: v for k, v in row.items() if k not in ("event", "pid")})
        elif kind == "server_start":
            t.server_starts += 1
            t.model_load_s.append(_num(row.get("load_s")))
            t.warmup_s.append(_num(row.get("warmup_s")))
        elif kind == "measure_begin":
            open_[int(_num(row.get("n")))] = row
        elif kind == "segment_end":
            open_.pop(int(_num(row.get("n"))), None)
            t.measure_s += _num(row.get("measure_s"))
            t.add_delta(row.get("delta") or {})
    for n, begin in open_.items():  # cut by a kill: count up to the last completed request
        mine = [r for r in results if r.server_start == n]
        if not mine:
            continue
        t.cut_segments += 1
        if begin.get("mode") == "interleaved":
            t.measure_s += sum(r.e2e_ms for r in mine) / 1000
        else:
            end = max(r.sent_unix_s + r.e2e_ms / 1000 for r in mine)
            t.measure_s += max(0.0, end - _num(begin.get("unix_s")))
    t.measure_s = round(t.measure_s, 3)
    return t


def carry_legacy(run: Path) -> None:
    """Before a run measured without a ledger gets one, carry its metrics into it once."""
    if (run / records.EVENTS).exists():
        return
    try:
        m = records.read_json(run / records.METRICS)
    except records.RecordError:
        return
    record(run, "legacy", server_starts=m.get("server_starts", 0),
           measure_s=m.get("measure_s", 0.0), model_load_s=m.get("model_load_s", []),
           warmup_s=m.get("warmup_s", []), delta=m.get("metrics_delta", {}))
