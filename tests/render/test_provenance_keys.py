"""Keys of the analysis files that paper.html cannot print as part of a number's source
(artifact/render/provenance.py): a line break unlinked the numbers below it while the build
passed, and braces read as Markdown attributes failed it with a line naming neither the file nor
the field. Both are refused where the files are read for the paper, in one line naming them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from artifact.errors import SummaryError
from artifact.render import provenance as prov
from artifact.render import vars as rvars

from .fixture import write_summary

HOSTILE = ["ma\nth", "{.class}", "{#id}", "ma\rth", "tab\there", "line\u2028sep", "a}b"]


@pytest.mark.parametrize("key", HOSTILE)
def test_a_key_the_paper_cannot_print_is_one_line_naming_file_and_field(key: str) -> None:
    with pytest.raises(SummaryError) as err:
        prov.tag({"speedup": {"final-a": {"by_domain": {"code": 1.0, key: 2.0}}}},
                 "summary.json")
    said = str(err.value)
    assert said.startswith(f"summary.json: field '/speedup/final-a/by_domain': key {key!r}: "
                           "expected a name on one line without braces")
    assert "\n" not in said and "\r" not in said and "\u2028" not in said


def _renamed(tree: Any, old: str, new: str) -> Any:
    if isinstance(tree, dict):
        return {(new if k == old else k): _renamed(v, old, new) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_renamed(v, old, new) for v in tree]
    return new if tree == old else tree


@pytest.mark.parametrize("domain", ["ma\nth", "{.class}", "{#id}"])
def test_a_domain_the_paper_cannot_print_stops_the_build_at_the_variables(
        tmp_path: Path, domain: str) -> None:
    """vars.json's task tags the analysis files (sources.json) before any paper is rendered."""
    summary = write_summary(tmp_path / "summary.json")
    raw = json.loads(summary.read_text(encoding="utf-8"))
    summary.write_text(json.dumps(_renamed(raw, "math", domain)), encoding="utf-8")
    with pytest.raises(SummaryError, match=r"^summary\.json: field '/[^']*/by_domain': key "):
        rvars.write(summary, tmp_path / "vars.json")
