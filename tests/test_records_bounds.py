"""The bounds every reader of artifact/records.py keeps (issue 46): a line nested deeper than
the parser can hold, text that is not Unicode, a count that no int32 holds: the line is
unreadable and counted, never a crash, never a record served."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from artifact import records
from artifact.analysis import final, validate

DEEP = b"[" * 100_000 + b"]" * 100_000


def _result(pid: str = "code/x", **timings: Any) -> records.Result:
    t = {"prompt_n": 5, "prompt_ms": 3.0, "predicted_n": 2, "predicted_ms": 20.0,
         "predicted_per_second": 100.0, "cache_n": 0, "draft_n": 40, "draft_n_accepted": 10,
         **timings}
    return records.Result(
        prompt_id=pid, domain="code", prompt_sha256="ab", repeat=0, attempt=1, server_start=1,
        sent_unix_s=1.0, queue_ms=0.1, ttft_ms=10.0, e2e_ms=100.0, event_ms=[10.0, 20.0],
        timings=records.Timings(**t), stop_type="limit", alpha=0.25)


def _turn(session: str = "s") -> records.TurnResult:
    return records.TurnResult(
        session_id=session, side="real", condition="c", turn=0, order=0, slot=0, attempt=1,
        server_start=1, sent_unix_s=1.0, queue_ms=0.0, prompt_chars=20, prompt_tokens=5,
        cached_tokens=0, output_tokens=4, n_predict=4, ttft_ms=2.0, tpot_ms=1.0, e2e_ms=5.0,
        event_ms=[2.0, 3.0, 4.5], timings=_result().timings, stop_type="limit", alpha=None)


def _line(rec: Any) -> bytes:
    return json.dumps(records.to_json(rec), sort_keys=True).encode()


def _sandwich(path: Path, good: bytes, bad: bytes) -> None:
    """``good``, ``bad``, ``good`` again: the bad line is line 2."""
    path.write_bytes(good + b"\n" + bad + b"\n" + good + b"\n")


def _damaged(good: bytes, old: bytes, new: bytes) -> bytes:
    assert old in good
    return good.replace(old, new, 1)


def _deep_lines(good: bytes) -> list[bytes]:
    """A record nested 100,000 levels deep: in a field the reader keeps, in one it skips, read
    by msgspec or by the stdlib (NaN), and a line that is nothing but nesting."""
    return [_damaged(good, b'"contended": ', b'"contention": {"unavailable": "x", "y": '
                     + DEEP + b'}, "contended": '),
            _damaged(good, b'"attempt": ', b'"deep": ' + DEEP + b', "attempt": '),
            _damaged(good, b'"attempt": ', b'"deep": ' + DEEP + b', "z": NaN, "attempt": '),
            b'{"a": ' + DEEP + b"}", DEEP]


def _why(path: Path, kind: records._Kind[Any]) -> list[tuple[int, str]]:
    return [(b.line, b.why) for b in records._read_typed(path, kind, True).bad]


def test_a_line_nested_too_deep_is_unreadable_in_every_reader_not_a_crash(tmp_path: Path
                                                                          ) -> None:
    path = tmp_path / records.RESULTS
    for kind, good in ((records._RESULT, _line(_result())), (records._TURN, _line(_turn()))):
        for bad in _deep_lines(good):
            _sandwich(path, good, bad)
            assert _why(path, kind) == [(2, records.TOO_DEEP)]
            read = records.read_turns if kind is records._TURN else records.read_results
            recs, n_bad = read(tmp_path, keep_events=False)
            assert len(recs) == 2 and n_bad == 1
            assert records.read_jsonl(path).n_bad_lines == 1
            assert [row is None for _, row in records.iter_jsonl_numbered(path)] == [
                False, True, False]
    _sandwich(path, _line(_result()), DEEP)
    with pytest.raises(records.RecordError, match=r"\(line 2: nested deeper than the parser"):
        records.quiet_results(tmp_path)


def test_a_plan_line_nested_too_deep_is_counted(tmp_path: Path) -> None:
    t = {"turn": 0, "prompt_tokens": 9, "prompt_chars": 30, "n_predict": 4}
    good = json.dumps({"session_id": "a", "side": "real", "turns": [t]}).encode()
    _sandwich(tmp_path / records.SESSIONS, good.replace(b'"a"', b'"b"'),
              _damaged(good, b'"turns": ', b'"x": ' + DEEP + b', "turns": '))
    plan = records.read_plan(tmp_path)
    assert plan is not None and plan.n_bad_lines == 2  # the deep line, and "b" again
    assert sorted(plan.turns) == [("real:b", 0)]


def test_a_count_no_int32_holds_is_unreadable_not_a_pooled_acceptance_of_1e_28(
        tmp_path: Path) -> None:
    # The issue: draft_n of 10**30 was kept, and the pooled acceptance fell from 0.25 to 1e-29.
    good = [_result("code/a"), _result("code/b")]
    huge = _line(_result("code/c", draft_n=10**30))
    negative = _line(_result("code/d", draft_n_accepted=-(10**30)))
    by_stdlib = _damaged(huge, b'"alpha": 0.25', b'"alpha": 0.25, "x": NaN')
    path = tmp_path / records.RESULTS
    path.write_bytes(b"\n".join([_line(good[0]), huge, negative, by_stdlib, _line(good[1])])
                     + b"\n")
    recs, n_bad = records.read_results(tmp_path, keep_events=False)
    assert [r.prompt_id for r in recs] == ["code/a", "code/b"] and n_bad == 3
    assert final._pooled(recs) == pytest.approx(0.25)
    int32 = "(an int32, as llama-server counts)"
    assert _why(path, records._RESULT) == [
        (2, f"timings.draft_n: expected an integer <= 2147483647 {int32}"),
        (3, f"timings.draft_n_accepted: expected an integer >= -2147483648 {int32}"),
        (4, f"timings.draft_n: expected an integer <= 2147483647 {int32}")]


def test_every_count_of_a_result_is_bounded_and_no_more(tmp_path: Path) -> None:
    cases = [("repeat", 2**31 - 1, True), ("repeat", 2**31, False), ("attempt", 10**30, False),
             ("server_start", -(2**31) - 1, False), ("round_pos", 2**40, False),
             ("seed", 2**32 - 1, True), ("seed", 2**32, False), ("seed", -1, True),
             ("e2e_ms", 10**30, True)]  # a time, not a count: the validation layer's to judge
    for field, value, readable in cases:
        (tmp_path / records.RESULTS).write_bytes(_line(replace(_result(), **{field: value}))
                                                 + b"\n")
        assert records.read_results(tmp_path)[1] == (0 if readable else 1), (field, value)
    # a small negative count still reads, for the validation layer to refuse as impossible
    (tmp_path / records.RESULTS).write_bytes(_line(_result(draft_n=-1)) + b"\n")
    recs, n_bad = records.read_results(tmp_path)
    assert n_bad == 0 and validate.result_problem(recs[0]) is not None


@pytest.mark.parametrize("field", ["turn", "order", "slot", "prompt_chars", "prompt_tokens",
                                   "cached_tokens", "output_tokens", "n_predict"])
def test_every_count_of_a_turn_is_bounded(tmp_path: Path, field: str) -> None:
    (tmp_path / records.RESULTS).write_bytes(_line(replace(_turn(), **{field: 10**30})) + b"\n")
    assert records.read_turns(tmp_path) == ([], 1)


def test_a_plan_count_no_int32_holds_is_counted(tmp_path: Path) -> None:
    t = {"turn": 0, "prompt_tokens": 10**30, "prompt_chars": 30, "n_predict": 4}
    records.append_jsonl(tmp_path / records.SESSIONS,
                         {"session_id": "a", "side": "real", "turns": [t]})
    plan = records.read_plan(tmp_path)
    assert plan is not None and (plan.turns, plan.n_bad_lines) == ({}, 1)


def test_a_step_count_no_int32_holds_is_refused() -> None:
    row = {"n": 3, "rep": 0, "prompt_ms": 12.5, "client_ms": 14.0, "problem": None}
    assert validate.step_problem(row) is None
    for k in ("n", "rep", "prompt_n", "cache_n", "server_start"):
        assert validate.step_problem({**row, k: 10**30}) is not None, k


@pytest.mark.parametrize("text", [b'"\\ud800"', b'"\\udc00"', b'"a\\uDFFFb"',
                                  b'"\\ud800\\u0041"', b'"\\ude00\\ud83d"'])
def test_text_that_is_not_unicode_is_unreadable_in_every_reader(tmp_path: Path,
                                                                text: bytes) -> None:
    path = tmp_path / records.RESULTS
    for kind, good in ((records._RESULT, _line(_result())), (records._TURN, _line(_turn()))):
        for bad in (_damaged(good, b'"code"' if kind is records._RESULT else b'"c"', text),
                    _damaged(good, b'"attempt": ', b'"x": {' + text + b': 1}, "attempt": '),
                    _damaged(good, b'"attempt": ', b'"x": [' + text + b', NaN], "attempt": ')):
            _sandwich(path, good, bad)
            assert _why(path, kind) == [(2, records.NOT_UNICODE)]
            assert records.read_jsonl(path).n_bad_lines == 1
    # Unicode spelled with escapes still reads, by msgspec and by the stdlib (NaN)
    good = _line(_result())
    for text, value in ((b'"\\ud83d\\ude00"', "\U0001f600"), (b'"\\\\ud800"', "\\ud800"),
                        (b'"\\u00e9\\ud7ff\\ue000"', "\u00e9\ud7ff\ue000")):
        for extra in (b"", b', "x": NaN'):
            path.write_bytes(
                _damaged(good, b'"domain": "code"', b'"domain": ' + text + extra) + b"\n")
            recs, n_bad = records.read_results(tmp_path)
            assert n_bad == 0 and recs[0].domain == value
            assert records.read_jsonl(path).rows[0]["domain"] == value


def test_the_bounds_cost_nothing_on_a_line_msgspec_reads() -> None:
    # The depth and Unicode checks run only where msgspec refuses a line (RecursionError, or
    # the stdlib's path); the int32 range is msgspec's own constraint: the fast path is one
    # call to the decoder, as before.
    calls: list[str] = []
    good = _line(_result())

    def spy(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*a: Any) -> Any:
            calls.append(name)
            return fn(*a)
        return wrapped

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(records, "_stdlib_row", spy("stdlib", records._stdlib_row))
        mp.setattr(records, "_lone_surrogate", spy("walk", records._lone_surrogate))
        records._line_record(good, records._RESULT)
        records._json_object(good)
        assert calls == []
        with pytest.raises(TypeError):
            records._line_record(good.replace(b'"domain": "code"', b'"domain": "\\ud800"'),
                                 records._RESULT)
        assert calls == ["stdlib", "walk"]
