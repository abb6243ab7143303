"""The task graph, run for real by doit in a copy of the repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from artifact import paths

COPY = ("artifact", "templates", "experiments/campaigns", "experiments/runs",
        "experiments/runs-cost", "experiments/runs-realism", "experiments/sessions")
FILES = ("dodo.py", "pyproject.toml", "experiments/claims.toml", "experiments/prompt_sets.toml",
         "experiments/session_sets.toml", "experiments/core-predictions.json")


def _doit(root: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-m", "doit", *args], cwd=root, env=env,
                         capture_output=True, text=True, check=True)
    return out.stdout


def _status(root: Path) -> dict[str, str]:
    lines = _doit(root, "list", "--all", "--status", "--quiet").splitlines()
    return {line[2:].strip(): line[0] for line in lines if line[:2] in ("R ", "U ")}


def test_editing_a_module_makes_exactly_its_tasks_out_of_date(tmp_path: Path) -> None:
    for d in COPY:
        shutil.copytree(paths.ROOT / d, tmp_path / d,
                        ignore=shutil.ignore_patterns("__pycache__", ".*"))
    for f in FILES:
        shutil.copy2(paths.ROOT / f, tmp_path / f)
    # the core study: what its analysis reads (server logs left out: 40 MB it does not read)
    shutil.copytree(paths.CORE_RUNS, tmp_path / "experiments/runs-core",
                    ignore=shutil.ignore_patterns("server.log", "events.jsonl"))
    _doit(tmp_path, "analysis", "tables")
    before = _status(tmp_path)
    assert before["analysis"] == "U" and before["tables:speedup"] == "U"

    with (tmp_path / "artifact" / "records.py").open("a", encoding="utf-8") as f:
        f.write("# edited\n")  # the analysis parses results with it; no renderer imports it
    after = _status(tmp_path)
    assert after["analysis"] == "R"
    assert all(after[f"tables:{n}"] == "U" for n in ("speedup", "hardware"))

    _doit(tmp_path, "analysis")
    with (tmp_path / "artifact" / "render" / "text.py").open("a", encoding="utf-8") as f:
        f.write("# edited\n")  # every table escapes through it; the analysis never does
    after = _status(tmp_path)
    assert after["analysis"] == "U"
    assert all(after[f"tables:{n}"] == "R" for n in ("speedup", "hardware"))


def test_a_rewrite_with_its_mtime_put_back_is_out_of_date(tmp_path: Path) -> None:
    """A raw run's results rewritten with as many bytes and its modification time restored:
    doit's own md5 checker trusts the mtime; the project's checks the content."""
    for d in ("artifact", "templates", "experiments/campaigns", "experiments/runs"):
        shutil.copytree(paths.ROOT / d, tmp_path / d,
                        ignore=shutil.ignore_patterns("__pycache__", ".*"))
    for f in FILES:
        shutil.copy2(paths.ROOT / f, tmp_path / f)
    _doit(tmp_path, "analysis")
    assert _status(tmp_path)["analysis"] == "U"
    results = sorted((tmp_path / "experiments" / "runs").glob("final-*/results.jsonl"))[0]
    st = results.stat()
    text = results.read_text(encoding="utf-8")
    i = text.index('"prompt_id"')
    results.write_text(text[:i] + text[i:].replace("a", "b", 1), encoding="utf-8")
    os.utime(results, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert results.stat().st_size == st.st_size and results.stat().st_mtime_ns == st.st_mtime_ns
    assert _status(tmp_path)["analysis"] == "R"
    results.write_text(text, encoding="utf-8")  # the same bytes again: hashed, up to date
    assert _status(tmp_path)["analysis"] == "U"


def test_a_command_that_measures_runs_its_tasks_one_at_a_time(monkeypatch: Any) -> None:
    """The build runs independent tasks on every core; a campaign, the kick, a reproduction or
    the toolchain build runs alone (argv[0] is not doit here, so no build lock is taken)."""
    import importlib

    import dodo

    cores = os.cpu_count() or 1
    for args, n in ((["campaign"], 1), (["kick"], 1), (["reproduce:x"], 1), (["toolchain"], 1),
                    ([], cores), (["figures", "tables"], cores)):
        monkeypatch.setattr(sys, "argv", ["pytest", *args])
        cfg = importlib.reload(dodo).DOIT_CONFIG
        assert (cfg["num_process"], cfg["par_type"]) == (n, "process"), args
