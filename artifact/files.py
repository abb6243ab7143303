"""The artifact's own files, written and read one way.

- :func:`write_text` / :func:`write_bytes` / :func:`write_json` / :func:`output`: atomic (a
  temporary file in the same folder, flushed, then renamed over the target), so no reader ever
  sees half a file.
- :func:`dumps_json`: canonical JSON: sorted keys, two-space indent, trailing newline.
- :func:`round_sig` / :func:`to_plain`: the fixed rounding of every computed file (6 significant
  digits; a non-finite float becomes ``null`` and its path is reported).
- :func:`load_toml` / :func:`read_json`: a TOML file or a JSON object file, or one line naming
  the file and what is wrong with it.
- :func:`is_safe_name` / :func:`inside`: names that become path components (run ids, prompt-set
  names) and paths built from input stay inside their root.
- :func:`folder`: a folder given on a command line (``--into``, ``--runs-dir``) is one, or is
  one line saying it is a file.
- :func:`settled_stat`: what a cache keyed by a file's ``stat`` may trust instead of reading it.

Imports only the error tree (:mod:`artifact.errors`): every layer may use it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from artifact.errors import ArtifactError

if TYPE_CHECKING:
    import tarfile  # imported where a tar is read: doit loads this module on every call

SIG_DIGITS = 6  # of every float in a computed JSON file: equal inputs give equal bytes


SETTLE_S = 2.0  # a file changed more recently than this: its stat is not trusted
FileStat = tuple[int, int, int, int, int]


def settled_stat(path: Path | str, *, settle_s: float = SETTLE_S) -> FileStat | None:
    """A file's size, modification and change times, inode and device: equal stats mean the
    same bytes, for a cache that would rather not read them (the change time is set by the
    kernel on every write and cannot be put back). None when the file changed within the last
    ``settle_s`` seconds (a rewrite in the same clock tick could leave its times equal): such
    a file is read every time. ``OSError`` (a missing file too) is the caller's.
    """
    return settled(os.stat(path), settle_s=settle_s)


def settled(st: os.stat_result, *, settle_s: float = SETTLE_S) -> FileStat | None:
    """:func:`settled_stat` of a stat already taken."""
    if max(st.st_mtime_ns, st.st_ctime_ns) > time.time_ns() - int(settle_s * 1e9):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; creates the folder; returns ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; creates the folder; returns ``path``."""
    with output(path) as tmp, tmp.open("wb") as f:
        f.write(data)
    return path


