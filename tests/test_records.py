from __future__ import annotations

from pathlib import Path

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
