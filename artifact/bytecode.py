"""Python runs the code doit's content checker sees: bytecode older than its source's last
change is removed before any other module of ours is imported (``dodo.py`` imports this module
first; importing it is the purge).

Python trusts a ``__pycache__/*.pyc`` while its source's modification time (whole seconds) and
size are those the ``.pyc`` records. A module edited with as many bytes and its mtime put back
passes that check: doit's checker (:mod:`artifact.filecheck`, by content) reruns the tasks that
depend on it, but the tasks run the old bytecode, and doit then calls their stale outputs up to
date. The change time (``ctime``) cannot be put back: the kernel sets it on every write and
every ``utime``. So a ``.pyc`` whose source changed (``ctime``) at or after the ``.pyc`` was
written is removed, and Python compiles the source again. A ``touch`` or a ``git checkout``
costs one compile; a same-tick tie counts as changed.

This must happen before the modules are imported: ``dodo.py`` imports a dozen of ours (paths,
files, the task definitions) that doit's worker processes inherit, forked, so a purge in the
checker, when a task is found changed, would come too late for them. It covers the package and
the files beside ``dodo.py``; ``dodo.py``'s own bytecode, and this module's, are already running
when it runs (removed, they are right from the next ``doit`` on). A checkout that cannot be
written keeps its bytecode (nothing to purge there that the owner did not compile).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(__file__).resolve().parent


def _stale(pyc: str, source: str) -> bool:
    try:
        return os.stat(source).st_ctime_ns >= os.stat(pyc).st_mtime_ns
    except OSError:  # no source (an orphan .pyc Python ignores), or gone meanwhile
        return False


def _purge_folder(cache: str) -> list[Path]:
    removed: list[Path] = []
    parent = os.path.dirname(cache)
    try:
        names = os.listdir(cache)
    except OSError:
        return removed
    for name in names:
        if not name.endswith(".pyc"):
            continue
        pyc = os.path.join(cache, name)
        source = os.path.join(parent, name.split(".", 1)[0] + ".py")  # mod.cpython-311.pyc
        if _stale(pyc, source):
            try:
                os.unlink(pyc)
            except OSError:
                continue
            removed.append(Path(pyc))
    return removed


def purge_stale(package: Path = PACKAGE, beside: Path | None = ROOT) -> list[Path]:
    """Remove every ``.pyc`` under ``package`` (and in ``beside``'s own ``__pycache__``) whose
    source changed at or after it was written; return those removed."""
    removed: list[Path] = []
    for folder, subfolders, _ in os.walk(package):
        if "__pycache__" in subfolders:
            removed += _purge_folder(os.path.join(folder, "__pycache__"))
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
    if beside is not None:
        removed += _purge_folder(os.path.join(beside, "__pycache__"))
    return removed


PURGED = purge_stale()  # on import: before dodo.py imports any other module of ours
