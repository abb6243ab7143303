"""Benchmark campaigns against a real ``llama-server``: measuring what a plan says to send.

Modules: ``server`` (process lifecycle), ``client`` (httpx, SSE), ``runner`` (one run: its plan
executed, resumed, appended, with errors and metrics), ``interleave`` (a group measured
prompt-major), ``quiet`` and ``contention`` (the measurement lock, the quiet gate, per-request
contention), ``gpu`` (nvidia-smi sampler), ``fingerprint`` (environment and ``/metrics``),
``tokenizer`` (the server's tokenizer, for planning), ``stepcost`` (forward time per step),
``events`` (a run's ledger), ``progress``. What is sent is planned below, in
:mod:`artifact.workloads` (the only part of it imported here); where runs execute (locally, or
as Slurm jobs) is chosen above, in :mod:`artifact.executors`.

``run`` and ``run_is_current`` (of ``runner``) are imported on first use: every ``doit`` loads
modules of this package to define its tasks, and the runner brings httpx and asyncio.
"""

from __future__ import annotations

from typing import Any

__all__ = ["run", "run_is_current"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from artifact.campaign import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
