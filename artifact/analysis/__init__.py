"""Raw run directories to the study's statistics (``experiments/analysis/summary.json``).

One module per concern: :mod:`.runs` (loading, exclusion), :mod:`.logs` (server-log parsing and
pairing), :mod:`.final` (per-configuration stats, speedups), :mod:`.positions` (per-position
acceptance), :mod:`.breakeven` (break-even acceptance), :mod:`.summary` (assembly, canonical
JSON). The statistics themselves live in :mod:`artifact.stats`.
"""

from artifact.analysis.runs import AnalysisError, ConfigError, Run, RunDescription, load_runs
from artifact.analysis.summary import SCHEMA_VERSION, build_summary, dumps, write_summary

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
