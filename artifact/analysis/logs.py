"""The server log: per-request draft acceptance and per-position acceptance, paired to records.

llama-server at ``-lv 4`` prints, when a request that drafted something finishes::

    slot print_timing: id  0 | task 12 | draft acceptance = 0.73000 (  146 accepted /   200 generated), mean len =  3.10
    slot print_timing: id  0 | task 12 |      acc per pos = (0.910, 0.800, 0.620, 0.400)

The runner writes ``[specdec-runner] warmup begin (server start N)`` and ``... measure begin
(server start N)`` markers into the same file; only lines after a ``measure begin`` and before
the next ``warmup begin`` are measured. The regexes key on the phrases and numbers only, so
prefixes (timestamps, slot ids) and spacing may vary.
"""  # noqa: E501

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from artifact import records

_LINE = re.compile(
    r"^.*(?:draft acceptance|acc per pos|" + re.escape(records.MARKER_PREFIX) + r").*$",
    re.MULTILINE,
)
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|-?inf"
_ACCEPT = re.compile(
    r"draft acceptance\s*[=:]\s*(?P<alpha>" + _NUM + r")\s*"
    r"\(\s*(?P<acc>\d+)\s*accepted\s*/\s*(?P<gen>\d+)\s*generated\s*\)"
    r"(?:\s*,?\s*mean (?:acceptance )?len(?:gth)?\s*[=:]?\s*(?P<len>" + _NUM + r"))?",
    re.IGNORECASE,
)
_ACC_POS = re.compile(r"acc per pos\s*[=:]\s*[(\[](?P<vals>[^)\]]*)[)\]]", re.IGNORECASE)
_SLOT = re.compile(r"\bid\s+(?P<slot>\d+)\s*\|\s*task\s+(?P<task>-?\d+)")
_SPLIT = re.compile(r"[,\s]+")

# Largest |log alpha - record alpha| still taken as the same request: both come from the same
# integer counters, so a real pair differs only by the log's 5-decimal print.
ALPHA_TOLERANCE = 0.01


@dataclass(frozen=True, kw_only=True)
class LogEntry:
    """One measured ``draft acceptance`` line and its ``acc per pos`` vector (when printed)."""

    accepted: int
    generated: int
    alpha: float  # accepted / generated, from the integers (the printed ratio is rounded)
    mean_len: float | None
    acc_per_pos: tuple[float, ...] | None
    slot: tuple[int, int] | None  # (slot id, task id) when the prefix shows them


@dataclass(frozen=True)
class ParsedLog:
    entries: list[LogEntry]
    has_markers: bool


def _float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return math.nan


def parse_server_log(text: str) -> ParsedLog:
    """Measured draft-acceptance entries of a server log, in order.

    Without any runner marker, every line counts (the caller reports that).

    >>> log = '''[specdec-runner] warmup begin (server start 1)
    ... slot print_timing: id  0 | task 1 | draft acceptance = 0.50000 (  1 accepted /  2 generated), mean len =  1.50
    ... [specdec-runner] measure begin (server start 1)
    ... slot print_timing: id  0 | task 2 | draft acceptance = 0.75000 (  3 accepted /  4 generated), mean len =  2.50
    ... slot print_timing: id  0 | task 2 |      acc per pos = (1.000, 0.500)
    ... '''
    >>> p = parse_server_log(log)
    >>> len(p.entries), p.entries[0].alpha, p.entries[0].mean_len, p.entries[0].acc_per_pos
    (1, 0.75, 2.5, (1.0, 0.5))
    """  # noqa: E501
    lines = [m.group(0) for m in _LINE.finditer(text)]
    has_markers = any(records.MARKER_PREFIX in ln for ln in lines)
    measuring = not has_markers
    entries: list[LogEntry] = []
    for line in lines:
        if records.MARKER_PREFIX in line:
            if "measure begin" in line:
                measuring = True
            elif "warmup begin" in line:
                measuring = False
            continue
        if not measuring:
            continue
        slot_m = _SLOT.search(line)
        slot = (int(slot_m["slot"]), int(slot_m["task"])) if slot_m else None
        m = _ACCEPT.search(line)
        if m:
            acc, gen = int(m["acc"]), int(m["gen"])
            entries.append(
                LogEntry(
                    accepted=acc,
                    generated=gen,
                    alpha=acc / gen if gen > 0 else _float(m["alpha"]),
                    mean_len=_float(m["len"]) if m["len"] is not None else None,
                    acc_per_pos=None,
                    slot=slot,
                )
            )
            continue
        p = _ACC_POS.search(line)
        if p:
            vals = tuple(_float(v) for v in _SPLIT.split(p["vals"].strip()) if v)
            # The vector belongs to the latest entry still without one (of the same slot/task
            # when the prefix names it): the server prints the two lines back to back.
            for i in range(len(entries) - 1, max(-1, len(entries) - 9), -1):
                e = entries[i]
                if e.acc_per_pos is None and (slot is None or e.slot is None or e.slot == slot):
                    entries[i] = LogEntry(
                        accepted=e.accepted,
                        generated=e.generated,
                        alpha=e.alpha,
                        mean_len=e.mean_len,
                        acc_per_pos=vals,
                        slot=e.slot,
                    )
                    break
    return ParsedLog(entries, has_markers)


@dataclass(frozen=True, kw_only=True)
class Pairing:
    """Log entries matched to records: ``entry_of[i]`` is the entry of record ``i`` (or None)."""

    n_lines: int
    n_records: int  # records with a non-null alpha
    max_abs_alpha_diff: float | None
    ok: bool
    entry_of: list[LogEntry | None]
    problem: str | None  # one line when not ok


def pair(
    recs: Sequence[records.Result], entries: Sequence[LogEntry], *, where: str
) -> Pairing:
    """The i-th measured entry belongs to the i-th record with a non-null alpha.

    A count mismatch, or an alpha differing by more than :data:`ALPHA_TOLERANCE`, makes the
    pairing not ok (``problem`` says why, naming the run ``where``).
    """
    drafted = [i for i, r in enumerate(recs) if r.alpha is not None]
    entry_of: list[LogEntry | None] = [None] * len(recs)
    if len(drafted) != len(entries):
        return Pairing(
            n_lines=len(entries),
            n_records=len(drafted),
            max_abs_alpha_diff=None,
            ok=False,
            entry_of=entry_of,
            problem=(
                f"run {where}: server.log has {len(entries)} measured draft-acceptance line(s) "
                f"for {len(drafted)} record(s) with alpha; per-position acceptance and tau skipped"
            ),
        )
    diff = 0.0
    for i, e in zip(drafted, entries, strict=True):
        alpha = recs[i].alpha
        assert alpha is not None
        d = abs(e.alpha - alpha)
        diff = d if math.isnan(d) else max(diff, d)
        entry_of[i] = e
    ok = diff <= ALPHA_TOLERANCE
    return Pairing(
        n_lines=len(entries),
        n_records=len(drafted),
        max_abs_alpha_diff=diff if drafted else None,
        ok=ok,
        entry_of=entry_of if ok else [None] * len(recs),
        problem=None
        if ok
        else (
            f"run {where}: server.log alphas differ from records' by up to {diff:.4g} "
            f"(> {ALPHA_TOLERANCE}); per-position acceptance and tau skipped"
        ),
    )
