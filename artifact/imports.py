"""Which of our modules a module imports, read from the source (function-local imports too).

The doit tasks take their code dependencies from here: a task depends on the files of every
module its action imports, transitively (:func:`closure`), so editing any of them makes the task
out of date and nothing has to be listed by hand. The layering test reads the same graph.
Imports under ``if __name__ == "__main__":`` are left out: a script's entry point runs at the
edge and is nobody's dependency.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__.py``)."""
    out = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


@functools.cache
def imports(module: str) -> frozenset[str]:
    """The modules of ours that ``module`` imports anywhere in its body.

    >>> "artifact.files" in imports("artifact.claims")
    True
    """
    known = modules()
    tree = ast.parse(known[module].read_text(encoding="utf-8"))
    out: set[str] = set()
    for stmt in tree.body:
        if _is_main_guard(stmt):
            continue
        for node in ast.walk(stmt):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{a.name}" for a in node.names]
                names = [n if n in known else node.module for n in names]
            out.update(n for n in names if n in known and n != module)
    return frozenset(out)


def _with_parents(module: str) -> list[str]:
    """A module and the packages that importing it runs first (``a.b.c``: a, a.b, a.b.c)."""
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def closure(*roots: str) -> list[Path]:
    """The files of ``roots`` and of every module of ours they import, transitively, sorted."""
    known = modules()
    seen: set[str] = set()
    todo = [p for r in roots for p in _with_parents(r)]
    while todo:
        m = todo.pop()
        if m in seen or m not in known:
            continue
        seen.add(m)
        todo.extend(p for d in imports(m) for p in _with_parents(d))
    return sorted(known[m] for m in seen)
