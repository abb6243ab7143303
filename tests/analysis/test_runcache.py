"""The loaded-run cache: the same summary.json byte for byte, a run read once, never stale."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from artifact import imports
from artifact.analysis import reduced, runcache, runs, summary
from artifact.analysis.params import BOOTSTRAP
from tests import corpus


def _text(root: Path, cache: Path | None) -> str:
    return summary.dumps(summary.build_summary(root, cache=cache))


def _entries(cache: Path) -> list[Path]:
    """The reductions kept (not the stat memos under ``stat/``)."""
    return sorted(p for p in cache.rglob("*.json") if "stat" not in p.relative_to(cache).parts)


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
    monkeypatch.setattr(runcache, "SETTLE_S", 0.0)  # the corpus was written just now
    full = _text(corpus_root, cache)

    def fail(path: Path, *, keep_events: bool = False) -> runs.Run:
        raise AssertionError(f"read {path.name} again")

    def no_bootstrap(*args: object, **kw: object) -> None:
        raise AssertionError("a cached run's positions computed again")

    def no_hash(path: Path) -> str:
        raise AssertionError(f"hashed {path.name} again, its files unchanged")

    monkeypatch.setattr(runcache, "load_run", fail)
    monkeypatch.setattr(reduced._positions, "position_stats", no_bootstrap)
    monkeypatch.setattr(runcache, "_content_key", no_hash)
    assert _text(corpus_root, cache) == full


def _one_run(tmp_path: Path) -> Path:
    sp = corpus.study_specs()[0]
    return corpus.write_study_run(tmp_path / "runs", sp, scale=corpus.TEST_SCALE)


def _load(run: Path, cache: Path | None) -> reduced.Reduced:
    return runcache.load_reduced(run, bootstrap=BOOTSTRAP, cache=cache)


def test_a_changed_file_or_folder_name_is_a_new_entry(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runcache, "SETTLE_S", 0.0)  # trust the stat of files written just now
    run = _one_run(tmp_path)
    cache = tmp_path / "cache"
    first = _load(run, cache)
    results = run / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join(lines[:-1]), encoding="utf-8")  # one record fewer
    assert _load(run, cache).entry["n_records"] == first.entry["n_records"] - 1
    moved = run.rename(run.with_name("renamed"))
    again = _load(moved, cache)
    assert again.path == moved and all("renamed" in p for p in again.problems)
    assert len(_entries(cache)) == 3


def test_a_same_size_rewrite_is_seen_through_the_stat_memo(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A file rewritten in place with as many bytes has another mtime or ctime: hashed again."""
    monkeypatch.setattr(runcache, "SETTLE_S", 0.0)
    run = _one_run(tmp_path)
    cache = tmp_path / "cache"
    key = runcache.run_key(run, cache)
    assert runcache.run_key(run, cache) == key  # from the memo
    results = run / "results.jsonl"
    text = results.read_text(encoding="utf-8")
    i = text.index('"prompt_id"')
    results.write_text(text[:i] + text[i:].replace("a", "b", 1), encoding="utf-8")
    assert results.stat().st_size == len(text.encode())
    assert runcache.run_key(run, cache) != key
    assert runcache.run_key(run, cache) == runcache.run_key(run)  # the memo agrees with the hash


def test_a_young_file_is_hashed_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _one_run(tmp_path)  # written just now: younger than SETTLE_S
    cache = tmp_path / "cache"
    runcache.run_key(run, cache)
    assert not (cache / "stat").exists()  # nothing remembered for files still settling
    calls: list[str] = []
    real = runcache._content_key
    monkeypatch.setattr(runcache, "_content_key", lambda p: calls.append(p.name) or real(p))
    runcache.run_key(run, cache)
    assert calls == [run.name]


def test_a_torn_entry_is_a_miss_and_an_unfinished_run_is_not_kept(tmp_path: Path) -> None:
    run = _one_run(tmp_path)
    cache = tmp_path / "cache"
    want = _load(run, None)
    _load(run, cache)
    (entry,) = _entries(cache)
    entry.write_bytes(b"not an entry")
    assert repr(_load(run, cache)) == repr(want)
    shutil.rmtree(cache)
    metrics = run / "metrics.json"
    metrics.write_text(metrics.read_text(encoding="utf-8").replace('"complete": true',
                                                                   '"complete": false'),
                       encoding="utf-8")
    assert _load(run, cache).metrics["complete"] is False  # type: ignore[index]
    assert not cache.exists() or not _entries(cache)


