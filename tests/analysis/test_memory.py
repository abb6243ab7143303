"""The memory runs' analysis (artifact/analysis/memory.py): rows, what drafters add, runs left
out with one line each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from artifact.analysis import memory
from artifact.errors import AnalysisError
from artifact.warning_classes import classify


def _run(root: Path, rid: str, quant: str, drafter: str, hwm: float | None,
         measured: bool = True) -> None:
    run = root / rid
    run.mkdir(parents=True)
    spec = {"target_quant": quant, "drafter": drafter,
            "draft_quant": "Q2_K" if drafter == "draft-simple" else None, "k": None}
    (run / "config.json").write_text(json.dumps({"spec": spec}), encoding="utf-8")
    if hwm is None:
        return
    mem = ({"measured": True, "n_samples": 40, "peak_rss_mib": hwm - 1, "peak_anon_mib": 60.0,
            "peak_file_mib": hwm - 61, "peak_hwm_mib": hwm} if measured
           else {"measured": False, "reason": "/proc not found (not Linux)", "n_samples": 0})
    (run / "memory.json").write_text(json.dumps(mem), encoding="utf-8")


def test_rows_and_what_each_drafter_adds(tmp_path: Path) -> None:
    _run(tmp_path, "memory-q4_1-none", "Q4_1", "none", 200.0)
    _run(tmp_path, "memory-q4_1-ngram-mod", "Q4_1", "ngram-mod", 204.5)
    _run(tmp_path, "memory-q4_1-draft-q2k", "Q4_1", "draft-simple", 290.25)
    _run(tmp_path, "memory-f16-none", "F16", "none", 400.0)
    _run(tmp_path, "memory-f16-ngram-mod", "F16", "ngram-mod", None)  # no memory.json
    _run(tmp_path, "memory-f16-draft-q2k", "F16", "draft-simple", 480.0, measured=False)
    got = memory.analyse(tmp_path)
    assert [(r["target"], r["drafter"]) for r in got["rows"]] == [
        ("F16", "none"), ("Q4_1", "draft-simple"), ("Q4_1", "ngram-mod"), ("Q4_1", "none")]
    assert got["added"] == {"Q4_1": {"draft-simple": 90.2, "ngram-mod": 4.5}}
    assert len(got["warnings"]) == 2
    assert "run memory-f16-ngram-mod: memory.json: file not found; run skipped" in got["warnings"]
    assert any("not measured" in w for w in got["warnings"])
    assert all(classify(w) == "run-left-out" for w in got["warnings"])  # fatal under --strict


@pytest.mark.parametrize(("field", "value", "said"), [
    ("n_samples", "40", "field 'n_samples': expected a positive integer, got '40'"),
    ("n_samples", True, "field 'n_samples': expected a positive integer, got True"),
    ("peak_hwm_mib", float("nan"), "field 'peak_hwm_mib': expected a finite number of MiB"),
    ("peak_rss_mib", -3.0, "field 'peak_rss_mib': expected a finite number of MiB, at least 0"),
    ("peak_file_mib", None, "field 'peak_file_mib': expected a finite number of MiB"),
    ("measured", "yes", "memory not measured"),
])
def test_a_damaged_memory_json_is_one_line_and_the_run_left_out(
        tmp_path: Path, field: str, value: object, said: str) -> None:
    _run(tmp_path, "memory-q4_1-none", "Q4_1", "none", 200.0)
    _run(tmp_path, "memory-q4_1-ngram-mod", "Q4_1", "ngram-mod", 204.5)
    path = tmp_path / "memory-q4_1-ngram-mod" / "memory.json"
    mem = json.loads(path.read_text(encoding="utf-8"))
    mem[field] = value
    path.write_text(json.dumps(mem), encoding="utf-8")
    got = memory.analyse(tmp_path)
    assert [r["run"] for r in got["rows"]] == ["memory-q4_1-none"]  # the other run kept
    assert len(got["warnings"]) == 1 and said in got["warnings"][0]
    assert got["warnings"][0].startswith("run memory-q4_1-ngram-mod: memory.json: ")
    assert got["warnings"][0].endswith("; run skipped")
    assert got["added"] == {}


def test_written_with_its_schema_and_refused_without_runs(tmp_path: Path) -> None:
    _run(tmp_path / "runs", "memory-q4_1-none", "Q4_1", "none", 200.0)
    out = tmp_path / "memory.json"
    memory.write(tmp_path / "runs", out)
    assert json.loads(out.read_text(encoding="utf-8"))["schema"] == memory.SCHEMA
    (tmp_path / "empty").mkdir()
    with pytest.raises(AnalysisError, match="no memory run"):
        memory.write(tmp_path / "empty", out)
