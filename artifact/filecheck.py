"""doit's up-to-date check of file dependencies, by content: a file whose modification time was
put back after a rewrite is still seen as changed.

doit's own ``md5`` checker trusts an unchanged modification time, which ``touch -d`` or
``os.utime`` restores at will: ``results.jsonl`` rewritten with as many bytes and its old
mtime leaves ``doit`` saying "up to date" over a stale ``summary.json``. This checker trusts a
file's ``stat`` only when its size, modification *and change* times and inode are all those it
saw last; the change time (``ctime``) is set by the kernel on every write and every ``utime``
and cannot be put back. Any difference costs one MD5 of the file, which then decides, so a
fresh clone or a ``touch`` hashes once and then trusts the ``stat`` again.

Within one ``doit``, a file many tasks depend on (a module of ours: most tasks list a hundred)
is hashed once, not once per task (issue 32: 3,400 hashes of a clean build, in doit's own
process, beside its two workers): the MD5 is kept with the file's settled stat
(:func:`artifact.files.settled`) and reused while the stat is that one; a file changed within
the last seconds is hashed every time.

A dependency that changes while a task reading it runs (a run file rewritten during ``doit
core``, after the task read it) must not be saved as seen: doit saves each dependency's state
after its task, and would call the stale output up to date from then on. So the stat of each
task's dependencies is taken when doit picks the task (:func:`started`, told by the project's
reporter, :mod:`artifact.doitreporter`, until :func:`finished`), and a dependency whose stat at
the save is another is saved as :data:`CHANGED_WHILE_RUNNING`, a state that is never up to
date: the task runs again next time, and a line on standard error says so. (Under another
reporter, ``doit -r json``, nothing is told and states are saved as doit saves them.)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from doit.dependency import FileChangedChecker, get_file_md5

from artifact import files
from artifact.log import Log, stderr

Stat = list[int]

# path -> (its settled stat when hashed, the MD5 then): for this process's life
_HASHED: dict[str, tuple[files.FileStat, str]] = {}
# task -> {dependency: its stat when doit picked the task, None if missing}: the tasks running
_RUNNING: dict[str, dict[str, Stat | None]] = {}
# the state saved for a dependency that changed while its task ran: never up to date
CHANGED_WHILE_RUNNING = "changed while its task ran"
say: Log = stderr("doit")


def _stat(st: os.stat_result) -> Stat:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _stat_of(path: str) -> Stat | None:
    try:
        return _stat(os.stat(path))
    except OSError:
        return None


def started(task: str, deps: Iterable[str]) -> None:
    """doit picked ``task`` (before it reads anything): take its dependencies' stat."""
    _RUNNING[task] = {dep: _stat_of(dep) for dep in deps}


def finished(task: str) -> None:
    """``task`` is done (saved, failed or skipped): forget its stat."""
    _RUNNING.pop(task, None)


def _changed_while_running(dep: str, now: Stat) -> list[str]:
    """The running tasks that read ``dep`` and saw it with another stat when they started."""
    return sorted(task for task, deps in _RUNNING.items() if dep in deps and deps[dep] != now)


def _md5(path: str, st: os.stat_result) -> str:
    """The file's MD5; from :data:`_HASHED` when its settled stat is the one hashed there."""
    key = files.settled(st)
    kept = _HASHED.get(path)
    if key is not None and kept is not None and kept[0] == key:
        return kept[1]
    digest: str = get_file_md5(path)
    if key is not None:
        _HASHED[path] = (key, digest)
    return digest


class ContentChecker(FileChangedChecker):  # type: ignore[misc]  # doit is untyped
    """State ``[size, mtime_ns, ctime_ns, inode, md5]``; see the module's docstring."""

    def check_modified(self, file_path: str, file_stat: os.stat_result, state: Any) -> bool:
        if not isinstance(state, list) or len(state) != 5:
            return True  # another checker's state, or changed while its task ran
        if _stat(file_stat) == state[:4]:
            return False
        if file_stat.st_size != state[0]:
            return True
        return bool(_md5(file_path, file_stat) != state[4])

    def get_state(self, dep: str, current_state: Any) -> list[Any] | None:
        st = os.stat(dep)
        now = _stat(st)
        moved = _changed_while_running(dep, now)
        if moved:
            say(f"{dep} changed while {', '.join(moved)} ran: not saved as seen, so "
                f"{'they run' if len(moved) > 1 else 'it runs'} again next time")
            return [CHANGED_WHILE_RUNNING, now]
        if isinstance(current_state, list) and current_state[:4] == now:
            return None  # unchanged: keep what is saved
        return [*now, _md5(dep, st)]
