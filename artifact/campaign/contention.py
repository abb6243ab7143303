"""How busy the machine was, per request, and a quiet gate before a run measures.

Contention is read at request boundaries, with no background thread: a :class:`Snapshot`
before a request and one after it, a few ``/proc`` reads each, give a :class:`Window`, the CPU
used *by everything else* during that request, in cores (CPU-seconds per second):

``foreign_cores``
    ``(Δbusy - Δown) / CLK_TCK / Δt``, clamped at 0. ``busy`` is the ``cpu`` line of
    ``/proc/stat`` (user + nice + system + irq + softirq + steal; not idle or iowait; guest time is
    already inside user); ``own`` is utime + stime (``/proc/<pid>/stat`` fields 14 and 15) of the
    measuring processes the caller names (the runner and the server). Steal is counted as
    foreign: another virtual machine took that CPU.
``steal_cores``
    steal alone (hypervisor time given to other guests), in cores.
``load1``
    the one-minute load average (``/proc/loadavg``) at the end of the window.
``cpu_mhz``
    the mean current CPU frequency at the end of the window (``scaling_cur_freq`` of each CPU,
    else the ``cpu MHz`` lines of ``/proc/cpuinfo``); ``None`` where the kernel gives neither.

Where there is no ``/proc`` (macOS, Windows), :func:`snapshot` returns ``None`` and a request
record holds :data:`UNAVAILABLE` (a reason, never zeros); :func:`run_summary` says
``"unavailable"`` when no window of a run could be read.

Resolution and limits: ``/proc/stat`` counts in ticks (``CLK_TCK``, usually 100 Hz) sampled per
CPU, while a process's utime + stime is its exact run time rounded to ticks, so a window's
value is good to about one tick per busy CPU over its length: ±0.01 core over a 1 s window,
±0.1 over 100 ms. Trust the per-run mean more than one short request. Softirq work done for
our own loopback traffic counts as foreign (the kernel does not charge it to a process).

A run is marked *contended* per request (:meth:`Window.contended`) and summarised per run
(:func:`run_summary`). Before it measures, :func:`wait_quiet` waits until foreign CPU stays
below :data:`DEFAULT_THRESHOLD_CORES` for :data:`DEFAULT_HOLD_S` seconds, naming the busiest
foreign processes while it waits; it raises :class:`MachineBusy` on timeout unless told to
proceed (``--allow-contention``), in which case the run is marked.

The default threshold (0.1 core) sits between the floor of an idle machine (daemons, the
measure's own tick noise) and a process at a 20 % duty cycle (0.12-0.2 core measured, as its own
CPU time says); one busy loop measures about 1.0, and the contention this gate exists for was
another campaign using about one core. ``benchmarks/bench_contention.py`` measures all three on
the machine at hand; its full mode on an idle 2-core machine (2026-12-01, right after a campaign
ended) gave an idle floor of 0.003 cores median and 0.007 at most over 20 windows of 3 s, 0.205
for a 20 % duty-cycle child (its own CPU time: 0.200) and 1.000 for a busy loop, so 0.1 core is
about 14 times the idle maximum and half the smallest load worth refusing.

>>> a = Snapshot(t_ns=0, total_busy_ticks=1000, steal_ticks=10, own_ticks=400)
>>> b = Snapshot(t_ns=2_000_000_000, total_busy_ticks=1300, steal_ticks=30, own_ticks=600,
...              load1=0.52, cpu_mhz=2100.0)
>>> w = between(a, b, clk_tck=100)
>>> w.as_record()
{'foreign_cores': 0.5, 'steal_cores': 0.1, 'load1': 0.52, 'cpu_mhz': 2100.0}
>>> w.contended(DEFAULT_THRESHOLD_CORES)
True
"""

from __future__ import annotations

import math
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from artifact.errors import MachineBusy
from artifact.log import Log

