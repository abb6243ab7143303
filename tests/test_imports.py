"""The import graph behind the tasks' code dependencies: cached, it is the graph parsing gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifact import imports


def _package(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "pkg"
    for name, text in files.items():
        p = pkg / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return pkg


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("parsed a module the cache holds")

    monkeypatch.setattr(imports, "_raw_imports", refuse)


def test_cached_graph_is_the_parsed_graph_of_the_package(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "imports.json"
    parsed = imports.graph(cache=None)
    assert imports.imports("artifact.claims") == parsed["artifact.claims"]
    assert imports.graph(cache=cache) == parsed  # a cold cache: parses, writes
    _no_parsing(monkeypatch)
    assert imports.graph(cache=cache) == parsed  # a warm one: no module parsed again
    assert parsed["artifact.render.tasks"] >= {"artifact.imports", "artifact.paths"}


def test_the_tasks_code_dependencies_are_the_same_cached_or_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    roots = ("artifact.analysis.summary", "artifact.analysis.workload",
             "artifact.analysis.accsplit", "artifact.analysis.costmodel",
             "artifact.render.figures", "artifact.render.tables", "artifact.render.manuscript")
    deps = []
    for cache in (None, tmp_path / "imports.json", tmp_path / "imports.json"):  # cold, warm
        g = imports.graph(cache=cache)
        monkeypatch.setattr(imports, "_graph", lambda g=g: g)
        deps.append([imports.closure(r) for r in roots])
    assert deps[0] == deps[1] == deps[2]
    assert imports.PACKAGE / "files.py" in deps[0][0]  # the summary reads and writes files


def test_an_edited_module_is_parsed_again(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {"__init__.py": "", "a.py": "from pkg import b\n",
                              "b.py": "", "c.py": ""})
    cache = tmp_path / "imports.json"
    assert imports.graph(pkg, cache)["pkg.a"] == {"pkg.b"}
    (pkg / "a.py").write_text("from pkg import c\n", encoding="utf-8")  # same size, same tick
    assert imports.graph(pkg, cache)["pkg.a"] == {"pkg.c"}
    assert imports.graph(pkg, cache) == imports.graph(pkg, None)


def test_an_unchanged_stat_is_trusted_and_a_changed_one_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settled files whose stat the cache saw are not read again; a rewrite whose modification
    time is put back still changes the change time: hashed again, parsed again."""
    import os

    pkg = _package(tmp_path, {"__init__.py": "", "a.py": "from pkg import b\n",
                              "b.py": "", "c.py": ""})
    cache = tmp_path / "imports.json"
    monkeypatch.setattr(imports, "SETTLE_S", 0.0)  # every file counts as settled
    assert imports.graph(pkg, cache)["pkg.a"] == {"pkg.b"}

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("hashed a module whose stat the cache holds")

    with monkeypatch.context() as m:
        m.setattr(imports.hashlib, "blake2b", refuse)
        assert imports.graph(pkg, cache)["pkg.a"] == {"pkg.b"}
    st = (pkg / "a.py").stat()
    (pkg / "a.py").write_text("from pkg import c\n", encoding="utf-8")  # same size
    os.utime(pkg / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))  # the old time put back
    assert imports.graph(pkg, cache)["pkg.a"] == {"pkg.c"}


def test_a_new_module_changes_what_an_unchanged_one_resolves_to(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {"__init__.py": "x = 1\n", "a.py": "from pkg import x, sub\n"})
    cache = tmp_path / "imports.json"
    assert imports.graph(pkg, cache)["pkg.a"] == {"pkg"}
    (pkg / "sub.py").write_text("", encoding="utf-8")
    assert imports.graph(pkg, cache)["pkg.a"] == {"pkg", "pkg.sub"}
    (pkg / "sub.py").unlink()
    assert imports.graph(pkg, cache)["pkg.a"] == {"pkg"}


def test_main_guard_and_other_packages_are_left_out(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {
        "__init__.py": "", "b.py": "", "c.py": "",
        "a.py": "import json\nimport pkg.b\ndef f():\n    from pkg import c\n"
                "if __name__ == '__main__':\n    import pkg.c as d\n"})
    assert imports.graph(pkg, None)["pkg.a"] == {"pkg.b", "pkg.c"}
    (pkg / "a.py").write_text("if __name__ == '__main__':\n    import pkg.b\n", encoding="utf-8")
    assert imports.graph(pkg, None)["pkg.a"] == frozenset()


def test_an_unreadable_or_foreign_cache_is_rebuilt(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {"__init__.py": "", "a.py": "import pkg.b\n", "b.py": ""})
    cache = tmp_path / "imports.json"
    for junk in ("{not json", '{"format": 999, "files": {}}', '{"format": 1, "files": 3}',
                 '{"format": 1, "files": {"pkg/a.py": [1]}}', "[]"):
        cache.write_text(junk, encoding="utf-8")
        assert imports.graph(pkg, cache)["pkg.a"] == {"pkg.b"}, junk
    (tmp_path / "a-file").write_text("", encoding="utf-8")  # the cache cannot be written there
    assert imports.graph(pkg, tmp_path / "a-file" / "imports.json")["pkg.a"] == {"pkg.b"}


_NESTED = '''
import pkg.a
class C:
    import pkg.b
    def m(self):
        with open("x") as f:
            from pkg import c
        try:
            import pkg.d
        except ImportError:
            from pkg.e import f
        else:
            import pkg.g
        finally:
            import pkg.h
        match f:
            case 1:
                import pkg.i
            case _:
                for _ in ():
                    import pkg.j
                else:
                    while False:
                        import pkg.k
        lambda: (import_ := 1)
async def g():
    async with x:
        import pkg.l
    async for _ in y:
        from pkg import m
if TYPE_CHECKING:
    import pkg.n
'''


def test_only_statements_are_walked_and_imports_keep_their_order() -> None:
    """Imports found walking the statements alone are those ast.walk finds, in its order: on
    every kind of block, and on every module of the project (issue 32: the faster walk)."""
    import ast

    def walked(source: bytes, top: str) -> list[imports.Raw]:
        out: list[imports.Raw] = []
        for stmt in ast.parse(source).body:
            if imports._is_main_guard(stmt):
                continue
            for node in ast.walk(stmt):
                if isinstance(node, ast.Import):
                    out.extend((a.name, None) for a in node.names if a.name.split(".")[0] == top)
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                        and node.module.split(".")[0] == top:
                    out.append((node.module, tuple(a.name for a in node.names)))
        return out

    nested = _NESTED.encode()
    assert len(imports._raw_imports(nested, "pkg")) == 13  # the 13 import statements
    assert imports._raw_imports(nested, "pkg") == walked(nested, "pkg")
    root = Path(imports.__file__).resolve().parents[1]
    for path in [*(root / "artifact").rglob("*.py"), *(root / "tests").rglob("*.py")]:
        source = path.read_bytes()
        for top in ("artifact", "tests"):
            assert imports._raw_imports(source, top) == walked(source, top), path
