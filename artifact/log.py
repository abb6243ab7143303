"""The one callable type through which library code reports progress and logs.

Library functions take a ``log: Log`` argument and never print; a command line or doit task
passes :func:`stderr` (or a list's ``append`` in a test, or :func:`silent`).

>>> lines: list[str] = []
>>> log: Log = lines.append
>>> log("3/30 requests")
>>> lines
['3/30 requests']
"""

from __future__ import annotations

import sys
from collections.abc import Callable

Log = Callable[[str], None]


def stderr(prefix: str = "") -> Log:
    """A :data:`Log` that writes ``[prefix] message`` lines to standard error."""
    head = f"[{prefix}] " if prefix else ""

    def write(msg: str) -> None:
        print(f"{head}{msg}", file=sys.stderr, flush=True)

    return write


def is_terminal() -> bool:
    """Whether standard error is a terminal (a progress line may then redraw itself)."""
    return sys.stderr.isatty()


def overwrite_line(text: str | None) -> None:
    """Redraw the terminal's current line with ``text``; ``None`` ends the line."""
    if text is None:
        print(file=sys.stderr, flush=True)
    else:
        print("\r" + text, end="", file=sys.stderr, flush=True)


def silent(msg: str) -> None:
    """A :data:`Log` that drops everything."""
