"""Runs kept reduced, by content, so that adding one run to many reads and reduces one run.

Reading a run (:func:`artifact.analysis.runs.load_run`: parse every JSON line, check every
record, screen spurious and impossible ones, parse the server log) and reducing it to its share
of the summary (:func:`artifact.analysis.reduced.reduce`: statistics, the per-position
bootstrap) are most of an analysis, and they depend only on the run's files and the code. So a
reduction is kept under :data:`CACHE`, named by a hash of

- every file of :data:`artifact.records.RUN_FILES` (its bytes, or that it is missing),
- the run folder's name (the run's warnings name it),
- the source of every module the reduction imports (:func:`artifact.imports.closure`): a
  changed parser or statistic is a changed key, never a stale result,
- the bootstrap's parameters.

Hashing every file of every run would itself read them all, so the content hash of a folder is
remembered beside its files' ``stat`` (size, modification and change times, inode): when none
has changed since, the hash is not computed again. A file modified within the last
:data:`SETTLE_S` seconds is hashed every time (a write in the same clock tick could leave its
times equal), and a campaign appends to its files, so their sizes move anyway.

A hit is the reduction a fresh read gives (a test checks ``summary.json`` byte for byte), with
the folder's current path. An unfinished run (``metrics.json`` not complete) is not kept: during
a campaign it changes with every request. An entry that cannot be read is a miss, and a cache
that cannot be written is a slower run, never a wrong one.

The cache lies in the checkout's own ``.cache/`` (ignored by git and by the image build), where
anyone who can write a file can plant one, so an entry is data that cannot carry code
(:mod:`artifact.analysis.cachecodec`: tagged JSON, decoded into the reduction's own types
only), and it names what it was made from: a reduction names its run folder and content key, a
stat memo its folder. An entry whose names do not match is a miss; a stat memo that points a run
at another run's entry costs a fresh content key, never another run's numbers.
``rm -r .cache/runs`` empties it; nothing else needs it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path
from typing import Any

from artifact import files, imports, paths, records
from artifact.analysis import cachecodec
from artifact.analysis.params import Bootstrap
from artifact.analysis.parts import Part
from artifact.analysis.reduced import Reduced, reduce
from artifact.analysis.runs import RunDescription, gc_paused, load_run
from artifact.errors import AnalysisError, ArtifactError, one_line

CACHE = paths.ROOT / ".cache" / "runs"
_FORMAT = b"runcache 3"
SETTLE_S = files.SETTLE_S  # a file younger than this is hashed, its stat not trusted
# the only classes an entry may hold (cachecodec builds nothing else)
_ALLOWED: dict[str, type[Any]] = {c.__name__: c for c in (Reduced, RunDescription, Part)}
Stat = tuple[tuple[int, int, int, int, int] | None, ...]


@functools.cache
def code_key() -> str:
    """A hash of the source of every module that reducing a run imports."""
    h = hashlib.blake2b(_FORMAT, digest_size=16)
    for p in imports.closure("artifact.analysis.runcache"):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _stat(path: Path) -> Stat | None:
    """Each run file's :func:`artifact.files.settled_stat`, None for a missing one; None when
    a file is young (:data:`SETTLE_S`) or cannot be stat'ed."""
    out: list[files.FileStat | None] = []
    folder = os.fspath(path)
    for name in records.RUN_FILES:
        try:
            st = files.settled_stat(os.path.join(folder, name), settle_s=SETTLE_S)
        except FileNotFoundError:
            out.append(None)
            continue
        except OSError:
            return None
        if st is None:
            return None
        out.append(st)
    return tuple(out)


def _content_key(path: Path) -> str | None:
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{code_key()}\0{path.name}\0".encode())
    for name in records.RUN_FILES:
        try:
            data = (path / name).read_bytes()
        except FileNotFoundError:
            h.update(f"{name}\0missing\0".encode())
            continue
        except OSError:
            return None
        h.update(f"{name}\0{len(data)}\0".encode() + data)
    return h.hexdigest()


class Memo:
    """The content keys of the runs of one folder, remembered by their files' ``stat``: one
    entry under ``cache/stat/`` per folder (and code), read once and written once per build
    (:func:`remembered`), so that a thousand unchanged runs cost a thousand ``stat`` calls, not
    a thousand files read. Two builds at once each write a whole entry; a key lost that way is
    computed again, never wrong: the ``stat`` (inode and device included) must match."""

    def __init__(self, cache: Path, folder: Path) -> None:
        self.folder = str(folder.resolve())
        self.entry = _entry(cache / "stat", hashlib.blake2b(
            f"{code_key()}\0{self.folder}".encode(), digest_size=20).hexdigest())
        known = _get(self.entry, {"folder": self.folder})
        self.known: dict[str, tuple[Stat, str]] = known if isinstance(known, dict) else {}
        self.seen: dict[str, tuple[Stat, str]] = {}
        self.changed = False

    def key(self, path: Path) -> str | None:
        """:func:`run_key` of ``path``, a run folder inside this memo's folder."""
        st = _stat(path)
        hit = self.known.get(path.name) if st is not None else None
        if (isinstance(hit, tuple) and len(hit) == 2 and hit[0] == st
                and isinstance(hit[1], str)):
            self.seen[path.name] = hit
            return hit[1]
        key = _content_key(path)
        if st is not None and key is not None:
            self.seen[path.name] = (st, key)
            self.changed = True
        return key

    def save(self) -> None:
        """Write the entry when a key was computed: the runs looked up since it was read."""
        if self.changed:
            _put(self.entry, {"folder": self.folder}, self.seen)
            self.changed = False


