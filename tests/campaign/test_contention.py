"""Contention: parsing from fake /proc trees, the real kernel's counters, and the quiet gate."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from artifact.campaign import contention as c
from artifact.errors import ArtifactError, one_line

TCK = 100
HOG = "while True:\n    pass\n"


def stat_text(busy: int, steal: int = 0, idle: int = 5000) -> str:
    # user nice system idle iowait irq softirq steal guest guest_nice
    user = busy - steal - 30 - 7 - 3 - 2
    return (f"cpu  {user} 7 30 {idle} 11 3 2 {steal} 50 0\n"
            f"cpu0 1 2 3 4 5 6 7 8 9 10\nintr 12345 0 0\nctxt 999\n")


def pid_stat(pid: int, comm: str, ticks: int) -> str:
    utime, stime = ticks - ticks // 4, ticks // 4
    return (f"{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194304 100 0 0 0 {utime} {stime} 0 0 20 0 "
            "1 0 16137 3133440 389\n")


class FakeMachine:
    """A fake /proc and /sys tree whose counters advance with a fake clock."""

    def __init__(self, root: Path, *, procs: dict[int, tuple[str, float]],
                 extra_cores: float = 0.0, mhz_khz: list[int] | None = None,
                 cpuinfo: str | None = None) -> None:
        self.proc, self.sys = root / "proc", root / "sys"
        self.proc.mkdir(parents=True)
        self.t = 1000.0
        self.rates = procs  # pid -> (comm, cores)
        self.extra_cores = extra_cores  # irq, steal-free kernel time: foreign, in no process
        self.ticks = {pid: 40.0 for pid in procs}
        self.busy = 10_000.0
        (self.proc / "loadavg").write_text("0.52 0.40 0.30 2/95 4197\n")
        if cpuinfo is not None:
            (self.proc / "cpuinfo").write_text(cpuinfo)
        for i, khz in enumerate(mhz_khz or []):
            d = self.sys / "devices" / "system" / "cpu" / f"cpu{i}" / "cpufreq"
            d.mkdir(parents=True)
            (d / "scaling_cur_freq").write_text(f"{khz}\n")
        self.write()

    @property
    def reader(self) -> c.Reader:
        return c.Reader(proc=self.proc, sys=self.sys, clk_tck=TCK)

    def write(self) -> None:
        (self.proc / "stat").write_text(stat_text(round(self.busy)))
        for pid, (comm, _) in self.rates.items():
            (self.proc / str(pid)).mkdir(exist_ok=True)
            (self.proc / str(pid) / "stat").write_text(pid_stat(pid, comm, round(self.ticks[pid])))

    def clock(self) -> float:
        return self.t

    def sleep(self, dt: float) -> None:
        self.t += dt
        for pid, (_, cores) in self.rates.items():
            self.ticks[pid] += cores * TCK * dt
        self.busy += (sum(r for _, r in self.rates.values()) + self.extra_cores) * TCK * dt
        self.write()


# --- parsing from fake trees --------------------------------------------------------------


def test_a_fake_tree_parses_to_exact_numbers(tmp_path: Path) -> None:
    m = FakeMachine(tmp_path, procs={101: ("llama-server", 0.0), 202: ("we ird) name", 0.0)},
                    mhz_khz=[2_000_000, 3_000_000])
    (m.proc / "stat").write_text(stat_text(busy=20_000, steal=120))
    (m.proc / "101" / "stat").write_text(pid_stat(101, "llama-server", 800))
    (m.proc / "202" / "stat").write_text(pid_stat(202, "we ird) name", 200))
    snap = c.snapshot([101, 202, 303], reader=m.reader, clock_ns=lambda: 5_000_000_000)
    assert snap == c.Snapshot(t_ns=5_000_000_000, total_busy_ticks=20_000, steal_ticks=120,
                              own_ticks=1000, own_by_pid=((101, 800), (202, 200)),
                              load1=0.52, cpu_mhz=2500.0)
    assert m.reader.processes() == {101: ("llama-server", 800), 202: ("we ird) name", 200)}

    (m.proc / "stat").write_text(stat_text(busy=20_450, steal=170))
    (m.proc / "101" / "stat").write_text(pid_stat(101, "llama-server", 1000))
    later = c.snapshot([101, 202], reader=m.reader, clock_ns=lambda: 7_000_000_000)
    assert later is not None
    w = c.between(snap, later, clk_tck=TCK)
    # (450 busy - 200 own) ticks / 100 Hz / 2 s = 1.25 cores; steal 50 / 100 / 2 = 0.25
    assert w == c.Window(foreign_cores=1.25, steal_cores=0.25, load1=0.52, cpu_mhz=2500.0)
    assert w.as_record() == {"foreign_cores": 1.25, "steal_cores": 0.25, "load1": 0.52,
                             "cpu_mhz": 2500.0}


def test_frequency_falls_back_to_cpuinfo_then_to_none(tmp_path: Path) -> None:
    info = "processor\t: 0\ncpu MHz\t\t: 2100.000\nprocessor\t: 1\ncpu MHz\t\t: 2300.000\n"
    m = FakeMachine(tmp_path / "a", procs={}, cpuinfo=info)
    assert m.reader.cpu_mhz() == 2200.0
    arm = FakeMachine(tmp_path / "b", procs={}, cpuinfo="processor\t: 0\nBogoMIPS\t: 50.00\n")
    snap = c.snapshot([], reader=arm.reader)
    assert snap is not None and snap.cpu_mhz is None
    later = c.snapshot([], reader=arm.reader)
    assert later is not None and later.t_ns > snap.t_ns
    assert c.between(snap, later).as_record()["cpu_mhz"] is None


def test_an_own_process_that_died_is_not_subtracted_negatively(tmp_path: Path) -> None:
    m = FakeMachine(tmp_path, procs={101: ("srv", 0.0)})
    (m.proc / "101" / "stat").write_text(pid_stat(101, "srv", 5000))
    a = c.snapshot([101], reader=m.reader, clock_ns=lambda: 0)
    (m.proc / "101" / "stat").unlink()
    (m.proc / "101").rmdir()
    (m.proc / "stat").write_text(stat_text(busy=10_100))
    b = c.snapshot([101], reader=m.reader, clock_ns=lambda: 1_000_000_000)
    assert a is not None and b is not None and b.own_ticks == 0
    # the 100 busy ticks count as foreign (the dead pid's last ticks are lost), not 5100
    assert c.between(a, b, clk_tck=TCK).foreign_cores == pytest.approx(1.0)


def test_between_refuses_snapshots_out_of_order() -> None:
    s = c.Snapshot(t_ns=5, total_busy_ticks=0, steal_ticks=0, own_ticks=0)
    with pytest.raises(ValueError, match="not later"):
        c.between(s, s)


# --- no /proc: unavailable, never zeros ---------------------------------------------------


def test_without_proc_everything_says_unavailable(tmp_path: Path) -> None:
    reader = c.Reader(proc=tmp_path / "none", sys=tmp_path / "none", clk_tck=TCK)
    assert not c.available(reader)
    assert c.snapshot([os.getpid()], reader=reader) is None
    assert c.record(None) == {"unavailable": "no /proc on this OS"}
    summary = c.run_summary([None, None, None], 0.1)
    assert summary["unavailable"] == "no /proc on this OS"
    assert summary["n"] == 3 and summary["n_unavailable"] == 3
    assert not any(k.startswith(("foreign", "steal", "load", "cpu")) for k in summary)
    assert c.run_summary([], 0.1)["unavailable"] == "no requests"
    assert c.top_foreign([], 0.0, reader=reader) == []
    lines: list[str] = []
    got = c.wait_quiet([], reader=reader, say=lines.append, sleep=pytest.fail)
    assert got == c.GateResult(passed=True, waited_s=0.0, foreign_cores=None, allowed=False)
    assert lines == ["quiet gate: could not look (no /proc on this OS); measuring without it"]


def test_a_garbled_stat_file_is_unavailable_not_zero(tmp_path: Path) -> None:
    (tmp_path / "stat").write_text("intr 1 2 3\n")
    assert c.snapshot([], reader=c.Reader(proc=tmp_path, sys=tmp_path)) is None


# --- the real kernel ----------------------------------------------------------------------


@pytest.fixture
def hog() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", HOG])
    time.sleep(0.3)  # started and spinning
    yield proc
    proc.kill()
    proc.wait()


@pytest.mark.skipif(not c.available(), reason="no /proc on this OS")
def test_a_busy_child_is_foreign_and_excluded_when_own(hog: subprocess.Popen[bytes]) -> None:
    me = os.getpid()
    a_foreign, a_own = c.snapshot([me]), c.snapshot([me, hog.pid])
    time.sleep(1.0)
    b_foreign, b_own = c.snapshot([me]), c.snapshot([me, hog.pid])
    assert a_foreign and a_own and b_foreign and b_own
    foreign = c.between(a_foreign, b_foreign).foreign_cores
    as_own = c.between(a_own, b_own).foreign_cores
    dt_s = (b_own.t_ns - a_own.t_ns) / 1e9
    hog_cores = (dict(b_own.own_by_pid)[hog.pid] - dict(a_own.own_by_pid)[hog.pid]) / (
        c.REAL.clk_tck * dt_s)
    assert hog_cores > 0.4  # it spins (a share of a core even on a crowded machine)
    assert foreign > 0.5
    # the same second with the hog counted as own: less by what the hog used (on an idle
    # machine about 0; others may run here too, so the test compares instead of asking for 0)
    assert foreign - as_own == pytest.approx(hog_cores, abs=0.1)
    assert c.between(a_own, b_own).load1 is not None


@pytest.mark.skipif(not c.available(), reason="no /proc on this OS")
def test_top_foreign_names_the_busy_child(hog: subprocess.Popen[bytes]) -> None:
    top = c.top_foreign([], sample_s=0.5, n=50)
    mine = [t for t in top if t[0] == hog.pid]
    assert mine and mine[0][1].startswith("python") and mine[0][2] > 0.5
    assert all(pid != hog.pid for pid, _, _ in c.top_foreign([hog.pid], sample_s=0.2, n=50))


# --- run summaries ------------------------------------------------------------------------


def test_run_summary_math() -> None:
    rng = np.random.default_rng(3)
    foreign = rng.uniform(0, 0.3, 40)
    ws: list[c.Window | None] = [
        c.Window(foreign_cores=float(f), steal_cores=0.01 * i, load1=0.1 * i if i % 2 else None,
                 cpu_mhz=2000.0 + i) for i, f in enumerate(foreign)]
    s = c.run_summary([*ws, None], threshold_cores=0.1)
    assert s["n"] == 41 and s["n_unavailable"] == 1 and s["threshold_cores"] == 0.1
    assert s["n_contended"] == int((foreign > 0.1).sum())
    assert s["foreign_cores_mean"] == round(float(foreign.mean()), 3)
    assert s["foreign_cores_p95"] == round(float(np.percentile(foreign, 95)), 3)
    assert s["foreign_cores_max"] == round(float(foreign.max()), 3)
    assert s["steal_cores_max"] == 0.39 and s["load1_max"] == 3.9
    assert s["cpu_mhz_min"] == 2000.0 and s["cpu_mhz_max"] == 2039.0
    assert "unavailable" not in s


def test_contended_is_strictly_above_the_threshold() -> None:
    w = c.Window(foreign_cores=0.1, steal_cores=0.0, load1=None, cpu_mhz=None)
    assert not w.contended(0.1) and w.contended(0.099)
    assert c.record(w) == {"foreign_cores": 0.1, "steal_cores": 0.0, "load1": None,
                           "cpu_mhz": None}


# --- the quiet gate -----------------------------------------------------------------------


def test_the_gate_passes_a_quiet_machine_after_the_hold(tmp_path: Path) -> None:
    m = FakeMachine(tmp_path, procs={10: ("llama-server", 1.0), 77: ("cron", 0.02)})
    lines: list[str] = []
    got = c.wait_quiet([10], hold_s=5.0, timeout_s=60.0, say=lines.append, reader=m.reader,
                       sleep=m.sleep, clock=m.clock)
    assert got.passed and not got.allowed
    assert got.waited_s == pytest.approx(5.0)
    assert got.foreign_cores == pytest.approx(0.02, abs=0.005)  # the server's core is own
    assert lines == ["quiet: 0.02 cores used by others over the last 5 s (threshold 0.1); "
                     "waited 5 s"]


def test_the_gate_waits_out_a_load_that_stops(tmp_path: Path) -> None:
    m = FakeMachine(tmp_path, procs={77: ("python", 0.9)})
    stop_at = m.t + 20.0
    step = m.sleep

    def sleep(dt: float) -> None:
        if m.t >= stop_at:
            m.rates[77] = ("python", 0.0)
        step(dt)

    lines: list[str] = []
    got = c.wait_quiet([], hold_s=5.0, timeout_s=120.0, say=lines.append, reader=m.reader,
                       sleep=sleep, clock=m.clock)
    assert got.passed and 25.0 <= got.waited_s <= 27.0
    waiting = [x for x in lines if x.startswith("waiting for a quiet machine")]
    assert len(waiting) == 2  # at 1 s and 16 s: at most every 15 s
    assert "python[77] 0.90" in waiting[0] and "threshold 0.1 for 5 s" in waiting[0]


def test_the_gate_raises_machine_busy_in_one_line(tmp_path: Path) -> None:
    m = FakeMachine(tmp_path, procs={10: ("llama-server", 1.0), 77: ("hog", 0.85),
                                     78: ("cc1", 0.06)})
    with pytest.raises(c.MachineBusy) as err:
        c.wait_quiet([10], threshold_cores=0.1, hold_s=3.0, timeout_s=10.0, reader=m.reader,
                     sleep=m.sleep, clock=m.clock)
    assert isinstance(err.value, ArtifactError)
    msg = str(err.value)
    assert "\n" not in msg and one_line(err.value) == msg
    assert "0.91 cores used by others" in msg and "threshold of 0.1" in msg
    assert "hog[77] 0.85, cc1[78] 0.06" in msg and "llama-server" not in msg
    assert "--allow-contention proceeds and marks the run" in msg


def test_the_gate_proceeds_marked_under_allow_contention(tmp_path: Path) -> None:
    m = FakeMachine(tmp_path, procs={77: ("hog", 0.5)}, extra_cores=0.1)
    lines: list[str] = []
    got = c.wait_quiet([], hold_s=3.0, timeout_s=10.0, allow_contention=True,
                       say=lines.append, reader=m.reader, sleep=m.sleep, clock=m.clock)
    assert not got.passed and got.allowed
    assert got.waited_s == pytest.approx(10.0)
    assert got.foreign_cores == pytest.approx(0.6, abs=0.01)  # irq-like time counts too
    assert lines[-1].startswith("warning: the machine is busy: 0.60 cores used by others")
    assert "proceeding under --allow-contention" in lines[-1]
