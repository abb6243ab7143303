"""Runs are pooled into one analysis only when measured on the same hardware.

The hardware fingerprint (:mod:`artifact.hardware`: CPU model and cores, GPU model, GPU driver)
is read from each run's ``config.json: environment``. Runs whose fingerprints differ are not
pooled: :func:`check_same_hardware` raises :class:`MixedHardwareError`, one line naming two
runs and the fields, unless every run's campaign said ``pool_mixed_hardware = true`` (recorded
in its ``config.json``) — a campaign that studies hardware on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence

from artifact import hardware, records
from artifact.analysis.runs import AnalysisError, Loaded


class MixedHardwareError(AnalysisError):
    """Runs measured on different hardware would be pooled; the message names them."""


def _allows_mixing(run: Loaded) -> bool:
    try:
        return records.read_json(run.path / records.CONFIG).get("pool_mixed_hardware") is True
    except records.RecordError:
        return False


def check_same_hardware(runs: Sequence[Loaded]) -> None:
    """Raise :class:`MixedHardwareError` when runs differ in hardware and pooling is not allowed."""
    if len(runs) < 2:
        return
    first = runs[0]
    for run in runs[1:]:
        diff = hardware.differing(first.desc.environment, run.desc.environment)
        if not diff:
            continue
        if all(_allows_mixing(r) for r in runs):
            return
        a = hardware.fingerprint(first.desc.environment)
        b = hardware.fingerprint(run.desc.environment)
        fields = "; ".join(f"{f}: {a[f]!r} vs {b[f]!r}" for f in diff)
        raise MixedHardwareError(
            f"runs {first.desc.run_id} and {run.desc.run_id} were measured on different "
            f"hardware ({fields}); not pooled (a campaign that means it sets [campaign] "
            "pool_mixed_hardware = true)")
