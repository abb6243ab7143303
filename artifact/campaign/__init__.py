"""Benchmark campaigns against a real ``llama-server``.

Modules: ``server`` (process lifecycle), ``client`` (httpx, SSE), ``runner`` (one run: resume,
append, errors, metrics), ``gpu`` (nvidia-smi sampler), ``prompts`` (prompt sets from installed
datasets), ``fingerprint`` (environment and ``/metrics``), ``progress``.
"""

from artifact.campaign.runner import run, run_is_current

__all__ = ["run", "run_is_current"]
