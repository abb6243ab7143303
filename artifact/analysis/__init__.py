"""Raw run directories to the study's statistics (``experiments/analysis/summary.json``).

One module per concern: :mod:`.runs` (loading, exclusion), :mod:`.logs` (server-log parsing and
pairing), :mod:`.final` (per-configuration stats, speedups), :mod:`.positions` (per-position
acceptance), :mod:`.breakeven` (break-even acceptance), :mod:`.summary` (assembly, canonical
JSON). The statistics themselves live in :mod:`artifact.stats`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from artifact.analysis.runs import (
        AnalysisError,
        ConfigError,
        Run,
        RunDescription,
        load_runs,
    )
    from artifact.analysis.summary import build_summary, dumps, write_summary
    from artifact.contract.summary import SCHEMA_VERSION

# Imported on first use, so that `doit` (which imports the analysis task) does not load
# numpy and scipy, nor the summary's contract, just to list or skip tasks.
_LAZY = {"AnalysisError": "analysis.runs", "ConfigError": "analysis.runs", "Run": "analysis.runs",
         "RunDescription": "analysis.runs", "load_runs": "analysis.runs",
         "build_summary": "analysis.summary", "dumps": "analysis.summary",
         "write_summary": "analysis.summary", "SCHEMA_VERSION": "contract.summary"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"artifact.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'artifact.analysis' has no attribute {name!r}")


__all__ = [
    "SCHEMA_VERSION",
    "AnalysisError",
    "ConfigError",
    "Run",
    "RunDescription",
    "build_summary",
    "dumps",
    "load_runs",
    "write_summary",
]
