from __future__ import annotations

from pathlib import Path

import pytest

from artifact import claims, paths
from artifact.render import core as rcore
from artifact.render import memory as rmemory
from artifact.render import model
from artifact.render import vars as rvars
from artifact.render import workload as rworkload
from tests.render.core_fixture import build_core_fixture
from tests.render.fixture import build_summary
from tests.render.memory_fixture import build_memory
from tests.workload_corpus import write_workload_fixture


def _ledger(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "claims.toml"
    p.write_text(body, encoding="utf-8")
    return p


def test_the_ledger_loads_and_reproduces_on_the_fixture(tmp_path: Path) -> None:
    from artifact import files
    from artifact.render import accsplit_vars
    from tests.render.accsplit_fixture import build_accsplit

    raw = build_summary()
    v = rvars.compute(model.from_json(raw))
    v["accsplit"] = files.to_plain(accsplit_vars.compute(build_accsplit()))
    v["workload"] = files.to_plain(rworkload.variables(
        rworkload.load(write_workload_fixture(tmp_path / "workload.json"))))
    from artifact.render import realism as rrealism
    from tests.render.realism_fixture import build_realism_fixture

    v["realism"] = files.to_plain(rrealism.variables(build_realism_fixture()))
    v["core"] = files.to_plain(rcore.variables(build_core_fixture()))
    v["memory"] = files.to_plain(rmemory.variables(build_memory()))
    outcomes = claims.check(claims.load(paths.CLAIMS), raw, v)
    assert outcomes and all(o.status != "missing" for o in outcomes)


S = 'scope = "hardware-bound"\nnoise = "exact"\n'
Q = ('[[claim]]\nid = "q"\nscope = "qualitative"\nquantity = "vars:a"\n'
     'statement = "s"\nreason = "r"\n')


@pytest.mark.parametrize(("body", "field"), [
    ('[[claim]]\nquantity = "vars:a"\nexpected = 1\n' + S, "id"),
    ('[[claim]]\nid = "x"\nquantity = "a.b"\nexpected = 1\n' + S, "quantity"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\n' + S, "expected"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {rel = 0.1}\n' + S,
     "reason"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {rel = 1, abs = 1}\n'
     'reason = "r"\n' + S, "tolerance"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ncolour = 1\n' + S, "colour"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\n' + S +
     '[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\n' + S, "id"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\n', "scope"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\nscope = "cpu"\n', "scope"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {rel = inf}\n'
     'reason = "r"\n' + S, "tolerance.rel"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\nholds = {lt = 1}\n' + S,
     "holds"),
    (Q, "holds"),
    (Q + 'holds = {below = 1}\n', "holds"),
    (Q + 'holds = {lt = "a.b"}\n', "holds.lt"),
    (Q + 'holds = {lt = nan}\n', "holds.lt"),
    (Q + 'holds = {lt = 1}\nexpected = 1\n', "expected"),
    (Q.replace('statement = "s"\n', "") + 'holds = {lt = 1}\n', "statement"),
    (Q.replace('reason = "r"\n', "") + 'holds = {lt = 1}\n', "reason"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {abs = nan}\n'
     'reason = "r"\n' + S, "tolerance.abs"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = nan\n' + S, "expected"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {abs = 1, '
     'side = "lower"}\nreason = "r"\n' + S, "tolerance.side"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\ntolerance = {side = "upper"}\n'
     'reason = "r"\n' + S, "tolerance"),
    ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = -inf\n' + S, "expected"),
])
def test_errors_are_one_line_naming_file_and_field(tmp_path: Path, body: str, field: str) -> None:
    with pytest.raises(claims.ClaimsError) as err:
        claims.load(_ledger(tmp_path, body))
    msg = str(err.value)
    assert "\n" not in msg and "claims.toml" in msg and f"field '{field}" in msg


X = '[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 1\n' + S


@pytest.mark.parametrize(("body", "field", "said"), [
    (X + 'format = ".1q"\n', "format",
     "expected a Python format spec for a float, e.g. \".2f\""),
    (X + 'format = ".2d"\n', "format", "expected a Python format spec"),
    (X + 'format = "{:.2f}"\n', "format", "expected a Python format spec"),
    (X + 'format = 2\n', "format", "expected str, got 2"),
    (Q + 'holds = {lt = 1}\nformat = "x"\n', "format", "expected a Python format spec"),
    (X + 'runs = [1]\n', "runs[0]", "expected str, got 1"),
    (X + 'runs = "final-*"\n', "runs", "expected list, got 'final-*'"),
    (X + 'used_in = [["Results"]]\n', "used_in[0]", "expected str, got ['Results']"),
    ('claims = []\n' + X, "claims", "unknown (the ledger holds [[claim]] tables only)"),
    ('title = "x"\n' + X, "title", "unknown"),
])
def test_a_bad_field_is_one_line_when_the_ledger_is_read(tmp_path: Path, body: str, field: str,
                                                          said: str) -> None:
    """Not a ValueError when a text is rendered (`doit verify` with ``format = ".1q"``)."""
    with pytest.raises(claims.ClaimsError) as err:
        claims.load(_ledger(tmp_path, body))
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(str(tmp_path / "claims.toml"))
    assert f"field '{field}': {said}" in msg, msg
    if field not in ("claims", "title"):
        assert "claim 'x'" in msg or "claim 'q'" in msg, msg


def test_a_claim_that_is_not_a_table_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(claims.ClaimsError, match=r"claims\.toml: claim\[0\]: expected a table "
                                                 r"\(\[\[claim\]\]\), got 1$"):
        claims.load(_ledger(tmp_path, "claim = [1]\n"))


def test_every_format_of_the_ledger_prints_its_expected_value() -> None:
    for c in claims.load(paths.CLAIMS):
        if c.expected is not None:
            assert claims.format_value(c, c.expected)


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


def test_an_upper_only_tolerance_fails_only_a_larger_value(tmp_path: Path) -> None:
    body = ('[[claim]]\nid = "x"\nquantity = "vars:a"\nexpected = 50\nscope = "noise"\n'
            'tolerance = {abs = 15, side = "upper"}\nreason = "a floor measured under load"\n'
            'noise = "vars:floor"\n')
    [c] = claims.load(_ledger(tmp_path, body))
    assert c.upper_only and c.describe_tolerance() == "abs 15, upper only"
    assert claims.compare(c, 3.0).status == "ok"  # a quieter rerun
    assert claims.compare(c, 64.0).status == "ok"
    assert claims.compare(c, 66.0).status == "deviates"


def test_lookup_follows_dotted_run_ids() -> None:
    data = {"speedup": {"final-ngram.v2": {"overall": {"mean_ratio": 1.1}}}, "xs": [{"a": 1}]}
    assert claims.lookup(data, "speedup.final-ngram.v2.overall.mean_ratio") == 1.1
    assert claims.lookup(data, "xs.0.a") == 1
    with pytest.raises(KeyError):
        claims.lookup(data, "speedup.nope")


def test_every_claim_of_the_ledger_has_a_scope_and_qualitative_ones_hold() -> None:
    ledger = claims.load(paths.CLAIMS)
    assert {c.scope for c in ledger} == set(claims.SCOPES)
    raw = build_summary()
    v = rvars.compute(model.from_json(raw))
    v["core"] = rcore.variables(build_core_fixture())  # the core study's own file
    v["memory"] = rmemory.variables(build_memory())  # the memory runs' own file
    for o in claims.check([c for c in ledger if c.qualitative], raw, v):
        assert o.status != "missing", o.claim.id


def _q(holds: tuple[tuple[str, float | str], ...], quantity: str = "vars:s.*.r") -> claims.Claim:
    return claims.Claim(id="q", quantity=quantity, expected=None, scope="qualitative",
                        statement="s", reason="r", holds=holds)


def test_a_qualitative_claim_holds_only_when_every_matched_value_does() -> None:
    v = {"s": {"a": {"r": 0.5}, "b": {"r": 0.9}}, "base": 0.7}
    out = claims.evaluate(_q((("lt", 1.0),)), {}, v)
    assert out.status == "ok" and out.reproduced == 0.9  # the value closest to the bound
    assert [p for p, _ in out.values] == ["s.a.r", "s.b.r"]
    assert claims.evaluate(_q((("lt", 0.8),)), {}, v).status == "deviates"
    assert claims.evaluate(_q((("ge", 0.5), ("le", 0.9))), {}, v).status == "ok"
    assert claims.evaluate(_q((("gt", 0.5),)), {}, v).status == "deviates"  # 0.5 is not > 0.5
    # a bound that is another quantity
    assert claims.evaluate(_q((("lt", "vars:base"),), "vars:s.a.r"), {}, v).status == "ok"
    assert claims.evaluate(_q((("lt", "vars:base"),)), {}, v).status == "deviates"
    # nothing matched, a null among the matches, an unresolvable bound: missing, never ok
    assert claims.evaluate(_q((("lt", 1.0),), "vars:s.z*.r"), {}, v).status == "missing"
    assert claims.evaluate(_q((("lt", 1.0),)), {}, {"s": {"a": {"r": None}}}).status == "missing"
    assert claims.evaluate(_q((("lt", "vars:nope"),)), {}, v).status == "missing"