__all__ = [
    "DEFAULT_GATE_TIMEOUT_S",
    "DEFAULT_HOLD_S",
    "DEFAULT_THRESHOLD_CORES",
    "UNAVAILABLE",
    "GateResult",
    "MachineBusy",
    "Reader",
    "Snapshot",
    "Window",
    "available",
    "between",
    "record",
    "run_summary",
    "snapshot",
    "top_foreign",
    "wait_quiet",
]

DEFAULT_THRESHOLD_CORES = 0.1  # above the idle floor, below a 20 % duty load (bench_contention)
DEFAULT_HOLD_S = 10.0  # quiet for this long, a sliding window, before a run measures
DEFAULT_GATE_TIMEOUT_S = 600.0  # then stop (MachineBusy) or, allowed, proceed and mark the run
NO_PROC = "no /proc on this OS"
UNAVAILABLE: dict[str, str] = {"unavailable": NO_PROC}  # a request's record without /proc
SAY_EVERY_S = 15.0  # the gate's waiting line, at most this often


def _clk_tck() -> int:
    sysconf = getattr(os, "sysconf", None)
    try:
        return int(sysconf("SC_CLK_TCK")) if sysconf is not None else 100
    except (ValueError, OSError):
        return 100


# --- parsing (pure) -----------------------------------------------------------------------


def parse_cpu_line(text: str) -> tuple[int, int] | None:
    """(busy, steal) ticks from the ``cpu`` line of ``/proc/stat``; None if there is none.

    busy = user + nice + system + irq + softirq + steal (guest is inside user; idle and iowait
    are not busy).

    >>> parse_cpu_line("cpu  15499 7 1638 14770 218 3 54 27 0 0\\ncpu0 1 2 3 4 5 6 7 8 9 10\\n")
    (17228, 27)
    >>> parse_cpu_line("cpu  1 2 3 4\\n")   # an old kernel: no irq, softirq, steal
    (6, 0)
    >>> parse_cpu_line("intr 0") is None
    True
    """
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0] != "cpu":
            continue
        try:
            v = [int(x) for x in parts[1:]] + [0] * 8
        except ValueError:
            return None
        user, nice, system, _idle, _iowait, irq, softirq, steal = v[:8]
        return user + nice + system + irq + softirq + steal, steal
    return None


def parse_pid_stat(text: str) -> tuple[str, int] | None:
    """(comm, utime + stime ticks) from ``/proc/<pid>/stat``; comm may hold spaces or ')'.

    >>> parse_pid_stat("42 (my (odd) name) S 1 42 42 0 -1 0 0 0 0 0 130 25 0 0 20 0 3")
    ('my (odd) name', 155)
    >>> parse_pid_stat("garbage") is None
    True
    """
    head, sep, rest = text.rpartition(")")
    if not sep or "(" not in head:
        return None
    comm = head.split("(", 1)[1]
    parts = rest.split()  # parts[0] is field 3 (state): fields 14, 15 are parts[11], parts[12]
    try:
        return comm, int(parts[11]) + int(parts[12])
    except (IndexError, ValueError):
        return None


def parse_loadavg(text: str) -> float | None:
    """The one-minute load average from ``/proc/loadavg``.

    >>> parse_loadavg("1.41 0.50 0.18 3/95 4197\\n")
    1.41
    """
    try:
        return float(text.split()[0])
    except (IndexError, ValueError):
        return None


def parse_cpuinfo_mhz(text: str) -> float | None:
    """The mean of the ``cpu MHz`` lines of ``/proc/cpuinfo``; None where there are none (ARM).

    >>> parse_cpuinfo_mhz("processor\\t: 0\\ncpu MHz\\t\\t: 2000.0\\ncpu MHz\\t\\t: 3000.5\\n")
    2500.25
    >>> parse_cpuinfo_mhz("processor\\t: 0\\nBogoMIPS\\t: 50.00\\n") is None
    True
    """
    mhz = []
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "cpu MHz":
            try:
                mhz.append(float(value))
            except ValueError:
                continue
    return sum(mhz) / len(mhz) if mhz else None


