from __future__ import annotations

from pathlib import Path

import pytest

from artifact import claims, paths
from artifact.render import model
from artifact.render import vars as rvars
from tests.render.fixture import build_summary


def _ledger(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "claims.toml"
    p.write_text(body, encoding="utf-8")
    return p


def test_the_ledger_loads_and_reproduces_on_the_fixture() -> None:
    from artifact import files
    from artifact.render import accsplit_vars
    from tests.render.accsplit_fixture import build_accsplit

    raw = build_summary()
    v = rvars.compute(model.from_json(raw))
    v["accsplit"] = files.to_plain(accsplit_vars.compute(build_accsplit()))
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
    # non-finite numbers: inf would let a claim always pass, nan make it always fail
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {rel = inf}\n'
     'reason = "r"\n', "tolerance.rel"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {abs = nan}\n'
     'reason = "r"\n', "tolerance.abs"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = nan\n', "expected"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = -inf\n', "expected"),
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


def test_lookup_follows_dotted_run_ids() -> None:
    data = {"speedup": {"final-ngram.v2": {"overall": {"mean_ratio": 1.1}}}, "xs": [{"a": 1}]}
    assert claims.lookup(data, "speedup.final-ngram.v2.overall.mean_ratio") == 1.1
    assert claims.lookup(data, "xs.0.a") == 1
    with pytest.raises(KeyError):
        claims.lookup(data, "speedup.nope")
