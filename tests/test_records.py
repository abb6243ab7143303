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
