"""The summary.json contract: the writer's real output, the reader, the fixture and the doc."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from artifact import paths
from artifact.analysis import write_summary
from artifact.contract import __main__ as contract_cli
from artifact.contract import summary as contract
from artifact.errors import ArtifactError
from artifact.render import catalogue, figures, model, tables
from artifact.render import vars as rvars
from tests.render.fixture import build_summary


def test_real_analysis_output_is_read_by_the_renderers_loader(
    corpus_root: Path, tmp_path: Path
) -> None:
    """The analysis of the seed-shaped corpus, written as the paper build writes it, loads in
    the renderer and renders every table, the variables and a figure."""
    out = tmp_path / "summary.json"
    written = write_summary(corpus_root, out)
    s = model.load(out)
    assert s.raw == written and set(s.configs) == set(written["runs"])
    assert s.final_ids and s.speedup_ids and s.curve_ids and s.breakeven_ids
    for name in tables.CONTEXTS:
        for fmt in catalogue.TABLE_FORMATS:
            assert tables.render(s, name, fmt, paths.TEMPLATES).strip()
    v = rvars.compute(s)
    assert v["counts"]["runs"] == len(written["runs"])
    fig = figures.fig_breakeven(s)
    assert fig.axes


def test_the_fixture_is_the_contract() -> None:
    raw = build_summary()
    assert contract.validate(raw, source="fixture", error=ArtifactError) is raw


def _off(raw: Any, path: str, value: Any) -> Any:
    bad = copy.deepcopy(raw)
    *head, last = path.split("/")
    cur = bad
    for p in head:
        cur = cur[p]
    if value is KeyError:
        del cur[last]
    else:
        cur[last] = value
    return bad


@pytest.mark.parametrize(("path", "value", "field", "expected"), [
    ("final/final-none/overall/tok_per_s", KeyError, "final.final-none.overall.tok_per_s",
     "missing"),
    ("runs/final-none/ctx_size", "4096", "runs.final-none.ctx_size", "expected int"),
    ("breakeven/ksweep-ngram-mod-k2/pooled/status", "fine",
     "breakeven.ksweep-ngram-mod-k2.pooled.status", 'expected "ok" | '),
    ("runs/final-none/colour", "red", "runs.final-none.colour", "not in the schema"),
    ("speedup/ghost", {"baseline_run": "x", "overall": {"n_matched": 1, "mean_ratio": None,
                       "median_ratio": None, "ratio_of_means": None}, "by_domain": {}},
     "speedup.ghost", "run not in 'runs'"),
    ("schema_version", 3, "schema_version", "this reader reads 2"),
])
def test_off_schema_is_one_line_naming_file_and_field(
    tmp_path: Path, path: str, value: Any, field: str, expected: str
) -> None:
    f = tmp_path / "summary.json"
    f.write_text(json.dumps(_off(build_summary(), path, value)), encoding="utf-8")
    with pytest.raises(model.SummaryError) as err:
        model.load(f)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{f}: field '{field}'") and expected in msg


def test_unreadable_files_are_one_line(tmp_path: Path) -> None:
    f = tmp_path / "summary.json"
    for content, expected in ((b"{", "not JSON"), (b"\xff", "not UTF-8"), (None, "file not found")):
        if content is not None:
            f.write_bytes(content)
        else:
            f.unlink()
        with pytest.raises(model.SummaryError, match=expected):
            model.load(f)


def test_the_schema_document_is_generated_from_the_contract() -> None:
    assert contract_cli.main(["--check"]) == 0, "run: python -m artifact.contract"