# --- reading /proc (the seam) -------------------------------------------------------------


@dataclass(frozen=True)
class Reader:
    """Where ``/proc`` and ``/sys`` are: the real ones by default, a fake tree in a test."""

    proc: Path = Path("/proc")
    sys: Path = Path("/sys")
    clk_tck: int = field(default_factory=_clk_tck)

    def _read(self, path: Path) -> str | None:
        try:
            with open(path, "rb") as f:
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return None

    def cpu(self) -> tuple[int, int] | None:
        """(busy, steal) ticks of the whole machine, or None without ``/proc/stat``."""
        text = self._read(self.proc / "stat")
        return None if text is None else parse_cpu_line(text)

    def process(self, pid: int) -> tuple[str, int] | None:
        """(comm, utime + stime ticks) of one process, or None when it is gone."""
        text = self._read(self.proc / str(pid) / "stat")
        return None if text is None else parse_pid_stat(text)

    def processes(self) -> dict[int, tuple[str, int]]:
        """Every process's (comm, ticks), from ``/proc/[0-9]*/stat``."""
        out: dict[int, tuple[str, int]] = {}
        try:
            names = os.listdir(self.proc)
        except OSError:
            return out
        for name in names:
            if name.isdigit() and (got := self.process(int(name))) is not None:
                out[int(name)] = got
        return out

    def load1(self) -> float | None:
        text = self._read(self.proc / "loadavg")
        return None if text is None else parse_loadavg(text)

    def cpu_mhz(self) -> float | None:
        """Mean current frequency: ``scaling_cur_freq`` (kHz) of each CPU, else cpuinfo."""
        base = self.sys / "devices" / "system" / "cpu"
        khz = []
        try:
            cpus = [n for n in os.listdir(base) if n.startswith("cpu") and n[3:].isdigit()]
        except OSError:
            cpus = []
        for cpu in cpus:
            text = self._read(base / cpu / "cpufreq" / "scaling_cur_freq")
            if text is not None and text.strip().isdigit():
                khz.append(int(text))
        if khz:
            return sum(khz) / len(khz) / 1000.0
        text = self._read(self.proc / "cpuinfo")
        return None if text is None else parse_cpuinfo_mhz(text)


REAL = Reader()


# --- snapshots and windows ----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    """One reading of the machine's and the own processes' CPU counters."""

    t_ns: int  # time.perf_counter_ns() when read
    total_busy_ticks: int  # /proc/stat "cpu": user+nice+system+irq+softirq+steal
    steal_ticks: int
    own_ticks: int  # utime+stime of the own processes, summed (a vanished pid counts 0)
    own_by_pid: tuple[tuple[int, int], ...] = ()  # (pid, ticks) of each own process found
    load1: float | None = None  # /proc/loadavg, 1 minute
    cpu_mhz: float | None = None  # mean current frequency; None where the kernel gives none


def available(reader: Reader = REAL) -> bool:
    """Whether ``/proc/stat`` can be read (Linux): contention can be measured."""
    return reader.cpu() is not None


def snapshot(own_pids: Iterable[int], *, reader: Reader = REAL,
             clock_ns: Callable[[], int] = time.perf_counter_ns) -> Snapshot | None:
    """Read the counters now; None where there is no ``/proc`` (never a snapshot of zeros).

    ``own_pids`` are the measuring processes (the runner, ``os.getpid()``, and the server): their
    CPU is not foreign. A pid that is gone counts 0 ticks. Between two snapshots, only pids
    present in both (or new in the second) are subtracted, so the ticks of an own process that
    died between them are lost: they count as foreign for that one window.
    """
    cpu = reader.cpu()
    if cpu is None:
        return None
    t_ns = clock_ns()
    own: list[tuple[int, int]] = []
    for pid in sorted(set(own_pids)):
        got = reader.process(pid)
        if got is not None:
            own.append((pid, got[1]))
    return Snapshot(t_ns=t_ns, total_busy_ticks=cpu[0], steal_ticks=cpu[1],
                    own_ticks=sum(t for _, t in own), own_by_pid=tuple(own),
                    load1=reader.load1(), cpu_mhz=reader.cpu_mhz())


