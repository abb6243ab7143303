"""One measurement at a time on a host: an exclusive lock shared by every checkout.

Everything that measures (a campaign run, ``doit kick``, ``doit reproduce`` and its
calibration, a Slurm job on its node) runs inside :func:`measuring`. It takes an exclusive
``flock`` on one file per host, ``$SPECDEC_HOST_LOCK`` or else
``/tmp/specdec-artifact-measure.lock``: the same path for every checkout, so two checkouts on
one machine exclude each other (on a Slurm node it is that node's ``/tmp``). The kernel
releases the lock when its holder exits, ``kill -9`` included, so a crash leaves no stale lock;
whether the lock is held is only ever decided by ``flock``, never by what the file says.

The holder writes who it is into the file (JSON: ``what``, ``checkout``, ``pid``, ``host``,
``since``) so that a second measurement can say whom it waits for; ``wait=False`` (the command
lines' ``--no-wait``) fails at once with :class:`HostLockBusy`, one line naming the holder.
Nested :func:`measuring` in the process that holds the lock re-enters it (a reproduction's
calibration and runs inside the reproduction's own lock). The descriptor is not inherited by
programs started from the holder (Python opens it close-on-exec), so a ``llama-server`` left
behind by a killed holder does not keep the lock.

If the lock file belongs to another user and cannot be opened for writing (``/tmp`` is
sticky), it is opened read-only (``flock`` works on it) and the holder's details go to the
sibling ``<lock>.holder`` when that is writable.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from artifact import paths
from artifact.errors import HostLockBusy
from artifact.log import Log

__all__ = ["DEFAULT", "ENV", "HostLockBusy", "describe", "holder", "lock_path", "measuring"]

ENV = "SPECDEC_HOST_LOCK"
DEFAULT = Path("/tmp/specdec-artifact-measure.lock")  # one per host, whatever the checkout

# This process's hold: the open descriptor (closing it releases the lock), where the holder's
# details were written (None: nowhere writable), and how deep `measuring` is nested.
_fd: int | None = None
_info_fd: int | None = None
_depth = 0


def lock_path() -> Path:
    """The host-wide lock file: ``$SPECDEC_HOST_LOCK`` if set, else :data:`DEFAULT`."""
    env = os.environ.get(ENV)
    return Path(env) if env else DEFAULT


def _info_path(lock: Path) -> Path:
    return lock.with_name(lock.name + ".holder")


def _read_info(lock: Path) -> dict[str, object] | None:
    """What the lock file (else its sibling) says about its holder; None if nothing usable."""
    for path in (lock, _info_path(lock)):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data:
            return data
    return None


def holder() -> dict[str, object] | None:
    """Who holds the lock now (its recorded details); None when it is free or says nothing.

    A probe (a non-blocking shared ``flock`` taken and dropped at once) decides whether it is
    held, so the details a killed holder left behind are never reported.
    """
    lock = lock_path()
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_info(lock)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def describe(info: dict[str, object] | None) -> str:
    """The holder in words, for a person.

    >>> describe({"what": "run final-ngram-mod", "checkout": "/src/a", "pid": 41,
    ...           "host": socket.gethostname(), "since": "2025-01-02T03:04:05+00:00"})
    'run final-ngram-mod (checkout /src/a, pid 41, since 2025-01-02T03:04:05+00:00)'
    >>> describe(None)
    'another process (it has not said who it is)'
    """
    if not info:
        return "another process (it has not said who it is)"
    where = f"checkout {info.get('checkout', '?')}, pid {info.get('pid', '?')}"
    host = info.get("host")
    if host and host != socket.gethostname():
        where += f" on {host}"
    return f"{info.get('what', '?')} ({where}, since {info.get('since', '?')})"


def _open(lock: Path) -> tuple[int, int | None]:
    """The lock's descriptor, and the descriptor the holder's details go to (or None)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:  # another user's file in sticky /tmp
        fd = os.open(lock, os.O_RDONLY)
        try:
            info = os.open(_info_path(lock), os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            return fd, None
        _share(info)
        return fd, info
    _share(fd)
    return fd, fd


def _share(fd: int) -> None:
    """Let other users of the host open the file too (best effort: only its owner can)."""
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, 0o666)


def _write_info(fd: int | None, what: str) -> None:
    if fd is None:
        return
    info = {"what": what, "checkout": str(paths.ROOT), "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info, sort_keys=True) + "\n").encode(), 0)


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _acquire(what: str, *, wait: bool, say: Log | None, poll_s: float) -> None:
    global _fd, _info_fd
    lock = lock_path()
    fd, info_fd = _open(lock)
    try:
        if not _try(fd):
            seen = _read_info(lock)
            if not wait:
                raise HostLockBusy(f"another measurement holds this host's lock: "
                                   f"{describe(seen)}; wait for it or run without --no-wait")
            if say is not None:
                say(f"waiting for the measurement lock on this host: held by {describe(seen)}")
            t0 = time.monotonic()
            while not _try(fd):
                time.sleep(poll_s)
                now = _read_info(lock)
                if now is not None and now != seen:
                    seen = now
                    if say is not None:
                        say(f"still waiting for the measurement lock: now held by "
                            f"{describe(seen)}")
            if say is not None:
                say(f"measurement lock taken after {time.monotonic() - t0:.0f} s")
    except BaseException:
        if info_fd is not None and info_fd != fd:
            os.close(info_fd)
        os.close(fd)
        raise
    _write_info(info_fd, what)
    _fd, _info_fd = fd, info_fd


def _release() -> None:
    global _fd, _info_fd
    fd, info_fd = _fd, _info_fd
    _fd = _info_fd = None
    if info_fd is not None:
        with contextlib.suppress(OSError):
            os.ftruncate(info_fd, 0)
        if info_fd != fd:
            os.close(info_fd)
    if fd is not None:
        os.close(fd)  # releases the flock


@contextlib.contextmanager
def measuring(what: str, *, wait: bool = True, say: Log | None = None,
              poll_s: float = 2.0) -> Iterator[None]:
    """Hold this host's measurement lock for the block; ``what`` says who holds it.

    While another process holds it: with ``wait`` say once whom it waits for (again only if
    the holder changes) and poll every ``poll_s`` seconds; without, raise
    :class:`HostLockBusy`. Nested in a block that already holds it, it just goes on.
    """
    global _depth
    if _depth == 0:
        _acquire(what, wait=wait, say=say, poll_s=poll_s)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            _release()
