"""One build at a time in a working tree: an advisory lock held for the life of a ``doit``.

Two ``doit`` in one tree (an editor's build-on-save and a terminal) would write the same
outputs and doit's database at once. :func:`hold` takes an exclusive ``flock`` on
``.doit.lock`` beside the database; a second ``doit`` says which process holds it and waits
for it to finish. The kernel drops the lock when the holder exits, even after ``kill -9``, so a
crashed build never leaves a stale lock behind.

A ``flock`` belongs to the open file, which a forked child shares: doit's worker processes,
forked after the lock is taken, would keep the tree locked after the build itself exited (one
blocked on its queue lingers for ever). So a forked child closes its copy at once
(:func:`_not_in_child`): the lock is the process's that took it, and no one else's.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path

from artifact.log import Log

_held: dict[Path, int] = {}


def _not_in_child() -> None:
    """In a forked child: close the inherited descriptors of the lock (the parent keeps it)."""
    for fd in _held.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _held.clear()


os.register_at_fork(after_in_child=_not_in_child)


def holder(path: Path) -> str:
    """Who holds the lock, as its file records (``pid N``), or ``"another process"``."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        text = ""
    return text or "another process"


def hold(path: Path, log: Log, *, timeout_s: float | None = None) -> bool:
    """Take the lock (waiting while another process holds it); keep it until this process
    exits. Returns False only when ``timeout_s`` passed first. Taking it twice is a no-op."""
    path = path.resolve()
    if path in _held:
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log(f"another build is running in this tree ({holder(path)}); waiting for it to finish")
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.2)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
    _held[path] = fd  # kept open: closing it would release the lock
    return True
