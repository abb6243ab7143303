"""A small progress line with an ETA, through a :data:`artifact.log.Log`."""

from __future__ import annotations

import time
from collections.abc import Callable

from artifact.log import Log, is_terminal, overwrite_line, stderr


def _clock(seconds: float) -> str:
    s = int(max(seconds, 0))
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"


class Progress:
    """``label  12/30 [#######.....]  0.8 req/s  ETA 0:22``; a line per 10% when not a TTY."""

    def __init__(self, label: str, total: int, done: int = 0, enabled: bool = True,
                 log: Log | None = None, suffix: Callable[[float], str] | None = None) -> None:
        """``suffix(fraction done)`` adds to each line (e.g. the ETA of a whole reproduction)."""
        self.label, self.total, self.done, self.enabled = label, total, done, enabled
        self.suffix = suffix
        self.start_done = done
        self.t0 = time.perf_counter()
        # On a terminal (and no log given) one line is redrawn in place; otherwise a line
        # per 10% goes to the log.
        self.tty = log is None and is_terminal()
        self.log: Log = log or stderr()
        self._last_decile = -1
        self.show()

    def advance(self, n: int = 1) -> None:
        self.done += n
        self.show()

    def line(self) -> str:
        elapsed = time.perf_counter() - self.t0
        fresh = self.done - self.start_done
        rate = fresh / elapsed if elapsed > 0 and fresh else 0.0
        eta = (self.total - self.done) / rate if rate else float("nan")
        width = 20
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "." * (width - filled)
        eta_s = _clock(eta) if eta == eta else "?"
        extra = self.suffix(self.done / self.total if self.total else 1.0) if self.suffix else ""
        return (f"{self.label}  {self.done}/{self.total} [{bar}]  {rate:.2f} req/s  "
                f"ETA {eta_s}{extra}")

    def show(self) -> None:
        if not self.enabled:
            return
        if self.tty:
            overwrite_line(self.line())
            return
        decile = 10 * self.done // self.total if self.total else 10
        if decile != self._last_decile:
            self._last_decile = decile
            self.log(self.line())

    def close(self) -> None:
        if self.enabled and self.tty:
            overwrite_line(None)
