"""The hardware fingerprint of a run: what must be equal for two runs' numbers to be pooled.

Taken from the ``environment`` block of a run's ``config.json`` (see :mod:`artifact.records`):
the CPU model and core count, the GPU model (its UUID left out: two cards of one model are the
same hardware) and the GPU driver. Runs measured before the driver was recorded have no
``gpu_driver``; a missing field compares as ``None``.

>>> fingerprint({"cpu_model": "Xeon", "cpu_cores": 2,
...              "gpu": "GPU 0: NVIDIA H200 (UUID: GPU-1c2d)", "gpu_driver": "570.86"})
{'cpu_model': 'Xeon', 'cpu_cores': 2, 'gpu': 'NVIDIA H200', 'gpu_driver': '570.86'}
>>> differing({"cpu_model": "Xeon", "cpu_cores": 2}, {"cpu_model": "EPYC", "cpu_cores": 2})
['cpu_model']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

FIELDS = ("cpu_model", "cpu_cores", "gpu", "gpu_driver")
_GPU_INDEX = re.compile(r"^GPU \d+:\s*")
_GPU_UUID = re.compile(r"\s*\(UUID: [^)]*\)\s*$")


def gpu_model(name: Any) -> Any:
    """``nvidia-smi -L``'s line without the index and UUID; anything else unchanged."""
    if not isinstance(name, str):
        return name
    return _GPU_UUID.sub("", _GPU_INDEX.sub("", name)).strip()


def fingerprint(env: Any) -> dict[str, Any]:
    """The fields of :data:`FIELDS` in ``env``; all None where ``env`` is no object (a
    ``config.json`` whose ``environment`` is null or a list).

    >>> fingerprint(None)
    {'cpu_model': None, 'cpu_cores': None, 'gpu': None, 'gpu_driver': None}
    """
    fp = {f: env.get(f) for f in FIELDS} if isinstance(env, Mapping) else dict.fromkeys(FIELDS)
    fp["gpu"] = gpu_model(fp["gpu"])
    return fp


def differing(a: Any, b: Any) -> list[str]:
    """The fingerprint fields in which two environments differ."""
    fa, fb = fingerprint(a), fingerprint(b)
    return [f for f in FIELDS if fa[f] != fb[f]]
