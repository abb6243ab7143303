"""Memory (issue 33): each configuration's peak resident memory, from the memory runs.

The runs of ``experiments/campaigns/memory.toml`` (``experiments/runs-memory/``) run the core
study's server for each target and drafter; each wrote ``memory.json``
(:mod:`artifact.campaign.memory`): the peaks of ``llama-server``'s resident set and of its
anonymous (KV cache, buffers, a draft's context) and file-backed (the mapped model files)
parts. This reads them into ``experiments/analysis/memory.json``:

``rows``
    one per configuration (its run): target quantization, drafter, draft quantization, the
    four peaks in MiB (``hwm`` is the kernel's own peak), samples taken, the machine it ran on;
``added``
    per target, what each drafter adds to the no-draft server's peak (``hwm``), in MiB;
``warnings``
    one line per run set aside (:mod:`artifact.analysis.validate.memory`: no ``memory.json``,
    one that says it was not measured or holds impossible peaks, a config that names no
    configuration, a second run of one configuration), ending ``; run skipped``.

A measurement of one run per configuration: no interval (the peaks of a deterministic
allocation; a second pass on the same machine gives the same figures to a few MiB).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from artifact import files, hostinfo, paths, records
from artifact.analysis.validate import memory as vmemory
from artifact.errors import AnalysisError, RecordError

SCHEMA = 1
PEAKS = vmemory.PEAKS


def _read(run: Path, warnings: list[str]) -> tuple[dict[str, Any], str] | None:
    """One run's row and its run id, or None with a warning saying why it is set aside
    (:mod:`artifact.analysis.validate.memory`)."""
    try:
        config = records.read_json(run / records.CONFIG)
        mem = records.read_json(run / records.MEMORY)
    except RecordError as err:
        warnings.append(f"run {run.name}: {err}; run skipped")
        return None
    why = vmemory.config_problem(config) or vmemory.memory_problem(
        mem, limit=vmemory.ceiling(config))
    if why is not None:
        warnings.append(f"run {run.name}: {why}; run skipped")
        return None
    spec = config["spec"]
    row: dict[str, Any] = {
        "run": run.name, "target": spec["target_quant"], "drafter": spec["drafter"],
        "draft_quant": spec.get("draft_quant"), "k": spec.get("k"),
        "n_samples": mem["n_samples"],
        "machine": hostinfo.machine_name(config.get("environment")),
    }
    for p in PEAKS:
        row[f"{p}_mib"] = float(mem[f"peak_{p}_mib"])
    rid = config.get("run_id")
    return row, rid if isinstance(rid, str) and rid else run.name


def analyse(root: Path) -> dict[str, Any]:
    """``memory.json``'s content from the runs under ``root``."""
    warnings: list[str] = []
    read = [got for run in records.run_folders(root) if (got := _read(run, warnings))]
    kept = vmemory.one_per_configuration(
        read, run_id=lambda r: r[1], folder=lambda r: Path(r[0]["run"]),
        configuration=lambda r: f"{r[0]['target']} {r[0]['drafter']}", warnings=warnings)
    rows = sorted((row for row, _ in kept),
                  key=lambda r: (str(r["target"]), str(r["drafter"]), r["run"]))
    added: dict[str, dict[str, float]] = {}
    for r in rows:
        base = next((b for b in rows if b["target"] == r["target"] and b["drafter"] == "none"),
                    None)
        if r["drafter"] == "none" or base is None:
            continue
        added.setdefault(str(r["target"]), {})[str(r["drafter"])] = round(
            r["hwm_mib"] - base["hwm_mib"], 1)
    return {"schema": SCHEMA, "rows": rows, "added": added, "warnings": sorted(warnings)}


def write(root: Path = paths.MEMORY_RUNS, out: Path = paths.MEMORY) -> dict[str, Any]:
    """Analyse the memory runs and write ``memory.json``; returns what it wrote. Written even
    when every run is set aside (no rows, the warnings saying why); refused when no run has a
    ``memory.json`` at all (nothing was measured)."""
    if not any((run / records.MEMORY).is_file() for run in records.run_folders(root)):
        raise AnalysisError(f"{paths.shown(root)}: no memory run with a memory.json (measure them: "
                            "doit campaign --file experiments/campaigns/memory.toml "
                            "--runs-dir experiments/runs-memory)")
    data = analyse(root)
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
