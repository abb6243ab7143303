"""The conditions every measurement runs under (issue 16): one at a time per host, on a quiet
machine, each request's contention recorded.

:func:`measuring` takes the host-wide measurement lock (:mod:`artifact.hostlock`), then waits
for a quiet machine (:func:`artifact.campaign.contention.wait_quiet`) and records the verdict in
each run's ledger. :class:`Window` brackets one request with two ``/proc`` snapshots and gives
the record's ``contention`` and ``contended`` fields. Every executor measures through this
layer: the local runner, the interleaved group runner, and a Slurm job on its node.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from artifact import hostlock
from artifact.campaign import contention, events
from artifact.log import Log


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        from artifact.errors import SpecError

        raise SpecError(f"${name}: expected a number of seconds, got {raw!r}") from None


@dataclass(frozen=True, kw_only=True)
class Conditions:
    """How quiet a measurement must be, and what to do when it is not."""

    wait_for_lock: bool = True  # False: fail in one line when another measurement holds it
    allow_contention: bool = False  # gate timed out: proceed, the run marked, instead of failing
    threshold_cores: float = contention.DEFAULT_THRESHOLD_CORES  # foreign CPU, gate and records
    hold_s: float = contention.DEFAULT_HOLD_S  # the gate wants this long below the threshold
    gate_timeout_s: float = contention.DEFAULT_GATE_TIMEOUT_S
    remeasure_contended: int = 1  # extra attempts for a contended request (all kept)

    @classmethod
    def from_env(cls, **overrides: Any) -> Conditions:
        """Defaults, with ``$SPECDEC_QUIET_HOLD_S``, ``$SPECDEC_QUIET_TIMEOUT_S`` and
        ``$SPECDEC_ALLOW_CONTENTION=1`` (the tests' short gate) applied, then ``overrides``."""
        base: dict[str, Any] = {
            "hold_s": _env_float("SPECDEC_QUIET_HOLD_S", contention.DEFAULT_HOLD_S),
            "gate_timeout_s": _env_float("SPECDEC_QUIET_TIMEOUT_S",
                                         contention.DEFAULT_GATE_TIMEOUT_S),
            "allow_contention": os.environ.get("SPECDEC_ALLOW_CONTENTION") == "1",
        }
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**base)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


@contextlib.contextmanager
def measuring(what: str, runs: Sequence[Path], cond: Conditions, say: Log) -> Iterator[None]:
    """Hold the host's measurement lock and pass the quiet gate, for the runs in ``runs``.

    The gate's verdict is appended to each run's ledger; a gate that times out raises
    :class:`artifact.errors.MachineBusy` unless ``cond.allow_contention``.
    """
    with hostlock.measuring(what, wait=cond.wait_for_lock, say=say):
        gate = contention.wait_quiet([os.getpid()], threshold_cores=cond.threshold_cores,
                                     hold_s=cond.hold_s, timeout_s=cond.gate_timeout_s,
                                     allow_contention=cond.allow_contention, say=say)
        for run in runs:
            events.record(run, "gate", passed=gate.passed, allowed=gate.allowed,
                          waited_s=round(gate.waited_s, 3),
                          foreign_cores=(None if gate.foreign_cores is None
                                         else round(gate.foreign_cores, 3)),
                          threshold_cores=cond.threshold_cores, hold_s=cond.hold_s)
        yield


class Window:
    """One request's window: a ``/proc`` snapshot when it is sent and one when it ends."""

    def __init__(self, own_pids: Callable[[], Iterable[int]], threshold_cores: float) -> None:
        self._own = own_pids
        self._threshold = threshold_cores
        self._start = contention.snapshot(self._own())

    def close(self) -> tuple[dict[str, Any], bool | None]:
        """The record's ``contention`` and ``contended`` fields."""
        end = contention.snapshot(self._own())
        if self._start is None or end is None:
            return dict(contention.UNAVAILABLE), None
        w = contention.between(self._start, end)
        return w.as_record(), w.foreign_cores > self._threshold


def run_contention(results: Sequence[Any], threshold_cores: float) -> dict[str, Any] | None:
    """The run's contention over its records (those that carry it), or None when none does."""
    windows: list[contention.Window | None] = []
    any_field = False
    for r in results:
        c = getattr(r, "contention", None)
        if c is None:
            continue
        any_field = True
        if "unavailable" in c:
            windows.append(None)
            continue
        windows.append(contention.Window(
            foreign_cores=float(c["foreign_cores"]),
            steal_cores=float(c.get("steal_cores") or 0.0),
            load1=c.get("load1"), cpu_mhz=c.get("cpu_mhz")))
    if not any_field:
        return None
    return contention.run_summary(windows, threshold_cores)
