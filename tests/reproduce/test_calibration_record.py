"""Issue 46, "reproduction calibration": a stored calibration is read by the validation layer
(:mod:`artifact.analysis.validate.calibration`), never on its own word."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from artifact import paths
from artifact.errors import PlanError
from artifact.reproduce import plan

GOOD = {"run_id": "final-none", "prompt_ids": ["a", "b"], "here_ms": 19808.7,
        "committed_ms": 5746.4, "scale": 3.4471, "wall_s": 25.1}


def manifest(tmp_path: Path, **calibration: Any) -> Path:
    folder = tmp_path / "rep"
    folder.mkdir()
    m = {"selection": {"label": "kick", "runs": ["final-none"], "prompts_per_domain": 1},
         "campaign": "experiments/campaigns/cpu-study.toml", "complete": True, "runs": {},
         "load": [], "calibration": {**GOOD, **calibration}}
    # json.dumps writes NaN as the bare token NaN, which Python's reader accepts back
    (folder / plan.MANIFEST).write_text(json.dumps(m), encoding="utf-8")
    return folder


@pytest.mark.parametrize(("calibration", "said"), [
    # the file's own times give 3.45: a stored 1.0 would read as "same hardware"
    ({"scale": 1.0}, "expected here_ms / committed_ms = 19808.7 / 5746.4 = 3.447, got 1.0"),
    ({"scale": 0}, "expected a finite number above 0, got 0"),  # was shown as 1.0
    ({"scale": math.nan}, "expected a finite number above 0, got nan"),  # was comparison.json's
    ({"scale": -3.4471}, "expected a finite number above 0, got -3.4471"),  # was "no calibration"
    ({"here_ms": -19808.7}, "'calibration.here_ms': expected null or a finite number above 0"),
])
def test_a_calibration_is_refused_in_one_line_naming_reproduction_json(
        tmp_path: Path, calibration: dict[str, Any], said: str) -> None:
    folder = manifest(tmp_path, **calibration)
    with pytest.raises(PlanError) as err:
        plan.read_manifest(folder)
    msg = str(err.value)
    assert msg.startswith(f"{folder / plan.MANIFEST}: field 'calibration.") and said in msg, msg
    assert "\n" not in msg


def test_a_skipped_or_consistent_calibration_is_read(tmp_path: Path) -> None:
    ok = plan.read_manifest(manifest(tmp_path))
    assert ok is not None and ok["calibration"]["scale"] == 3.4471
    skipped = tmp_path / "skipped"
    skipped.mkdir()
    (skipped / plan.MANIFEST).write_text(json.dumps({"calibration": {
        "run_id": "final-none", "scale": 1.0, "skipped": "no committed records"}}))
    assert plan.read_manifest(skipped) is not None


def test_the_committed_reproductions_pass() -> None:
    folders = sorted(p.parent for p in paths.REPRODUCTIONS.glob(f"*/{plan.MANIFEST}"))
    assert folders
    for folder in folders:
        assert plan.read_manifest(folder) is not None, folder
