"""What the manuscript reads of ``memory.json`` (``v.memory``): selections only.

``by[target][drafter]`` is a run's row (:mod:`artifact.analysis.memory`), ``added`` what each
drafter adds to the no-draft server's peak per target, and the ranges the text cites. A
configuration whose run was set aside has no row: the paper prints its values as not measured
(an em dash) and leaves out the sentence that needs it; the analysis's warnings say why. With no
row at all, ``v.memory`` is empty and the paper says nothing of memory.
"""

from __future__ import annotations

from typing import Any

from artifact.errors import RenderError

SCHEMA = 1  # the memory.json this module reads
TARGETS = ("Q4_1", "Q8_0", "F16")


def checked(data: Any, where: str) -> dict[str, Any]:
    """Parsed ``memory.json`` of the schema this renderer reads, one row per configuration
    (target, drafter); another schema, or a configuration with two rows, is one line."""
    got = data.get("schema") if isinstance(data, dict) else None
    if got != SCHEMA:
        raise RenderError(f"{where}: schema {got!r}, this renderer reads {SCHEMA}")
    seen: dict[tuple[str, str], int] = {}
    rows = data.get("rows")
    for i, r in enumerate(rows if isinstance(rows, list) else []):
        key = (str(r.get("target")), str(r.get("drafter"))) if isinstance(r, dict) else None
        if key is not None and key in seen:
            raise RenderError(f"{where}: field 'rows': rows {seen[key]} and {i} both of target "
                              f"{key[0]}, drafter {key[1]}; expected one row per configuration "
                              "(rerun `doit memory`)")
        if key is not None:
            seen[key] = i
    out: dict[str, Any] = data
    return out


def variables(data: dict[str, Any]) -> dict[str, Any]:
    """``v.memory``: each run's row by target and drafter, what drafters add, the ranges; empty
    when no run was kept."""
    if not data["rows"]:
        return {}
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
