from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from artifact import records


def result(pid: str = "code/x", rep: int = 0) -> records.Result:
    return records.Result(
        prompt_id=pid, domain="code", prompt_sha256="ab", repeat=rep, attempt=1, server_start=1,
        sent_unix_s=1.0, queue_ms=0.1, ttft_ms=10.0, e2e_ms=100.0, event_ms=[10.0, 20.0],
        timings=records.Timings(prompt_n=5, prompt_ms=3.0, predicted_n=2, predicted_ms=20.0,
                                predicted_per_second=100.0, cache_n=0, draft_n=4,
                                draft_n_accepted=3),
        stop_type="limit", alpha=0.75)


def test_append_and_read_round_trip(tmp_path: Path) -> None:
    records.append_jsonl(tmp_path / records.RESULTS, result("a"))
    records.append_jsonl(tmp_path / records.RESULTS, result("b", 1))
    got, bad = records.read_results(tmp_path)
    assert bad == 0
    assert got == [result("a"), result("b", 1)]
    assert got[1].key == ("b", 1)


def test_tolerant_read_counts_broken_lines(tmp_path: Path) -> None:
    records.append_jsonl(tmp_path / records.RESULTS, result("a"))
    with (tmp_path / records.RESULTS).open("ab") as f:
        f.write(b'{"prompt_id": "half\n\xff\xfe\n{"prompt_id": "x"}\n')
    records.append_jsonl(tmp_path / records.RESULTS, result("b"))
    got, bad = records.read_results(tmp_path)
    assert [r.prompt_id for r in got] == ["a", "b"]
    assert bad == 3


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    assert records.read_results(tmp_path) == ([], 0)


def test_write_json_is_sorted_and_atomic(tmp_path: Path) -> None:
    records.write_json(tmp_path / "m.json", {"b": 1, "a": 2})
    assert (tmp_path / "m.json").read_text() == '{\n  "a": 2,\n  "b": 1\n}\n'
    assert not list(tmp_path.glob("*.tmp"))


def test_append_after_a_torn_line_starts_a_fresh_line(tmp_path: Path) -> None:
    """A crash mid-write leaves a partial last line: the next record must still be readable."""
    path = tmp_path / records.RESULTS
    records.append_jsonl(path, result("a"))
    with path.open("ab") as f:
        f.write(b'{"prompt_id": "torn", "dom')  # kill -9 mid-write: no newline
    records.append_jsonl(path, result("b"))
    got, bad = records.read_results(tmp_path)
    assert [r.prompt_id for r in got] == ["a", "b"] and bad == 1


def test_rows_of_the_wrong_type_are_unreadable_not_a_crash(tmp_path: Path) -> None:
    import json

    good = records.to_json(result("a"))
    rows = [good, {**good, "ttft_ms": "fast"}, {**good, "repeat": 1.5},
            {**good, "timings": {**good["timings"], "predicted_per_second": None}},
            {**good, "timings": [1, 2]}, {**good, "alpha": True}, {**good, "event_ms": 3}]
    (tmp_path / records.RESULTS).write_text("".join(json.dumps(r) + "\n" for r in rows))
    got, bad = records.read_results(tmp_path)
    assert [r.prompt_id for r in got] == ["a"] and bad == len(rows) - 1


