from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from artifact import paths
from artifact.contract import summary as contract
from artifact.render import catalogue, model, tables
from artifact.render.text import DASH, md_escape, tex_escape

from .fixture import build_summary

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("fmt", catalogue.TABLE_FORMATS)
@pytest.mark.parametrize("name", tables.CONTEXTS)
def test_golden(name: str, fmt: str) -> None:
    got = tables.render(model.from_json(build_summary()), name, fmt, paths.TEMPLATES)
    golden = GOLDEN / f"{name}.{fmt}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(got, encoding="utf-8")
    assert got == golden.read_text(encoding="utf-8")


HOSTILE = r"a_b&c% \input{/etc/passwd} $x^2$ #1 ~{}| *em* [l](u) <b>"


def test_hostile_label_is_escaped_in_latex() -> None:
    s = model.from_json(build_summary(hostile_label=HOSTILE))
    tex = tables.render(s, "speedup", "tex", paths.TEMPLATES)
    assert tex_escape(HOSTILE) in tex
    assert r"\input{" not in tex
    row = next(line for line in tex.splitlines() if "passwd" in line)
    # the label adds no column separators and no row ends of its own
    lines = tex.splitlines()
    first_row = lines[lines.index(r"\midrule") + 1]
    assert row.count(" & ") == first_row.count(" & ")
    assert row.count(r"\\") == 1


def test_hostile_label_is_escaped_in_markdown() -> None:
    s = model.from_json(build_summary(hostile_label=HOSTILE))
    md = tables.render(s, "speedup", "md", paths.TEMPLATES)
    assert md_escape(HOSTILE) in md
    row = next(line for line in md.splitlines() if "passwd" in line)
    header = md.splitlines()[0]
    assert row.replace("\\|", "").count("|") == header.count("|")


@pytest.mark.parametrize("name", tables.CONTEXTS)
def test_missing_is_an_em_dash_never_zero_or_nan(name: str) -> None:
    s = model.from_json(build_summary())
    for fmt in catalogue.TABLE_FORMATS:
        out = tables.render(s, name, fmt, paths.TEMPLATES)
        assert not re.search(r"\b(nan|NaN|None|inf)\b", out)


def test_null_speedup_prints_em_dash() -> None:
    s = model.from_json(build_summary())
    md = tables.render(s, "speedup", "md", paths.TEMPLATES)
    tex = tables.render(s, "speedup", "tex", paths.TEMPLATES)
    assert next(r for r in md.splitlines() if r.startswith("| ngram-cache")).endswith(f"{DASH} |")
    assert next(r for r in tex.splitlines() if r.startswith("ngram-cache")).endswith(r"--- \\")


def test_no_gpu_leaves_out_gpu_columns() -> None:
    s = model.from_json(build_summary())
    md = tables.render(s, "hardware", "md", paths.TEMPLATES)
    assert "GPU memory" not in md.splitlines()[0]
    assert "no GPU: memory and power were not measured" in md


