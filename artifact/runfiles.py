"""The run-directory layout, light enough for ``doit`` to load on every call: the files of a run
(:data:`RUN_FILES`), the drafters a run may name, and the listing of run folders and their files
(:func:`run_folders`, :func:`raw_run_files`) with the check that a run's data lie in the
repository (:func:`in_repository`). Standard library, :mod:`artifact.paths` and
:mod:`artifact.errors` only: the records themselves, and msgspec, are :mod:`artifact.records`'s
(which re-exports all of this), imported where runs are read (issue 32: a no-op ``doit`` no
longer loads them).
"""

from __future__ import annotations

import os
from pathlib import Path

from artifact import paths
from artifact.errors import OutsideError

# What a run's ``spec.drafter`` may be: llama-server's ``--spec-type`` values, "none" first.
DRAFTERS = (
    "none",
    "draft-simple",
    "draft-eagle3",
    "draft-mtp",
    "draft-dflash",
    "draft-dspark",
    "ngram-simple",
    "ngram-map-k",
    "ngram-map-k4v",
    "ngram-mod",
    "ngram-cache",
)
CONFIG = "config.json"
RESULTS = "results.jsonl"
ERRORS = "errors.jsonl"
SERVER_LOG = "server.log"
METRICS = "metrics.json"
VRAM = "vram.json"
MEMORY = "memory.json"  # the server's peak resident memory (artifact/campaign/memory.py)
EVENTS = "events.jsonl"
RUN_FILES = (CONFIG, RESULTS, ERRORS, SERVER_LOG, METRICS, VRAM, MEMORY, EVENTS)
SESSIONS = "sessions.jsonl"  # workload runs: the plan
WORKLOAD = "workload.json"  # workload runs: what planning found
WORKLOAD_RUN_FILES = (*RUN_FILES, SESSIONS, WORKLOAD)  # a workload run's files


def _names(folder: Path | str, *, dirs: bool) -> list[str]:
    """The names of the folders (``dirs``) or files in ``folder``, links followed, sorted; none
    when it cannot be listed. One ``scandir``: the kind of an entry comes with it."""
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if (e.is_dir() if dirs else e.is_file()))
    except OSError:
        return []


def _listed(root: Path) -> list[Path]:
    """The folders under ``root`` that may be runs, sorted: folders starting with ``_``
    (scratch, superseded) or ``.`` are not runs of the study and are left out."""
    return [root / n for n in _names(root, dirs=True) if not n.startswith(("_", "."))]


def raw_run_paths(root: Path, names: tuple[str, ...] = RUN_FILES) -> list[str]:
    """:func:`raw_run_files` as strings, what doit's ``file_dep`` takes (no ``Path`` made for
    each of the thousands of files a no-op ``doit`` lists)."""
    out: list[str] = []
    for run in _names(root, dirs=True):
        if not run.startswith(("_", ".")):
            folder = os.path.join(root, run)
            out += [os.path.join(folder, n) for n in _names(folder, dirs=False) if n in names]
    return out


def raw_run_files(root: Path, names: tuple[str, ...] = RUN_FILES) -> list[Path]:
    """The files of the runs under ``root`` (of ``names``), sorted: what the analysis reads and
    ``MANIFEST.sha256`` hashes (as doit's dependencies).

    A listing made when doit loads its tasks, so it never refuses: what reads the runs does
    (:func:`run_folders`, and each reader through :func:`in_repository`).
    """
    # the runs in order, each one's files in order: the order of the paths sorted
    return [Path(p) for p in raw_run_paths(root, names)]


def in_repository(path: Path, *, repo: Path | None = None) -> Path:
    """``path``, unless it lies in the repository by name and elsewhere in fact.

    A symbolic link on its way (the runs folder, a run folder, one of its files) that leads out
    of the repository (``repo``, default :data:`artifact.paths.ROOT`) would have the analysis
    read data from outside the tree: that is :class:`OutsideError`, one line naming the path
    and where it points. Links that stay inside the repository are allowed, and a path outside
    it by name (a reproduction elsewhere, a test's folder) is not checked.

    >>> import tempfile
    >>> repo = Path(tempfile.mkdtemp())
    >>> (repo / "runs").mkdir()
    >>> (repo / "runs" / "here").symlink_to(repo / "runs")
    >>> (repo / "runs" / "away").symlink_to(repo.parent)
    >>> in_repository(repo / "runs" / "here", repo=repo) == repo / "runs" / "here"
    True
    >>> in_repository(repo / "runs" / "away", repo=repo)
    Traceback (most recent call last):
    ...
    artifact.errors.OutsideError: runs/away: a symbolic link out of the repository, to ...
    """
    base = Path(os.path.abspath(paths.ROOT if repo is None else repo))
    where = Path(os.path.abspath(path))
    if not where.is_relative_to(base):
        return path
    real = Path(os.path.realpath(where))  # never raises: a link loop stays unresolved
    if real.is_relative_to(os.path.realpath(base)):
        return path
    raise OutsideError(f"{where.relative_to(base).as_posix()}: a symbolic link out of the "
                       f"repository, to {real}; the analysis reads run data from the "
                       "repository only (copy the run into it)")


def run_folders(root: Path, *, repo: Path | None = None) -> list[Path]:
    """The run folders under ``root``, sorted: its folders but those starting with ``_``
    (scratch, superseded) or ``.``. Every analysis lists its runs here.

    Each is checked by :func:`in_repository`: the runs folder itself, a run folder that is a
    symbolic link, and every symbolic link among a run folder's files (:class:`OutsideError`
    for one that leads out of the repository). A runs folder outside the repository by name
    is listed unchecked.
    """
    runs = _listed(root)
    base = Path(os.path.abspath(paths.ROOT if repo is None else repo))
    if not runs or not Path(os.path.abspath(root)).is_relative_to(base):
        return runs
    in_repository(root, repo=base)
    for run in runs:
        if run.is_symlink():
            in_repository(run, repo=base)
        try:
            with os.scandir(run) as entries:
                links = [Path(e.path) for e in entries if e.is_symlink()]
        except OSError:  # unreadable: the run's readers say so
            continue
        for link in links:
            in_repository(link, repo=base)
    return runs
