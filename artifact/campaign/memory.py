"""The server's memory while a run measures: ``llama-server``'s resident set, from ``/proc``.

No GPU is needed to measure memory. While a run measures, :class:`MemorySampler` reads
``/proc/<pid>/status`` of each live server every ``interval_s`` and keeps the peak of:

``rss``  ``VmRSS``, the resident set: what the process holds in memory now;
``anon`` ``RssAnon``, its anonymous part: the KV cache, compute buffers, a draft context;
``file`` ``RssFile``, its file-backed part: the model files, which ``llama-server`` maps (mmap);
``hwm``  ``VmHWM``, the kernel's own peak of the resident set (it sees between samples too).

The run's ``memory.json`` holds those peaks in MiB over every server start of the run (a
resumed run's earlier peaks included) and the number of samples, or why there are none
(no ``/proc``: not Linux). The file-backed part counts pages of the model files the server has
touched; they are shared with the page cache, so two servers of one model share them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIELDS = {"rss": "VmRSS", "anon": "RssAnon", "file": "RssFile", "hwm": "VmHWM"}
PROC = Path("/proc")


def read_status(pid: int, proc: Path = PROC) -> dict[str, int] | None:
    """The :data:`FIELDS` of one process in KiB, or None when it is gone or has none.

    >>> import os
    >>> got = read_status(os.getpid())
    >>> got is None or (got["rss"] > 0 and got["hwm"] >= got["rss"])
    True
    """
    try:
        text = (proc / str(pid) / "status").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        for name, field in FIELDS.items():
            if key == field:
                parts = rest.split()
                if parts and parts[0].isdigit():
                    values[name] = int(parts[0])
    return values if len(values) == len(FIELDS) else None


class MemorySampler:
    """Samples the memory of the processes ``pids()`` names, in a thread, while in use."""

    def __init__(self, pids: Callable[[], list[int]], interval_s: float = 0.2,
                 proc: Path = PROC) -> None:
        self.pids = pids
        self.interval_s = interval_s
        self.proc = proc
        self.peak_kib: dict[str, int] = {}
        self.n_samples = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        """One sample of every process named now (a process that is gone is skipped)."""
        for pid in self.pids():
            got = read_status(pid, self.proc)
            if got is None:
                continue
            self.n_samples += 1
            for name, kib in got.items():
                self.peak_kib[name] = max(kib, self.peak_kib.get(name, 0))

    def __enter__(self) -> MemorySampler:
        if not self.proc.is_dir():
            return self

        def loop() -> None:
            while not self._stop.wait(self.interval_s):
                self.sample()

        self._thread = threading.Thread(target=loop, name="memory-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self.sample()  # the last state before the server stops
            self._stop.set()
            self._thread.join(timeout=5)

    def record(self, previous: dict[str, Any] | None = None) -> dict[str, Any]:
        """``memory.json``: the peaks in MiB (with a resumed run's earlier ones), or why none."""
        if self._thread is None and not (previous or {}).get("n_samples"):
            return {"measured": False, "reason": f"{self.proc} not found (not Linux)",
                    "n_samples": 0}
        earlier = previous if previous and previous.get("measured") else {}
        out: dict[str, Any] = {"measured": True, "source": "/proc/<server pid>/status",
                               "interval_s": self.interval_s,
                               "n_samples": self.n_samples + int(earlier.get("n_samples", 0))}
        for name in FIELDS:
            mine = self.peak_kib.get(name)
            mib = None if mine is None else round(mine / 1024, 1)
            before = earlier.get(f"peak_{name}_mib")
            both = [x for x in (mib, before) if isinstance(x, int | float)]
            out[f"peak_{name}_mib"] = max(both) if both else None
        return out
