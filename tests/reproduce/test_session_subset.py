"""Issue 45: a reproduction of the realism study reruns each run's first N sessions (in play
order, the same N on every side), resumably, records the subset, and calibrates on the no-draft
run's same sessions against the committed records of those sessions."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from artifact import paths, records
from artifact.campaign import runner
from artifact.campaign.server import ServerFiles
from artifact.reproduce import calibrate as cal
from artifact.reproduce import execute, plan, studies
from artifact.spec import load_campaign
from artifact.workloads import RunPlan

STUDY = studies.STUDIES["realism"]
NONE_A = "r3-main-none-real-a"
COMMITTED = paths.REALISM_RUNS / NONE_A
FILES = ServerFiles(binary=Path("llama-server"), model=Path("model.gguf"), draft_model=None)


@contextlib.contextmanager
def _no_lock(*_: Any, **__: Any) -> Iterator[None]:
    yield


def _play_order() -> list[str]:
    return [s.session_id for s in cal.committed_plan(COMMITTED)]


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """The committed run's own plan stands in for planning on a server."""
    monkeypatch.setattr(runner, "server_files", lambda *_: FILES)
    monkeypatch.setattr(runner, "environment", lambda *_: {"host": None})
    monkeypatch.setattr(runner, "_plan", lambda _f, _s, _r, _say, _p, drawn: RunPlan(
        inputs=drawn, sessions=cal.committed_plan(COMMITTED)))


@pytest.mark.usefixtures("no_server")
def test_a_run_prepared_for_its_first_sessions_records_them_and_resumes(tmp_path: Path) -> None:
    spec = load_campaign(STUDY.campaign).run(NONE_A)
    camp = load_campaign(STUDY.campaign)
    first = _play_order()[:2]
    prep = runner.prepare(camp, spec, runs_root=tmp_path, say=lambda _: None, sessions=2)
    config = records.read_json(prep.path / records.CONFIG)
    assert config["sessions"] == 2 and config["session_ids"] == first
    assert {k[0].split(":", 1)[1] for k in prep.expected} == set(first)
    assert len(prep.expected) == 12 and len(prep.pending) == 2  # 2 sessions x 6 turns

    # one turn measured (the committed record of it): a rerun measures only what is missing
    line = next(x for x in (COMMITTED / records.RESULTS).read_text().splitlines()
                if json.loads(x)["session_id"] == first[0] and json.loads(x)["turn"] == 0)
    (prep.path / records.RESULTS).write_text(line + "\n")
    again = runner.prepare(camp, spec, runs_root=tmp_path, say=lambda _: None, sessions=2)
    assert len(again.expected) == 12
    assert sum(len(w.turns) for w in again.pending) == 11
    assert not (tmp_path / "_superseded").exists()

    # another subset in the same folder: the earlier one is moved aside, never mixed
    said: list[str] = []
    third = runner.prepare(camp, spec, runs_root=tmp_path, say=said.append, sessions=3)
    assert len(third.expected) == 18 and list((tmp_path / "_superseded").iterdir())
    assert said and "moved to" in said[0]


def test_a_session_subset_is_measured_and_recorded_in_the_manifest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was refused: "the executor measures a run's sessions all or none"."""
    camp = load_campaign(STUDY.campaign)
    selection = plan.select([r.run_id for r in camp.runs], kick=True, study=STUDY)
    folder = tmp_path / "repro"
    folder.mkdir()
    records.write_json(folder / plan.MANIFEST, {  # calibrated already: no server here
        "schema": plan.SCHEMA, "campaign": paths.shown(STUDY.campaign),
        "selection": selection.as_dict(), "complete": False, "runs": {}, "load": [],
        "calibration": {"run_id": NONE_A, "scale": 1.0, "skipped": "test"}})
    calls: list[dict[str, Any]] = []

    def group(_camp: Any, specs: Any, **kw: Any) -> dict[str, Any]:
        calls.append({"runs": [s.run_id for s in specs], **kw})
        return {s.run_id: SimpleNamespace(complete=True, n_results=12, n_errors=0)
                for s in specs}

    monkeypatch.setattr(execute, "measuring", _no_lock)
    monkeypatch.setattr(execute, "run_group", group)
    out = execute.reproduce(campaign_file=STUDY.campaign, selection=selection,
                            reference=STUDY.reference, into=folder, show_progress=False,
                            say=lambda _: None, study="realism")
    assert out.complete and out.manifest["selection"]["sessions"] == 2
    (call,) = calls
    assert call["runs"] == list(STUDY.kick_runs) and call["sessions"] == 2


def test_the_calibration_replays_the_no_draft_runs_first_sessions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was skipped: "a session study: no prompt to time"."""
    camp = load_campaign(STUDY.campaign)
    selection = plan.select([r.run_id for r in camp.runs], kick=True, study=STUDY)
    got: dict[str, Any] = {}

    def fake(_files: Any, spec: Any, sessions: Any, committed: Any, _log: Any
             ) -> cal.Calibration:
        got.update(run=spec.run_id, ids=[s.session_id for s in sessions])
        keys = [(s.session_id, t.turn) for s in sessions for t in s.turns]
        return cal.Calibration(run_id=spec.run_id, prompt_ids=(), here_ms=1000.0,
                               committed_ms=sum(committed[k] for k in keys), wall_s=1.0,
                               session_ids=tuple(got["ids"]), n_turns=len(keys))

    monkeypatch.setattr(execute.cal, "calibrate_sessions", fake)
    monkeypatch.setattr(execute.runner, "server_files", lambda *_: FILES)
    c = execute._calibrate(camp, selection, STUDY.reference, tmp_path, lambda _: None)
    first = _play_order()[:2]
    assert got == {"run": NONE_A, "ids": first}
    assert c["session_ids"] == first and c["turns"] == 12 and c["prompt_ids"] == []
    committed = cal.committed_turns(COMMITTED)
    assert c["committed_ms"] == round(sum(committed[(s, t)] for s in first
                                          for t in range(6)), 1)
    assert plan.check_manifest({"calibration": c}, Path("reproduction.json")) is None


def test_no_committed_records_of_the_same_sessions_is_said_in_one_line(
        tmp_path: Path) -> None:
    camp = load_campaign(STUDY.campaign)
    selection = plan.select([r.run_id for r in camp.runs], kick=True, study=STUDY)
    reference = tmp_path / "runs"
    (reference / NONE_A).mkdir(parents=True)
    shutil.copy(COMMITTED / records.CONFIG, reference / NONE_A / records.CONFIG)  # no records
    said: list[str] = []
    c = execute._calibrate(camp, selection, reference, tmp_path, said.append)
    assert c["skipped"] == "no committed records of the same sessions" and c["scale"] == 1.0
    (line,) = said
    assert line.startswith(f"calibration skipped: no committed records of {NONE_A}'s sessions")