def test_gpu_without_samples_is_dash_not_zero() -> None:
    raw = build_summary()
    raw["environment"]["gpu"] = "Fixture GPU"
    md = tables.render(model.from_json(raw), "hardware", "md", paths.TEMPLATES)
    header = [c.strip() for c in md.splitlines()[0].strip("|").split("|")]
    row = next(r for r in md.splitlines() if r.startswith("| no draft |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    i = header.index("Peak GPU memory (MiB)")
    assert cells[i] == DASH and cells[i + 1] == DASH


def test_undrafted_domain_is_marked() -> None:
    s = model.from_json(build_summary())
    md = tables.render(s, "speedup", "md", paths.TEMPLATES)
    row = next(r for r in md.splitlines() if r.startswith("| ngram-simple"))
    assert row.count("\u2020") == 1 and "proposed no draft" in md
    acc = tables.render(s, "acceptance", "md", paths.TEMPLATES)
    row = next(r for r in acc.splitlines() if r.startswith("| ngram-simple"))
    assert row.count(DASH) == 2  # alpha and tau of the chat domain


def test_write_produces_both_formats(summary_path: Path, tmp_path: Path) -> None:
    out = tables.write(summary_path, "hardware", tmp_path / "t", paths.TEMPLATES)
    assert [p.name for p in out] == ["hardware.md", "hardware.tex"]


def test_schema_errors_name_file_and_field(tmp_path: Path) -> None:
    raw = build_summary()
    raw["schema_version"] = contract.SCHEMA_VERSION + 1
    with pytest.raises(model.SummaryError, match=r"x\.json: field 'schema_version'"):
        model.from_json(raw, "x.json")
    raw = build_summary()
    del raw["runs"]["final-none"]["label"]
    with pytest.raises(model.SummaryError, match=r"field 'runs\.final-none\.label': missing"):
        model.from_json(raw, "x.json")


@pytest.mark.parametrize("name", tables.ACCSPLIT_CONTEXTS)
def test_accsplit_tables_render_the_fixture_numbers(name: str) -> None:
    from .accsplit_fixture import build_accsplit

    a = build_accsplit()
    for fmt in catalogue.TABLE_FORMATS:
        out = tables.render_accsplit(a, name, fmt, paths.TEMPLATES)
        assert not re.search(r"\b(nan|NaN|None|inf)\b", out)
        assert f"tbl:{name}" in out
    md = tables.render_accsplit(a, "accsplit_cells", "md", paths.TEMPLATES)
    # chat prompt, draft model, 128 tokens: 4, 5, 6 accepted over 4 rounds in w1..w3
    row = next(r for r in md.splitlines() if r.startswith("| draft") and "chat/" in r)
    # 1.0, 1.25, 1.5: mean 1.25, sd 0.25, t(0.975, 2) * 0.25 / sqrt(3) = 0.62; 256: 10 / 8
    assert "| 3 | 1.25\u00a0\\[0.63,\u00a01.87\\] | 1.25 |" in row  # no-break spaces


@pytest.mark.parametrize("name", list(tables.WORKLOAD_CONTEXTS))
def test_workload_tables_print_no_nan_and_mark_missing_intervals(name: str,
                                                                 tmp_path: Path) -> None:
    from artifact.render import workload as rworkload
    from tests.workload_corpus import write_workload_fixture

    w = rworkload.load(write_workload_fixture(tmp_path / "workload.json"))
    for fmt in catalogue.TABLE_FORMATS:
        out = tables.render_workload(w, name, fmt, paths.TEMPLATES)
        assert not re.search(r"\b(nan|NaN|None|inf)\b", out)
        assert ("{#tbl:" + name + "}" in out) if fmt == "md" else ("tbl:" + name in out)
    bins = tables.render_workload(w, "workload", "md", paths.TEMPLATES)
    assert "—" in bins  # the 30+ bin has one session: no interval


def test_accsplit_figures_table_reconciles_the_ways_of_summing() -> None:
    from .accsplit_fixture import build_accsplit

    a = build_accsplit()
    md = tables.render_accsplit(a, "accsplit_figures", "md", paths.TEMPLATES)
    row = next(r for r in md.splitlines() if r.startswith("| draft") and "| 128 |" in r)
    # 2 prompts x 3 windows, 4 + 2 * prompt + window accepted over 4 rounds: 36 / 24 pooled
    # pooled over 2 prompts: no interval (fewer than three units); over 3 windows: one
    assert re.search(r"\| 6 \| 1\.50 \| 1\.50\W+\\\[0\.88,\W+2\.12\\\] \(3\)", row)
    assert "Pooled, the figure the text reports" in md and "{#tbl:accsplit_figures}" in md
    tex = tables.render_accsplit(a, "accsplit_figures", "tex", paths.TEMPLATES)
    assert "\\label{tbl:accsplit_figures}" in tex
