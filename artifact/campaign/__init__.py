"""Benchmark campaigns against a real ``llama-server``.

Modules: ``server`` (process lifecycle), ``client`` (httpx, SSE), ``runner`` (one run: resume,
append, errors, metrics), ``gpu`` (nvidia-smi sampler), ``prompts`` (prompt sets from installed
datasets), ``fingerprint`` (environment and ``/metrics``), ``progress``.

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
