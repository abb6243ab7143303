"""`compare` with a mistyped reproduction.json and `readme` without its page: one line each."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from artifact import paths
from artifact.errors import ArtifactError
from artifact.reproduce import command, plan

COMMITTED = next(iter(sorted((paths.ROOT / "experiments" / "reproductions").glob(
    f"*/{plan.MANIFEST}"))), None)


def _good() -> dict[str, Any]:
    return {"selection": {"runs": ["r"]}, "campaign": "c.toml", "started": "2026-01-01",
            "finished": None, "complete": False, "calibration": None, "expected_s": {"r": 1.0},
            "runs": {"r": {"wall_s": 1.5, "complete": False}}, "load": [], "cpu_count": 4}


@pytest.mark.parametrize(("field", "value", "said"), [
    ("runs", [], "field 'runs': expected an object, got []"),
    ("runs", {"r": {"wall_s": "slow"}}, "field 'runs.r.wall_s': expected a number, got 'slow'"),
    ("runs", {"r": 3}, "field 'runs.r': expected an object, got 3"),
    ("expected_s", {"r": "1"}, "field 'expected_s.r': expected a number, got '1'"),
    ("expected_s", {"r": True}, "field 'expected_s.r': expected a number, got True"),
    ("load", 5, "field 'load': expected a list, got 5"),
    ("load", ["x"], "field 'load[0]': expected an object, got 'x'"),
    ("calibration", {"scale": "x"},
     "field 'calibration.scale': expected a finite number above 0, got 'x'"),
    ("calibration", {"scale": 1.0, "prompt_ids": "p1"},
     "field 'calibration.prompt_ids': expected a list"),
    ("complete", "yes", "field 'complete': expected true or false, got 'yes'"),
    ("cpu_count", 2.5, "field 'cpu_count': expected an integer or null, got 2.5"),
    ("selection", None, "field 'selection': expected an object, got None"),
])
def test_compare_with_a_mistyped_manifest_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any,
        said: str) -> None:
    bad = tmp_path / "repro"
    (bad / plan.RUNS).mkdir(parents=True)
    (bad / plan.MANIFEST).write_text(json.dumps({**_good(), field: value}))
    assert command.main(["compare", str(paths.RUNS), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {bad / plan.MANIFEST}: {said}")


def test_a_manifest_that_is_not_an_object_is_one_line(tmp_path: Path) -> None:
    (tmp_path / plan.MANIFEST).write_text("[1, 2]")
    with pytest.raises(ArtifactError, match=r"reproduction\.json: expected a JSON object"):
        plan.read_manifest(tmp_path)


@pytest.mark.skipif(COMMITTED is None, reason="no committed reproduction")
def test_the_committed_manifest_passes(tmp_path: Path) -> None:
    assert COMMITTED is not None
    shutil.copy(COMMITTED, tmp_path / plan.MANIFEST)
    assert plan.read_manifest(tmp_path) == json.loads(COMMITTED.read_text())


def test_readme_without_its_page_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    assert command.main(["readme"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {tmp_path / 'docs' / 'reproducing.md'}: file not found\n"


def test_compare_with_an_interrupted_reproduction_says_its_runs_are_incomplete(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 45: every run folder of an interrupted reproduction has its config.json; the
    comparison said there were no run folders with one."""
    bad = tmp_path / "repro"
    for rid in ("q4_1-edit-none", "q4_1-edit-ngram-mod"):
        run = bad / plan.RUNS / rid
        shutil.copytree(paths.CORE_RUNS / rid, run)
        (run / "metrics.json").unlink()  # interrupted: the metrics are written at the end
    (bad / plan.MANIFEST).write_text(json.dumps(_good()))
    assert command.main(["compare", str(paths.CORE_RUNS), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert ("2 run folder(s) with a config.json, none complete" in err
            and "q4_1-edit-none" in err and "rerun the reproduction's command" in err), err
