"""A run folder, or a file of one, that leads out of the repository through a symbolic link is
refused in one line naming it and where it points, wherever the analysis lists or reads runs;
links that stay inside the repository, and runs folders outside it by name, are read as before.

The repository of these tests is a folder of ``tmp_path`` (``paths.ROOT`` patched to it)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from artifact import paths, records
from artifact.analysis import costmodel, realism, runs, summary, workload
from artifact.errors import OutsideError
from artifact.render import sources
from tests import corpus
from tests import workload_corpus as wc


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "experiments").mkdir(parents=True)
    monkeypatch.setattr(paths, "ROOT", root)
    return root


def _study_run(root: Path, run_id: str = "final-a") -> Path:
    sp = corpus.spec(run_id, family="final", drafter="ngram-mod", k=4)  # costmodel: drafted
    return corpus.write_study_run(root, sp, scale=0.05)


def _refused(err: pytest.ExceptionInfo[OutsideError], shown: str, target: Path) -> None:
    """One line naming ``shown`` and where it points (``target``); a reader that meets a linked
    run folder at one of its files names that file, inside the folder and its target."""
    msg = str(err.value)
    assert "\n" not in msg
    name, _, rest = msg.partition(": ")
    inner = name.removeprefix(shown)
    assert name == shown or (inner.startswith("/") and "/" not in inner[1:]), msg
    assert rest.startswith(f"a symbolic link out of the repository, to {target}{inner};"), msg


# --- the one check, records.run_folders -------------------------------------------------------


def test_a_run_folder_linked_out_of_the_repository_is_refused(repo: Path, tmp_path: Path
                                                              ) -> None:
    root = repo / "experiments" / "runs"
    _study_run(root, "final-a")
    away = _study_run(tmp_path / "elsewhere", "final-b")
    (root / "final-b").symlink_to(away)
    with pytest.raises(OutsideError) as err:
        records.run_folders(root, repo=repo)
    _refused(err, "experiments/runs/final-b", away)


def test_a_file_linked_out_of_the_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    root = repo / "experiments" / "runs"
    run = _study_run(root, "final-a")
    away = _study_run(tmp_path / "elsewhere", "final-a") / records.RESULTS
    (run / records.RESULTS).unlink()
    (run / records.RESULTS).symlink_to(away)
    with pytest.raises(OutsideError) as err:
        records.run_folders(root, repo=repo)
    _refused(err, "experiments/runs/final-a/results.jsonl", away)


def test_a_runs_folder_linked_out_of_the_repository_is_refused(repo: Path, tmp_path: Path
                                                               ) -> None:
    away = tmp_path / "elsewhere" / "runs"
    _study_run(away, "final-a")
    (repo / "experiments" / "runs").symlink_to(away)
    with pytest.raises(OutsideError) as err:
        records.run_folders(repo / "experiments" / "runs", repo=repo)
    _refused(err, "experiments/runs", away)


def test_links_inside_the_repository_and_folders_outside_it_are_listed(repo: Path,
                                                                       tmp_path: Path) -> None:
    root = repo / "experiments" / "runs"
    kept = _study_run(repo / "experiments" / "kept", "final-b")
    run = _study_run(root, "final-a")
    (root / "final-b").symlink_to(kept)
    (run / records.VRAM).unlink()
    (run / records.VRAM).symlink_to(kept / records.VRAM)
    assert [p.name for p in records.run_folders(root, repo=repo)] == ["final-a", "final-b"]
    # outside the repository by name: a reproduction elsewhere, a test's folder
    other = tmp_path / "reproduction" / "runs"
    _study_run(other, "final-a")
    (other / "final-b").symlink_to(kept)
    assert [p.name for p in records.run_folders(other, repo=repo)] == ["final-a", "final-b"]


def test_a_scratch_folder_is_not_listed_nor_checked(repo: Path, tmp_path: Path) -> None:
    root = repo / "experiments" / "runs"
    _study_run(root, "final-a")
    (root / "_scratch").symlink_to(_study_run(tmp_path / "elsewhere", "final-b"))
    assert [p.name for p in records.run_folders(root, repo=repo)] == ["final-a"]


# --- every place the analysis lists or reads runs goes through it ----------------------------


def _summary(root: Path) -> Any:
    return summary.build_summary(root, cache=root.parent / "cache")


STUDY: list[Callable[[Path], Any]] = [
    runs.load_runs,
    _summary,  # through the cache of reduced runs
    lambda root: runs.load_family(root, "final"),
    lambda root: sources.expand_runs(["*"], root),
    costmodel.study_runs,
]


@pytest.mark.parametrize("read", STUDY)
@pytest.mark.parametrize("link", ["folder", "results", "config", "log"])
def test_every_reader_of_the_study_refuses(repo: Path, tmp_path: Path,
                                          read: Callable[[Path], Any], link: str) -> None:
    root = repo / "experiments" / "runs"
    _study_run(root, "final-a")
    away = _study_run(tmp_path / "elsewhere", "final-b")
    if link == "folder":
        (root / "final-b").symlink_to(away)
        shown = "experiments/runs/final-b"
    else:
        run = _study_run(root, "final-b")
        name = {"results": records.RESULTS, "config": records.CONFIG,
                "log": records.SERVER_LOG}[link]
        (run / name).unlink()
        (run / name).symlink_to(away / name)
        away, shown = away / name, f"experiments/runs/final-b/{name}"
    with pytest.raises(OutsideError) as err:
        read(root)
    _refused(err, shown, away)


def test_the_workload_study_refuses(repo: Path, tmp_path: Path) -> None:
    root = repo / "experiments" / "runs-workload"
    wc.write_run(root, "wl-a", "english", "2026-01-01T00:01:00", 1.0, {"s1": 2}, style="english")
    away = wc.write_run(tmp_path / "elsewhere", "wl-b", "code", "2026-01-01T00:02:00", 1.3,
                        {"s1": 2})
    (root / "wl-b").symlink_to(away)
    with pytest.raises(OutsideError) as err:
        workload.load_workload_runs(root)
    _refused(err, "experiments/runs-workload/wl-b", away)


@pytest.mark.parametrize("name", [records.CONFIG, records.RESULTS, records.SESSIONS])
def test_the_realism_study_refuses(repo: Path, tmp_path: Path, name: str) -> None:
    root = repo / "experiments" / "runs-realism"
    run = root / "r3-main-none-real-a"
    shutil.copytree(paths.REALISM_RUNS / "r3-main-none-real-a", run)
    away = tmp_path / "elsewhere" / name
    away.parent.mkdir()
    shutil.move(run / name, away)
    (run / name).symlink_to(away)
    with pytest.raises(OutsideError) as err:
        realism.load_runs(root)
    _refused(err, f"experiments/runs-realism/r3-main-none-real-a/{name}", away)


def test_the_step_costs_refuse(repo: Path, tmp_path: Path) -> None:
    root = repo / "experiments" / "runs-cost"
    away = tmp_path / "elsewhere" / "m"
    away.mkdir(parents=True)
    (away / "config.json").write_text(json.dumps({"model": "m", "schema": 1}))
    (away / "steps.jsonl").write_text(json.dumps({"n": 1, "rep": 0, "prompt_ms": 5.0,
                                                  "problem": None}) + "\n")
    root.mkdir()
    (root / "m").symlink_to(away)
    with pytest.raises(OutsideError) as err:
        costmodel.read_costs(root)
    _refused(err, "experiments/runs-cost/m", away)  # listed: refused before any file is read
