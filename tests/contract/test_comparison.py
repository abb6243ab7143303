"""The comparison contract: the committed example fits it; a bad field is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from artifact import paths
from artifact.contract import comparison as contract
from artifact.errors import ComparisonError


def committed() -> Path:
    found = sorted(paths.REPRODUCTIONS.glob("*/report/comparison.json"))
    assert found, "no committed example comparison"
    return found[0]


def test_the_committed_example_fits_the_contract() -> None:
    doc = contract.read(committed(), error=ComparisonError)
    assert doc["schema"] == contract.SCHEMA_VERSION and doc["claims"]


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["claims"][0].update(verdict="fine"), "claims.0.verdict"),
    (lambda d: d["a"]["hardware"].pop("slug"), "a.hardware.slug"),
    (lambda d: d["runs"][0].update(extra=1), "runs.0.extra"),
    (lambda d: d.update(schema=99), "schema"),
])
def test_a_bad_field_is_one_line_naming_it(edit: object, field: str, tmp_path: Path) -> None:
    doc = json.loads(committed().read_text(encoding="utf-8"))
    edit(doc)  # type: ignore[operator]
    bad = tmp_path / "comparison.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ComparisonError) as err:
        contract.read(bad, error=ComparisonError)
    assert f"field '{field}'" in str(err.value) and "\n" not in str(err.value)