@dataclass(frozen=True, kw_only=True)
class Window:
    """Contention over one interval, in cores (CPU-seconds per second)."""

    foreign_cores: float  # (Δbusy - Δown) / CLK_TCK / Δt, clamped at >= 0
    steal_cores: float  # Δsteal / CLK_TCK / Δt
    load1: float | None  # /proc/loadavg at the end
    cpu_mhz: float | None  # mean current frequency at the end; None when absent

    def contended(self, threshold_cores: float) -> bool:
        """Whether others used more than ``threshold_cores`` during the window."""
        return self.foreign_cores > threshold_cores

    def as_record(self) -> dict[str, float | None]:
        """The JSON stored per request: every value rounded to 3 decimals."""
        return {"foreign_cores": round(self.foreign_cores, 3),
                "steal_cores": round(self.steal_cores, 3),
                "load1": None if self.load1 is None else round(self.load1, 3),
                "cpu_mhz": None if self.cpu_mhz is None else round(self.cpu_mhz, 3)}


def record(window: Window | None) -> dict[str, float | None] | dict[str, str]:
    """A request's contention record: the window's numbers, or :data:`UNAVAILABLE`.

    >>> record(None)
    {'unavailable': 'no /proc on this OS'}
    """
    return dict(UNAVAILABLE) if window is None else window.as_record()


def _own_delta(a: Snapshot, b: Snapshot) -> int:
    if not a.own_by_pid and not b.own_by_pid:
        return b.own_ticks - a.own_ticks
    before = dict(a.own_by_pid)
    # a pid gone in b is skipped (its last ticks are lost); a pid new in b counts from 0
    return sum(max(0, t - before.get(pid, 0)) for pid, t in b.own_by_pid)


def between(a: Snapshot, b: Snapshot, *, clk_tck: int | None = None) -> Window:
    """Contention between two snapshots (``b`` later); load and frequency are ``b``'s.

    >>> a = Snapshot(t_ns=0, total_busy_ticks=100, steal_ticks=0, own_ticks=50)
    >>> b = Snapshot(t_ns=10**9, total_busy_ticks=130, steal_ticks=0, own_ticks=90)
    >>> between(a, b, clk_tck=100).foreign_cores   # own used more than the tick sample: 0
    0.0
    """
    dt_s = (b.t_ns - a.t_ns) / 1e9
    if dt_s <= 0:
        raise ValueError(f"between: the second snapshot is not later ({dt_s:.9f} s)")
    tck = REAL.clk_tck if clk_tck is None else clk_tck
    busy = b.total_busy_ticks - a.total_busy_ticks
    steal = b.steal_ticks - a.steal_ticks
    foreign = (busy - _own_delta(a, b)) / tck / dt_s
    return Window(foreign_cores=max(0.0, foreign), steal_cores=max(0.0, steal / tck / dt_s),
                  load1=b.load1, cpu_mhz=b.cpu_mhz)


