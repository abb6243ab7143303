"""Where a reproduction writes: never into the committed runs, and a file given for a folder is
one line, checked before the host's lock is taken or anything is built or analysed.

Measuring is stubbed out: a test that reaches it fails (it would have written)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from artifact import paths
from artifact.errors import PlanError
from artifact.reproduce import command, execute, plan, runsets


@pytest.fixture()
def no_measuring(monkeypatch: pytest.MonkeyPatch) -> None:
    @contextlib.contextmanager
    def measuring(*_: Any, **__: Any) -> Iterator[None]:
        raise AssertionError("reached the host's lock: it would have measured")
        yield

    def reproduce(**_: Any) -> execute.Outcome:
        raise AssertionError("reached the reproduction: it would have measured")

    monkeypatch.setattr(execute, "measuring", measuring)
    monkeypatch.setattr(execute, "_reproduce", reproduce)


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err.removeprefix("error: ").rstrip("\n")


def _committed() -> list[Path]:
    return [paths.RUNS / "final-none", paths.RUNS / "a-new-folder", paths.RUNS,
            paths.COST_RUNS, paths.REALISM_RUNS / "x", paths.WORKLOAD_RUNS,
            *sorted(paths.REPRODUCTIONS.glob(f"*/{plan.RUNS}"))[:1]]


@pytest.mark.usefixtures("no_measuring")
@pytest.mark.parametrize("into", _committed(), ids=lambda p: paths.shown(p))
def test_into_the_committed_runs_is_refused(into: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert command.main(["run", "--runs", "final-none", "--into", str(into)]) == 2
    err = _error(capsys)
    assert err.startswith(f"--into {into}: inside the committed runs experiments/"), err


@pytest.mark.usefixtures("no_measuring")
def test_into_the_committed_runs_through_a_link_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "link").symlink_to(paths.RUNS)
    into = tmp_path / "link" / "rerun"
    assert command.main(["run", "--runs", "final-none", "--into", str(into)]) == 2
    assert _error(capsys).startswith(f"--into {into}: inside the committed runs experiments/runs,")


@pytest.mark.usefixtures("no_measuring")
@pytest.mark.parametrize(("option", "given", "said"), [
    ("--into", "README.md", "--into README.md: is a file, expected a folder"),
    ("--into", "README.md/rerun", "--into README.md/rerun: README.md is a file, expected a folder"),
    ("--reference", "README.md", "--reference README.md: is a file, expected a folder"),
])
def test_a_file_for_a_folder_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str], option: str,
                                         given: str, said: str) -> None:
    monkeypatch.chdir(tmp_path)
    Path("README.md").write_text("# a file\n")
    assert command.main(["run", "--runs", "final-none", "--campaign", str(paths.STUDY),
                         "--reference", str(paths.RUNS), option, given]) == 2
    assert _error(capsys) == said


def test_a_reproduction_folder_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    """The folder found for a reproduction (not only ``--into``) is checked before it is read."""
    (tmp_path / "README.md").write_text("x")
    sel = plan.Selection(label="kick", runs=("final-none",))
    with pytest.raises(PlanError, match=r"README\.md: is a file, expected a folder$"):
        plan.resumable(tmp_path / "README.md", sel, "c.toml")


@pytest.mark.usefixtures("no_measuring")
def test_a_folder_of_its_own_is_accepted(tmp_path: Path) -> None:
    """Checked, then measured (here: the stub, which says it was reached)."""
    with pytest.raises(AssertionError, match="would have measured"):
        command.main(["run", "--runs", "final-none", "--into", str(tmp_path / "rerun")])
    assert plan.check_into(tmp_path / "rerun") == tmp_path / "rerun"
    assert plan.check_into(paths.REPRODUCTIONS / "x-20261130") == paths.REPRODUCTIONS / "x-20261130"


def test_compare_out_a_file_is_one_line_before_any_analysis(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def pair_of(*_: Any, **__: Any) -> Any:
        raise AssertionError("analysed both sets before looking at --out")

    monkeypatch.setattr(runsets, "pair_of", pair_of)
    monkeypatch.chdir(tmp_path)
    Path("README.md").write_text("# a file\n")
    assert command.main(["compare", str(paths.RUNS), str(paths.RUNS), "--out", "README.md"]) == 2
    assert _error(capsys) == "--out README.md: is a file, expected a folder"
