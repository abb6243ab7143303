"""The local executor: which runs it measures together, with measuring stubbed out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from artifact import paths
from artifact.executors import Executor, local
from artifact.executors.local import LocalExecutor
from artifact.spec import RunSpec, load_campaign


@pytest.fixture()
def measured(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """What would have been measured: ("run" | "group", run ids), in order."""
    got: list[tuple[str, list[str]]] = []

    def run(camp: Any, spec: RunSpec, **_: Any) -> None:
        got.append(("run", [spec.run_id]))

    def run_group(camp: Any, specs: Sequence[RunSpec], **_: Any) -> dict[str, Any]:
        got.append(("group", [s.run_id for s in specs]))
        return {}

    monkeypatch.setattr(local, "run", run)
    monkeypatch.setattr(local, "run_group", run_group)
    return got


def test_a_run_of_a_group_is_measured_with_the_runs_of_its_group_not_yet_current(
        tmp_path: Path, measured: list[tuple[str, list[str]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    camp = load_campaign(paths.STUDY)
    group = [s.run_id for s in camp.runs if s.interleave == "final"]
    monkeypatch.setattr(local, "run_is_current", lambda s, _: s.run_id == group[1])
    ex: Executor = LocalExecutor(camp, tmp_path)
    ex.submit(camp.run(group[1]), lambda _: None)  # current, yet asked for: measured
    ex.submit(camp.run(group[0]), lambda _: None)
    assert measured == [("group", list(group)),
                        ("group", [r for r in group if r != group[1]])]


def test_a_lone_run_is_measured_alone_and_watch_reads_the_files(
        tmp_path: Path, measured: list[tuple[str, list[str]]]) -> None:
    camp = load_campaign(paths.CAMPAIGNS / "kick.toml")
    ex = LocalExecutor(camp, tmp_path)
    ex.submit(camp.runs[0], lambda _: None)
    assert measured == [("run", [camp.runs[0].run_id])]
    sts = ex.watch(camp.runs, lambda _: None)
    assert [(s.run_id, s.state, s.n_done) for s in sts] == [
        (r.run_id, "to submit", 0) for r in camp.runs]
