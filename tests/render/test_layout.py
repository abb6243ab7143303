"""The layout check of the PDF: text outside the text area, or printed over other text, fails.

The word-box logic is tested on boxes written here; the engines' tests make real PDFs (Typst,
and pdflatex where installed) through ``manuscript.write_pdf``, one that fits and one that
overflows, and read them with poppler's ``pdftotext``. Those skip where poppler or pdflatex is
missing, except where SPECDEC_REQUIRE_POPPLER=1 (CI) or SPECDEC_REQUIRE_TEX=1 (the image) says
the tool must be there.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from artifact import paths
from artifact.render import catalogue, layout, manuscript, tables
from artifact.render import workload as rworkload
from artifact.render.layout import Page, Word
from artifact.render.text import NBSP

EPOCH = 1_700_000_000
LETTER = (612.0, 792.0)


def _page(*words: tuple[float, float, float, float, str]) -> Page:
    return Page(1, *LETTER, tuple(Word(1, *w) for w in words))


def test_words_inside_the_text_area_and_the_page_number_pass() -> None:
    page = _page((72, 72, 540, 82, "edge"), (520, 700, 542, 711, "justified"),
                 (304, 741, 308, 751, "1"))
    assert layout.outside(page) == [] and layout.overlapping(page) == []
    assert layout.problems([page]) == []


@pytest.mark.parametrize(("box", "side"), [
    ((60, 100, 90, 110, "left"), "left margin"),
    ((500, 100, 560, 110, "right"), "right margin"),
    ((100, 60, 130, 70, "top"), "top margin"),
    ((100, 727, 130, 737, "row"), "bottom margin"),
    ((20, 741, 40, 751, "7"), "left margin"),  # digits, but not a centred page number
])
def test_a_word_past_any_edge_is_named_with_its_page_and_side(
        box: tuple[float, float, float, float, str], side: str) -> None:
    (line,) = layout.problems([_page(box)])
    assert line.startswith("page 1 at (") and f"{box[4]!r}" in line and side in line


def test_words_printed_over_each_other_are_found_and_neighbours_are_not() -> None:
    page = _page((100, 100, 130, 110, "4984"), (126, 100, 150, 110, "-21"),
                 (160, 100, 190, 110, "next"), (160, 111, 190, 121, "below"))
    assert [(a.text, b.text) for a, b in layout.overlapping(page)] == [("4984", "-21")]


def _overlapping_one_by_one(page: Page, min_overlap: float = 1.0) -> list[tuple[Word, Word]]:
    """The check as it was first written: every word against those starting before its end."""
    words = sorted((w for w in page.words if w.text.strip()), key=lambda w: w.x0)
    pairs = []
    for i, a in enumerate(words):
        for b in words[i + 1:]:
            if b.x0 >= a.x1 - min_overlap:
                break
            across = min(a.x1, b.x1) - max(a.x0, b.x0)
            down = min(a.y1, b.y1) - max(a.y0, b.y0)
            if across > min_overlap and down > 0.5 * min(a.y1 - a.y0, b.y1 - b.y0):
                pairs.append((a, b))
    return pairs


@pytest.mark.parametrize("seed", range(6))
def test_overlap_check_finds_the_pairs_one_by_one_comparison_finds_in_its_order(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines of words with ties, narrow words, blanks and a crowded line: the blocked check
    gives the same pairs in the same order as comparing the words one by one."""
    import random

    rng = random.Random(seed)
    words = []
    for line in range(40):
        x, y = 72.0, 72.0 + 11.5 * line + rng.choice([0.0, 0.0, 4.0, 9.0])
        for _ in range(rng.randint(1, 25)):
            width = rng.choice([0.5, 2.0, 8.0, 23.0, 40.0])
            words.append(Word(1, x, y, x + width, y + rng.choice([8.0, 10.0, 12.0]),
                              rng.choice(["a", "bc", " ", "1.5"])))
            x += width + rng.choice([-6.0, -1.0, 0.0, 0.5, 3.0])
    page = Page(1, 612, 792, tuple(rng.sample(words, len(words))))
    want = _overlapping_one_by_one(page)
    assert want  # the crowding makes some
    monkeypatch.setattr(layout, "_BLOCK", 7)  # many blocks, and a pair across two
    assert layout.overlapping(page) == want
    monkeypatch.setattr(layout, "_BLOCK", 4096)
    assert layout.overlapping(page) == want


def test_unreadable_pdftotext_output_is_one_line() -> None:
    with pytest.raises(manuscript.ManuscriptError, match="unreadable output") as err:
        layout.parse_bbox("<html><page", source="x.pdf")
    assert "\n" not in str(err.value)


def test_without_pdftotext_the_build_says_the_check_was_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout, "available", lambda: False)
    said: list[str] = []
    manuscript.check_layout(tmp_path / "x.pdf", shown_as=tmp_path / "paper.pdf", log=said.append)
    assert said == ["paper.pdf: layout not checked: pdftotext (poppler-utils) is not installed"]


# --- real PDFs ----------------------------------------------------------------------------


def _require(tool: str, env: str, why: str) -> None:
    if shutil.which(tool) is None:
        if os.environ.get(env) == "1":
            pytest.fail(f"{env}=1 but {tool} is not installed")
        pytest.skip(f"{tool} not installed ({why})")


@pytest.fixture
def poppler() -> None:
    _require("pdftotext", "SPECDEC_REQUIRE_POPPLER",
             "apt-get install poppler-utils; CI and the image have it")
    if os.environ.get("SPECDEC_REQUIRE_TEX") == "1" and not layout.available():
        pytest.fail("SPECDEC_REQUIRE_TEX=1 but pdftotext is not installed")


