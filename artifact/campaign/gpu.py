"""GPU memory and power sampling with ``nvidia-smi``, or a plain record that there is no GPU."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from typing import Any

QUERY = "memory.used,power.draw"


def gpu_name() -> str | None:
    """``nvidia-smi -L`` first line, or None without a usable GPU."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    proc = subprocess.run([exe, "-L"], capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    return lines[0] if proc.returncode == 0 and lines else None


def gpu_driver() -> str | None:
    """The NVIDIA driver version, or None without a usable GPU."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    proc = subprocess.run([exe, "--query-gpu=driver_version", "--format=csv,noheader"],
                          capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    return lines[0].strip() if proc.returncode == 0 and lines else None


def parse_sample(line: str, t_s: float) -> dict[str, float | None] | None:
    """One ``memory.used, power.draw`` CSV line (no header, no units).

    >>> parse_sample("1234, 87.5", 0.5)
    {'t_s': 0.5, 'mem_used_mib': 1234.0, 'power_w': 87.5}
    >>> parse_sample("1234, [N/A]", 1.0)
    {'t_s': 1.0, 'mem_used_mib': 1234.0, 'power_w': None}
    """
    parts = [p.strip() for p in line.split(",")]
    if len(parts) < 2:
        return None

    def num(s: str) -> float | None:
        try:
            return float(s)
        except ValueError:
            return None

    mem = num(parts[0])
    if mem is None:
        return None
    return {"t_s": round(t_s, 3), "mem_used_mib": mem, "power_w": num(parts[1])}


class GpuSampler:
    """Samples every ``interval_ms`` in a background process while the run measures."""

    def __init__(self, interval_ms: int = 500) -> None:
        self.interval_ms = interval_ms
        self.samples: list[dict[str, float | None]] = []
        self.name = gpu_name()
        self._proc: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> GpuSampler:
        if self.name is None:
            return self
        exe = shutil.which("nvidia-smi")
        assert exe is not None
        self._proc = subprocess.Popen(
            [exe, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits",
             f"-lms={self.interval_ms}"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        t0 = time.perf_counter()

        def read() -> None:
            assert self._proc is not None and self._proc.stdout is not None
            for line in self._proc.stdout:
                s = parse_sample(line, time.perf_counter() - t0)
                if s is not None:
                    self.samples.append(s)

        self._thread = threading.Thread(target=read, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def record(self, previous: dict[str, Any] | None = None) -> dict[str, Any]:
        """``vram.json``: samples (added to a resumed run's earlier ones), or why there are none."""
        if self.name is None:
            return {"gpu_present": False, "reason": "nvidia-smi not found or no GPU listed",
                    "samples": []}
        earlier = list((previous or {}).get("samples", []))
        samples = earlier + self.samples
        mems = [s["mem_used_mib"] for s in samples if s["mem_used_mib"] is not None]
        pows = [s["power_w"] for s in samples if s["power_w"] is not None]
        return {"gpu_present": True, "gpu": self.name, "interval_ms": self.interval_ms,
                "samples": samples, "peak_mem_used_mib": max(mems) if mems else None,
                "peak_power_w": max(pows) if pows else None}
