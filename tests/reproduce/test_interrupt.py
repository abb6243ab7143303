"""Issue 45: an interrupt (Ctrl-C) while a reproduction measures is one line saying what was kept
and how to resume, never a KeyboardInterrupt traceback."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from artifact import paths, records
from artifact.campaign.server import ServerFiles
from artifact.reproduce import command, execute, plan


@contextlib.contextmanager
def _no_lock(*_: Any, **__: Any) -> Iterator[None]:
    yield


@pytest.mark.usefixtures("prompts_without_a_model")
def test_an_interrupt_while_measuring_is_one_line_naming_what_was_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "repro"
    folder.mkdir()
    selection = plan.Selection(label="subset", runs=("final-none",))
    # a reproduction already calibrated: nothing to time before the runs
    records.write_json(folder / plan.MANIFEST, {
        "schema": plan.SCHEMA, "campaign": paths.shown(paths.STUDY),
        "selection": selection.as_dict(), "complete": False, "runs": {}, "load": [],
        "calibration": {"run_id": "final-none", "scale": 1.0, "skipped": "test"}})
    monkeypatch.setattr(execute, "measuring", _no_lock)
    monkeypatch.setattr(execute.runner, "server_files", lambda *_: ServerFiles(
        binary=Path("llama-server"), model=Path("model.gguf"), draft_model=None))

    def measure_two_then_interrupt(*_: Any, **__: Any) -> None:
        run = folder / plan.RUNS / "final-none"
        run.mkdir(parents=True)
        rows = (paths.RUNS / "final-none" / records.RESULTS).read_text().splitlines()[:2]
        (run / records.RESULTS).write_text("".join(f"{line}\n" for line in rows))
        raise KeyboardInterrupt

    monkeypatch.setattr(execute, "_measure", measure_two_then_interrupt)
    code = command.main(["run", "--runs", "final-none", "--into", str(folder)])
    err = capsys.readouterr().err
    assert code == 130
    last = err.strip().splitlines()[-1]
    assert last == (f"[reproduce] interrupted: 2 measured request(s) kept in {folder}; rerun "
                    "the same command to resume"), err
    assert "Traceback" not in err
    # the manifest is still the reproduction's, and the same command resumes it
    assert json.loads((folder / plan.MANIFEST).read_text())["selection"] == selection.as_dict()
