"""Stale bytecode is removed before doit imports our modules (artifact/bytecode.py): a module
edited with as many bytes and its mtime put back runs as edited, not as Python's cache has it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from artifact import bytecode, paths


def _value(root: Path) -> str:
    """``pkg.mod.X`` as a fresh interpreter imports it, writing bytecode as Python does."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run([sys.executable, "-c", "import pkg.mod; print(pkg.mod.X)"], cwd=root,
                          env={**env, "PYTHONPATH": str(root)}, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_a_same_size_edit_with_its_mtime_put_back_runs_as_edited(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    mod = pkg / "mod.py"
    mod.write_text("X = 1\n", encoding="utf-8")
    assert _value(tmp_path) == "1"  # compiled: __pycache__/mod.*.pyc
    st = mod.stat()
    mod.write_text("X = 2\n", encoding="utf-8")  # as many bytes
    os.utime(mod, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old mtime
    assert _value(tmp_path) == "1"  # what doit's tasks ran: the old bytecode
    removed = bytecode.purge_stale(pkg, beside=None)
    assert [p.name.split(".")[0] for p in removed] == ["mod"]
    assert _value(tmp_path) == "2"
    assert bytecode.purge_stale(pkg, beside=None) == []  # compiled again after the edit: kept


def test_dodo_imports_the_purge_before_any_other_module_of_ours() -> None:
    tree = ast.parse((paths.ROOT / "dodo.py").read_text(encoding="utf-8"))
    ours = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
            and any(name.startswith("artifact")
                    for name in ([a.name for a in n.names] if isinstance(n, ast.Import)
                                 else [n.module or ""]))]
    assert ours and isinstance(ours[0], ast.Import)
    assert [a.name for a in ours[0].names] == ["artifact.bytecode"]
