"""The record checks as they were before typed decoding (issue 32), kept as the reference that
the msgspec reader must agree with: a row is read or refused by the same rules, and read into
the same values (an integer stays an int).

Taken from ``artifact/records.py`` at ``cacacdc`` (``result_from_row``, ``turn_from_row`` and
the checks they call; ``_drop_events``), with the checks that did not move in the module
(contention, sides, event order) imported from it.
"""

from __future__ import annotations

from typing import Any

from artifact.records import (
    LATER_RESULT_FIELDS,
    Result,
    Timings,
    TurnResult,
    _check_contention,
    event_problem,
    valid_side,
)

_NUM, _INT, _STR = "number", "integer", "string"
_TIMING_KINDS = {"prompt_n": _INT, "prompt_ms": _NUM, "predicted_n": _INT, "predicted_ms": _NUM,
                 "predicted_per_second": _NUM, "cache_n": _INT, "draft_n": _INT,
                 "draft_n_accepted": _INT}
_OPTIONAL_TIMINGS = frozenset({"draft_n", "draft_n_accepted"})
_RESULT_KINDS = {"prompt_id": _STR, "domain": _STR, "prompt_sha256": _STR, "repeat": _INT,
                 "attempt": _INT, "server_start": _INT, "sent_unix_s": _NUM, "queue_ms": _NUM,
                 "ttft_ms": _NUM, "e2e_ms": _NUM, "stop_type": _STR, "alpha": _NUM}
_OPTIONAL_RESULT = frozenset({"ttft_ms", "alpha"})
_TURN_KINDS = {"session_id": _STR, "side": _STR, "condition": _STR, "turn": _INT, "order": _INT,
               "slot": _INT, "attempt": _INT, "server_start": _INT, "sent_unix_s": _NUM,
               "queue_ms": _NUM, "prompt_chars": _INT, "prompt_tokens": _INT,
               "cached_tokens": _INT, "output_tokens": _INT, "n_predict": _INT, "ttft_ms": _NUM,
               "tpot_ms": _NUM, "e2e_ms": _NUM, "stop_type": _STR, "alpha": _NUM}
_OPTIONAL_TURN = frozenset({"ttft_ms", "tpot_ms", "alpha"})
_LATER_TURN_FIELDS = frozenset({"contention", "contended", "round_pos"})


def _typed(v: Any, kind: str) -> bool:
    if isinstance(v, bool):
        return False
    if kind == _INT:
        return isinstance(v, int)
    if kind == _NUM:
        return isinstance(v, int | float)
    return isinstance(v, str)


def _check_kinds(row: dict[str, Any], kinds: dict[str, str], optional: frozenset[str],
                 prefix: str = "") -> None:
    for k, kind in kinds.items():
        v = row.get(k) if k in optional else row[k]
        if not (v is None and k in optional) and not _typed(v, kind):
            raise TypeError(f"{prefix}{k}: expected a {kind}, got {v!r}")


def _timings(row: dict[str, Any]) -> Timings:
    t = row["timings"]
    if not isinstance(t, dict):
        raise TypeError(f"timings: expected an object, got {t!r}")
    _check_kinds(t, _TIMING_KINDS, _OPTIONAL_TIMINGS, "timings.")
    return Timings(**{k: t.get(k) for k in Timings.__dataclass_fields__})


def _check_events(row: dict[str, Any]) -> None:
    events = row["event_ms"]
    if not isinstance(events, list) or not all(_typed(x, _NUM) for x in events):
        raise TypeError("event_ms: expected a list of numbers")
    text = row.get("event_text")
    if text is not None and (not isinstance(text, list) or len(text) != len(events)
                             or not all(isinstance(x, str) for x in text)):
        raise TypeError("event_text: expected a string per event")


def result_from_row(row: dict[str, Any]) -> Result:
    timings = _timings(row)
    _check_kinds(row, _RESULT_KINDS, _OPTIONAL_RESULT)
    _check_events(row)
    d = row.get("metrics_delta")
    if d is not None and (not isinstance(d, dict)
                          or not all(_typed(v, _NUM) for v in d.values())):
        raise TypeError(f"metrics_delta: expected an object of numbers, got {d!r}")
    _check_contention(row.get("contention"), row.get("contended"))
    for k in ("seed", "round_pos"):
        if row.get(k) is not None and not _typed(row[k], _INT):
            raise TypeError(f"{k}: expected an integer or null, got {row[k]!r}")
    for k in ("window", "utc_date"):
        if row.get(k) is not None and not isinstance(row[k], str):
            raise TypeError(f"{k}: expected a string or null, got {row[k]!r}")
    fields = {k: row[k] if k not in LATER_RESULT_FIELDS else row.get(k)
              for k in Result.__dataclass_fields__ if k != "timings"}
    return Result(timings=timings, **fields)


def turn_from_row(row: dict[str, Any]) -> TurnResult:
    timings = _timings(row)
    _check_kinds(row, _TURN_KINDS, _OPTIONAL_TURN)
    if not valid_side(row["side"]):
        raise TypeError(f"side: not a side, got {row['side']!r}")
    _check_events(row)
    _check_contention(row.get("contention"), row.get("contended"))
    if row.get("round_pos") is not None and not _typed(row["round_pos"], _INT):
        raise TypeError(f"round_pos: expected an integer or null, got {row['round_pos']!r}")
    fields = {k: row[k] if k not in _LATER_TURN_FIELDS else row.get(k)
              for k in TurnResult.__dataclass_fields__ if k != "timings"}
    return TurnResult(timings=timings, **fields)


def drop_events(row: dict[str, Any]) -> None:
    """``keep_events=False``: the row's events and texts dropped unless they are impossible."""
    _check_events(row)
    e2e = row.get("e2e_ms")
    if event_problem(row["event_ms"], e2e if _typed(e2e, _NUM) else None) is None:
        row["event_ms"] = []
        if "event_text" in row:
            row["event_text"] = None
