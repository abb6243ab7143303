"""The host-wide measurement lock, with real processes and the real ``flock``."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from artifact import hostlock, paths
from artifact.errors import ArtifactError
from artifact.hostlock import HostLockBusy, measuring

# A process that takes the lock as `argv[1]`, says "ready" and holds it for `argv[2]` seconds.
HOLD = """
import sys, time
from artifact.hostlock import measuring
with measuring(sys.argv[1], poll_s=0.02):
    print("ready", flush=True)
    time.sleep(float(sys.argv[2]))
"""

# Three turns at the lock, each logged as "<pid> enter|exit <monotonic time>" in `argv[1]`.
TURNS = """
import os, sys, time
from artifact.hostlock import measuring

def log(event):
    with open(sys.argv[1], "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()} {event} {time.monotonic()!r}\\n")

for i in range(3):
    with measuring(f"turn {i}", poll_s=0.01):
        log("enter")
        time.sleep(0.15)
        log("exit")
"""


@pytest.fixture
def lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "host.lock"
    monkeypatch.setenv(hostlock.ENV, str(path))
    return path


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(paths.ROOT)}


def _python(code: str, *args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=cwd, env=_env(),
                            stdout=subprocess.PIPE, text=True)


@pytest.fixture
def holding(tmp_path: Path, lock: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process (another working directory) holding the lock for up to 20 s."""
    (tmp_path / "other").mkdir()
    with _python(HOLD, "run final-ngram-mod", "20", cwd=tmp_path / "other") as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        try:
            yield proc
        finally:
            proc.kill()
            proc.wait()


def test_two_checkouts_never_measure_at_once(tmp_path: Path, lock: Path) -> None:
    log = tmp_path / "turns.log"
    procs = []
    for name in ("checkout-a", "checkout-b"):
        (tmp_path / name).mkdir()
        procs.append(_python(TURNS, str(log), cwd=tmp_path / name))
    for p in procs:
        with p:
            assert p.wait(timeout=20) == 0
    events = [line.split() for line in log.read_text(encoding="utf-8").splitlines()]
    intervals = {}
    spans: list[tuple[float, float]] = []
    for pid, event, t in events:
        if event == "enter":
            intervals[pid] = float(t)
        else:
            spans.append((intervals.pop(pid), float(t)))
    assert len(spans) == 6 and not intervals
    spans.sort()
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start, spans


def test_kill_9_leaves_no_stale_lock(tmp_path: Path, lock: Path) -> None:
    with _python(HOLD, "doit kick", "20", cwd=tmp_path) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        assert (hostlock.holder() or {}).get("pid") == proc.pid
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    # the dead holder's details are still in the file, but flock decides: the lock is free
    assert json.loads(lock.read_text(encoding="utf-8"))["pid"] == proc.pid
    assert hostlock.holder() is None
    with measuring("after the kill", wait=False):
        assert (hostlock.holder() or {}).get("what") == "after the kill"
    assert hostlock.holder() is None
    assert lock.read_text(encoding="utf-8") == ""  # released: the details are cleared


def test_no_wait_fails_in_one_line_naming_the_holder(holding: subprocess.Popen[str]) -> None:
    with pytest.raises(HostLockBusy) as err, measuring("doit kick", wait=False):
        pytest.fail("entered a lock another process holds")
    msg = str(err.value)
    assert isinstance(err.value, ArtifactError)
    assert "\n" not in msg
    assert msg.startswith("another measurement holds this host's lock: run final-ngram-mod (")
    assert f"pid {holding.pid}," in msg and f"checkout {paths.ROOT}," in msg
    assert msg.endswith("; wait for it or run without --no-wait")
    info = hostlock.holder()
    assert info is not None and info["pid"] == holding.pid and info["what"] == "run final-ngram-mod"


def test_reentrant_in_one_process(tmp_path: Path, lock: Path) -> None:
    def other_gets_it() -> bool:
        code = ("from artifact.hostlock import measuring\n"
                "with measuring('probe', wait=False): pass\n")
        return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(),
                              capture_output=True, timeout=20).returncode == 0

    with measuring("reproduce kick", wait=False):
        with measuring("reproduce calibration", wait=False):  # must not deadlock on itself
            assert (hostlock.holder() or {}).get("what") == "reproduce kick"
        assert not other_gets_it()  # the outer block still holds it
    assert other_gets_it()


def test_waiting_is_said_once_then_the_lock_is_taken(tmp_path: Path, lock: Path) -> None:
    said: list[str] = []
    with _python(HOLD, "run final-ngram-mod", "0.6", cwd=tmp_path) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        t0 = time.monotonic()
        with measuring("doit kick", say=said.append, poll_s=0.02):
            waited = time.monotonic() - t0
            assert (hostlock.holder() or {}).get("pid") == os.getpid()
        proc.wait(timeout=10)
    waiting = [s for s in said if "waiting" in s]
    assert len(waiting) == 1, said
    assert waiting[0].startswith("waiting for the measurement lock on this host: held by run "
                                 f"final-ngram-mod (checkout {paths.ROOT}, pid {proc.pid}, "
                                 "since 20")
    assert waited > 0.2


def test_reproduce_no_wait_fails_before_measuring(holding: subprocess.Popen[str], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from artifact.reproduce.command import main

    into = tmp_path / "reproduction"
    assert main(["run", "--kick", "--no-wait", f"--into={into}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: another measurement holds this host's lock: run final-ngram-mod")
    assert err.count("\n") == 1 and f"pid {holding.pid}," in err
    assert not into.exists()  # nothing started, nothing written
