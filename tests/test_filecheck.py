"""doit's content checker (artifact/filecheck.py): a file many tasks depend on is hashed once
per doit while its settled stat holds, and again as soon as it changes; a file changed while
its task ran is not saved as seen."""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from doit.reporter import ConsoleReporter

from artifact import filecheck, files, paths


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the checker hashes, in order, from an empty memo."""
    seen: list[str] = []
    real = filecheck.get_file_md5

    def counted(path: str) -> str:
        seen.append(path)
        return str(real(path))

    monkeypatch.setattr(filecheck, "get_file_md5", counted)
    monkeypatch.setattr(filecheck, "_HASHED", {})
    return seen


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """:func:`_counted`, every file counting as settled at once (no 2 s wait)."""
    monkeypatch.setattr(files, "settled", functools.partial(files.settled, settle_s=0.0))
    return _counted(monkeypatch)


def test_a_file_many_tasks_depend_on_is_hashed_once(tmp_path: Path, hashes: list[str]) -> None:
    dep = tmp_path / "module.py"
    dep.write_text("x = 1\n", encoding="utf-8")
    checker = filecheck.ContentChecker()
    states = [checker.get_state(str(dep), None) for _ in range(5)]  # five tasks, no saved state
    assert hashes == [str(dep)]
    assert all(s == states[0] for s in states) and states[0] is not None
    assert states[0][4] == hashlib.md5(dep.read_bytes()).hexdigest()


def test_a_rewrite_with_its_times_put_back_is_hashed_again(tmp_path: Path,
                                                           hashes: list[str]) -> None:
    dep = tmp_path / "results.jsonl"
    dep.write_text('{"a": 1}\n', encoding="utf-8")
    checker = filecheck.ContentChecker()
    first = checker.get_state(str(dep), None)
    st = dep.stat()
    dep.write_text('{"a": 2}\n', encoding="utf-8")  # as many bytes
    os.utime(dep, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old mtime
    second = checker.get_state(str(dep), None)
    assert hashes == [str(dep), str(dep)]
    assert first is not None and second is not None and first[4] != second[4]
    assert checker.check_modified(str(dep), dep.stat(), first)
    assert not checker.check_modified(str(dep), dep.stat(), second)


def test_a_file_changed_within_the_last_seconds_is_hashed_every_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _counted(monkeypatch)
    dep = tmp_path / "summary.json"
    dep.write_text("{}\n", encoding="utf-8")  # just written: not settled
    checker = filecheck.ContentChecker()
    for _ in range(3):
        checker.get_state(str(dep), None)
    assert seen == [str(dep)] * 3


def _rewrite_same_size(path: Path, text: str) -> None:
    """``text`` (as many bytes) over ``path``, its modification time put back."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_dependency_changed_while_its_task_ran_is_not_saved_as_seen(tmp_path: Path) -> None:
    dep = tmp_path / "results.jsonl"
    dep.write_text('{"a": 1}\n', encoding="utf-8")
    checker = filecheck.ContentChecker()
    filecheck.started("core", [str(dep)])  # doit picks the task; then the task reads the file
    _rewrite_same_size(dep, '{"a": 2}\n')  # ... and the file is rewritten before the save
    try:
        state = checker.get_state(str(dep), None)
    finally:
        filecheck.finished("core")
    assert state is not None and state[0] == filecheck.CHANGED_WHILE_RUNNING
    assert checker.check_modified(str(dep), dep.stat(), state)  # never up to date
    saved = checker.get_state(str(dep), state)  # the next run, nothing moving: saved as seen
    assert saved is not None and saved[4] == hashlib.md5(dep.read_bytes()).hexdigest()
    assert not checker.check_modified(str(dep), dep.stat(), saved)


def _tiny_dodo(root: Path, dodo: str) -> None:
    (root / "dodo.py").write_text(textwrap.dedent(dodo), encoding="utf-8")


def _doit(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(paths.ROOT)}
    return subprocess.run([sys.executable, "-m", "doit"], cwd=root, env=env, capture_output=True,
                          text=True, check=False, timeout=120)


def test_a_run_file_rewritten_while_its_task_runs_reruns_the_task(tmp_path: Path) -> None:
    """Issue 46: a run file rewritten while `doit core` ran, after the task had read it, left a
    stale output that doit from then on called up to date (the state saved was the new file's).
    With the project's checker and reporter, doit says so and runs the task again next time."""
    import dodo

    checker = dodo.DOIT_CONFIG["check_file_uptodate"]
    reporter = dodo.DOIT_CONFIG.get("reporter", ConsoleReporter)
    (tmp_path / "results.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    _tiny_dodo(tmp_path, f"""
        import os
        from pathlib import Path
        from {checker.__module__} import {checker.__name__} as Checker
        from {reporter.__module__} import {reporter.__name__} as Reporter
        DOIT_CONFIG = {{"check_file_uptodate": Checker, "reporter": Reporter,
                       "num_process": 2, "par_type": "process", "verbosity": 2}}
        DEP = Path("results.jsonl")

        def core():
            read = DEP.read_text()
            Path("core.json").write_text(read)
            if Path("rewrite").exists():  # a campaign rewrites the file meanwhile
                st = DEP.stat()
                DEP.write_text(read.replace("1", "2"))
                os.utime(DEP, ns=(st.st_atime_ns, st.st_mtime_ns))
                Path("rewrite").unlink()

        def task_core():
            '''reads the run file'''
            return {{"actions": [core], "file_dep": [str(DEP)], "targets": ["core.json"]}}
        """)
    assert _doit(tmp_path).returncode == 0  # built, then up to date
    assert "-- core" in _doit(tmp_path).stdout
    (tmp_path / "rewrite").touch()
    (tmp_path / "core.json").unlink()
    first = _doit(tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "results.jsonl changed while core ran" in first.stderr, first.stderr
    again = _doit(tmp_path)
    assert ".  core" in again.stdout, again.stdout  # run again: the output is not stale
    assert (tmp_path / "core.json").read_text() == '{"a": 2}\n'
    assert "-- core" in _doit(tmp_path).stdout
