"""doit's console output for this project (``DOIT_CONFIG["reporter"]``): doit's own
``ConsoleReporter``, word for word, with two duties more.

- It tells the content checker which tasks run (:func:`artifact.filecheck.started` when doit
  picks a task, :func:`artifact.filecheck.finished` when it is saved, failed or skipped), so
  that a dependency changed while its task ran is not saved as seen.
- A reader that goes away (``doit | head``) ends the build as Ctrl-C would. doit's own reporter
  let the ``BrokenPipeError`` escape while it was still starting its worker processes, before
  it could stop them; it then waited forever for workers it never told to stop, holding the
  build lock (:mod:`artifact.buildlock`), and the next ``doit`` waited for it forever. Now the
  output goes to ``/dev/null``, the workers are terminated, and doit exits with status 141
  (``128 + SIGPIPE``, what a shell reports for ``make | head``), releasing the lock.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from typing import Any, NoReturn

from doit.reporter import ConsoleReporter

from artifact import filecheck

EXIT_READER_GONE = 128 + signal.SIGPIPE


class Reporter(ConsoleReporter):  # type: ignore[misc]  # doit is untyped
    """doit's ``ConsoleReporter``; see the module's docstring."""

    def write(self, text: str) -> None:
        try:
            self.outstream.write(text)
        except BrokenPipeError:
            reader_gone(self.outstream)

    def get_status(self, task: Any) -> None:
        filecheck.started(task.name, task.file_dep)
        super().get_status(task)

    def skip_uptodate(self, task: Any) -> None:
        filecheck.finished(task.name)
        super().skip_uptodate(task)

    def skip_ignore(self, task: Any) -> None:
        filecheck.finished(task.name)
        super().skip_ignore(task)

    def add_success(self, task: Any) -> None:
        filecheck.finished(task.name)
        super().add_success(task)

    def add_failure(self, task: Any, fail: Any) -> None:
        filecheck.finished(task.name)
        super().add_failure(task, fail)


def reader_gone(stream: Any = None) -> NoReturn:
    """The reader of standard output went away: send what is left to ``/dev/null`` (Python's
    own flush at exit would fail again), terminate the worker processes, and exit."""
    stream = sys.stdout if stream is None else stream
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    for child in multiprocessing.active_children():  # doit's workers, started or not
        child.terminate()
    raise SystemExit(EXIT_READER_GONE)
