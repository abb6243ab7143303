"""The memory paragraph of the paper (artifact/render/memory.py, manuscript/paper.md) when the
analysis set a memory run aside: its values print as not measured (an em dash), the sentence
that needs the run is left out, and a memory.json with no row leaves memory out of the paper."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from artifact import files, paths
from artifact.errors import RenderError
from artifact.render import catalogue, manuscript, provenance
from artifact.render import memory as rmemory

from .memory_fixture import build_memory
from .test_manuscript import _prepare


def _without(*configurations: tuple[str, str]) -> dict[str, Any]:
    """The fixture's memory.json as the analysis writes it with these runs set aside."""
    data = build_memory()
    data["rows"] = [r for r in data["rows"] if (r["target"], r["drafter"]) not in configurations]
    for target, drafter in configurations:
        if drafter == "none":
            data["added"].pop(target, None)
        else:
            data["added"].get(target, {}).pop(drafter, None)
    data["added"] = {t: a for t, a in data["added"].items() if a}
    data["warnings"] = [f"run memory-{t.lower()}-{d}: memory.json: file not found; run skipped"
                        for t, d in configurations]
    return data


def _memory_paragraph(tmp_path: Path, data: dict[str, Any], fmt: str) -> str:
    build, v, raw = _prepare(tmp_path)
    for table in list((build / "tables").glob("*.md")):  # paper.html's tables, unlinked here
        md, listed = catalogue.table_html_files(table.stem, build / "tables")
        md.write_text(table.read_text(encoding="utf-8"), encoding="utf-8")
        listed.write_text('{"numbers": []}', encoding="utf-8")
    v = copy.deepcopy(v)
    v["memory"] = files.to_plain(rmemory.variables(rmemory.checked(data, "memory.json")))
    registry = provenance.Registry() if fmt == "html" else None
    text, _ = manuscript.render_markdown(
        fmt, template=paths.MANUSCRIPT / "paper.md", build=build, variables=v, summary=raw,
        ledger=paths.CLAIMS, registry=registry)
    if registry is not None:
        assert registry.untracked == []
    found = re.search(r"\*\*Memory\.\*\*.*?(?=\n\n)", text, flags=re.S)
    return found.group(0) if found else ""


@pytest.mark.parametrize("fmt", catalogue.PAPER_FORMATS)
def test_a_no_draft_run_set_aside_prints_as_not_measured(tmp_path: Path, fmt: str) -> None:
    said = _memory_paragraph(tmp_path, _without(("F16", "none")), fmt)
    assert re.search(r"— MiB\s+for\s+F16", said), said
    assert "On the\nQ4_1 target it adds" in said  # the Q4_1 runs are all there


def test_a_q4_1_run_set_aside_leaves_its_sentence_out(tmp_path: Path) -> None:
    said = _memory_paragraph(tmp_path, _without(("Q4_1", "draft-simple")), "html")
    assert said and "Q4_1 target it adds" not in said


def test_no_memory_run_kept_leaves_memory_out_of_the_paper(tmp_path: Path) -> None:
    data = _without(*((r["target"], r["drafter"]) for r in build_memory()["rows"]))
    assert data["rows"] == [] and rmemory.variables(data) == {}
    assert _memory_paragraph(tmp_path, data, "html") == ""


def test_two_rows_of_one_configuration_are_one_line() -> None:
    data = build_memory()
    data["rows"].append(dict(data["rows"][0], run="memory-q4_1-none-again"))
    with pytest.raises(RenderError, match=r"memory\.json: field 'rows': rows 0 and 9 both of "
                                          r"target Q4_1, drafter none; expected one row"):
        rmemory.checked(data, "memory.json")
