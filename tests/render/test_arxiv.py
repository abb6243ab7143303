"""The arXiv bundle: exactly what paper.tex includes, deterministic, and it compiles.

The compile test needs pdflatex: it runs in the Docker image (scripts/image sets
SPECDEC_REQUIRE_TEX=1, which turns the skip into a failure) and wherever TeX is installed.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

import pytest

from artifact.render import arxiv

from .build import build_all

EPOCH = 1_700_000_000


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from .fixture import write_summary

    root = tmp_path_factory.mktemp("arxiv")
    return build_all(write_summary(root / "summary.json"), root / "build")


def test_bundle_holds_paper_tex_and_what_it_includes(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "arxiv.tar.gz"
    members = arxiv.write_bundle(built, out, epoch=EPOCH)
    with tarfile.open(out) as tar:
        names = tar.getnames()
        infos = tar.getmembers()
    assert names == members
    assert names[0] == "paper.tex"
    assert {n.split("/")[0] for n in names[1:]} == {"figures", "tables"}
    assert all(n.endswith((".pdf", ".tex")) for n in names)
    # the PNGs, the Markdown tables and the intermediates stay out
    assert not any(n.endswith((".png", ".md", ".json")) for n in names)
    assert all(i.mtime == EPOCH and i.uid == 0 and i.uname == "" for i in infos)


def test_bundle_is_deterministic(built: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    arxiv.write_bundle(built, a, epoch=EPOCH)
    arxiv.write_bundle(built, b, epoch=EPOCH)
    assert a.read_bytes() == b.read_bytes()


def test_absolute_path_in_tex_is_refused(tmp_path: Path) -> None:
    (tmp_path / "paper.tex").write_text("\\includegraphics{/home/me/figures/x.pdf}\n")
    with pytest.raises(arxiv.ArxivError, match="absolute"):
        arxiv.bundle_members(tmp_path)


def test_machine_path_in_text_is_refused(tmp_path: Path) -> None:
    (tmp_path / "paper.tex").write_text("a\n% built in /tmp/pandoc123/x\n")
    with pytest.raises(arxiv.ArxivError, match="line 2: an absolute path"):
        arxiv.bundle_members(tmp_path)


def test_missing_include_is_named(tmp_path: Path) -> None:
    (tmp_path / "paper.tex").write_text("\\input{tables/speedup.tex}\n")
    with pytest.raises(arxiv.ArxivError, match=r"tables/speedup\.tex, not found"):
        arxiv.bundle_members(tmp_path)


def test_brackets_inside_alt_text_do_not_hide_the_file() -> None:
    tex = r"\includegraphics[alt={from {[}0, 1{]} up}]{figures/b.pdf}\input{tables/a}"
    assert arxiv.referenced_files(tex, Path(".")) == ["figures/b.pdf", "tables/a.tex"]


def test_bundle_compiles_standalone_with_pdflatex(built: Path, tmp_path: Path) -> None:
    if shutil.which("pdflatex") is None:
        if os.environ.get("SPECDEC_REQUIRE_TEX") == "1":
            pytest.fail("SPECDEC_REQUIRE_TEX=1 but pdflatex is not installed")
        pytest.skip("pdflatex not installed (the Docker image runs this test)")
    out = tmp_path / "arxiv.tar.gz"
    arxiv.write_bundle(built, out, epoch=EPOCH)
    assert arxiv.compile_bundle(out) > 10_000
