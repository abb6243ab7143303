"""The strict gate is never skipped as up to date, and fatal analysis warnings fail it; every
warning is listed, grouped, in the claims report."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from artifact import claims, paths, warning_classes
from artifact.render import model, report
from artifact.render import vars as rvars

from .fixture import build_summary

DUP = "run final-mod: results.jsonl: 1 duplicate record(s) excluded, first copy kept: c1#0"
NULL = "final.final-x: not computable, written as null: by_domain.code.alpha.mean"


def _inputs(tmp_path: Path, warnings: list[str]) -> dict[str, Path]:
    raw = build_summary()
    raw["warnings"] = warnings
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps(raw), encoding="utf-8")
    variables = tmp_path / "vars.json"
    variables.write_text(json.dumps(rvars.compute(model.load(summary))), encoding="utf-8")
    return {"ledger": paths.CLAIMS, "summary": summary, "variables": variables,
            "out_dir": tmp_path / "out"}


def test_a_fatal_warning_fails_strict_and_every_warning_is_in_the_report(tmp_path: Path) -> None:
    kw = _inputs(tmp_path, [NULL, DUP])
    report.verify(**kw, figures=[])  # type: ignore[arg-type]
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "# Warnings of the analysis" in text
    assert "**duplicate-records** (1, fatal under --strict)" in text
    assert text.index("duplicate-records") < text.index("not-computable")  # fatal first
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Warnings of the analysis" in page and DUP in page
    with pytest.raises(claims.ClaimsError, match=r"1 analysis warning\(s\) of a fatal class "
                                                 r"\(duplicate-records"):
        report.verify(**kw, figures=[], strict=True)  # type: ignore[arg-type]


def test_a_warning_of_no_fatal_class_does_not_fail_strict(tmp_path: Path) -> None:
    kw = _inputs(tmp_path, [NULL])
    outcomes = report.verify(**kw, figures=[])  # type: ignore[arg-type]
    if all(o.status == "ok" for o in outcomes):
        report.verify(**kw, figures=[], strict=True)  # type: ignore[arg-type]
    assert warning_classes.fatal([NULL]) == []


@pytest.mark.parametrize("warning", [
    "run a: config.json: spec.drafter: unknown drafter 'x'; run skipped",
    "run a: incomplete (metrics.json missing or not complete); left out",
    "run a: speedup: baseline b measured another protocol: n_predict 64 vs 128; no speedup",
    "run a: speedup: several final no-draft baselines with the same protocol (b, c); keep one",
    "run a: breakeven: no matching baseline; nearest b differs in ctx_size 2048 vs 4096",
    "run a: results.jsonl: 2 record(s) with impossible values excluded: x#0 (alpha 2.0)",
])
def test_fatal_classes(warning: str) -> None:
    assert warning_classes.fatal([warning]) == [warning]


def _doit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "doit", *args], cwd=root, env=env,
                          capture_output=True, text=True, check=False)


def test_strict_verify_is_never_skipped_as_up_to_date(tmp_path: Path) -> None:
    """Issue 8, defect 1: edit an expected value, build, then `doit verify --strict` must fail."""
    for d in ("artifact", "templates", "experiments/campaigns", "experiments/runs",
              "experiments/runs-workload", "experiments/runs-realism", "experiments/runs-cost",
              "experiments/runs-memory", "experiments/sessions", "manuscript"):
        shutil.copytree(paths.ROOT / d, tmp_path / d, ignore=shutil.ignore_patterns(
            "__pycache__", ".*", "_kick", "_superseded", "_scratch*", "build"))
    # the core study: what its analysis reads (server logs left out: 40 MB it does not read)
    shutil.copytree(paths.CORE_RUNS, tmp_path / "experiments/runs-core",
                    ignore=shutil.ignore_patterns("server.log", "events.jsonl"))
    for f in ("dodo.py", "pyproject.toml", "experiments/claims.toml",
              "experiments/prompt_sets.toml", "experiments/session_sets.toml",
              "experiments/core-predictions.json"):
        shutil.copy2(paths.ROOT / f, tmp_path / f)
    first = _doit(tmp_path, "verify", "--strict")
    assert first.returncode == 0, first.stdout + first.stderr
    again = _doit(tmp_path, "verify", "--strict")
    assert again.returncode == 0 and ".  verify" in again.stdout  # re-derived, not skipped
    ledger = tmp_path / "experiments" / "claims.toml"
    text = ledger.read_text(encoding="utf-8")
    edited = re.sub(r"^expected = ([0-9.]+)$", "expected = 12345.0", text, count=1, flags=re.M)
    assert edited != text
    ledger.write_text(edited, encoding="utf-8")
    assert _doit(tmp_path, "verify").returncode == 0  # default mode: a deviation is a warning
    gate = _doit(tmp_path, "verify", "--strict")
    assert gate.returncode != 0, gate.stdout
    assert "claims not reproduced" in gate.stdout + gate.stderr
    assert "Traceback" not in gate.stdout + gate.stderr
