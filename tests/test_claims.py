from __future__ import annotations

import json
from pathlib import Path

import pytest
from render.fixture import build_summary

from artifact import claims, paths
from artifact.render import model
from artifact.render import vars as rvars


def _ledger(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "claims.toml"
    p.write_text(body, encoding="utf-8")
    return p


def test_the_ledger_loads_and_reproduces_on_the_fixture() -> None:
    raw = build_summary()
    v = rvars.compute(model.from_json(raw))
    outcomes = claims.check(claims.load(paths.CLAIMS), raw, v)
    assert outcomes and all(o.status != "missing" for o in outcomes)


@pytest.mark.parametrize(("body", "field"), [
    ('[[claim]]\nquantity = "vars:a"\nexpected = 1\n', "id"),
    ('[[claim]]\nid = "x"\nquantity = "a.b"\nexpected = 1\n', "quantity"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\n', "expected"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {rel = 0.1}\n', "reason"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {rel = 1, abs = 1}\n'
     'reason = "r"\n', "tolerance"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ncolour = 1\n', "colour"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\n'
     '[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\n', "id"),
])
def test_errors_are_one_line_naming_file_and_field(tmp_path: Path, body: str, field: str) -> None:
    with pytest.raises(claims.ClaimsError) as err:
        claims.load(_ledger(tmp_path, body))
    msg = str(err.value)
    assert "\n" not in msg and "claims.toml" in msg and f"field '{field}" in msg


def _claim(**kw: object) -> claims.Claim:
    base: dict[str, object] = {"id": "x", "quantity": "vars:a", "expected": 1.0}
    base.update(kw)
    return claims.Claim(**base)  # type: ignore[arg-type]


def test_tolerances() -> None:
    assert claims.compare(_claim(rel=0.05, reason="r"), 1.04).status == "ok"
    assert claims.compare(_claim(rel=0.05, reason="r"), 1.06).status == "deviates"
    assert claims.compare(_claim(abs=0.1, reason="r"), 0.91).status == "ok"
    assert claims.compare(_claim(), 1.0).status == "ok"
    assert claims.compare(_claim(), None).status == "missing"
    assert claims.compare(_claim(expected="ngram-mod"), "ngram-mod").status == "ok"


def test_strict_fails_default_warns(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps(build_summary()), encoding="utf-8")
    variables = tmp_path / "vars.json"
    variables.write_text(json.dumps(rvars.compute(model.load(summary))), encoding="utf-8")
    ledger = _ledger(tmp_path, '[[claim]]\nid = "b"\nquantity = "vars:best.speedup"\n'
                     'expected = 9.0\ntolerance = {rel = 0.01}\nreason = "test"\n')
    kw = {"ledger": ledger, "summary": summary, "variables": variables,
          "out_dir": tmp_path / "out", "figures": []}
    out = claims.verify(**kw)  # type: ignore[arg-type]
    assert [o.status for o in out] == ["deviates"]
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "DEVIATES" in report and (tmp_path / "out" / "report.html").exists()
    with pytest.raises(claims.ClaimsError, match="1 of 1 claims not reproduced"):
        claims.verify(**kw, strict=True)  # type: ignore[arg-type]


def test_print_current(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps(build_summary()), encoding="utf-8")
    rc = claims.main(["--summary", str(summary), "--vars", str(tmp_path / "none.json"),
                      "--print-current"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "# best-ngram-speedup" in out and "expected = 1.15" in out
