"""A runs folder given as a file (``--runs-dir README.md``, ``doit campaign --runs-dir
README.md``) is one line, checked before the host's lock is taken or anything is built.

Every measurement takes the host's lock first: here a stub that fails the test that reaches it
(it would have measured)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from artifact import hostlock, paths
from artifact.campaign import __main__ as campaign_cli
from artifact.campaign import interleave, runner
from artifact.errors import SpecError
from artifact.executors import slurm
from artifact.spec import load_campaign


@contextlib.contextmanager
def _lock(*_: Any, **__: Any) -> Iterator[None]:
    raise AssertionError("reached the host's lock: it would have measured")
    yield


@pytest.fixture()
def readme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(hostlock, "measuring", _lock)
    Path("README.md").write_text("# a file\n")
    return Path("README.md")


@pytest.mark.parametrize("given", ["README.md", "README.md/runs"])
def test_the_command_line_says_it_in_one_line(readme: Path, given: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert campaign_cli.main([str(paths.STUDY), "--run", "final-none", "--runs-dir", given]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    at = "" if given == "README.md" else "README.md "
    assert err == f"error: --runs-dir {given}: {at}is a file, expected a folder\n"


def test_a_run_into_a_file_is_one_line_before_the_lock(readme: Path) -> None:
    """What ``doit campaign --runs-dir README.md`` calls (its task's action)."""
    camp = load_campaign(paths.STUDY)
    spec = camp.run("final-none")
    with pytest.raises(SpecError, match=r"^runs folder README\.md: is a file, expected a folder$"):
        runner.run(camp, spec, runs_root=readme)
    group = [s for s in camp.runs if s.interleave is not None]
    group = [s for s in group if s.interleave == group[0].interleave]
    with pytest.raises(SpecError, match=r"^runs folder README\.md: is a file"):
        interleave.run_group(camp, group, runs_root=readme)
    with pytest.raises(SpecError, match=r"^runs folder README\.md: is a file"):
        slurm.SlurmCampaign(camp, readme)


def test_a_file_is_not_current_and_says_nothing(readme: Path) -> None:
    """doit asks whether a run is current before its action: that question never fails."""
    camp = load_campaign(paths.STUDY)
    assert runner.run_is_current(camp.run("final-none"), readme) is False
