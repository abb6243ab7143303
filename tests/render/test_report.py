from __future__ import annotations

import json
from pathlib import Path

import pytest

from artifact import claims
from artifact.render import model, report
from artifact.render import vars as rvars

from .fixture import build_summary


def _ledger(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "claims.toml"
    p.write_text(body, encoding="utf-8")
    return p


def test_strict_fails_default_warns(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps(build_summary()), encoding="utf-8")
    variables = tmp_path / "vars.json"
    variables.write_text(json.dumps(rvars.compute(model.load(summary))), encoding="utf-8")
    ledger = _ledger(tmp_path, '[[claim]]\nid = "b"\nquantity = "vars:best.speedup"\n'
                     'expected = 9.0\ntolerance = {rel = 0.01}\nreason = "test"\n'
                     'scope = "hardware-bound"\nnoise = "vars:noise"\n')
    kw = {"ledger": ledger, "summary": summary, "variables": variables,
          "out_dir": tmp_path / "out", "figures": []}
    out = report.verify(**kw)  # type: ignore[arg-type]
    assert [o.status for o in out] == ["deviates"]
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "DEVIATES" in text and (tmp_path / "out" / "report.html").exists()
    with pytest.raises(claims.ClaimsError, match="1 of 1 claims not reproduced"):
        report.verify(**kw, strict=True)  # type: ignore[arg-type]


def test_print_current(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps(build_summary()), encoding="utf-8")
    rc = report.main(["--summary", str(summary), "--vars", str(tmp_path / "none.json"),
                      "--print-current"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "# best-ngram-speedup" in out and "expected = 1.15" in out
