"""The accsplit.json contract: the writer's real output on committed-shaped data, the reader."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from artifact.contract import accsplit as contract
from artifact.errors import SummaryError
from tests.render.accsplit_fixture import build_accsplit, write_accsplit


def test_fixture_built_by_the_analysis_is_the_contract(tmp_path: Path) -> None:
    path = write_accsplit(tmp_path / "accsplit.json")
    back = contract.read(path, error=SummaryError)
    assert back == build_accsplit()
    for row in back["by_prompt_budget"]:
        assert row["accepted_per_round"]["kind"] in ("measured", "estimated")


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["by_config"][0].pop("batch"), "by_config"),
        (lambda d: d["shift"][0]["prompt_step"].__setitem__("kind", "guessed"), "kind"),
        (lambda d: d.__setitem__("schema_version", 99), "schema_version"),
    ],
)
def test_off_schema_is_one_line_naming_the_file_and_field(tmp_path: Path, edit: object,
                                                          field: str) -> None:
    data = copy.deepcopy(dict(build_accsplit()))
    edit(data)  # type: ignore[operator]
    path = tmp_path / "accsplit.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SummaryError) as err:
        contract.read(path, error=SummaryError)
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    assert field in str(err.value)
