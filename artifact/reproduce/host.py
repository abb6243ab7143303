"""The hardware a run set was measured on, as a comparable fingerprint and a folder-name slug.

A run's ``config.json`` records its environment (CPU model, cores, GPU, llama.cpp build, model
hashes, and since issue 34 the extended fingerprint of :mod:`artifact.hostinfo`). The *hardware*
fingerprint is the part that moves rates and speedups. The software side (llama.cpp build,
binary and model hashes) is kept apart and shown beside it.

**Same hardware is earned** (:func:`judge`): the CPU model string, cores and GPU equal, the
extended fingerprints recorded on both sides and equal, *and* the reproduction's calibrated
speed ratio (its time for the calibration prompts over the committed runs' time for the same
prompts) within :data:`SPEED_BAND` of 1. Only then is a hardware-bound claim beyond its
tolerance a failure; otherwise it "differs with hardware", with the ratio beside it. A virtual
machine's model string names no host: two hosts with one string can decode 1.7 times apart.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from artifact import hardware as hardware_fp
from artifact import hostinfo


@dataclass(frozen=True, kw_only=True)
class Hardware:
    """What rates depend on: CPU model, cores, GPU (``None``: no GPU)."""

    cpu_model: str
    cpu_cores: int | None
    gpu: str | None
    # the extended fingerprint (artifact.hostinfo.FIELDS, in order), None: not recorded
    host: tuple[tuple[str, Any], ...] | None = None

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
                "slug": self.slug, "host": dict(self.host) if self.host is not None else None}


def _slug(text: str) -> str:
    text = re.sub(r"\((r|tm|c)\)", " ", text.lower())
    text = re.sub(r"\b(cpu|processor)\s*@.*$", r"\1", text)  # drop clock speeds
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def hardware(environment: Mapping[str, Any]) -> Hardware:
    """The hardware part of a recorded environment (``config.json: environment``).

    >>> hardware({"cpu_model": "X", "cpu_cores": 4, "gpu": None, "python": "3.11"})
    Hardware(cpu_model='X', cpu_cores=4, gpu=None, host=None)
    >>> hardware({"cpu_model": "X", "cpu_cores": 4,
    ...           "gpu": "GPU 0: NVIDIA H200 (UUID: GPU-1234)"}).gpu
    'NVIDIA H200'
    """
    cores = environment.get("cpu_cores")
    gpu = environment.get("gpu")
    if gpu:  # `nvidia-smi -L` names one board: keep the model, not its index or UUID
        gpu = hardware_fp.gpu_model(str(gpu))
    host = environment.get("host")
    return Hardware(cpu_model=str(environment.get("cpu_model") or "unknown"),
                    cpu_cores=cores if isinstance(cores, int) and cores > 0 else None,
                    gpu=str(gpu) if gpu else None,
                    host=(tuple((f, host.get(f)) for f in hostinfo.FIELDS)
                          if isinstance(host, Mapping) else None))


# How far a calibrated speed ratio may lie from 1 on the same hardware: two idle no-draft runs
# of the committed campaign 23 minutes apart differed by 5-7 % (the tolerance of the ledger's
# baseline-tok-s claim, which measures the same thing).
SPEED_BAND = 0.08


@dataclass(frozen=True, kw_only=True)
class HardwareVerdict:
    """Whether two run sets ran on the same hardware, and what decided it."""

    verdict: str  # "same", "different" or "unknown"
    why: str  # one line for the report
    differing: tuple[str, ...] = ()  # the fingerprint fields that differ
    speed_ratio: float | None = None  # reproduction's time over the reference's (calibration)

    @property
    def same(self) -> bool:
        return self.verdict == "same"

    def note(self) -> str:
        """What a verdict of "differs with hardware" says beside the claim.

        >>> HardwareVerdict(verdict="different", why="w", speed_ratio=0.58).note()
        'calibrated speed ratio 0.58: this machine takes 0.58 of the time'
        """
        if self.speed_ratio is None:
            return self.why
        return (f"calibrated speed ratio {self.speed_ratio:.2f}: this machine takes "
                f"{self.speed_ratio:.2f} of the time")


def _shown(v: Any) -> str:
    return "not recorded" if v is None else str(v)


def judge(a: Hardware, b: Hardware, speed_ratio: float | None) -> HardwareVerdict:
    """Same hardware only when earned (the module's docstring); ``speed_ratio``: the
    reproduction's calibration, B's time over A's for the same prompts (None: no calibration).

    >>> x = Hardware(cpu_model="Xeon", cpu_cores=2, gpu=None, host=(("cache_l3", "32 MiB"),))
    >>> judge(x, x, 1.03).verdict, judge(x, x, 0.58).verdict, judge(x, x, None).verdict
    ('same', 'different', 'unknown')
    >>> y = Hardware(cpu_model="Xeon", cpu_cores=2, gpu=None, host=(("cache_l3", "480 MiB"),))
    >>> judge(x, y, 1.0).why
    'the extended fingerprints differ: cache_l3 32 MiB vs 480 MiB'
    """
    basic = [f for f in ("cpu_model", "cpu_cores", "gpu") if getattr(a, f) != getattr(b, f)]
    if basic:
        return HardwareVerdict(
            verdict="different", differing=tuple(basic), speed_ratio=speed_ratio,
            why="different machines: " + "; ".join(
                f"{f} {_shown(getattr(a, f))} vs {_shown(getattr(b, f))}" for f in basic))
    if a.host is None or b.host is None:
        who = "neither side recorded the" if a.host is None and b.host is None else (
            "the reference recorded no" if a.host is None else "the reproduction recorded no")
        return HardwareVerdict(
            verdict="unknown", speed_ratio=speed_ratio,
            why=f"same model string, but {who} extended fingerprint (runs measured before it "
                "was recorded): not known to be the same hardware")
    ha, hb = dict(a.host), dict(b.host)
    diff = tuple(f for f in ha.keys() | hb.keys() if ha.get(f) != hb.get(f))
    diff = tuple(f for f in hostinfo.FIELDS if f in diff)
    if diff:
        return HardwareVerdict(
            verdict="different", differing=diff, speed_ratio=speed_ratio,
            why="the extended fingerprints differ: " + "; ".join(
                f"{f} {_shown(ha.get(f))} vs {_shown(hb.get(f))}" for f in diff))
    if speed_ratio is None:
        return HardwareVerdict(
            verdict="unknown", why="equal fingerprints, but no calibrated speed ratio (a "
                                   "comparison of two run sets without a calibration)")
    if abs(speed_ratio - 1.0) > SPEED_BAND:
        return HardwareVerdict(
            verdict="different", speed_ratio=speed_ratio,
            why=f"equal fingerprints, but a calibrated speed ratio of {speed_ratio:.2f}, "
                f"outside 1 ± {SPEED_BAND:g} (the noise between two idle runs here)")
    return HardwareVerdict(
        verdict="same", speed_ratio=speed_ratio,
        why=f"equal fingerprints and a calibrated speed ratio of {speed_ratio:.2f}, within "
            f"1 ± {SPEED_BAND:g}")


def software(environment: Mapping[str, Any]) -> dict[str, Any]:
    """The software part that should be equal for a like-for-like comparison."""
    return {k: environment.get(k) for k in ("llama_cpp_version", "binary_sha256",
                                            "model_sha256")}


def this_machine() -> Hardware:
    """The hardware of the machine this process runs on (as a campaign would record it)."""
    from artifact.campaign.fingerprint import cpu_model
    from artifact.campaign.gpu import gpu_name

    return Hardware(cpu_model=cpu_model(), cpu_cores=os.cpu_count(), gpu=gpu_name(),
                    host=tuple(hostinfo.capture().items()))


def load_sample() -> dict[str, float]:
    """The 1-, 5- and 15-minute load averages now (the machine's other work, for the report)."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return {}
    return {"load1": round(one, 2), "load5": round(five, 2), "load15": round(fifteen, 2)}
