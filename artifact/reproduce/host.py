"""The hardware a run set was measured on, as a comparable fingerprint and a folder-name slug.

A run's ``config.json`` records its environment (CPU model, cores, GPU, llama.cpp build, model
hashes). The *hardware* fingerprint is the part that moves rates and speedups: CPU model string,
core count and GPU. Two run sets with equal fingerprints ran on the same kind of machine, so a
hardware-bound claim that differs between them is a failure, not a property of the hardware.
The software side (llama.cpp build, binary and model hashes) is kept apart and shown beside it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from artifact import hardware as hardware_fp


@dataclass(frozen=True, kw_only=True)
class Hardware:
    """What rates depend on: CPU model, cores, GPU (``None``: no GPU)."""

    cpu_model: str
    cpu_cores: int | None
    gpu: str | None

    @property
    def slug(self) -> str:
        """A folder-name form, e.g. ``intel-xeon-processor-2c``.

        >>> Hardware(cpu_model="Intel(R) Xeon(R) Processor", cpu_cores=2, gpu=None).slug
        'intel-xeon-processor-2c'
        >>> Hardware(cpu_model="AMD EPYC 7B13", cpu_cores=16, gpu="NVIDIA H200").slug
        'amd-epyc-7b13-16c-nvidia-h200'
        """
        parts = [_slug(self.cpu_model) or "unknown-cpu"]
        parts.append(f"{self.cpu_cores}c" if self.cpu_cores else "nc")
        if self.gpu:
            parts.append(_slug(self.gpu))
        return "-".join(parts)

    def describe(self) -> str:
        """One line for a report.

        >>> Hardware(cpu_model="Intel(R) Xeon(R) Processor", cpu_cores=2, gpu=None).describe()
        'Intel(R) Xeon(R) Processor, 2 cores, no GPU'
        """
        cores = f"{self.cpu_cores} cores" if self.cpu_cores else "cores unknown"
        return f"{self.cpu_model}, {cores}, {self.gpu or 'no GPU'}"

    def as_dict(self) -> dict[str, Any]:
        return {"cpu_model": self.cpu_model, "cpu_cores": self.cpu_cores, "gpu": self.gpu,
                "slug": self.slug}


def _slug(text: str) -> str:
    text = re.sub(r"\((r|tm|c)\)", " ", text.lower())
    text = re.sub(r"\b(cpu|processor)\s*@.*$", r"\1", text)  # drop clock speeds
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def hardware(environment: Mapping[str, Any]) -> Hardware:
    """The hardware part of a recorded environment (``config.json: environment``).

    >>> hardware({"cpu_model": "X", "cpu_cores": 4, "gpu": None, "python": "3.11"})
    Hardware(cpu_model='X', cpu_cores=4, gpu=None)
    >>> hardware({"cpu_model": "X", "cpu_cores": 4,
    ...           "gpu": "GPU 0: NVIDIA H200 (UUID: GPU-1234)"}).gpu
    'NVIDIA H200'
    """
    cores = environment.get("cpu_cores")
    gpu = environment.get("gpu")
    if gpu:  # `nvidia-smi -L` names one board: keep the model, not its index or UUID
        gpu = hardware_fp.gpu_model(str(gpu))
    return Hardware(cpu_model=str(environment.get("cpu_model") or "unknown"),
                    cpu_cores=cores if isinstance(cores, int) and cores > 0 else None,
                    gpu=str(gpu) if gpu else None)


def software(environment: Mapping[str, Any]) -> dict[str, Any]:
    """The software part that should be equal for a like-for-like comparison."""
    return {k: environment.get(k) for k in ("llama_cpp_version", "binary_sha256",
                                            "model_sha256")}


def this_machine() -> Hardware:
    """The hardware of the machine this process runs on (as a campaign would record it)."""
    from artifact.campaign.fingerprint import cpu_model
    from artifact.campaign.gpu import gpu_name

    return Hardware(cpu_model=cpu_model(), cpu_cores=os.cpu_count(), gpu=gpu_name())


def load_sample() -> dict[str, float]:
    """The 1-, 5- and 15-minute load averages now (the machine's other work, for the report)."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return {}
    return {"load1": round(one, 2), "load5": round(five, 2), "load15": round(fifteen, 2)}