def _p95(xs: Sequence[float]) -> float:
    """The 95th percentile, linear between order statistics (numpy's default).

    >>> _p95([1.0, 2.0, 3.0, 4.0, 5.0])
    4.8
    """
    s = sorted(xs)
    k = (len(s) - 1) * 0.95
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def run_summary(windows: Sequence[Window | None],
                threshold_cores: float = DEFAULT_THRESHOLD_CORES
                ) -> dict[str, int | float | str | None]:
    """A run's contention: counts, foreign cores mean / p95 / max, steal, load and frequency.

    ``windows`` holds one entry per request, ``None`` where it could not be measured. Values
    are rounded to 3 decimals; ``unavailable`` (a reason) replaces the numbers when no window
    was measured.

    >>> w = [Window(foreign_cores=f, steal_cores=0.0, load1=0.5, cpu_mhz=m)
    ...      for f, m in [(0.02, 2000.0), (0.3, 2400.0), (0.04, None)]]
    >>> run_summary([*w, None], 0.1)  # doctest: +NORMALIZE_WHITESPACE
    {'n': 4, 'n_unavailable': 1, 'threshold_cores': 0.1, 'n_contended': 1,
     'foreign_cores_mean': 0.12, 'foreign_cores_p95': 0.274, 'foreign_cores_max': 0.3,
     'steal_cores_max': 0.0, 'load1_max': 0.5, 'cpu_mhz_min': 2000.0, 'cpu_mhz_max': 2400.0}
    >>> run_summary([None, None])
    {'n': 2, 'n_unavailable': 2, 'threshold_cores': 0.1, 'unavailable': 'no /proc on this OS'}
    """
    got = [w for w in windows if w is not None]
    out: dict[str, int | float | str | None] = {
        "n": len(windows), "n_unavailable": len(windows) - len(got),
        "threshold_cores": threshold_cores}
    if not got:
        out["unavailable"] = NO_PROC if windows else "no requests"
        return out
    foreign = [w.foreign_cores for w in got]
    loads = [w.load1 for w in got if w.load1 is not None]
    mhz = [w.cpu_mhz for w in got if w.cpu_mhz is not None]

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 3)

    out |= {
        "n_contended": sum(w.contended(threshold_cores) for w in got),
        "foreign_cores_mean": r(sum(foreign) / len(foreign)),
        "foreign_cores_p95": r(_p95(foreign)),
        "foreign_cores_max": r(max(foreign)),
        "steal_cores_max": r(max(w.steal_cores for w in got)),
        "load1_max": r(max(loads)) if loads else None,
        "cpu_mhz_min": r(min(mhz)) if mhz else None,
        "cpu_mhz_max": r(max(mhz)) if mhz else None,
    }
    return out


# --- who is busy, and the quiet gate ------------------------------------------------------


def top_foreign(own_pids: Iterable[int], sample_s: float = 1.0, n: int = 5, *,
                reader: Reader = REAL, sleep: Callable[[float], None] = time.sleep,
                clock: Callable[[], float] = time.perf_counter) -> list[tuple[int, str, float]]:
    """The ``n`` busiest foreign processes over ``sample_s``: (pid, comm, cores), busiest first.

    Two scans of ``/proc/[0-9]*/stat``; own pids and this process are left out, as are
    processes that used nothing. A process that started between the scans counts from 0.
    """
    own = set(own_pids) | {os.getpid()}
    t0 = clock()
    first = reader.processes()
    sleep(sample_s)
    second = reader.processes()
    dt = max(clock() - t0, 1e-9)
    busy = []
    for pid, (comm, ticks) in second.items():
        if pid in own:
            continue
        before = first.get(pid)
        used = ticks - (before[1] if before is not None else 0)
        if used > 0:
            busy.append((pid, comm, used / reader.clk_tck / dt))
    busy.sort(key=lambda x: (-x[2], x[0]))
    return busy[:n]


def _names(top: Sequence[tuple[int, str, float]]) -> str:
    """``python[12] 0.85, cc1[7] 0.06``, or ``none seen``.

    >>> _names([(12, "python", 0.851), (7, "cc1", 0.06)])
    'python[12] 0.85, cc1[7] 0.06'
    """
    return ", ".join(f"{comm}[{pid}] {cores:.2f}" for pid, comm, cores in top) or "none seen"


@dataclass(frozen=True)
class GateResult:
    """What the quiet gate saw before a run measured."""

    passed: bool  # foreign CPU stayed below the threshold for hold_s (or /proc is absent)
    waited_s: float  # from the first reading to the verdict
    foreign_cores: float | None  # mean over the last hold window; None where it could not look
    allowed: bool  # never quiet, proceeded under allow_contention: the run is marked


