"""Loaded runs kept by content, so that adding one run to many reads and screens one run.

Loading a run (:func:`artifact.analysis.runs.load_run`: parse every JSON line, check every
record, screen spurious and impossible ones, parse the server log) is most of an analysis, and
it depends only on the run's files and the code that reads them. So a loaded run is kept under
:data:`CACHE`, named by a hash of

- every file of :data:`artifact.records.RUN_FILES` (its bytes, or that it is missing),
- the run folder's name (the run's warnings name it) and whether events were kept,
- the source of every module the loading imports (:func:`artifact.imports.closure`): a changed
  parser is a changed key, never a stale run.

A hit is the same :class:`Run` a fresh load gives (a test checks ``summary.json`` byte for
byte), with the folder's current path. Results computed from one run alone (its per-position
acceptance with bootstrap intervals: :func:`derived`) are kept beside it the same way, so that
a build after one new run computes them for that run only.

An unfinished run (``metrics.json`` not complete) is not kept: during a campaign it changes
with every request. An entry that cannot be read is a miss, and a cache that cannot be written
is a slower run, never a wrong one.

The entries are pickles, and loading a pickle runs code: the cache lies in the checkout's own
``.cache/`` (ignored by git and by the image build), written only by this module, as trusted as
the code beside it. ``rm -r .cache/runs`` empties it; nothing else needs it.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar, cast

from artifact import files, imports, paths, records
from artifact.analysis.runs import Run, load_run

CACHE = paths.ROOT / ".cache" / "runs"
_FORMAT = b"runcache 1"
T = TypeVar("T")


@functools.cache
def code_key() -> str:
    """A hash of the source of every module that loading a run, or computing a
    :func:`derived` result, imports."""
    h = hashlib.blake2b(_FORMAT, digest_size=16)
    for p in imports.closure("artifact.analysis.runs", "artifact.analysis.runcache",
                             "artifact.analysis.positions"):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def run_key(path: Path, *, keep_events: bool = False) -> str | None:
    """The cache key of the run folder ``path``; None when a file cannot be read as a file
    (the loader then says why, in its own one line)."""
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{code_key()}\0{path.name}\0{keep_events}\0".encode())
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


def _entry(cache: Path, key: str) -> Path:
    return cache / key[:2] / f"{key}.pickle"


def _get(entry: Path, kind: type[T]) -> T | None:
    try:
        value = pickle.loads(entry.read_bytes())
    except Exception:  # a torn or foreign entry is a miss: it is computed again
        return None
    return value if isinstance(value, kind) else None


def _put(entry: Path, value: object) -> None:
    try:  # atomic: whole or absent, so two builds each write a whole entry
        files.write_bytes(entry, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        return


def load(path: Path, *, keep_events: bool = False, cache: Path | None = CACHE) -> Run:
    """:func:`load_run` of ``path``, from ``cache`` when an entry for its exact files is there
    (``cache=None``: always read)."""
    key = None if cache is None else run_key(path, keep_events=keep_events)
    if cache is None or key is None:
        return load_run(path, keep_events=keep_events)
    entry = _entry(cache, key)
    hit = _get(entry, Run)
    if hit is not None:
        return replace(hit, path=path, key=key)
    run = load_run(path, keep_events=keep_events)
    if (run.metrics or {}).get("complete") is True:
        _put(entry, run)
        return replace(run, key=key)
    return run


def derived(run: Run, name: str, compute: Callable[[], T], cache: Path | None) -> T:
    """``compute()``, a result of ``run`` alone, kept beside the run's entry: ``name`` must say
    everything else it depends on (parameters such as the bootstrap's), and the modules it runs
    must be among :func:`code_key`'s. Computed every time when the run did not come through
    the cache."""
    if cache is None or run.key is None:
        return compute()
    entry = _entry(cache, hashlib.blake2b(f"{run.key}\0{name}".encode(),
                                          digest_size=20).hexdigest())
    hit = _get(entry, tuple)  # kept as (value,): a result may itself be None
    if hit is not None and len(hit) == 1:
        return cast(T, hit[0])
    value = compute()
    _put(entry, (value,))
    return value