@contextlib.contextmanager
def output(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` for a tool to write (pandoc ``-o``, a PDF engine).

    When the block ends without an error the file is fsynced and renamed over ``path``, so no
    reader ever sees half of it; on an error it is removed and ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with tmp.open("rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def dumps_json(obj: Any, *, ensure_ascii: bool = True, allow_nan: bool = False) -> str:
    """Canonical JSON text: sorted keys, two-space indent, trailing newline.

    >>> dumps_json({"b": 1, "a": [0.5]})
    '{\\n  "a": [\\n    0.5\\n  ],\\n  "b": 1\\n}\\n'
    """
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=ensure_ascii,
                      allow_nan=allow_nan) + "\n"


def write_json(path: Path, obj: Any, *, ensure_ascii: bool = True,
               allow_nan: bool = False) -> Path:
    """Write ``obj`` as canonical JSON (:func:`dumps_json`), atomically."""
    return write_text(path, dumps_json(obj, ensure_ascii=ensure_ascii, allow_nan=allow_nan))


def round_sig(x: float, digits: int = SIG_DIGITS) -> float:
    """Round to ``digits`` significant digits (``-0.0`` becomes ``0.0``).

    >>> round_sig(123.456789), round_sig(0.000123456789), round_sig(-0.0)
    (123.457, 0.000123457, 0.0)
    """
    r = float(f"{x:.{digits}g}")
    return 0.0 if r == 0.0 else r


_SLOW = object()  # what the fast pass of to_plain returns when only the full pass can go on
_SCALARS = frozenset({int, str, bool, type(None)})


def _plain_fast(obj: Any, nan: bool) -> Any:
    """:func:`to_plain` for plain dicts, lists, tuples and scalars of exactly the built-in types,
    building no field path; :data:`_SLOW` for anything else, and for a non-finite float when
    ``nan`` (its path is wanted)."""
    t = type(obj)
    if t is float:
        if math.isfinite(obj):
            return round_sig(obj)
        return _SLOW if nan else None
    if t is dict:
        out = {}
        for k, v in obj.items():
            p = _plain_fast(v, nan)
            if p is _SLOW:
                return _SLOW
            out[str(k)] = p
        return out
    if t is list or t is tuple:
        items = []
        for v in obj:
            p = _plain_fast(v, nan)
            if p is _SLOW:
                return _SLOW
            items.append(p)
        return items
    return obj if t in _SCALARS else _SLOW


def to_plain(obj: Any, path: str = "", nan_paths: list[str] | None = None) -> Any:
    """Dataclasses, mappings and sequences to JSON data; floats rounded, non-finite to ``None``.

    The dotted path of every non-finite float is appended to ``nan_paths`` when given.

    >>> bad: list[str] = []
    >>> to_plain({"a": [1.23456789, float("nan")], "b": None}, "x", bad), bad
    ({'a': [1.23457, None], 'b': None}, ['x.a.1'])
    """
    fast = _plain_fast(obj, nan_paths is not None)  # the common case, without the paths
    return _to_plain(obj, path, nan_paths) if fast is _SLOW else fast


def _to_plain(obj: Any, path: str, nan_paths: list[str] | None) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        obj = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): _to_plain(v, f"{path}.{k}", nan_paths) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_to_plain(v, f"{path}.{i}", nan_paths) for i, v in enumerate(obj)]
    if isinstance(obj, bool) or obj is None or isinstance(obj, int | str):
        return obj
    if isinstance(obj, float):
        if not math.isfinite(obj):
            if nan_paths is not None:
                nan_paths.append(path)
            return None
        kept = getattr(obj, "_prov", None)  # a number that names its sources keeps them
        if kept is None:
            return round_sig(obj)
        rounded: float = type(obj)(round_sig(obj), kept)  # type: ignore[call-arg]
        return rounded
    raise TypeError(f"{path}: cannot write {type(obj).__name__} to JSON")


def load_toml(
    path: Path, error: type[ArtifactError], *, where: str | None = None
) -> dict[str, Any]:
    """Parse a TOML file; any problem raises ``error`` (the caller's family of the error tree)
    with one line naming the file.

    ``where`` is how the message names the file (default: the path as given).
    """
    name = where or str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as err:
        raise error(f"{name}: file not found") from err
    except IsADirectoryError as err:
        raise error(f"{name}: is a folder, expected a TOML file") from err
    except OSError as err:
        raise error(f"{name}: cannot read ({err.strerror})") from err
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(f"{name}: not UTF-8 text (byte {err.start})") from err
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise error(f"{name}: not valid TOML ({err})") from err


def extract_tar(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract ``tar`` into ``dest``, refusing members that would land outside it.

    Python 3.11.4+ does this with ``filter="data"``; Debian 12's Python 3.11.2 (the Docker
    image's base) predates it, so the same checks are made here.
    """
    import tarfile

    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = dest.resolve()
    for m in tar.getmembers():
        target = (dest / m.name).resolve()
        if not (m.isfile() or m.isdir()) or (target != root and root not in target.parents):
            raise ValueError(f"{tar.name!r}: {m.name!r}: not a plain file inside the archive")
    tar.extractall(dest)  # members checked above


def read_json(path: Path, error: type[ArtifactError], *, where: str | None = None) -> Any:
    """Parse a JSON file whose top level is an object; any problem raises ``error`` with one line
    naming the file (``where``, default: the path as given)."""
    name = where or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        raise error(f"{name}: file not found") from err
    except OSError as err:
        raise error(f"{name}: cannot read ({err.strerror})") from err
    except UnicodeDecodeError as err:
        raise error(f"{name}: not UTF-8 text (byte {err.start})") from err
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise error(f"{name}: not JSON (line {err.lineno}: {err.msg})") from err
    if not isinstance(obj, dict):
        raise error(f"{name}: expected a JSON object, got {type(obj).__name__}")
    return _READ_THROUGH[-1](obj, path) if _READ_THROUGH else obj


# What read_json returns passes through the innermost of these while :func:`reading_through`
# holds it: the HTML tables tag each number with its field (artifact/render/provenance.py).
_READ_THROUGH: list[Callable[[Any, Path], Any]] = []


@contextlib.contextmanager
def reading_through(f: Callable[[Any, Path], Any]) -> Iterator[None]:
    """Within this block, :func:`read_json` returns ``f(parsed, path)``."""
    _READ_THROUGH.append(f)
    try:
        yield
    finally:
        _READ_THROUGH.pop()


# A name that becomes one path component: starts with a letter or digit (so never ".", ".." or
# a "_"-prefixed folder that the analysis skips), then letters, digits, ".", "_", "-".
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def is_safe_name(name: object) -> bool:
    """Whether ``name`` may be used as one path component.

    >>> [is_safe_name(n) for n in ("final-none", "k.8", "..", ".", "_kick", "a/b", "", "x\\0")]
    [True, True, False, False, False, False, False, False]
    """
    return isinstance(name, str) and SAFE_NAME.fullmatch(name) is not None


def folder(path: Path, *, what: str, error: type[ArtifactError]) -> Path:
    """``path``, a folder to use or to make: ``error``, one line, when it (or the nearest of
    its parents that exists) is a file or anything else that is not a folder.

    >>> import tempfile
    >>> here = Path(tempfile.mkdtemp())
    >>> _ = (here / "README.md").write_text("x")
    >>> folder(here / "new" / "runs", what="--into", error=ArtifactError) == here / "new" / "runs"
    True
    >>> folder(here / "README.md", what="--into", error=ArtifactError)
    Traceback (most recent call last):
    ...
    artifact.errors.ArtifactError: --into .../README.md: is a file, expected a folder
    >>> folder(here / "README.md" / "runs", what="--into", error=ArtifactError)
    Traceback (most recent call last):
    ...
    artifact.errors.ArtifactError: --into .../README.md/runs: .../README.md is a file, ...
    """
    for p in (path, *path.parents):
        if p.is_dir():
            return path
        if p.exists() or p.is_symlink():
            kind = ("a file" if p.is_file() else "a broken symbolic link" if not p.exists()
                    else "a special file")
            at = "" if p == path else f"{p} "
            raise error(f"{what} {path}: {at}is {kind}, expected a folder")
    return path


def inside(root: Path, *parts: str, error: type[Exception], what: str = "path") -> Path:
    """``root / parts``, checked to stay inside ``root`` (symbolic links resolved).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> inside(root, "run-1", what="run id", error=ValueError) == root / "run-1"
    True
    >>> inside(root, "..", what="run id", error=ValueError)
    Traceback (most recent call last):
    ...
    ValueError: run id '..': leaves its folder ...
    """
    path = root.joinpath(*parts)
    base = root.resolve()
    resolved = path.resolve()
    if resolved == base or base not in resolved.parents:
        raise error(f"{what} {'/'.join(parts)!r}: leaves its folder {root} "
                    "(expected a name inside it)")
    return path
