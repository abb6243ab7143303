"""A fatal warning of another study's analysis (accsplit.json, workload.json, realism.json,
costmodel.json) fails `doit verify --strict` like the core's, and is listed in the report with its
file (issue 19)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from artifact import claims, paths
from artifact.render import model, report
from artifact.render import vars as rvars

from .fixture import build_summary

DUP = "run w1-x: results.jsonl: 1 duplicate record(s) excluded, first copy kept: chat/a#0"
ONE_SIDED = ("run workload-code: 1 session(s) measured on one side only (real:s3), left out "
             "of the comparison")
OFF_LOCK = ("run realism-none: results.jsonl: 1 record(s) of a session not in the session lock "
            "excluded: real-a:x#0")
NO_CONTENTION = ("run realism-none: 3 of 960 turn(s) with no contention fields (no contention "
                 "window recorded, or none available), analysed as if quiet: real-a:x#0")
REFUSED = ("m/steps.jsonl: 1 row(s) with impossible values refused: line 4 (prompt_ms nan: "
           "expected a time in ms, finite, above 0 and at most 120000)")
TWO_FOLDERS = "run m-copy: model 'm' already used by m; run skipped"


def _inputs(tmp_path: Path) -> dict[str, Path]:
    raw = build_summary()
    raw["warnings"] = []
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps(raw), encoding="utf-8")
    variables = tmp_path / "vars.json"
    variables.write_text(json.dumps(rvars.compute(model.load(summary))), encoding="utf-8")
    return {"ledger": paths.CLAIMS, "summary": summary, "variables": variables,
            "out_dir": tmp_path / "out"}


@pytest.mark.parametrize("name,warning,cls", [("accsplit.json", DUP, "duplicate-records"),
                                              ("workload.json", ONE_SIDED, "one-sided"),
                                              ("realism.json", OFF_LOCK, "off-lock"),
                                              ("realism.json", NO_CONTENTION,
                                               "unknown-contention"),
                                              ("costmodel.json", REFUSED, "impossible-records"),
                                              ("costmodel.json", TWO_FOLDERS, "run-left-out")])
def test_a_fatal_warning_of_another_study_fails_strict(tmp_path: Path, name: str, warning: str,
                                                       cls: str) -> None:
    kw = _inputs(tmp_path)
    study = tmp_path / name
    study.write_text(json.dumps({"warnings": [warning]}), encoding="utf-8")
    report.verify(**kw, figures=[], studies=[study, tmp_path / "absent.json"])  # type: ignore[arg-type]
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"{name}: {warning}".replace("#", "\\#").replace("_", "\\_") in text  # Markdown
    with pytest.raises(claims.ClaimsError, match=rf"analysis warning\(s\) of a fatal class "
                                                 rf"\({cls}"):
        report.verify(**kw, figures=[], strict=True, studies=[study])  # type: ignore[arg-type]
    with pytest.raises(claims.ClaimsError) as err:  # without the study: not this failure
        report.verify(**kw, figures=[], strict=True)  # type: ignore[arg-type]
    assert cls not in str(err.value)


def test_the_verify_task_reads_every_study() -> None:
    from artifact.render import tasks

    deps = set(tasks.task_verify()["file_dep"])
    assert {str(paths.ACCSPLIT), str(paths.WORKLOAD), str(paths.REALISM),
            str(paths.COSTMODEL)} <= deps
    if tasks.MEASURED_MEMORY:  # memory.json's warnings (a run set aside) reach the report too
        assert str(paths.MEMORY) in deps and paths.MEMORY in tasks.STUDIES
    assert paths.CORE in tasks.STUDIES and str(paths.CORE) in deps


MEMORY_ASIDE = ("run none-q4_1: memory.json: field 'hwm_mib': expected at least the sampled "
                "peak rss_peak_mib 210.0, got 30.5; run skipped")
NO_FIT = ("costmodel: model m: step cost not computable, written as null: 1 distinct width "
          "(need 2)")


@pytest.mark.parametrize("name,warning,cls", [("memory.json", MEMORY_ASIDE, "run-left-out"),
                                              ("costmodel.json", NO_FIT, "not-computable")])
def test_every_study_s_warning_reaches_the_report(tmp_path: Path, name: str, warning: str,
                                                  cls: str) -> None:
    """Issue 46: the memory runs' set-aside warnings and the cost model's not-computable one
    are listed in the report under their class."""
    kw = _inputs(tmp_path)
    study = tmp_path / name
    study.write_text(json.dumps({"warnings": [warning]}), encoding="utf-8")
    report.verify(**kw, figures=[], studies=[study])  # type: ignore[arg-type]
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"**{cls}**" in text
    assert f"{name}: {warning}".replace("#", "\\#").replace("_", "\\_") in text