def _typst(tmp_path: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(catalogue, "latex_engine", lambda: None)
    build = tmp_path / "build"
    build.mkdir()
    (build / "vars.json").write_text(json.dumps({"source_date_epoch": EPOCH}))
    (build / "paper.typst.md").write_text(body, encoding="utf-8")
    return build


def _pipe_table(rows: int) -> str:
    head = "| Condition | Turns | TTFT Δ% [95% CI] | TPOT Δ% | E2E Δ% |\n|:--|:--|--:|--:|--:|\n"
    iv = f"-21{NBSP}[-53,{NBSP}26]"
    body = "".join(f"| english | {i:02d} | {iv} | {iv} | {iv} |\n" for i in range(rows))
    return head + body + "\n: A long table. {#tbl:long}\n"


@pytest.mark.usefixtures("poppler")
def test_typst_breaks_a_long_table_across_pages_and_the_check_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = _typst(tmp_path, "# A\n\n" + _pipe_table(150), monkeypatch)
    manuscript.write_pdf(build=build, log=lambda _: None)
    pages = layout.read_pages(build / "paper.pdf")
    assert len(pages) >= 3 and layout.problems(pages) == []
    assert all(any(w.text == "Condition" for w in p.words) for p in pages)  # header repeated


@pytest.mark.usefixtures("poppler")
def test_typst_text_beyond_the_margins_fails_the_build_and_leaves_no_pdf(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unbreakable = "#block(breakable: false)[" + "#lorem(30) #parbreak() " * 40 + "]"
    body = f"# A\n\n```{{=typst}}\n{unbreakable}\n#place(dx: 7in)[faraway]\n```\n"
    build = _typst(tmp_path, body, monkeypatch)
    with pytest.raises(manuscript.ManuscriptError) as err:
        manuscript.write_pdf(build=build, log=lambda _: None)
    msg = str(err.value)
    assert msg.startswith(f"{build / 'paper.pdf'}: layout: page ") and "\n" not in msg
    assert "lies outside the text area (bottom margin)" in msg and "more" in msg
    assert not (build / "paper.pdf").exists()


LATEX_HEAD = r"""\documentclass[10pt]{article}
\usepackage[letterpaper,margin=1in]{geometry}
\usepackage{booktabs}
\usepackage{longtable}
\begin{document}
"""


def _latex(tmp_path: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    _require("pdflatex", "SPECDEC_REQUIRE_TEX", "the Docker image runs this test")
    monkeypatch.setattr(catalogue, "latex_engine", lambda: "pdflatex")
    build = tmp_path / "build"
    build.mkdir(parents=True)
    (build / "vars.json").write_text(json.dumps({"source_date_epoch": EPOCH}))
    (build / "paper.tex").write_text(LATEX_HEAD + body + "\n\\end{document}\n")
    return build


def _rows(n: int) -> str:
    return "".join(f"english & {i:02d} & -21~[-53,~26] \\\\\n" for i in range(n))


@pytest.mark.usefixtures("poppler")
def test_latex_longtable_breaks_and_passes_where_a_table_float_overflows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    longtable = ("\\begin{longtable}{llr}\n\\caption{Long.}\\\\\n\\toprule\nA & B & C \\\\\n"
                 "\\midrule\n\\endhead\n" + _rows(150) + "\\bottomrule\n\\end{longtable}\n")
    build = _latex(tmp_path / "long", longtable, monkeypatch)
    manuscript.write_pdf(build=build, log=lambda _: None)
    assert len(layout.read_pages(build / "paper.pdf")) >= 3

    float_ = ("\\begin{table}[tbp]\n\\caption{Long.}\n\\begin{tabular}{llr}\n" + _rows(150)
              + "\\end{tabular}\n\\end{table}\n")
    build = _latex(tmp_path / "float", float_, monkeypatch)
    with pytest.raises(manuscript.ManuscriptError, match=r"layout: page 1 at .*bottom margin"):
        manuscript.write_pdf(build=build, log=lambda _: None)
    assert not (build / "paper.pdf").exists()


@pytest.mark.usefixtures("poppler")
def test_latex_a_line_past_the_right_margin_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = _latex(tmp_path, "\\noindent\\makebox[0pt][l]{\\hspace{6.8in}faraway}\n", monkeypatch)
    with pytest.raises(manuscript.ManuscriptError, match=r"'faraway' lies outside the text area "
                                                         r"\(right margin\)"):
        manuscript.write_pdf(build=build, log=lambda _: None)


# --- the tables the check made us change ---------------------------------------------------


def test_the_workload_table_is_a_longtable_with_the_decimals_of_the_markdown(
        tmp_path: Path) -> None:
    import re

    from tests.workload_corpus import write_workload_fixture

    w = rworkload.load(write_workload_fixture(tmp_path / "workload.json"))
    tex = tables.render_workload(w, "workload", "tex", paths.TEMPLATES)
    md = tables.render_workload(w, "workload", "md", paths.TEMPLATES)
    assert "\\begin{longtable}" in tex and "\\endhead" in tex and "\\begin{table}" not in tex
    number = r"-?\d+(?:\.\d+)?"
    tex_ivs = re.findall(rf"({number})~\[({number}),~({number})\]", tex)
    md_ivs = re.findall(rf"({number}){NBSP}\\\[({number}),{NBSP}({number})\\\]", md)
    assert tex_ivs and tex_ivs == md_ivs
