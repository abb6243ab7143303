"""A small ``memory.json`` (artifact/analysis/memory.py's output) made by the tests: three
targets, three drafters each, numbers by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artifact import files

# (target, no draft, ngram-mod, draft model): peak resident MiB (VmHWM)
PEAKS = [("Q4_1", 210.0, 214.5, 300.25), ("Q8_0", 260.0, 263.0, 351.0),
         ("F16", 390.0, 393.5, 482.0)]
FILE_MIB = {"Q4_1": 90.0, "Q8_0": 140.0, "F16": 270.0}


def build_memory() -> dict[str, Any]:
    rows, added = [], {}
    for target, none, ngram, draft in PEAKS:
        for drafter, hwm in (("none", none), ("ngram-mod", ngram), ("draft-simple", draft)):
            rows.append({"run": f"memory-{target.lower()}-{drafter}", "target": target,
                         "drafter": drafter,
                         "draft_quant": "Q2_K" if drafter == "draft-simple" else None, "k": None,
                         "n_samples": 50, "machine": "AMD EPYC (2 cores)", "rss_mib": hwm - 2,
                         "anon_mib": hwm - FILE_MIB[target],
                         "file_mib": FILE_MIB[target], "hwm_mib": hwm})
        added[target] = {"ngram-mod": round(ngram - none, 1),
                         "draft-simple": round(draft - none, 1)}
    return {"schema": 1, "rows": rows, "added": added, "warnings": []}


def write_memory(path: Path) -> Path:
    return files.write_text(path, files.dumps_json(build_memory()))
