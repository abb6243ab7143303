"""The package's layering, read from its imports (function-local ones included)."""

from __future__ import annotations

import ast
from pathlib import Path

import artifact

PACKAGE = Path(artifact.__file__).parent


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


def imports(module: str) -> set[str]:
    """Modules of ours that ``module`` imports anywhere, except under ``__name__ == "__main__"``
    (a script entry point, run at the edge)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
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
                names = [n if n in MODULES else node.module for n in names]
            out.update(n for n in names if n in MODULES and n != module)
    return out


def test_no_import_cycle() -> None:
    graph = {m: imports(m) for m in MODULES}
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            assert state.get(d) != 1, "import cycle: " + " -> ".join([*trail, m, d])
            if d not in state:
                visit(d, [*trail, m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


def test_the_ground_floor_imports_nothing_of_ours() -> None:
    for m in ("artifact.files", "artifact.paths"):
        assert imports(m) == set(), m


def test_claims_is_a_ledger_below_render() -> None:
    assert imports("artifact.claims") <= {"artifact", "artifact.files", "artifact.paths"}


def test_analysis_and_render_meet_only_in_the_files() -> None:
    for m in MODULES:
        if m.startswith("artifact.analysis"):
            assert not any(d.startswith("artifact.render") for d in imports(m)), m
        if m.startswith("artifact.render"):
            assert not any(d.startswith("artifact.analysis") for d in imports(m)), m