def test_run_dir_keeps_run_ids_inside_the_runs_folder(tmp_path: Path) -> None:
    import pytest

    assert records.run_dir(tmp_path, "final-none") == tmp_path / "final-none"
    for bad in ("..", ".", "", "_kick", ".hidden", "a/b", "../x", "/abs"):
        with pytest.raises(records.RecordError, match="run id"):
            records.run_dir(tmp_path, bad)
    (tmp_path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(records.RecordError, match="leaves its folder"):
        records.run_dir(tmp_path, "link")  # a link pointing out is caught once resolved


def test_rows_written_before_the_later_fields_still_read(tmp_path: Path) -> None:
    import json

    row = records.to_json(result("old"))
    for k in records.LATER_RESULT_FIELDS:
        del row[k]
    (tmp_path / records.RESULTS).write_text(json.dumps(row) + "\n")
    got, bad = records.read_results(tmp_path)
    assert bad == 0 and got[0].event_text is None and got[0].window is None


def test_later_fields_round_trip_and_events_can_be_dropped(tmp_path: Path) -> None:
    from dataclasses import replace

    r = replace(result("new"), event_text=["a", "b"], seed=7, window="w1",
                utc_date="2026-11-30", metrics_delta={"x_total": 1.0})
    records.append_jsonl(tmp_path / records.RESULTS, r)
    assert records.read_results(tmp_path)[0] == [r]
    light = records.read_results(tmp_path, keep_events=False)[0][0]
    assert light.event_ms == [] and light.event_text is None and light.window == "w1"


class _Int(int):
    pass


class _Float(float):
    pass


class _Str(str):
    pass


def _base_rows() -> list[tuple[dict[str, object], bool]]:
    """Well-formed rows, as json.loads gives them: (row, is a turn)."""
    import json
    from dataclasses import replace

    full = replace(result("a"), event_text=["x", "y"], seed=7, window="w", utc_date="2026-12-01",
                   metrics_delta={"n_total": 2.0, "m_total": 1}, round_pos=2, contended=False,
                   contention={"foreign_cores": 0.01, "steal_cores": 0.0, "load1": 1,
                               "cpu_mhz": None})
    old = records.to_json(result("b"))
    for k in records.LATER_RESULT_FIELDS:
        del old[k]
    turn = records.TurnResult(
        session_id="s", side="real-b", condition="c", turn=1, order=0, slot=0, attempt=1,
        server_start=1, sent_unix_s=1.0, queue_ms=0.0, prompt_chars=20, prompt_tokens=5,
        cached_tokens=0, output_tokens=4, n_predict=4, ttft_ms=2.0, tpot_ms=1.0, e2e_ms=5.0,
        event_ms=[2.0, 3.0, 4.5], timings=result().timings, stop_type="limit", alpha=None,
        contention={"unavailable": "no /proc"}, contended=None)
    rows = [records.to_json(result("a")), records.to_json(full), old, records.to_json(turn)]
    return [(json.loads(json.dumps(r)), i == 3) for i, r in enumerate(rows)]


def _mutated(row: dict[str, object], rng: object) -> dict[str, object]:
    """``row`` with one to three random damages: a value of another type or out of range, a
    field missing or added, an event or text changed, a timing or contention field changed."""
    import copy
    import random

    assert isinstance(rng, random.Random)
    nan, inf = float("nan"), float("inf")
    pool: list[object] = [None, True, False, 0, 1, -1, 2.5, -0.0, nan, inf, -inf, 10**400, "s",
                          "", [], {}, [1.0], [1, "a"], [True], [2.0, 1.0], {"x": 1}, _Int(3),
                          _Float(2.0), _Str("z"), "real", "synthetic-x+y", "real-e"]
    out = copy.deepcopy(row)
    for _ in range(rng.randint(1, 3)):
        where = rng.random()
        keys = [*out, "extra", "event_text", "contention", "metrics_delta", "contended", "seed"]
        if where < 0.3:
            out[rng.choice(keys)] = copy.deepcopy(rng.choice(pool))
        elif where < 0.4:
            out.pop(rng.choice(keys), None)
        elif where < 0.55 and isinstance(out.get("timings"), dict):
            t = out["timings"]
            assert isinstance(t, dict)
            k = rng.choice([*t, "extra"])
            if rng.random() < 0.3:
                t.pop(k, None)
            else:
                t[k] = copy.deepcopy(rng.choice(pool))
        elif where < 0.75 and isinstance(out.get("event_ms"), list):
            ev = out["event_ms"]
            assert isinstance(ev, list)
            op = rng.random()
            if op < 0.3 and ev:
                ev[rng.randrange(len(ev))] = copy.deepcopy(rng.choice(pool))
            elif op < 0.5 and len(ev) > 1:
                ev.reverse()
            elif op < 0.7:
                ev.append(rng.choice([1e6, 0.0, ev[-1] if ev else 1.0, -1.0, 4.5, 10**400]))
            elif op < 0.85:
                out["event_text"] = [rng.choice(["a", 1, None, _Str("b")]) for _ in ev]
            else:
                out["e2e_ms"] = rng.choice([0.0, 3.0, 4.5, 4.51, 1e9, nan, True])
        elif where < 0.9:
            old_c = out.get("contention")
            c: dict[str, object] = dict(old_c) if isinstance(old_c, dict) else {
                "foreign_cores": 0.1}
            c[rng.choice(["foreign_cores", "steal_cores", "load1", "cpu_mhz", "unavailable",
                          "other"])] = copy.deepcopy(rng.choice(pool))
            if rng.random() < 0.2:
                c.pop("foreign_cores", None)
            out["contention"] = c
        else:
            out["metrics_delta"] = {"a_total": copy.deepcopy(rng.choice(pool))}
    return out


def _lone_surrogate(v: object) -> bool:
    """A string of ``v`` (a value or a key) that no UTF-8 encodes."""
    if isinstance(v, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in v)
    if isinstance(v, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(x) for k, x in v.items())
    return isinstance(v, list) and any(_lone_surrogate(x) for x in v)


def _beyond_issue_46(row: dict[str, object], turn: bool) -> bool:
    """What issue 46 made unreadable on top of the checks before it: text that is not Unicode,
    or a count (an integer field of the record) that no int32 holds (a seed: no uint32)."""
    from tests import records_oracle as o

    def out(v: object, low: int, high: int) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and not low <= v <= high

    int32 = (-(2**31), 2**31 - 1)
    kinds = o._TURN_KINDS if turn else o._RESULT_KINDS
    counts = [row.get(k) for k, kind in kinds.items() if kind == o._INT] + [row.get("round_pos")]
    t = row.get("timings")
    if isinstance(t, dict):
        counts += [t.get(k) for k, kind in o._TIMING_KINDS.items() if kind == o._INT]
    return (_lone_surrogate(row) or any(out(v, *int32) for v in counts)
            or (not turn and out(row.get("seed"), int32[0], 2**32 - 1)))


def _old_read(raw: bytes, turn: bool, keep: bool) -> str:
    """How the reader before issue 32 read one line, with the bounds of issue 46: the record's
    repr, or "unreadable"."""
    import json

    from tests import records_oracle

    try:
        row = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return "unreadable"
    if not isinstance(row, dict) or _beyond_issue_46(row, turn):
        return "unreadable"
    try:
        if not keep:
            records_oracle.drop_events(row)
        rec = (records_oracle.turn_from_row if turn else records_oracle.result_from_row)(row)
    except (KeyError, TypeError):
        return "unreadable"
    return repr(rec)


def _new_read(raw: bytes, turn: bool, keep: bool) -> str:
    kind: records._Kind[Any] = records._TURN if turn else records._RESULT
    try:
        rec = records._line_record(raw, kind)
    except TypeError as err:
        assert str(err) and "\n" not in str(err), err  # one line saying why
        return "unreadable"
    if not keep:
        records._drop_events(rec)
    return repr(rec)


# Lines that only the stdlib parses (msgspec refuses them and they are read again), or that
# msgspec reads where the stdlib would not (bad UTF-8 in a field no record has).
_RAW_EDITS = [
    (b'"e2e_ms":', b'"e2e_ms":NaN,"x":'), (b'"e2e_ms":', b'"e2e_ms":1e400,"x":'),
    (b'"e2e_ms":', b'"e2e_ms":-Infinity,"x":'), (b'"queue_ms":', b'"queue_ms":1e999,"x":'),
    (b'"domain":', b'"domain":"\\ud800","x":'), (b'"stop_type":', b'"x":"\xff","stop_type":'),
    (b'"stop_type":', b'"stop_type":"\xc3\xa9\xff","x":'), (b'{', b'\xef\xbb\xbf{'),
    (b'"timings":', b'"timings":null,"timings":'), (b'"timings":', b'"timings":{},"x":'),
    (b'"attempt":', b'"attempt":1.0,"x":'), (b'"attempt":', b'"attempt":1e0,"x":'),
    (b'"repeat":', b'"repeat":' + b"9" * 40 + b',"x":'), (b'}', b',}'), (b'{', b'{"a":1}{'),
    # a turn has no event_text, but one it carries anyway must still be a text per event
    (b'"stop_type":', b'"\\u0065vent_text":[1],"stop_type":'),
    (b'"stop_type":', b'"event_text":["a"],"stop_type":'),
    (b'"stop_type":', b'"event\\u005ftext":null,"stop_type":')]


def test_the_typed_reader_reads_what_the_checks_before_it_read() -> None:
    # Issue 32: msgspec decodes a line straight into its record (and the stdlib parses what
    # msgspec refuses). On thousands of randomly damaged rows, written as the runner writes
    # them, it must accept exactly the lines the checks before it accepted (tests/
    # records_oracle.py) and read the very same values (an int stays an int, NaN stays NaN),
    # events dropped alike.
    import json
    import random

    rng = random.Random(21)
    cases = [(row, turn) for row, turn in _base_rows()]
    cases += [(_mutated(row, rng), turn) for _ in range(1500) for row, turn in _base_rows()]
    lines = [(json.dumps(row).encode() + b"\n", turn) for row, turn in cases]
    for raw, turn in lines[:4]:
        lines += [(raw.replace(old, new, 1), turn) for old, new in _RAW_EDITS]
    read = 0
    for i, (raw, turn) in enumerate(lines):
        for keep in (True, False):
            want, got = _old_read(raw, turn, keep), _new_read(raw, turn, keep)
            assert got == want, (raw, keep)
            if i < 4:
                assert got != "unreadable", raw  # every well-formed row reads
            read += got != "unreadable"
    assert read > len(lines) // 4  # damaged rows that stay well formed read too


def test_an_unreadable_line_says_which_field_and_what_was_expected(tmp_path: Path) -> None:
    import json

    import pytest

    good = records.to_json(result("a"))
    rows = [good, {**good, "timings": {**good["timings"], "prompt_ms": "slow"}},
            {k: v for k, v in good.items() if k != "e2e_ms"}, {**good, "event_ms": [1, True]},
            {**good, "event_text": ["x"]}, [1]]
    (tmp_path / records.RESULTS).write_text("".join(json.dumps(r) + "\n" for r in rows)
                                            + "{broken\n")
    read = records._read_typed(tmp_path / records.RESULTS, records._RESULT, True)
    assert [(b.line, b.why) for b in read.bad] == [
        (2, "timings.prompt_ms: expected a number, got a string"),
        (3, "e2e_ms: missing"),
        (4, "event_ms[1]: expected a number, got true or false"),
        (5, "event_text: expected a string per event"),
        (6, "expected an object, got an array"),
        (7, "not JSON (Expecting property name enclosed in double quotes at column 2)")]
    with pytest.raises(records.RecordError, match=r"results.jsonl: 6 lines are not results "
                       r"\(line 2: timings.prompt_ms: expected a number, got a string\)$"):
        records.quiet_results(tmp_path)


def test_untyped_lines_read_as_the_stdlib_reads_them(tmp_path: Path) -> None:
    # errors.jsonl, events.jsonl, steps.jsonl: msgspec parses, the stdlib what it refuses
    # (but a lone surrogate, issue 46)
    import json
    import math
    import random

    rng = random.Random(32)
    parts = [b'{"a": 1}', b'{"a": 1.5e3}', b'{"a": NaN}', b'{"a": -Infinity}', b'{"a": 1e400}',
             b'{"a": "\\ud800"}', b'{"a": "\xc3\xa9"}', b'{"a": "\xff"}', b'[1, 2]', b'"s"',
             b'{"a": 1, "a": 2}', b'{"a": ' + b"7" * 30 + b'}', b'{"a": [1, {"b": null}]}',
             b'{"a": 1,}', b'{"a": 01}', b'\x0c{"a": 1}', b'{"a": "\t"}', b'{"a": 1} x',
             b'{"a": -0.0}', b'{"a": 1E-400}', b'{"a": true}', b' {"a": 1} ', b'{']

    def norm(v: object) -> object:  # NaN equal to itself, and types kept apart
        if isinstance(v, float) and math.isnan(v):
            return "nan"
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return (type(v).__name__, v)

    lines = parts + [rng.choice(parts)[:rng.randrange(12)] + rng.choice(parts)[rng.randrange(6):]
                     for _ in range(500)]
    lines = [ln.replace(b"\n", b"") for ln in lines]
    (tmp_path / "x.jsonl").write_bytes(b"".join(ln + b"\n" for ln in lines))
    got = list(records.iter_jsonl_numbered(tmp_path / "x.jsonl"))
    want = []
    for i, ln in enumerate(lines, 1):
        if not ln.strip():
            continue
        try:
            obj = json.loads(ln.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            obj = None
        if _lone_surrogate(obj):  # issue 46: text that is not Unicode is unreadable
            obj = None
        want.append((i, obj if isinstance(obj, dict) else None))
    assert norm(got) == norm(want)


def test_the_event_order_check_at_c_speed_agrees_with_the_loop() -> None:
    import math
    import random

    def reference(ev: list[float], e2e: float | None) -> str | None:
        problem = records._first_event_problem(ev)
        if problem is None and ev and e2e is not None and math.isfinite(e2e) \
                and ev[-1] > e2e + records.EVENT_SLACK_MS:
            return f"event_ms[{len(ev) - 1}] {ev[-1]!r} after the end of the request " \
                   f"(e2e_ms {e2e!r})"
        return problem

    def outcome(check: Callable[[list[float], float | None], str | None], ev: list[float],
                e2e: float | None) -> object:
        try:
            return check(ev, e2e)
        except OverflowError as err:  # an integer too large for a float: both raise it
            return str(err)

    rng = random.Random(5)
    values = [0.0, -0.0, 1.0, 2.0, 2.5, 1e308, -1.0, float("nan"), float("inf"),
              float("-inf"), 3, 10**400, True]
    for _ in range(20000):
        ev = sorted(rng.choice(values[:6]) for _ in range(rng.randrange(6)))
        for _ in range(rng.randrange(3)):
            if ev:
                ev[rng.randrange(len(ev))] = rng.choice(values)
        e2e = rng.choice([None, 2.0, 2.5, 1e308, float("nan")])
        got, want = outcome(records.event_problem, ev, e2e), outcome(reference, ev, e2e)
        assert got == want, (ev, e2e)
