"""Which of our modules a module imports, read from the source (function-local imports too).

The doit tasks take their code dependencies from here: a task depends on the files of every
module its action imports, transitively (:func:`closure`), so editing any of them makes the task
out of date and nothing has to be listed by hand. The layering test reads the same graph.
Imports under ``if __name__ == "__main__":`` are left out: a script's entry point runs at the
edge and is nobody's dependency.

Every ``doit`` builds this graph, so parsing every module each time would cost most of a no-op
build. What a module's source says it imports is kept in a cache file (:data:`CACHE`, ignored by
git), keyed by a hash of the module's bytes: a module is parsed again only when its bytes change,
and what is kept is the raw import statements, resolved against the modules present on each use,
so that adding or removing a module changes what the others resolve to as parsing would. A cache
that cannot be read or written is a slower run, never a wrong graph.

The hash itself is not computed again while a module file's settled ``stat`` is the one the
cache saw (:func:`artifact.files.settled_stat`; issue 32: reading and hashing every module was
3 ms of each no-op ``doit``); a file changed within the last :data:`SETTLE_S` seconds is hashed
every time, as the run cache does.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import tempfile
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
CACHE = PACKAGE.parent / ".cache" / "imports.json"
_FORMAT = 2  # 2: each entry keeps the file's stat
SETTLE_S = 2.0  # a module file younger than this is hashed, its stat not trusted
Stat = list[int]

# One import statement as the source says it: ``import a.b`` is ("a.b", None); ``from a import
# b, c`` is ("a", ("b", "c")). Kept only when it names the package (anything else is not ours).
Raw = tuple[str, tuple[str, ...] | None]


def _scan(package: Path) -> dict[str, Path]:
    out = {}
    for p in sorted(package.rglob("*.py")):
        parts = p.relative_to(package.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__.py``)."""
    return _scan(PACKAGE)


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


# The fields that hold statements (an import is a statement, never inside an expression): the
# bodies of functions, classes, blocks and ``except``/``case`` clauses.
_BODIES = frozenset(("body", "handlers", "orelse", "finalbody", "cases"))


def _statements(stmt: ast.stmt) -> Iterator[ast.AST]:
    """``stmt`` and every statement (and ``except``/``case`` clause) inside it, breadth first
    in the order of :func:`ast.walk`, without walking any expression (issue 32: a third of a
    cold import graph was walking the expressions)."""
    todo = deque([stmt])
    while todo:
        node = todo.popleft()
        yield node
        for name in node._fields:
            if name in _BODIES:
                value = getattr(node, name)
                if isinstance(value, list):
                    todo.extend(value)


def _raw_imports(source: bytes, top: str) -> list[Raw]:
    """Every absolute import statement of ``source`` that names package ``top``, in order."""
    out: list[Raw] = []
    for stmt in ast.parse(source).body:
        if _is_main_guard(stmt):
            continue
        for node in _statements(stmt):
            if isinstance(node, ast.Import):
                out.extend((a.name, None) for a in node.names if a.name.split(".")[0] == top)
            elif (isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                  and node.module.split(".")[0] == top):
                out.append((node.module, tuple(a.name for a in node.names)))
    return out


def _resolve(module: str, raw: list[Raw], known: dict[str, Path]) -> frozenset[str]:
    """The modules of ``known`` that ``raw`` imports (``from a import b``: a.b if a module)."""
    out: set[str] = set()
    for mod, names in raw:
        found = [mod] if names is None else [
            f"{mod}.{n}" if f"{mod}.{n}" in known else mod for n in names]
        out.update(n for n in found if n in known and n != module)
    return frozenset(out)


def _read_cache(cache: Path) -> dict[str, tuple[str, list[Raw], Stat]]:
    """The cache's entries (file relative to the package's parent: hash, raw imports, stat);
    {} if there is none or it is unreadable (it is rebuilt)."""
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("format") != _FORMAT:
            return {}
        return {f: (h, [(m, None if n is None else tuple(n)) for m, n in raw], list(st))
                for f, (h, raw, st) in data["files"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def _write_cache(cache: Path, files: dict[str, tuple[str, list[Raw], Stat]]) -> None:
    """Replace the cache atomically (concurrent builds each write a whole file); a tree that
    cannot be written to keeps no cache."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache.parent, prefix=".imports-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"format": _FORMAT, "files": files}, f, sort_keys=True)
        os.replace(tmp, cache)
    except OSError:
        return


def _stat(path: Path) -> Stat:
    """A module file's size, modification and change times, inode and device; [] (never
    trusted) when it changed within :data:`SETTLE_S` seconds. The rule of
    :func:`artifact.files.settled_stat`, restated: this module imports nothing of ours (the
    layering test reads the graph it builds)."""
    st = os.stat(path)
    if max(st.st_mtime_ns, st.st_ctime_ns) > time.time_ns() - int(SETTLE_S * 1e9):
        return []
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def graph(package: Path = PACKAGE, cache: Path | None = CACHE) -> dict[str, frozenset[str]]:
    """Each module of ``package`` and the modules of it that it imports (see :func:`imports`).

    With ``cache``, a module whose bytes hash as the cache says is not parsed again, and the
    cache is rewritten when anything changed; ``cache=None`` parses every module.
    """
    known = _scan(package)
    top = package.name
    old = _read_cache(cache) if cache is not None else {}
    new: dict[str, tuple[str, list[Raw], Stat]] = {}
    out = {}
    for module, path in known.items():
        rel = path.relative_to(package.parent).as_posix()
        hit = old.get(rel)
        st = _stat(path)
        if hit is not None and st and hit[2] == st:  # unchanged since it was hashed
            digest, raw = hit[0], hit[1]
        else:
            source = path.read_bytes()
            digest = hashlib.blake2b(source, digest_size=16).hexdigest()
            raw = hit[1] if hit is not None and hit[0] == digest else _raw_imports(source, top)
        new[rel] = (digest, raw, st)
        out[module] = _resolve(module, raw, known)
    if cache is not None and new != old:
        _write_cache(cache, new)
    return out


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    return graph()


def imports(module: str) -> frozenset[str]:
    """The modules of ours that ``module`` imports anywhere in its body.

    >>> "artifact.files" in imports("artifact.claims")
    True
    """
    return _graph()[module]


def _with_parents(module: str) -> list[str]:
    """A module and the packages that importing it runs first (``a.b.c``: a, a.b, a.b.c)."""
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


# the modules each root reaches, with the graph they were found in (a test may swap it)
_REACHED: dict[str, tuple[object, frozenset[str]]] = {}


def _reached(root: str) -> frozenset[str]:
    """The modules of ours that importing ``root`` runs, transitively (itself and its parents
    included); once per module and graph: doit asks for the same ones for many tasks."""
    graph_now = _graph()
    kept = _REACHED.get(root)
    if kept is not None and kept[0] is graph_now:
        return kept[1]
    known = modules()
    seen: set[str] = set()
    todo = _with_parents(root)
    while todo:
        m = todo.pop()
        if m in seen or m not in known:
            continue
        seen.add(m)
        todo.extend(p for d in imports(m) for p in _with_parents(d))
    _REACHED[root] = (graph_now, frozenset(seen))
    return frozenset(seen)


def closure(*roots: str) -> list[Path]:
    """The files of ``roots`` and of every module of ours they import, transitively, sorted."""
    known = modules()
    # sorted as paths sort (by their parts), compared in C rather than by Path.__lt__
    return sorted((known[m] for m in frozenset().union(*map(_reached, roots))),
                  key=lambda p: p.parts)
