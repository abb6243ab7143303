"""Parameters that change the analysis's output (light: no numpy, read by the doit task)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Bootstrap:
    """How every percentile-bootstrap interval is drawn; passed down, never read as a global."""

    resamples: int = 2000  # resamples per (run, group)
    confidence: float = 0.95  # of every interval
    seed: int = 20261129  # of the numpy Generator, mixed with the run id and the group


BOOTSTRAP = Bootstrap()  # the study's settings (recorded in summary.json: parameters)
