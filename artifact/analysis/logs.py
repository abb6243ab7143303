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
from typing import Any

from artifact import records

_NUM = r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|-?inf)"
# One pass over the whole text finds markers and both kinds of line, in order. ``[ \t]*``
# (never ``\s``) keeps a match inside one line. Each alternative starts with a literal
# character, outside any group: ``re`` then tries a match only where one of them is.
_EVENT = re.compile(
    r"""
    \[specdec-runner\] [ \t]* (?P<mk>warmup|measure) \ begin
    | draft\ acceptance [ \t]* [=:] [ \t]* (?P<alpha>NUM) [ \t]*
      \( [ \t]* (?P<acc>\d+) [ \t]* accepted [ \t]* / [ \t]* (?P<gen>\d+) [ \t]* generated [ \t]* \)
      (?: [ \t]* ,? [ \t]* mean\ (?:acceptance\ )? len(?:gth)? [ \t]* [=:]? [ \t]* (?P<len>NUM) )?
    | acc\ per\ pos [ \t]* [=:] [ \t]* [(\[] (?P<vals>[^)\]\n]*) [)\]]
    """.replace("NUM", _NUM),
    re.VERBOSE,
)
_SPLIT = re.compile(r"[,\s]+")
# The groups of _EVENT in order, as parse_server_log unpacks them (a test checks the order).
_GROUPS = ("mk", "alpha", "acc", "gen", "len", "vals")

# Largest |log alpha - record alpha| still taken as the same request: both come from the same
# integer counters, so a real pair differs only by the log's 5-decimal print.
ALPHA_TOLERANCE = 0.01
# How far (in drafted records) a completion may be reordered between the log and the results.
SWAP_WINDOW = 8


@dataclass(frozen=True, kw_only=True)
class LogEntry:
    """One measured ``draft acceptance`` line and its ``acc per pos`` vector (when printed)."""

    accepted: int
    generated: int
    alpha: float  # accepted / generated, from the integers (the printed ratio is rounded)
    mean_len: float | None
    acc_per_pos: tuple[float, ...] | None


@dataclass(frozen=True)
class ParsedLog:
    entries: list[LogEntry]
    has_markers: bool


def _float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return math.nan


def _floats(vals: str) -> tuple[float, ...]:
    """The numbers of an ``acc per pos`` vector, ``nan`` for one that is not a number.

    >>> _floats(" 0.9, 0.5 x,")
    (0.9, 0.5, nan)
    """
    try:  # the usual case: one number between commas, spaced or not (float() strips spaces)
        return tuple(map(float, vals.split(",")))
    except ValueError:  # split on any run of commas and spaces; nan where not a number
        return tuple(_float(v) for v in _SPLIT.split(vals.strip()) if v)


def parse_server_log(text: str) -> ParsedLog:
    """Measured draft-acceptance entries of a server log, in order.

    An ``acc per pos`` line belongs to the ``draft acceptance`` line just before it (the server
    prints the two back to back, one request at a time). Without any runner marker, every
    line counts (the caller reports that).

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
    has_markers = records.MEASURE_MARKER in text
    measuring = not has_markers
    rows: list[list[Any]] = []  # [accepted, generated, alpha, mean_len, acc_per_pos]
    # findall: the groups of every match in order (_GROUPS), "" for a group that took no part
    # (each but vals matches at least one character when it takes part)
    for mk, alpha, acc, gen, mean_len, vals in _EVENT.findall(text):
        if mk:
            measuring = mk == "measure"
        elif not measuring:
            continue
        elif acc:
            a, g = int(acc), int(gen)
            rows.append([a, g, a / g if g > 0 else _float(alpha),
                         _float(mean_len) if mean_len else None, None])
        elif rows and rows[-1][4] is None:
            rows[-1][4] = _floats(vals)
    entries = [
        LogEntry(accepted=a, generated=g, alpha=al, mean_len=ml, acc_per_pos=v)
        for a, g, al, ml, v in rows
    ]
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


def pair(recs: Sequence[records.Result], entries: Sequence[LogEntry], *, where: str) -> Pairing:
    """The i-th measured entry belongs to the i-th record with a non-null alpha.

    With concurrent requests the log and ``results.jsonl`` can order near-simultaneous
    completions differently, so when entry i's counts (accepted, generated) differ from record
    i's (``draft_n_accepted``, ``draft_n``), the nearest unused entry within
    :data:`SWAP_WINDOW` positions with the record's exact counts is taken instead.
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
    used = [False] * len(entries)
    diff = 0.0
    for j, i in enumerate(drafted):
        t = recs[i].timings
        want = (t.draft_n_accepted, t.draft_n)
        pick = j
        if used[j] or (entries[j].accepted, entries[j].generated) != want:
            near = sorted(
                range(max(0, j - SWAP_WINDOW), min(len(entries), j + SWAP_WINDOW + 1)),
                key=lambda c: (abs(c - j), c),
            )
            exact = [
                c
                for c in near
                if not used[c] and (entries[c].accepted, entries[c].generated) == want
            ]
            free = [c for c in near if not used[c]]
            pick = exact[0] if exact else (j if not used[j] else (free[0] if free else j))
        used[pick] = True
        e = entries[pick]
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
