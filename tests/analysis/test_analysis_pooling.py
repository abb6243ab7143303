"""The analysis pools runs only when they were measured on the same hardware."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from artifact import paths
from artifact.analysis.params import Bootstrap
from artifact.analysis.pooling import MixedHardwareError
from artifact.analysis.summary import build_summary

pytestmark = pytest.mark.filterwarnings("ignore")
FAST = Bootstrap(resamples=200)


def two_runs(tmp_path: Path, gpu: str | None, pool: bool | None = None,
             first_gpu: str | None = None) -> Path:
    """Two committed runs, edited to say they ran on ``first_gpu`` and ``gpu``."""
    root = tmp_path / "runs"
    for rid in ("final-none", "final-ngram-mod"):
        shutil.copytree(paths.RUNS / rid, root / rid)
    for rid in ("final-none", "final-ngram-mod"):
        cfg_path = root / rid / "config.json"
        cfg = json.loads(cfg_path.read_text())
        cfg["environment"]["gpu"] = gpu if rid == "final-ngram-mod" else first_gpu
        if pool is not None:
            cfg["pool_mixed_hardware"] = pool
        cfg_path.write_text(json.dumps(cfg))
    return root


def test_runs_on_different_hardware_are_not_pooled(tmp_path: Path) -> None:
    root = two_runs(tmp_path, "GPU 0: NVIDIA H200 (UUID: GPU-1c2d)")
    with pytest.raises(MixedHardwareError) as err:
        build_summary(root, bootstrap=FAST)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("runs final-ngram-mod and final-none were measured on different "
                          "hardware (gpu: 'NVIDIA H200' vs None)") or msg.startswith(
        "runs final-none and final-ngram-mod were measured on different hardware (gpu: None "
        "vs 'NVIDIA H200')")
    assert "pool_mixed_hardware = true" in msg


def test_a_campaign_may_pool_mixed_hardware_on_purpose(tmp_path: Path) -> None:
    root = two_runs(tmp_path, "GPU 0: NVIDIA H200 (UUID: GPU-1c2d)", pool=True)
    assert set(build_summary(root, bootstrap=FAST)["final"]) == {"final-none",
                                                                  "final-ngram-mod"}


def test_two_cards_of_one_model_are_the_same_hardware(tmp_path: Path) -> None:
    root = two_runs(tmp_path, "GPU 1: NVIDIA H200 (UUID: GPU-bbbb)",
                    first_gpu="GPU 0: NVIDIA H200 (UUID: GPU-aaaa)")
    assert len(build_summary(root, bootstrap=FAST)["final"]) == 2
