"""doit's content checker (artifact/filecheck.py): a file many tasks depend on is hashed once
per doit while its settled stat holds, and again as soon as it changes."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import pytest

from artifact import filecheck, files


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
