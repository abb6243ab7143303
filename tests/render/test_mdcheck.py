"""The generated Markdown check (issue 33): each defect class a template's whitespace control
can make fails the build with one line per finding; code, math and attributes do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifact.errors import ManuscriptError
from artifact.render import mdcheck


@pytest.mark.parametrize(("text", "what"), [
    ("The end of it.\n# References {.unnumbered}\n", "heading without a blank line before it"),
    ("own text. # References\n", "heading inside a line"),
    ("A sentence with {.unnumbered} inside it.\n", "attribute text in prose"),
    ("a gap of \\[3.2\\]\\{\\#claim-x-1 .claim\\}% [1.4, 5.2]\n", "attribute text in prose"),
    ("no timing figures.Windows w4, w5\n", "sentence end glued to the next word"),
    ("(1.0% at most).The runs\n", "sentence end glued to the next word"),
    ("in 202(the others differ\n", "word glued to a parenthesis"),
])
def test_each_defect_class_fails_the_check(tmp_path: Path, text: str, what: str) -> None:
    assert [f.what for f in mdcheck.findings(text)] == [what]
    with pytest.raises(ManuscriptError, match=rf"paper.md:\d+: {what}"):
        mdcheck.check(tmp_path / "paper.md", text)


def test_code_math_captions_divs_and_headings_pass() -> None:
    text = ("---\ntitle: x\n---\n\n# Methods {#sec:m}\n\nSee `file.Name` and $x.Y$ and "
            "[a](docs.Page), e.g.The, c(n) = a + b·n.\n\n```\nfigures.Windows 202(the\n```\n\n"
            ": A caption with max(a/b) {#tbl:t}\n\n::: {#refs}\n:::\n")
    assert mdcheck.findings(text) == []
