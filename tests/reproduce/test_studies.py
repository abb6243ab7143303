"""Issue 45: `reproduce --study NAME` names each study's campaign, reference runs, plan and
claims, so no flag has to be guessed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from artifact import claims, paths, records
from artifact.campaign.server import ServerFiles
from artifact.errors import PlanError
from artifact.reproduce import command, execute, plan, studies
from artifact.spec import load_campaign


def test_help_documents_study(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as end:
        command.main(["run", "--help"])
    assert end.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--study {first,core,accsplit,realism,all}" in out
    assert "core: experiments/campaigns/core.toml against experiments/runs-core" in out


@pytest.mark.parametrize("study", list(studies.STUDIES.values()), ids=list(studies.STUDIES))
def test_each_study_names_its_campaign_reference_kick_and_claims(study: studies.Study) -> None:
    camp = load_campaign(study.campaign)
    ids = [r.run_id for r in camp.runs]
    kick = plan.select(ids, kick=True, study=study)
    assert kick.runs == study.kick_runs and set(kick.runs) <= set(ids)
    # the kick's first run is the study's own no-draft run: the calibration's like with like
    assert camp.run(kick.runs[0]).drafter == "none"
    assert all((study.reference / r / records.CONFIG).is_file() for r in kick.runs)
    served = studies.claims_of(claims.load(paths.CLAIMS), ids)
    prefix = {"first": ("baseline-", "draft-", "best-", "noise-", "control-", "breakeven-",
                        "records", "self-", "lower-", "ngram-", "core-study-measured-quiet"),
              "core": ("core-",), "accsplit": ("accsplit-",), "realism": ("rl-",)}[study.name]
    assert served and all(c.id.startswith(prefix) for c in served), [c.id for c in served]


def test_no_claim_belongs_to_two_studies() -> None:
    ledger = claims.load(paths.CLAIMS)
    seen: dict[str, str] = {}
    for s in studies.STUDIES.values():
        for c in studies.claims_of(ledger, [r.run_id for r in load_campaign(s.campaign).runs]):
            assert c.id not in seen, (c.id, seen.get(c.id), s.name)
            seen[c.id] = s.name


def test_subsets_by_windows_and_sessions() -> None:
    acc = studies.STUDIES["accsplit"]
    camp = load_campaign(acc.campaign)
    ids, windows = [r.run_id for r in camp.runs], {r.run_id: r.window for r in camp.runs}
    w6 = plan.select(ids, study=acc, windows=["w6"], window_of=windows)
    assert w6.label == "subset" and w6.runs and all(r.startswith("w6-") for r in w6.runs)
    one = plan.select(ids, study=acc, windows=["w6"], window_of=windows,
                      patterns=["*-b1-n128-*"], prompts_per_domain=1)
    assert one.runs == acc.kick_runs and one.prompts_per_domain == 1
    with pytest.raises(PlanError, match=r"^--windows: 'w9' is no measurement window"):
        plan.select(ids, study=acc, windows=["w9"], window_of=windows)
    real = studies.STUDIES["realism"]
    rids = [r.run_id for r in load_campaign(real.campaign).runs]
    some = plan.select(rids, study=real, patterns=["r3-main-*"], sessions=3)
    assert some.sessions == 3 and some.as_dict()["sessions"] == 3
    assert "sessions" not in plan.select(ids, study=acc).as_dict()  # a prompt study's shape
    with pytest.raises(PlanError, match=r"^--prompts-per-domain: the realism study plays"):
        plan.select(rids, study=real, prompts_per_domain=1)
    with pytest.raises(PlanError, match=r"^--sessions: the accsplit study sends prompts"):
        plan.select(ids, study=acc, sessions=1)


def test_a_subset_of_sessions_goes_to_the_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    """It was refused ("the executor measures a run's sessions all or none")."""
    got: list[plan.Selection] = []
    monkeypatch.setattr(command, "run_and_compare",
                        lambda *, selection, **_: got.append(selection) or Path("x"))
    assert command.main(["run", "--study", "realism", "--kick"]) == 0
    assert command.main(["run", "--study", "realism", "--runs", "r3-main-*",
                         "--sessions", "3"]) == 0
    assert [(s.label, s.sessions) for s in got] == [("kick", 2), ("subset", 3)]


@pytest.mark.parametrize("argv", [["--study", "all", "--runs", "final-*"],
                                  ["--study", "core", "--campaign", "x.toml"]])
def test_flags_that_do_not_fit_the_study_are_one_line(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert command.main(["run", *argv]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(("error: --runs:", "error: --campaign:")), line


@contextlib.contextmanager
def _no_lock(*_: Any, **__: Any) -> Iterator[None]:
    yield


@pytest.mark.parametrize("argv", [
    ["--study", "core", "--runs", "q4_1-edit-*"],
    # the command: the core campaign without --reference, which read experiments/runs
    ["--campaign", "experiments/campaigns/core.toml", "--runs", "q4_1-edit-*"],
])
@pytest.mark.usefixtures("prompts_without_a_model")
def test_the_core_dry_run_plans_with_no_other_flag(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """It failed with "metrics.json: file not found": the reference was the first study's."""
    folder = tmp_path / "repro"
    folder.mkdir()
    study = studies.STUDIES["core"]
    selection = plan.select([r.run_id for r in load_campaign(study.campaign).runs],
                            patterns=["q4_1-edit-*"], study=study)
    records.write_json(folder / plan.MANIFEST, {  # calibrated already: no server here
        "schema": plan.SCHEMA, "campaign": paths.shown(study.campaign),
        "selection": selection.as_dict(), "complete": False, "runs": {}, "load": [],
        "calibration": {"run_id": "q4_1-edit-none", "scale": 1.0, "skipped": "test"}})
    monkeypatch.setattr(execute, "measuring", _no_lock)
    monkeypatch.setattr(execute.runner, "server_files", lambda *_: ServerFiles(
        binary=Path("llama-server"), model=Path("model.gguf"), draft_model=None))
    assert command.main(["run", *argv, "--dry-run", "--into", str(folder)]) == 0
    err = capsys.readouterr().err
    assert "error" not in err
    eta = [line for line in err.splitlines() if "q4_1-edit-ngram-mod " in line]
    assert eta and "30 prompts" in eta[0] and "~0:00" not in eta[0], err


@pytest.mark.usefixtures("prompts_without_a_model")
def test_a_reference_without_the_run_gives_no_eta_not_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "repro"
    folder.mkdir()
    study = studies.STUDIES["core"]
    selection = plan.select([r.run_id for r in load_campaign(study.campaign).runs],
                            patterns=["q4_1-edit-none"], study=study)
    records.write_json(folder / plan.MANIFEST, {
        "schema": plan.SCHEMA, "campaign": paths.shown(study.campaign),
        "selection": selection.as_dict(), "complete": False, "runs": {}, "load": [],
        "calibration": {"run_id": "q4_1-edit-none", "scale": 1.0, "skipped": "test"}})
    monkeypatch.setattr(execute, "measuring", _no_lock)
    monkeypatch.setattr(execute.runner, "server_files", lambda *_: ServerFiles(
        binary=Path("llama-server"), model=Path("model.gguf"), draft_model=None))
    assert command.main(["run", "--study", "core", "--runs", "q4_1-edit-none", "--reference",
                         str(paths.RUNS), "--dry-run", "--into", str(folder)]) == 0
    assert "~0:00" in capsys.readouterr().err
