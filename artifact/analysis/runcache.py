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
byte), with the folder's current path. An unfinished run (``metrics.json`` not complete) is not
kept: during a campaign it changes with every request. An entry that cannot be read is a miss,
and a cache that cannot be written is a slower run, never a wrong one.

The entries are pickles, and loading a pickle runs code: the cache lies in the checkout's own
``.cache/`` (ignored by git and by the image build), written only by this module, as trusted as
the code beside it. ``rm -r .cache/runs`` empties it; nothing else needs it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
from dataclasses import replace
from pathlib import Path

from artifact import imports, paths, records
from artifact.analysis.runs import Run, load_run

CACHE = paths.ROOT / ".cache" / "runs"
_FORMAT = b"runcache 1"


@functools.cache
def code_key() -> str:
    """A hash of the source of every module that loading a run imports."""
    h = hashlib.blake2b(_FORMAT, digest_size=16)
    for p in imports.closure("artifact.analysis.runs", "artifact.analysis.runcache"):
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


def _get(entry: Path) -> Run | None:
    try:
        run = pickle.loads(entry.read_bytes())
    except Exception:  # a torn or foreign entry is a miss: the run is read again
        return None
    return run if isinstance(run, Run) else None


def _put(entry: Path, run: Run) -> None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".run-", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(run, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)  # whole or absent: two builds each write a whole entry
    except OSError:
        return


def load(path: Path, *, keep_events: bool = False, cache: Path | None = CACHE) -> Run:
    """:func:`load_run` of ``path``, from ``cache`` when an entry for its exact files is there
    (``cache=None``: always read)."""
    key = None if cache is None else run_key(path, keep_events=keep_events)
    if cache is None or key is None:
        return load_run(path, keep_events=keep_events)
    entry = cache / key[:2] / f"{key}.pickle"
    hit = _get(entry)
    if hit is not None:
        return hit if hit.path == path else replace(hit, path=path)
    run = load_run(path, keep_events=keep_events)
    if (run.metrics or {}).get("complete") is True:
        _put(entry, run)
    return run
