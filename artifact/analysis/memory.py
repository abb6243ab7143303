"""Memory (issue 33): each configuration's peak resident memory, from the memory runs.

The runs of ``experiments/campaigns/memory.toml`` (``experiments/runs-memory/``) run the core
study's server for each target and drafter; each wrote ``memory.json``
(:mod:`artifact.campaign.memory`): the peaks of ``llama-server``'s resident set and of its
anonymous (KV cache, buffers, a draft's context) and file-backed (the mapped model files)
parts. This reads them into ``experiments/analysis/memory.json``:

``rows``
    one per run: target quantization, drafter, draft quantization, the four peaks in MiB
    (``hwm`` is the kernel's own peak), samples taken, the machine it ran on;
``added``
    per target, what each drafter adds to the no-draft server's peak (``hwm``), in MiB;
``warnings``
    one line per run left out (no ``memory.json``, or one that says it was not measured).

A measurement of one run per configuration: no interval (the peaks of a deterministic
allocation; a second pass on the same machine gives the same figures to a few MiB).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from artifact import files, hostinfo, paths, records
from artifact.errors import AnalysisError, RecordError

SCHEMA = 1
PEAKS = ("rss", "anon", "file", "hwm")


def _row(run: Path) -> tuple[dict[str, Any] | None, str | None]:
    """One run's row, or why it is left out."""
    try:
        config = records.read_json(run / records.CONFIG)
        mem = records.read_json(run / records.MEMORY)
    except RecordError as err:
        return None, f"run {run.name}: left out ({err})"
    if mem.get("measured") is not True:
        return None, f"run {run.name}: left out (memory not measured: {mem.get('reason')})"
    n = mem.get("n_samples")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        return None, (f"run {run.name}: left out ({records.MEMORY}: field 'n_samples': expected "
                      f"a positive integer, got {n!r})")
    bad = [f"peak_{p}_mib" for p in PEAKS if not _mib(mem.get(f"peak_{p}_mib"))]
    if bad:
        return None, (f"run {run.name}: left out ({records.MEMORY}: field '{bad[0]}': expected "
                      f"a finite number of MiB, got {mem.get(bad[0])!r})")
    spec = config.get("spec") or {}
    row: dict[str, Any] = {
        "run": run.name, "target": spec.get("target_quant"), "drafter": spec.get("drafter"),
        "draft_quant": spec.get("draft_quant"), "k": spec.get("k"),
        "n_samples": n,
        "machine": hostinfo.machine_name(config.get("environment")),
    }
    for p in PEAKS:
        row[f"{p}_mib"] = float(mem[f"peak_{p}_mib"])
    return row, None


def _mib(v: Any) -> bool:
    """A peak as memory.json must hold it: a finite, non-negative number (never a bool)."""
    return (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            and v >= 0)


def analyse(root: Path) -> dict[str, Any]:
    """``memory.json``'s content from the runs under ``root``."""
    rows, warnings = [], []
    for run in records.run_folders(root):
        row, why = _row(run)
        if row is not None:
            rows.append(row)
        if why is not None:
            warnings.append(why)
    rows.sort(key=lambda r: (str(r["target"]), str(r["drafter"]), r["run"]))
    added: dict[str, dict[str, float]] = {}
    for r in rows:
        base = next((b for b in rows if b["target"] == r["target"] and b["drafter"] == "none"),
                    None)
        if r["drafter"] == "none" or base is None or None in (r["hwm_mib"], base["hwm_mib"]):
            continue
        added.setdefault(str(r["target"]), {})[str(r["drafter"])] = round(
            r["hwm_mib"] - base["hwm_mib"], 1)
    return {"schema": SCHEMA, "rows": rows, "added": added, "warnings": sorted(warnings)}


def write(root: Path = paths.MEMORY_RUNS, out: Path = paths.MEMORY) -> dict[str, Any]:
    """Analyse the memory runs and write ``memory.json``; returns what it wrote."""
    data = analyse(root)
    if not data["rows"]:
        raise AnalysisError(f"{paths.shown(root)}: no memory run with a memory.json (measure them: "
                            "doit campaign --file experiments/campaigns/memory.toml "
                            "--runs-dir experiments/runs-memory)")
    files.write_text(out, files.dumps_json(files.to_plain(data)))
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=Path, default=paths.MEMORY_RUNS)
    ap.add_argument("--out", type=Path, default=paths.MEMORY)
    args = ap.parse_args(argv)
    data = write(args.runs, args.out)
    print(f"wrote {paths.shown(args.out)}: {len(data['rows'])} run(s), "
          f"{len(data['warnings'])} warning(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