@contextlib.contextmanager
def remembered(cache: Path | None, folder: Path) -> Iterator[Memo | None]:
    """The :class:`Memo` of the runs in ``folder`` (None without a cache), saved on leaving."""
    memo = None if cache is None else Memo(cache, folder)
    yield memo
    if memo is not None:
        memo.save()


def run_key(path: Path, cache: Path | None = None) -> str | None:
    """The content key of the run folder ``path``; None when a file cannot be read as a file
    (the loader then says why, in its own one line). With ``cache``, a key remembered there
    for the files' unchanged ``stat`` is taken without reading them (:class:`Memo`)."""
    if cache is None:
        return _content_key(path)
    memo = Memo(cache, path.parent)
    memo.seen = dict(memo.known)  # one run looked up: the others stay remembered
    key = memo.key(path)
    memo.save()
    return key


def _entry(cache: Path, key: str) -> Path:
    return Path(os.path.join(cache, key[:2], f"{key}.json"))


def _get(entry: Path, names: dict[str, str]) -> Any:
    """The value of ``entry`` when it names exactly ``names`` (what it was made from); None for a
    missing, torn, foreign or planted entry: a miss, computed again."""
    try:
        got = cachecodec.loads(entry.read_bytes(), _ALLOWED)
    except (OSError, ValueError):  # missing, torn or not an entry
        return None
    if not isinstance(got, dict) or got.get("names") != names or "value" not in got:
        return None
    return got["value"]


def _put(entry: Path, names: dict[str, str], value: object) -> None:
    try:  # atomic: whole or absent, so two builds each write a whole entry
        files.write_bytes(entry, cachecodec.dumps({"names": names, "value": value}))
    except OSError:
        return


def load_reduced(path: Path, *, bootstrap: Bootstrap, cache: Path | None = CACHE,
                 memo: Memo | None = None) -> Reduced:
    """:func:`artifact.analysis.reduced.reduce` of the run folder ``path``, from ``cache`` when
    an entry for its exact files, this code and ``bootstrap`` is there (``cache=None``: always
    read and reduced). A hit reads no record: only the entry. ``memo``: the content keys of
    ``path``'s folder (:func:`remembered`), for many runs of one folder."""
    hit, where = _lookup(path, bootstrap, cache, memo)
    return hit if hit is not None else _kept(path, where, _reduce(path, bootstrap))


Where = tuple[str, Path] | None  # a fresh reduction's content key and entry; None: not kept


def _lookup(path: Path, bootstrap: Bootstrap, cache: Path | None,
            memo: Memo | None) -> tuple[Reduced | None, Where]:
    """The reduction kept for ``path`` (a hit), or None and where a fresh one is to be kept."""
    key = None if cache is None else memo.key(path) if memo is not None else run_key(path, cache)
    if cache is None or key is None:
        return None, None
    hit, entry = _reduced_entry(cache, path, key, bootstrap)
    if hit is None and memo is not None and entry.exists():
        # an entry is there but not this run's: the memo's key is not to be trusted either
        fresh = _content_key(path)
        if fresh is not None and fresh != key:
            key = fresh
            hit, entry = _reduced_entry(cache, path, key, bootstrap)
    if hit is not None:
        return replace(hit, path=path), None
    return None, (key, entry)


def _reduce(path: Path, bootstrap: Bootstrap) -> tuple[Reduced, bool]:
    """The run at ``path`` read and reduced, and whether it is finished (then it is kept)."""
    run = load_run(path)
    return reduce(run, bootstrap), (run.metrics or {}).get("complete") is True


def _kept(path: Path, where: Where, made: tuple[Reduced, bool]) -> Reduced:
    """A fresh reduction, kept in the cache when it has a place there and its run is finished
    (during a campaign an unfinished run changes with every request)."""
    reduced, complete = made
    if where is not None and complete:
        _put(where[1], _names(path, where[0]), reduced)
    return reduced


# Issue 32: the runs the cache lacks are reduced in a pool of worker processes, one per core,
# when there are many (each run's reduction depends on its files alone). A pool's start (a
# fresh interpreter that imports the analysis: 0.55 s more than the loop for the committed
# runs, which one core reads and reduces at about 90 MB/s) costs more than it saves below
# about a second of work: under either floor the runs are reduced here, one after another.
POOL_RUNS = 8  # runs to reduce
POOL_BYTES = 128 * 2**20  # bytes of their files


