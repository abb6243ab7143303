"""workload.json: the real analysis of a workload corpus is read by the renderers' loader."""

from __future__ import annotations

from pathlib import Path

from artifact import paths
from artifact.contract import workload as contract
from artifact.errors import RenderError
from artifact.render import catalogue, tables
from artifact.render import workload as rworkload
from tests.workload_corpus import write_workload_fixture


def test_real_workload_output_renders_its_tables_and_variables(tmp_path: Path) -> None:
    out = write_workload_fixture(tmp_path / "workload.json")
    w = rworkload.load(out)
    assert w == contract.read(out, error=RenderError)
    for name in tables.WORKLOAD_CONTEXTS:
        for fmt in catalogue.TABLE_FORMATS:
            assert tables.render_workload(w, name, fmt, paths.TEMPLATES).strip()
    v = rworkload.variables(w)
    assert v["order"] == w["order"] and v["n_sessions"] == 5


def test_a_missing_workload_file_is_one_line(tmp_path: Path) -> None:
    import pytest

    with pytest.raises(RenderError, match=r"workload.json: file not found"):
        rworkload.load(tmp_path / "workload.json")
