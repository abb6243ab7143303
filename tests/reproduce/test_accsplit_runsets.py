"""A reproduction of acceptance-split runs is compared through that study's own analysis."""

from __future__ import annotations

import shutil
from pathlib import Path

from artifact import paths
from artifact.reproduce import command, runsets


def copy_runs(pattern: str, dest: Path) -> list[str]:
    dest.mkdir(parents=True)
    ids = sorted(p.name for p in paths.RUNS.glob(pattern))
    for rid in ids:
        shutil.copytree(paths.RUNS / rid, dest / rid)
    return ids


def test_acceptance_split_runs_alone_are_a_run_set_with_their_own_variables(
        tmp_path: Path) -> None:
    ids = copy_runs("w?-b1-n128-ngram-mod", tmp_path / "b")
    assert len(ids) >= 5  # w1..w5, and any later window
    a, b = runsets.pair_of(paths.RUNS, tmp_path / "b")
    assert b.run_ids == tuple(ids) and not b.runs  # no run of the summary's families
    assert a.run_ids == tuple(ids)  # the reference cut to the same runs
    assert b.hardware == a.hardware and b.hardware.cpu_model != "unknown"
    assert a.variables["accsplit"]["by"]["ngram"]["b1_n128"]["pooled"] == \
        b.variables["accsplit"]["by"]["ngram"]["b1_n128"]["pooled"]


def test_an_acceptance_split_claim_is_judged_when_its_runs_are_reproduced(
        tmp_path: Path) -> None:
    copy_runs("w?-b1-n128-ngram-mod", tmp_path / "b")
    doc = command.compare_sets(paths.RUNS, tmp_path / "b", out=tmp_path / "out",
                               say=lambda _: None)
    status = {c["id"]: c["verdict"] for c in doc["claims"]}
    assert status["accsplit-ngram-per-round"] == "reproduced"  # the same runs: the same value
    assert status["accsplit-draft-per-round"] == "not run"  # its runs were not reproduced
    assert status["baseline-tok-s"] == "not run"
