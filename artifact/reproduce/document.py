"""The comparison of two run sets as one JSON document (``comparison.json``).

This is the contract between the comparison (here) and its report
(:mod:`artifact.render.comparison`, which reads only this file): both sides' hardware and
software fingerprints, the reproduction's manifest (calibration, ETA, wall times, machine
load), every claim with both values, the band it was judged by and its verdict (a
hardware-bound claim's three answers with both intervals, the difference's 90 % and 95 %
intervals, the margin and the calibrated speed ratio: :mod:`artifact.reproduce.verdict`), and
the raw statistics of every run side by side. Floats are rounded to 6 significant digits and keys
sorted, so equal inputs give equal bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from artifact import files, paths
from artifact.analysis.validate import calibration
from artifact.claims import Claim, Outcome
from artifact.contract import comparison as contract
from artifact.errors import ReproduceError
from artifact.reproduce import compare, host, verdict
from artifact.reproduce.runsets import RunSet, raw_stats, same_outputs

SCHEMA = contract.SCHEMA_VERSION
NAME = "comparison.json"


def _calibration(c: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not c:
        return None
    return {"run_id": str(c.get("run_id", "")), "prompt_ids": list(c.get("prompt_ids", [])),
            "here_ms": c.get("here_ms"), "committed_ms": c.get("committed_ms"),
            "scale": float(c["scale"]), "skipped": c.get("skipped")}


def _selection(sel: Any) -> Any:
    """The manifest's selection with its number of sessions (``None`` where it has none: every
    session, or a study of prompts, whose manifests do not carry the field)."""
    return {**sel, "sessions": sel.get("sessions")} if isinstance(sel, Mapping) else sel


def _manifest_view(m: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if m is None:
        return None
    runs = m.get("runs", {})
    samples = [{"at": str(x.get("at", "")), "event": str(x.get("event", "")),
                **{k: x.get(k) for k in ("load1", "load5", "load15")}}
               for x in m.get("load", [])]
    loads = [float(x["load1"]) for x in samples if isinstance(x["load1"], int | float)]
    return {
        "selection": _selection(m.get("selection")), "started": m.get("started"),
        "finished": m.get("finished"), "complete": bool(m.get("complete")),
        "calibration": _calibration(m.get("calibration")),
        "expected_s": sum(float(v) for v in m.get("expected_s", {}).values()),
        "wall_s": sum(float(v.get("wall_s", 0.0)) for v in runs.values()),
        "run_wall_s": {r: v.get("wall_s") for r, v in sorted(runs.items())},
        "load": samples,
        "load1_max": max(loads) if loads else None,
        "load1_mean": sum(loads) / len(loads) if loads else None,
        "cpu_count": m.get("cpu_count"),
    }


def side(rs: RunSet) -> dict[str, Any]:
    first = [str(r.desc.environment.get("start_time", "")) for r in rs.runs]
    starts = sorted(s for s in first if s)
    return {
        "name": rs.name, "root": paths.shown(rs.root, outside="name"), "runs": list(rs.run_ids),
        "hardware": {**rs.hardware.as_dict(), "description": rs.hardware.describe()},
        "software": dict(rs.software),
        "measured": {"first": starts[0] if starts else None,
                     "last": starts[-1] if starts else None},
        "reproduction": _manifest_view(rs.manifest),
        "warnings": list(rs.warnings),
    }


def _values(o: Outcome) -> list[list[Any]]:
    return [[p, v] for p, v in o.values]


def _iv(iv: verdict.Interval | None) -> list[float] | None:
    return iv.as_list() if iv is not None else None


def equivalence_entry(j: compare.Judged, summary_a: Mapping[str, Any],
                      vars_a: Mapping[str, Any], summary_b: Mapping[str, Any],
                      vars_b: Mapping[str, Any]) -> dict[str, Any] | None:
    """A hardware-bound claim's equivalence test, as ``comparison.json`` carries it."""
    eq = j.equivalence
    if eq is None:
        return None
    ia = verdict.interval_of(j.claim, summary_a, vars_a)
    ib = verdict.interval_of(j.claim, summary_b, vars_b)
    return {"answer": eq.answer, "a_interval": _iv(ia), "a_level": ia.level if ia else None,
            "b_interval": _iv(ib), "b_level": ib.level if ib else None,
            "difference": eq.difference, "ci90": _iv(eq.ci90), "ci95": _iv(eq.ci95),
            "margin": eq.margin, "margin_source": j.claim.noise, "speed_ratio": j.speed_ratio}


