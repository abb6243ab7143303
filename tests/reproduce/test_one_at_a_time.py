"""Two reproductions never measure at once (issue 19): while another measurement holds this
host's lock, `python -m artifact.reproduce run` and `doit reproduce` wait, saying for whom, or
with --no-wait fail in one line; neither writes a reproduction folder or starts a server. And
`doit reproduce --runs <no match>` says so before building the toolchain. No llama-server is
started: the lock is held by this test."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from artifact import paths

HOLDER = "reproduce final-none (held by the test)"


@pytest.fixture
def lock_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment whose host lock is held by another process for the test's length."""
    env = {**os.environ, "SPECDEC_HOST_LOCK": str(tmp_path / "host.lock"),
           "PYTHONPATH": str(paths.ROOT)}
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from artifact import hostlock
        with hostlock.measuring({HOLDER!r}):
            print("held", flush=True)
            time.sleep(120)
        """)], stdout=subprocess.PIPE, text=True, env=env, cwd=paths.ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield env
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False, timeout=120)


def test_a_second_reproduction_with_no_wait_fails_in_one_line(tmp_path: Path,
                                                             lock_env: dict[str, str]) -> None:
    into = tmp_path / "repro"
    out = _run(["-m", "artifact.reproduce", "run", "--no-wait", "--runs", "final-none",
                "--into", str(into)], lock_env, paths.ROOT)
    assert out.returncode == 2, out.stdout + out.stderr
    (line,) = out.stderr.splitlines()
    assert line.startswith("error: another measurement holds this host's lock: ")
    assert HOLDER in line and "Traceback" not in out.stdout
    assert not into.exists()  # nothing written, nothing measured


def test_a_second_reproduction_waits_for_the_first_saying_for_whom(
        tmp_path: Path, lock_env: dict[str, str]) -> None:
    into = tmp_path / "repro"
    proc = subprocess.Popen([sys.executable, "-m", "artifact.reproduce", "run", "--runs",
                             "final-none", "--into", str(into)], cwd=paths.ROOT, env=lock_env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    guard = threading.Timer(90, lambda: os.killpg(proc.pid, signal.SIGKILL))
    guard.start()
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.startswith("[reproduce] waiting for the measurement lock on this host: "
                                 f"held by {HOLDER}"), first
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=3)  # still waiting: it measures nothing meanwhile
        assert not into.exists()
    finally:
        guard.cancel()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def _tree(dest: Path) -> Path:
    """A copy of what `doit reproduce` reads before measuring (its own build lock and db)."""
    for d in ("artifact", "experiments/campaigns"):
        shutil.copytree(paths.ROOT / d, dest / d,
                        ignore=shutil.ignore_patterns("__pycache__", ".*"))
    for f in ("dodo.py", "pyproject.toml", "experiments/claims.toml",
              "experiments/prompt_sets.toml", "experiments/session_sets.toml"):
        shutil.copy2(paths.ROOT / f, dest / f)
    return dest


def test_doit_reproduce_with_no_wait_fails_in_one_line(tmp_path: Path,
                                                      lock_env: dict[str, str]) -> None:
    root = _tree(tmp_path / "tree")
    env = {**lock_env, "PYTHONPATH": str(root)}
    out = _run(["-m", "doit", "reproduce", "--no-wait", "--runs", "final-none", "--into",
                str(tmp_path / "repro")], env, root)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "Traceback" not in text
    assert ".  toolchain" not in text  # the lock is checked before anything is built
    (line,) = [x for x in text.splitlines() if x.startswith("error: ")]
    assert line.startswith("error: another measurement holds this host's lock: ") and \
        HOLDER in line
    assert not (tmp_path / "repro").exists()


def test_doit_reproduce_checks_the_glob_before_building_the_toolchain(tmp_path: Path) -> None:
    root = _tree(tmp_path / "tree")
    env = {**os.environ, "PYTHONPATH": str(root),
           "SPECDEC_HOST_LOCK": str(tmp_path / "host.lock")}
    out = _run(["-m", "doit", "reproduce", "--runs", "no-such-run-*"], env, root)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "Traceback" not in text
    assert ".  toolchain" not in text
    (line,) = [x for x in text.splitlines() if x.startswith("error: ")]
    assert line.startswith("error: --runs: 'no-such-run-*' matches no run of the campaign")
    import dodo

    assert "toolchain" not in dodo.task_reproduce().get("task_dep", [])
