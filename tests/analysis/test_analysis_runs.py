"""Normalizing config.json, excluding spurious records, loading run directories."""

from __future__ import annotations

import json

import pytest

from artifact.analysis import runs
from artifact.analysis.runs import ConfigError, describe, is_spurious
from artifact.records import Timings
from tests.corpus import PROMPT_SET_SHA, record, spec, write_run


def _config(**over):
    sp = spec("r1", family="final", drafter="ngram-mod", k=4)
    sp.update(over)
    return {"schema": 1, "run_id": "r1", "spec": sp, "prompt_set": {"sha256": PROMPT_SET_SHA},
            "environment": {"cpu_model": "x"}, "something_new": [1, 2]}


def test_describe_normalizes_and_ignores_extra_keys():
    d = describe(_config(extra_field="ok"), where="dir1")
    assert d.run_id == "r1" and d.drafter == "ngram-mod" and d.k == 4
    assert d.sampling["temperature"] == 0.0 and isinstance(d.sampling["top_p"], float)
    assert d.prompt_set_sha256 == PROMPT_SET_SHA
    assert d.label == "ngram-mod k=4"
    assert describe(_config(drafter="none", k=None), where="d").label == "no draft"


@pytest.mark.parametrize(
    ("over", "msg"),
    [
        ({"drafter": "ngram-magic"}, "spec.drafter: unknown drafter 'ngram-magic'"),
        ({"ctx_size": None}, "spec.ctx_size: missing"),
        ({"ctx_size": "4k"}, "spec.ctx_size: expected int, got '4k'"),
        ({"temperature": True}, "spec.temperature: expected float"),
        ({"k": 2.5}, "spec.k: expected int"),
    ],
)
def test_describe_errors_name_run_and_field(over, msg):
    with pytest.raises(ConfigError) as err:
        describe(_config(**over), where="dir-7")
    text = str(err.value)
    assert text.startswith("run dir-7: config.json: ") and msg in text
    assert "\n" not in text


def test_describe_missing_field_and_prompt_set():
    cfg = _config()
    del cfg["spec"]["target_quant"]
    with pytest.raises(ConfigError, match=r"spec\.target_quant: missing"):
        describe(cfg, where="d")
    cfg = _config()
    del cfg["prompt_set"]
    with pytest.raises(ConfigError, match=r"prompt_set\.sha256"):
        describe(cfg, where="d")


@pytest.mark.parametrize(
    ("tps", "ms", "bad"),
    [(1e6, 0.0, True), (1e5, 10.0, True), (99_999.0, 10.0, False), (50.0, 0.0, True),
     (50.0, -1.0, True), (50.0, 2000.0, False), (float("nan"), 10.0, True)],
)
def test_spurious_records(tps, ms, bad):
    t = Timings(prompt_n=1, prompt_ms=1.0, predicted_n=10, predicted_ms=ms,
                predicted_per_second=tps, cache_n=0)
    assert is_spurious(t) is bad


def test_load_run_counts_bad_lines_errors_and_excluded(tmp_path):
    sp = spec("r", family="final")
    run_dir = write_run(tmp_path, sp, records=[record("code-1", "code", 50.0),
                                               record("code-2", "code", 1e6, predicted_n=1)],
                        errors=[{"prompt_id": "code-3", "repeat": 0}], log=[],
                        metrics={"complete": True, "measure_s": 3.0},
                        vram={"gpu_present": False, "reason": "none"})
    with (run_dir / "results.jsonl").open("a") as f:
        f.write('{"broken": \n{"prompt_id": "x"}\n')
    run = runs.load_run(run_dir)
    assert len(run.records) == 2 and run.n_excluded == 1 and run.n_bad_lines == 2
    assert len(run.errors) == 1 and [r.prompt_id for r in run.included] == ["code-1"]
    assert any("2 unreadable line(s)" in p for p in run.problems)


def test_load_runs_skips_bad_config_and_keeps_the_rest(tmp_path):
    write_run(tmp_path, spec("good", family="final"), records=[record("c", "code", 5.0)],
              metrics={"complete": True}, vram={"gpu_present": False})
    write_run(tmp_path, spec("bad", family="final", drafter="nope"))
    (tmp_path / "junk").mkdir()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{not json")
    loaded, warnings = runs.load_runs(tmp_path)
    assert [r.desc.run_id for r in loaded] == ["good"]
    unknown = "run bad: config.json: spec.drafter: unknown drafter"
    assert any(w.startswith(unknown) for w in warnings)
    assert any(w.startswith("run broken: config.json: not JSON") for w in warnings)
    assert any(w.startswith("run junk: no config.json") for w in warnings)


def test_duplicate_run_ids_keep_the_first(tmp_path):
    for d in ("a", "b"):
        run_dir = write_run(tmp_path, spec(d, family="final"), metrics={"complete": True},
                            vram={})
        cfg = json.loads((run_dir / "config.json").read_text())
        cfg["run_id"] = "same"
        (run_dir / "config.json").write_text(json.dumps(cfg))
    loaded, warnings = runs.load_runs(tmp_path)
    assert [r.path.name for r in loaded] == ["a"]
    assert any("already used by a" in w for w in warnings)


def test_missing_runs_directory(tmp_path):
    with pytest.raises(runs.AnalysisError, match="not found"):
        runs.load_runs(tmp_path / "nope")
