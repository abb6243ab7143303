"""Characters beyond ASCII in paper.tex: checked against latex.yaml's declarations everywhere.

The last test compiles every declared character with pdflatex (skipped without it, a failure
under SPECDEC_REQUIRE_TEX=1, as in the Docker image), so the list is proven, not assumed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pypandoc
import pytest

from artifact import paths
from artifact.errors import ManuscriptError
from artifact.render import texchars

DEFAULTS = paths.MANUSCRIPT / "defaults" / "latex.yaml"


def test_latex_yaml_declares_the_characters_the_paper_uses() -> None:
    allowed = texchars.declared(DEFAULTS)
    # the minus sign of the acceptance-split section stopped pdflatex once (U+2212)
    assert {"\u2212", "\u00b1", "\u00d7", "\u2026", "\u0394", "\u2192"} <= allowed
    assert all(ord(c) > 127 for c in allowed)


def test_an_undeclared_character_names_file_line_and_fix(tmp_path: Path) -> None:
    build = tmp_path / "build"
    (build / "tables").mkdir(parents=True)
    (build / "tables" / "speedup.tex").write_text("a\nb \u2260 c\n", encoding="utf-8")
    tex = build / "paper.tex"
    tex.write_text("x \u2212 y\n\\input{tables/speedup.tex}\n", encoding="utf-8")
    with pytest.raises(ManuscriptError) as err:
        texchars.check_paper(tex, build, DEFAULTS)
    msg = str(err.value)
    assert "speedup.tex:2:" in msg and "U+2260 NOT EQUAL TO" in msg
    assert "manuscript/defaults/latex.yaml" in msg and "\\DeclareUnicodeCharacter{2260}" in msg
    assert "\n" not in msg


def test_the_paper_source_is_checked_before_it_is_written(tmp_path: Path) -> None:
    tex = tmp_path / ".paper.tex.tmp"
    tex.write_text("ok\nstill ok\n\u03c0\n", encoding="utf-8")
    with pytest.raises(ManuscriptError, match=r"paper\.tex:3: character '\u03c0'"):
        texchars.check_paper(tex, tmp_path, DEFAULTS, shown_as=tmp_path / "paper.tex")


def test_declared_characters_and_ascii_pass(tmp_path: Path) -> None:
    tex = tmp_path / "paper.tex"
    tex.write_text("".join(sorted(texchars.declared(DEFAULTS))) + " plain ASCII\n",
                   encoding="utf-8")
    texchars.check_paper(tex, tmp_path, DEFAULTS)


def test_every_declared_character_compiles_with_pdflatex(tmp_path: Path) -> None:
    if shutil.which("pdflatex") is None:
        if os.environ.get("SPECDEC_REQUIRE_TEX") == "1":
            pytest.fail("SPECDEC_REQUIRE_TEX=1 but pdflatex is not installed")
        pytest.skip("pdflatex not installed (the Docker image runs this test)")
    body = " ".join(f"{ord(c):04X}:{c}" for c in sorted(texchars.declared(DEFAULTS)))
    tex = tmp_path / "chars.tex"
    pypandoc.convert_text(f"Characters: {body}\n", "latex", format="markdown",
                          outputfile=str(tex),
                          extra_args=["--standalone", "--metadata-file", str(DEFAULTS)])
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           tex.name], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert (tmp_path / "chars.pdf").stat().st_size > 0