def wait_quiet(own_pids: Iterable[int], *, threshold_cores: float = DEFAULT_THRESHOLD_CORES,
               hold_s: float = DEFAULT_HOLD_S, timeout_s: float = DEFAULT_GATE_TIMEOUT_S,
               allow_contention: bool = False, say: Log | None = None, poll_s: float = 1.0,
               reader: Reader = REAL, sleep: Callable[[float], None] = time.sleep,
               clock: Callable[[], float] = time.perf_counter) -> GateResult:
    """Wait until foreign CPU, over the last ``hold_s`` seconds (sliding), is below
    ``threshold_cores``; poll every ``poll_s`` for up to ``timeout_s``.

    While waiting, ``say`` gets (at most every 15 s) what others use and who. On timeout it
    raises :class:`MachineBusy` (one line), or with ``allow_contention`` returns
    ``passed=False, allowed=True`` after a warning line. Without ``/proc`` it passes and says
    that it could not look.
    """
    log: Log = say if say is not None else (lambda _msg: None)
    own = set(own_pids) | {os.getpid()}

    def clock_ns() -> int:
        return int(clock() * 1e9)

    first = snapshot(own, reader=reader, clock_ns=clock_ns)
    if first is None:
        log(f"quiet gate: could not look ({NO_PROC}); measuring without it")
        return GateResult(passed=True, waited_s=0.0, foreign_cores=None, allowed=False)
    hist: deque[Snapshot] = deque([first])
    hold_ns = int(hold_s * 1e9)
    last_said = -math.inf
    while True:
        took_top: list[tuple[int, str, float]] | None = None
        now_s = clock()
        cur: float | None = None
        if len(hist) > 1:
            head, last = hist[0], hist[-1]
            cur = between(head, last, clk_tck=reader.clk_tck).foreign_cores
            span_ns = last.t_ns - head.t_ns
            waited = (last.t_ns - first.t_ns) / 1e9
            if span_ns >= hold_ns and cur < threshold_cores:
                log(f"quiet: {cur:.2f} cores used by others over the last {hold_s:g} s "
                    f"(threshold {threshold_cores:g}); waited {waited:.0f} s")
                return GateResult(passed=True, waited_s=waited, foreign_cores=cur,
                                  allowed=False)
            if waited >= timeout_s:
                top = top_foreign(own, min(poll_s, 1.0), 3, reader=reader, sleep=sleep,
                                  clock=clock)
                what = (f"{cur:.2f} cores used by others over the last {span_ns / 1e9:.0f} s "
                        f"({_names(top)}), above the quiet threshold of {threshold_cores:g} "
                        f"core for {hold_s:g} s, after waiting {waited:.0f} s")
                if not allow_contention:
                    raise MachineBusy(f"the machine is busy: {what}; --allow-contention "
                                      "proceeds and marks the run as contended")
                log(f"warning: the machine is busy: {what}; proceeding under "
                    "--allow-contention, the run is marked as contended")
                return GateResult(passed=False, waited_s=waited, foreign_cores=cur,
                                  allowed=True)
            if cur >= threshold_cores and now_s - last_said >= SAY_EVERY_S:
                # the scan of processes replaces this poll's sleep: no extra delay
                took_top = top_foreign(own, poll_s, 3, reader=reader, sleep=sleep, clock=clock)
                last_said = now_s
                log(f"waiting for a quiet machine: {cur:.2f} cores used by others "
                    f"({_names(took_top)}); threshold {threshold_cores:g} for {hold_s:g} s")
        if took_top is None:
            sleep(poll_s)
        nxt = snapshot(own, reader=reader, clock_ns=clock_ns)
        if nxt is None:  # /proc went away mid-wait: nothing more to learn
            log(f"quiet gate: could not look any more ({NO_PROC}); measuring without it")
            return GateResult(passed=True, waited_s=(clock_ns() - first.t_ns) / 1e9,
                              foreign_cores=cur, allowed=False)
        hist.append(nxt)
        # keep the newest snapshot that is at least hold_s old as the window's start
        while len(hist) > 2 and nxt.t_ns - hist[1].t_ns >= hold_ns:
            hist.popleft()
