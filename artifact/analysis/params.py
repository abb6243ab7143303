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
# The workload-realism study (issue 17): enough resamples that the Monte-Carlo error of an
# interval endpoint stays below half a point (realism.json: mc_error_max says what it was).
REALISM_BOOTSTRAP = Bootstrap(resamples=8000, seed=20261201)