def test_the_key_follows_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _one_run(tmp_path)
    key = runcache.run_key(run)
    monkeypatch.setattr(runcache, "code_key", lambda: "another parser")
    assert runcache.run_key(run) != key


def test_the_code_key_covers_the_reduction_and_its_statistics() -> None:
    names = {p.name for p in imports.closure("artifact.analysis.runcache")}
    assert {"reduced.py", "parts.py", "runs.py", "final.py", "breakeven.py", "positions.py",
            "logs.py", "records.py", "stats.py"} <= names


def test_one_added_run_is_the_only_one_hashed(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runcache, "SETTLE_S", 0.0)
    root, cache = tmp_path / "runs", tmp_path / "cache"
    specs = corpus.study_specs()[:4]
    for sp in specs[:3]:
        corpus.write_study_run(root, sp, scale=corpus.TEST_SCALE)
    _text(root, cache)
    assert len(list((cache / "stat").rglob("*.json"))) == 1  # one memo for the folder
    added = corpus.write_study_run(root, specs[3], scale=corpus.TEST_SCALE)
    calls: list[str] = []
    real = runcache._content_key
    monkeypatch.setattr(runcache, "_content_key", lambda p: calls.append(p.name) or real(p))
    assert _text(root, cache) == _text(root, None)
    assert calls == [added.name]
    _text(root, cache)
    assert calls == [added.name]  # remembered with the others


class _Payload:
    """A pickle that, once loaded, leaves a file behind: what a planted entry would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return os.system, (f"touch {self.marker}",)


def _two_runs_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, str]:
    """Two runs, their summary computed fresh and then kept: (runs, cache, summary text)."""
    monkeypatch.setattr(runcache, "SETTLE_S", 0.0)
    root, cache = tmp_path / "runs", tmp_path / "cache"
    for sp in corpus.study_specs()[:2]:
        corpus.write_study_run(root, sp, scale=corpus.TEST_SCALE)
    want = _text(root, None)
    assert _text(root, cache) == want
    return root, cache, want


def test_a_planted_entry_runs_nothing_and_is_a_miss(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry (reductions and the stat memo) replaced by a pickle that runs a command: the
    next build computes the same summary and the command never runs."""
    import pickle

    root, cache, want = _two_runs_cached(tmp_path, monkeypatch)
    marker = tmp_path / "pwned"
    planted = list(cache.rglob("*.json"))
    assert len(planted) == 3  # two reductions, one memo
    for entry in planted:
        entry.write_bytes(pickle.dumps(_Payload(marker)))
    assert _text(root, cache) == want
    assert not marker.exists()


def test_the_codec_builds_only_the_allowed_classes() -> None:
    from artifact.analysis import cachecodec

    assert cachecodec.loads(cachecodec.dumps({("a", 1): [1.5, float("inf")], None: (Path("x"),)})
                            ) == {("a", 1): [1.5, float("inf")], None: (Path("x"),)}
    with pytest.raises(ValueError, match="not allowed"):
        cachecodec.loads(b'["c", "Popen", {"args": ["j", ["sh"]]}]', {})
    with pytest.raises(ValueError, match="fields"):
        cachecodec.loads(b'["c", "Part", {"value": 1}]', {"Part": runcache.Part})


