"""The memory runs (``experiments/runs-memory/<run>/``, :mod:`artifact.analysis.memory`), read
by one rule set.

- **Config** (:func:`config_problem`): ``config.json``'s ``spec`` is an object naming the
  configuration: ``target_quant`` and ``drafter`` non-empty strings, ``draft_quant`` null or a
  non-empty string, ``k`` null or an integer >= 1.
- **Peaks** (:func:`memory_problem`): ``memory.json`` says ``measured: true``, ``n_samples``
  is an integer >= 1, and each peak (``peak_rss_mib``, ``peak_anon_mib``, ``peak_file_mib``,
  ``peak_hwm_mib``) a finite number of MiB, at least 0 and at most the machine's memory
  (:func:`ceiling`: the run's ``environment.host.mem_total_mib``; where the run recorded none,
  :data:`CEILING_MIB`, 64 TiB). The peaks are of one process, so they are ordered: the
  anonymous and the file-backed part each at most the resident set (``RssAnon + RssFile +
  RssShmem = VmRSS`` in every sample), and the sampled resident set at most the kernel's own
  peak of it (``VmHWM``, which sees between samples too). Each peak is rounded to 0.1 MiB from
  KiB by the same rule, which keeps the order.
- **One run per configuration** (:func:`one_per_configuration`): a copy of a run folder (the
  same ``run_id``) is skipped, the folder named after the id kept (as
  :func:`artifact.analysis.validate.unique_runs` does for every study); of two runs of one
  configuration (target quantization and drafter) the folder first by name is kept.

A run that breaks a rule is set aside, with one warning line naming the run, the file, the
field and what was expected, ending in ``; run skipped`` (the fatal class ``run-left-out`` of
:mod:`artifact.warning_classes`: the paper would miss the number).

>>> memory_problem({"measured": True, "n_samples": 9, "peak_rss_mib": 500.0,
...                 "peak_anon_mib": 90.0, "peak_file_mib": 300.0, "peak_hwm_mib": 320.5},
...                limit=ceiling({}))
"memory.json: field 'peak_hwm_mib': expected at least peak_rss_mib 500.0 (the kernel's peak \
of the resident set the samples read), got 320.5"
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from artifact import records
from artifact.analysis.validate import unique_runs

PEAKS = ("rss", "anon", "file", "hwm")
# Where a run recorded no machine memory: a ceiling no one machine's memory reaches (64 TiB).
CEILING_MIB = float(2**26)
_ROUNDING_MIB = 1.0  # mem_total_mib is MemTotal floored to the MiB; peaks are rounded to 0.1

R = TypeVar("R")


def _shown(v: Any) -> str:
    """A value as a warning quotes it: its repr, cut to 40 characters."""
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _count(v: Any, least: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= least


def _number(v: Any) -> float | None:
    """``v`` as a finite float, or None when it is not a finite number (a bool is not one)."""
    if not isinstance(v, int | float) or isinstance(v, bool):
        return None
    try:
        x = float(v)
    except OverflowError:  # an integer too large for a float
        return None
    return x if math.isfinite(x) else None


def config_problem(config: Mapping[str, Any]) -> str | None:
    """Why a memory run's ``config.json`` names no configuration (the run is then set aside),
    or None: the file, the field, what was expected.

    >>> config_problem({"spec": {"target_quant": "F16", "drafter": "none"}})
    >>> config_problem({"spec": ["F16", "none"]})
    "config.json: field 'spec': expected an object (the run's resolved spec), got ['F16', 'none']"
    >>> config_problem({"spec": {"target_quant": "F16", "drafter": 3}})
    "config.json: field 'spec.drafter': expected a non-empty string, got 3"
    """
    spec = config.get("spec")
    if not isinstance(spec, dict):
        return (f"{records.CONFIG}: field 'spec': expected an object (the run's resolved spec), "
                f"got {_shown(spec)}")
    for name in ("target_quant", "drafter"):
        v = spec.get(name)
        if not (isinstance(v, str) and v):
            return (f"{records.CONFIG}: field 'spec.{name}': expected a non-empty string, "
                    f"got {_shown(v)}")
    quant = spec.get("draft_quant")
    if quant is not None and not (isinstance(quant, str) and quant):
        return (f"{records.CONFIG}: field 'spec.draft_quant': expected null or a non-empty "
                f"string, got {_shown(quant)}")
    k = spec.get("k")
    if k is not None and not _count(k, 1):
        return (f"{records.CONFIG}: field 'spec.k': expected null or an integer >= 1, "
                f"got {_shown(k)}")
    return None


def ceiling(config: Mapping[str, Any]) -> tuple[float, str]:
    """The most MiB a peak of the run can be, and what that is in words: the machine's memory
    as the run recorded it, or :data:`CEILING_MIB` where it recorded none (or one above it).

    >>> ceiling({"environment": {"host": {"mem_total_mib": 24105}}})
    (24106.0, "the machine's memory (environment.host.mem_total_mib 24105)")
    >>> ceiling({"environment": None})[1]
    '67108864, a ceiling of 64 TiB (the run recorded no machine memory)'
    """
    env = config.get("environment")
    host = env.get("host") if isinstance(env, dict) else None
    total = host.get("mem_total_mib") if isinstance(host, dict) else None
    mib = _number(total)
    if mib is not None and 0 < mib < CEILING_MIB:
        return (mib + _ROUNDING_MIB,
                f"the machine's memory (environment.host.mem_total_mib {_shown(total)})")
    return CEILING_MIB, (f"{CEILING_MIB:.0f}, a ceiling of 64 TiB (the run recorded no machine "
                         "memory)")


def memory_problem(mem: Mapping[str, Any], *, limit: tuple[float, str]) -> str | None:
    """Why a run's ``memory.json`` cannot be a measurement of its server's peaks (the run is
    then set aside), or None: the file, the field, what was expected. ``limit``: the run's
    :func:`ceiling`.

    >>> memory_problem({"measured": False, "reason": "/proc not found (not Linux)"},
    ...                limit=ceiling({}))
    "memory.json: field 'measured': expected true, got False (memory not measured: /proc not \
found (not Linux))"
    >>> memory_problem({"measured": True, "n_samples": 9, "peak_rss_mib": 1e300},
    ...                limit=ceiling({}))
    "memory.json: field 'peak_rss_mib': expected a finite number of MiB, at least 0 and at \
most 67108864, a ceiling of 64 TiB (the run recorded no machine memory), got 1e+300"
    """
    measured = mem.get("measured")
    if measured is not True:
        return (f"{records.MEMORY}: field 'measured': expected true, got {_shown(measured)} "
                f"(memory not measured: {mem.get('reason')})")
    n = mem.get("n_samples")
    if not _count(n, 1):
        return (f"{records.MEMORY}: field 'n_samples': expected a positive integer, "
                f"got {_shown(n)}")
    most, said = limit
    peaks: dict[str, float] = {}
    for p in PEAKS:
        name = f"peak_{p}_mib"
        x = _number(mem.get(name))
        if x is None or not 0 <= x <= most:
            return (f"{records.MEMORY}: field '{name}': expected a finite number of MiB, at "
                    f"least 0 and at most {said}, got {_shown(mem.get(name))}")
        peaks[p] = x
    for part in ("anon", "file"):
        if peaks[part] > peaks["rss"]:
            return (f"{records.MEMORY}: field 'peak_{part}_mib': expected at most peak_rss_mib "
                    f"{peaks['rss']!r} (a part of the resident set), got {peaks[part]!r}")
    if peaks["hwm"] < peaks["rss"]:
        return (f"{records.MEMORY}: field 'peak_hwm_mib': expected at least peak_rss_mib "
                f"{peaks['rss']!r} (the kernel's peak of the resident set the samples read), "
                f"got {peaks['hwm']!r}")
    return None


def one_per_configuration(runs: Sequence[R], *, run_id: Callable[[R], str],
                          folder: Callable[[R], Path], configuration: Callable[[R], str],
                          warnings: list[str]) -> list[R]:
    """One run per ``run_id`` (a copy skipped, the folder named after the id kept), then one
    per configuration (the folder first by name kept): each run skipped is one warning naming
    it and the folder kept, worded ``; run skipped``.

    >>> ws: list[str] = []
    >>> runs = [("m-f16-none", "m-f16-none.bak"), ("m-f16-none", "m-f16-none"),
    ...         ("m-f16-none-2", "m-f16-none-2")]
    >>> kept = one_per_configuration(runs, run_id=lambda r: r[0], folder=lambda r: Path(r[1]),
    ...                              configuration=lambda r: "F16 none", warnings=ws)
    >>> [r[1] for r in kept]
    ['m-f16-none']
    >>> for w in ws: print(w)
    run m-f16-none.bak: run_id 'm-f16-none' already used by m-f16-none; run skipped
    run m-f16-none-2: configuration 'F16 none' already used by m-f16-none; run skipped
    """
    once = unique_runs(runs, run_id=run_id, folder=folder, warnings=warnings)
    return unique_runs(once, run_id=configuration, folder=folder, warnings=warnings,
                       what="configuration")
