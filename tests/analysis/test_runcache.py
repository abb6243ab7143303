"""The loaded-run cache: the same summary.json byte for byte, a run read once, never stale."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from artifact.analysis import runcache, runs, summary
from tests import corpus


def _text(root: Path, cache: Path | None) -> str:
    return summary.dumps(summary.build_summary(root, cache=cache))


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.pickle"))


def test_cached_summary_is_byte_identical_cold_and_warm(
        bad_root: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, _ = bad_root  # bad runs too: their warnings must come back word for word
    full = _text(root, None)
    cache = tmp_path / "cache"
    assert _text(root, cache) == full  # cold: every run read and kept
    n = len(_entries(cache))
    assert _text(root, cache) == full  # warm: every run from the cache
    assert len(_entries(cache)) == n


def test_a_warm_cache_reads_no_run_and_draws_no_bootstrap(corpus_root: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    full = _text(corpus_root, cache)

    def fail(path: Path, *, keep_events: bool = False) -> runs.Run:
        raise AssertionError(f"read {path.name} again")

    def no_bootstrap(*args: object, **kw: object) -> None:
        raise AssertionError("a cached run's positions computed again")

    monkeypatch.setattr(runcache, "load_run", fail)
    monkeypatch.setattr(summary._positions, "position_stats", no_bootstrap)
    assert _text(corpus_root, cache) == full


def _one_run(tmp_path: Path) -> Path:
    sp = corpus.study_specs()[0]
    return corpus.write_study_run(tmp_path / "runs", sp, scale=corpus.TEST_SCALE)


def test_a_changed_file_or_folder_name_is_a_new_entry(tmp_path: Path) -> None:
    run = _one_run(tmp_path)
    cache = tmp_path / "cache"
    first = runcache.load(run, cache=cache)
    results = run / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join(lines[:-1]), encoding="utf-8")  # one record fewer
    assert len(runcache.load(run, cache=cache).records) == len(first.records) - 1
    moved = run.rename(run.with_name("renamed"))
    again = runcache.load(moved, cache=cache)
    assert again.path == moved and all("renamed" in p for p in again.problems)
    assert len(_entries(cache)) == 3


def test_a_torn_entry_is_a_miss_and_an_unfinished_run_is_not_kept(tmp_path: Path) -> None:
    run = _one_run(tmp_path)
    cache = tmp_path / "cache"
    want = runcache.load(run, cache=None)
    runcache.load(run, cache=cache)
    (entry,) = _entries(cache)
    entry.write_bytes(b"not a pickle")
    assert runcache.load(run, cache=cache) == want
    shutil.rmtree(cache)
    metrics = run / "metrics.json"
    metrics.write_text(metrics.read_text(encoding="utf-8").replace('"complete": true',
                                                                   '"complete": false'),
                       encoding="utf-8")
    assert runcache.load(run, cache=cache).metrics["complete"] is False  # type: ignore[index]
    assert not cache.exists() or not _entries(cache)


def test_the_key_follows_the_loading_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _one_run(tmp_path)
    key = runcache.run_key(run)
    monkeypatch.setattr(runcache, "code_key", lambda: "another parser")
    assert runcache.run_key(run) != key
    assert runcache.run_key(run, keep_events=True) != runcache.run_key(run)