def test_another_runs_entry_is_never_served(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """One run's reduction copied over another's, then the stat memo pointing one run at the
    other's key: the summary stays the fresh one, byte for byte."""
    from artifact.analysis import cachecodec

    root, cache, want = _two_runs_cached(tmp_path, monkeypatch)
    a, b = _entries(cache)
    a.write_bytes(b.read_bytes())
    assert _text(root, cache) == want
    (memo,) = (cache / "stat").rglob("*.json")
    doc = cachecodec.loads(memo.read_bytes())
    (na, (sa, _)), (_, (_, kb)) = sorted(doc["value"].items())
    doc["value"][na] = (sa, kb)
    memo.write_bytes(cachecodec.dumps(doc))
    assert _text(root, cache) == want


def test_no_module_unpickles() -> None:
    """Nothing of the package loads a pickle (the Slurm jobs are submitit's own)."""
    import re

    from artifact import paths

    hits = [f"{p.relative_to(paths.ROOT)}:{i}"
            for p in sorted((paths.ROOT / "artifact").rglob("*.py"))
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"\b(c?pickle|dill|marshal|shelve)\.(loads?|Unpickler|open)\b"
                         r"|\bjoblib\.load\b|\ballow_pickle\s*=\s*True", line)]
    assert hits == []


def test_the_pool_reduces_what_the_loop_reduces(bad_root: tuple[Path, dict[str, str]],
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 32: many runs to reduce are reduced in a pool of processes. Its reductions, cache
    # entries, warnings and errors in their turn (a run skipped for its config) are the loop's:
    # the same summary.json byte for byte.
    from concurrent.futures import ProcessPoolExecutor

    from artifact.analysis import cachecodec

    root, _ = bad_root
    serial = summary.dumps(summary.build_summary(root, workers=1))
    pools: list[int] = []

    class Spy(ProcessPoolExecutor):
        def __init__(self, n: int, **kw: object) -> None:
            pools.append(n)
            super().__init__(n, **kw)

    monkeypatch.setattr(runcache, "ProcessPoolExecutor", Spy)
    monkeypatch.setattr(runcache, "POOL_BYTES", 0)
    assert summary.dumps(summary.build_summary(root, workers=2)) == serial
    assert pools == [2]

    def reductions(workers: int) -> list[bytes]:
        load = runcache.loader(root, bootstrap=BOOTSTRAP, cache=None, workers=workers)
        out = []
        for run in sorted(p for p in root.iterdir() if p.name != "bad-unknown-drafter"):
            out.append(cachecodec.dumps(load(run)))
        return out

    assert reductions(2) == reductions(1)
    cache = tmp_path / "cache"
    assert summary.dumps(summary.build_summary(root, cache=cache, workers=2)) == serial
    kept = _entries(cache)
    assert kept and summary.dumps(summary.build_summary(root, cache=cache, workers=2)) == serial
    assert pools == [2, 2, 2]  # the warm build found nothing to reduce: no pool
    assert _entries(cache) == kept


def test_a_few_runs_are_reduced_without_a_pool(corpus_root: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pool(*args: object, **kw: object) -> None:
        raise AssertionError("a pool started for a few small runs")

    monkeypatch.setattr(runcache, "ProcessPoolExecutor", no_pool)
    assert summary.build_summary(corpus_root, workers=2)  # small files: below POOL_BYTES


def _killed(path: Path, bootstrap: object) -> object:
    """A worker of the pool killed while it reduces (``kill -9``, the kernel's OOM killer)."""
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("not reached")


def _buggy(path: Path, bootstrap: object) -> object:
    """A worker of the pool meeting a bug: not an ArtifactError."""
    raise ValueError(f"no such key in {path.name}\nsecond line")


@pytest.mark.parametrize(("worker", "said"), [
    (_killed, "a worker process of the analysis pool died before it gave this run back"),
    (_buggy, "reducing it in a worker process failed: ValueError: no such key in"),
])
def test_a_pool_failure_is_one_line_naming_the_run(corpus_root: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  worker: object, said: str) -> None:
    # Issue 46: a worker killed came back as BrokenProcessPool, a worker's exception as a
    # traceback from the pool; now each is the AnalysisError the serial loop's errors are, one
    # line naming the run, raised in its turn.
    from artifact.errors import AnalysisError, one_line

    monkeypatch.setattr(runcache, "POOL_BYTES", 0)
    monkeypatch.setattr(runcache, "_reduce_in_worker", worker)  # pickled by name: this module
    with pytest.raises(AnalysisError) as caught:
        summary.build_summary(corpus_root, workers=2)
    first = sorted(p.name for p in corpus_root.iterdir())[0]
    assert str(caught.value) == one_line(caught.value)
    assert str(caught.value).startswith(f"run {first}: ") and said in str(caught.value)