def claim_entry(j: compare.Judged, equivalence: dict[str, Any] | None = None
                ) -> dict[str, Any]:
    c: Claim = j.claim
    return {
        "id": c.id, "scope": c.scope, "statement": c.statement, "quantity": c.quantity,
        "reason": c.reason, "runs": list(c.runs), "format": c.format,
        "expected": c.expected, "expected_text": c.describe_expected(),
        "tolerance": c.describe_tolerance(),
        "a": j.a.reproduced, "b": j.b.reproduced,
        "a_vs_ledger": j.a.status, "difference": (
            j.b.reproduced - j.a.reproduced
            if isinstance(j.a.reproduced, float) and isinstance(j.b.reproduced, float)
            else None),
        "band": list(j.band) if j.band else None,
        "values_a": _values(j.a), "values_b": _values(j.b),
        "bounds_a": [list(b) for b in j.a.bounds], "bounds_b": [list(b) for b in j.b.bounds],
        "verdict": j.verdict, "why": j.why, "failing": j.failing,
        "missing_runs": list(j.missing_runs), "equivalence": equivalence,
    }


def run_rows(a: RunSet, b: RunSet) -> list[dict[str, Any]]:
    """Raw statistics per run, both sides; runs on one side only are listed too."""
    ra = {r.desc.run_id: r for r in a.runs}
    rb = {r.desc.run_id: r for r in b.runs}
    rows = []
    for rid in sorted(set(ra) | set(rb)):
        row: dict[str, Any] = {"run": rid, "a": None, "b": None, "same_outputs": None,
                               "label": (rb.get(rid) or ra[rid]).desc.label}
        if rid in ra:
            row["a"] = raw_stats(ra[rid])
        if rid in rb:
            row["b"] = raw_stats(rb[rid])
        if rid in ra and rid in rb:
            row["same_outputs"] = list(same_outputs(ra[rid], rb[rid]))
        rows.append(row)
    return rows


def build(a: RunSet, b: RunSet, ledger: Sequence[Claim], *,
          ledger_path: Path) -> contract.Comparison:
    """The whole comparison of reproduction ``b`` against reference ``a``."""
    ratio = speed_ratio(b)
    hw = host.judge(a.hardware, b.hardware, ratio)
    judged = compare.judge_all(ledger, a.summary, a.variables, b.summary, b.variables,
                               same_hardware=hw.same, runs_a=_all_runs(a), runs_b=b.run_ids,
                               hardware_note=hw.note(), speed_ratio=ratio)
    doc = {
        "schema": SCHEMA, "ledger": paths.shown(ledger_path, outside="name"),
        "a": side(a), "b": side(b),
        "same_hardware": hw.same, "same_software": dict(a.software) == dict(b.software),
        "hardware": {"verdict": hw.verdict, "why": hw.why, "differing": list(hw.differing),
                     "speed_ratio": hw.speed_ratio, "band": host.SPEED_BAND},
        "claims": [claim_entry(j, equivalence_entry(j, a.summary, a.variables, b.summary,
                                                     b.variables)) for j in judged],
        "counts": compare.counts(judged),
        "strict_failures": [j.claim.id for j in compare.strict_failures(judged)],
        "runs": run_rows(a, b),
    }
    return contract.validate(files.to_plain(doc), source=NAME, error=ReproduceError)


def speed_ratio(rs: RunSet) -> float | None:
    """A reproduction's calibrated speed ratio: its time for the calibration prompts over the
    committed records' time for them (``reproduction.json: calibration.scale``, checked against
    its own times when the manifest was read: :mod:`artifact.analysis.validate.calibration`);
    ``None`` without a calibration (a folder of runs, or a skipped calibration)."""
    return calibration.speed_ratio((rs.manifest or {}).get("calibration"))


def _all_runs(a: RunSet) -> tuple[str, ...]:
    """The reference's runs before it was cut to the reproduction's (for "not run")."""
    return a.all_run_ids or a.run_ids


def write(doc: contract.Comparison, out_dir: Path) -> Path:
    return files.write_json(out_dir / NAME, doc)
