"""What the manuscript reads of ``memory.json`` (``v.memory``): selections only.

``by[target][drafter]`` is a run's row (:mod:`artifact.analysis.memory`), ``added`` what each
drafter adds to the no-draft server's peak per target, and the ranges the text cites.
"""

from __future__ import annotations

from typing import Any

from artifact.errors import RenderError

SCHEMA = 1  # the memory.json this module reads
TARGETS = ("Q4_1", "Q8_0", "F16")


def checked(data: Any, where: str) -> dict[str, Any]:
    """Parsed ``memory.json`` of the schema this renderer reads; another is one line."""
    got = data.get("schema") if isinstance(data, dict) else None
    if got != SCHEMA:
        raise RenderError(f"{where}: schema {got!r}, this renderer reads {SCHEMA}")
    out: dict[str, Any] = data
    return out


def variables(data: dict[str, Any]) -> dict[str, Any]:
    """``v.memory``: each run's row by target and drafter, what drafters add, the ranges."""
    by: dict[str, dict[str, Any]] = {}
    for r in data["rows"]:
        by.setdefault(str(r["target"]), {})[str(r["drafter"])] = r
    none = [by[t]["none"] for t in TARGETS if "none" in by.get(t, {})]
    added = data["added"]
    draft = [added[t]["draft-simple"] for t in TARGETS if "draft-simple" in added.get(t, {})]
    ngram = [added[t]["ngram-mod"] for t in TARGETS if "ngram-mod" in added.get(t, {})]
    return {
        "by": by, "added": added, "targets": [t for t in TARGETS if t in by],
        "n_runs": len(data["rows"]),
        "machines": sorted({str(r.get("machine")) for r in data["rows"]}),
        "none_hwm": {"min": min((r["hwm_mib"] for r in none), default=None),
                     "max": max((r["hwm_mib"] for r in none), default=None)},
        "draft_added": {"min": min(draft, default=None), "max": max(draft, default=None)},
        "ngram_added": {"min": min(ngram, default=None), "max": max(ngram, default=None)},
        "warnings": list(data["warnings"]),
    }
