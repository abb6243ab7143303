"""Summaries a hostile or empty input gives still render, or fail with one line that says why."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from artifact import paths
from artifact.analysis import write_summary
from artifact.render import figures, manuscript, model, tables
from artifact.render import vars as rvars

from .fixture import build_summary

MATH = "my $\\frac{model$ {v2}"  # an unbalanced mathtext: matplotlib raises on it


@pytest.mark.parametrize("name", figures.FIGURES)  # the figures drawn from summary.json
def test_a_dollar_in_a_model_name_is_drawn_literally(tmp_path: Path, name: str) -> None:
    raw = build_summary(hostile_label=MATH)
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps(raw), encoding="utf-8")
    figures.write(summary, name, tmp_path, dpi=40)  # raised ValueError before the fix
    fig = figures.FIGURES[name](model.load(summary))
    texts = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
    plt.close(fig)
    if name in ("speedup", "hardware"):  # the run's label is on an axis, as written
        assert any(MATH in t for t in texts)


def test_an_empty_runs_folder_gives_a_paper_without_a_crash(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    summary = tmp_path / "summary.json"
    raw = write_summary(tmp_path / "runs", summary)
    assert raw["runs"] == {}
    for name in figures.FIGURES:  # those drawn from summary.json
        figures.write(summary, name, tmp_path / "figures", dpi=40)
    s = model.load(summary)
    for name in tables.CONTEXTS:
        tables.render(s, name, "md", paths.TEMPLATES)
    rvars.compute(s)


def test_a_number_the_analysis_could_not_compute_says_why(tmp_path: Path) -> None:
    raw = build_summary()
    s = model.from_json(raw)
    build = tmp_path / "build"
    (build / "tables").mkdir(parents=True)
    v = rvars.compute(s)
    raw = {**raw, "speedup": {}, "warnings": [
        "run final-ngram-mod: speedup: several final no-draft baselines with the same protocol "
        "(final-none, final-none-2); keep one; no speedup"]}
    tpl = tmp_path / "p.md"
    tpl.write_text('{{ claim("best-speedup") }}\n', encoding="utf-8")
    ledger = tmp_path / "claims.toml"
    ledger.write_text('[[claim]]\nid = "best-speedup"\n'
                      'quantity = "summary:speedup.final-ngram-mod.overall.mean_ratio"\n'
                      'expected = 1.0\nscope = "hardware-bound"\nnoise = "exact"\n',
                      encoding="utf-8")
    with pytest.raises(manuscript.ManuscriptError) as err:
        manuscript.render_markdown("html", template=tpl, build=build, variables=v,
                                   summary=raw, ledger=ledger)
    msg = str(err.value)
    assert "\n" not in msg and "not in the computed files" in msg
    assert "the analysis warned: run final-ngram-mod: speedup: several final no-draft" in msg