def _size(path: Path) -> int:
    total = 0
    for name in records.RUN_FILES:
        with contextlib.suppress(OSError):
            total += os.stat(os.path.join(path, name)).st_size
    return total


# CPU seconds the pool's workers spent reducing, added up over this process's life: the
# benchmarks count them (a worker is the forkserver's child, so neither this process's CPU time
# nor its children's usage includes it).
POOL_CPU_S: list[float] = []
Made = tuple[Reduced, bool] | ArtifactError  # a run's reduction (and whether it is finished)


def _reduce_in_worker(path: Path, bootstrap: Bootstrap) -> tuple[Made, float]:
    """:func:`_reduce` in a worker of the pool, and the worker's CPU seconds for it: a run's
    one-line error (a config that is not one is a skipped run, the caller's to say) is
    returned, to be raised in the run's turn as the loop one run after another raises it;
    anything else, and a worker that dies, becomes one in :func:`_outcome`."""
    t0 = time.process_time()
    with gc_paused():
        try:
            got: Made = _reduce(path, bootstrap)
        except ArtifactError as err:
            got = err
    return got, time.process_time() - t0


def _outcome(path: Path, future: Future[tuple[Made, float]]) -> Made:
    """What the pool made of the run ``path``: its reduction, or the one-line error to raise in
    its turn, as the loop raises it. A worker that died (killed, out of memory) or raised what
    is not an :class:`ArtifactError` is an :class:`AnalysisError` naming the run, not a
    ``BrokenProcessPool`` or a worker's traceback (``__cause__`` keeps what happened)."""
    try:
        got, cpu = future.result()
    except BrokenProcessPool as err:
        lost = AnalysisError(
            f"run {path.name}: not reduced: a worker process of the analysis pool died "
            f"before it gave this run back (killed by a signal, or out of memory); run the "
            f"analysis again")
        lost.__cause__ = err
        return lost
    except Exception as err:  # a bug in a worker: one line naming the run, not a traceback
        failed = AnalysisError(f"run {path.name}: reducing it in a worker process failed: "
                               f"{type(err).__name__}: {one_line(err)}")
        failed.__cause__ = err
        return failed
    POOL_CPU_S.append(cpu)
    return got


def loader(root: Path, *, bootstrap: Bootstrap, cache: Path | None = CACHE,
           memo: Memo | None = None, workers: int | None = None) -> Callable[[Path], Reduced]:
    """:func:`load_reduced` for the runs under ``root`` (what
    :func:`artifact.analysis.runs.load_runs_with` takes), with the runs the cache lacks
    reduced at once in a pool of ``workers`` processes (default: one per core) when there are
    at least :data:`POOL_RUNS` of them and :data:`POOL_BYTES` of their files; otherwise each
    is reduced in its turn. Either way each run gives the same reduction, the same cache
    entry, the same error."""
    todo: dict[Path, Where] = {}
    hits: dict[Path, Reduced] = {}
    with gc_paused():
        for path in records.run_folders(root):
            if not (path / records.CONFIG).exists():
                continue
            hit, where = _lookup(path, bootstrap, cache, memo)
            if hit is not None:
                hits[path] = hit
            else:
                todo[path] = where
    workers = workers or os.cpu_count() or 1
    made: dict[Path, Made] = {}
    if workers > 1 and len(todo) >= POOL_RUNS and sum(map(_size, todo)) >= POOL_BYTES:
        methods = multiprocessing.get_all_start_methods()
        # not fork: the caller may have threads (doit's queues); the server imports once
        ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if "forkserver" in methods:
            ctx.set_forkserver_preload([__name__])
        with ProcessPoolExecutor(min(workers, len(todo)), mp_context=ctx) as pool:
            futures = {path: pool.submit(_reduce_in_worker, path, bootstrap) for path in todo}
            made = {path: _outcome(path, fut) for path, fut in futures.items()}

    def load(path: Path) -> Reduced:
        if path in hits:
            return hits[path]
        if path not in todo:  # not listed above: a folder made since
            return load_reduced(path, bootstrap=bootstrap, cache=cache, memo=memo)
        got = made[path] if path in made else _reduce(path, bootstrap)
        if isinstance(got, ArtifactError):
            raise got
        return _kept(path, todo[path], got)

    return load


def _names(path: Path, key: str) -> dict[str, str]:
    return {"run": path.name, "key": key}


def _reduced_entry(cache: Path, path: Path, key: str,
                   bootstrap: Bootstrap) -> tuple[Reduced | None, Path]:
    """The reduction kept for the run ``path`` with content ``key``, if one names both, and
    where it is kept."""
    entry = _entry(cache, hashlib.blake2b(f"{key}\0reduced {bootstrap}".encode(),
                                          digest_size=20).hexdigest())
    hit = _get(entry, _names(path, key))
    return (hit if isinstance(hit, Reduced) else None), entry
