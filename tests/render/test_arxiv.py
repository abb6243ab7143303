"""The arXiv bundle: exactly what paper.tex includes, deterministic, and it compiles.

The compile test needs pdflatex: it runs in the Docker image (scripts/image sets
SPECDEC_REQUIRE_TEX=1, which turns the skip into a failure) and wherever TeX is installed.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from collections.abc import Callable
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


def small_build(root: Path) -> Path:
    build = root / "build"
    (build / "figures").mkdir(parents=True)
    (build / "tables").mkdir()
    (build / "paper.tex").write_text("\\input{tables/t}\n\\includegraphics{figures/a.pdf}\n")
    (build / "tables" / "t.tex").write_text("table\n")
    (build / "figures" / "a.pdf").write_bytes(b"%PDF-1.5 figure")
    (root / "secret.pdf").write_bytes(b"%PDF-1.5 SECRET, outside the repository")
    return build


def _swap_figure_for_link_out(build: Path) -> None:
    (build / "figures" / "a.pdf").unlink()
    (build / "figures" / "a.pdf").symlink_to(build.parent / "secret.pdf")


def _swap_figure_for_link_in(build: Path) -> None:
    (build / "figures" / "b.pdf").write_bytes(b"%PDF-1.5 b")
    (build / "figures" / "a.pdf").unlink()
    (build / "figures" / "a.pdf").symlink_to("b.pdf")


def _swap_folder_for_link_out(build: Path) -> None:
    out = build.parent / "elsewhere"
    (build / "figures").rename(out)
    (build / "figures").symlink_to(out)


def _swap_paper_for_link(build: Path) -> None:
    (build.parent / "paper.tex").write_text((build / "paper.tex").read_text())
    (build / "paper.tex").unlink()
    (build / "paper.tex").symlink_to(build.parent / "paper.tex")


def _swap_figure_for_folder(build: Path) -> None:
    (build / "figures" / "a.pdf").unlink()
    (build / "figures" / "a.pdf").mkdir()


def _swap_figure_for_fifo(build: Path) -> None:
    (build / "figures" / "a.pdf").unlink()
    os.mkfifo(build / "figures" / "a.pdf")


def _include_outside(build: Path) -> None:
    (build / "paper.tex").write_text("\\includegraphics{../secret.pdf}\n")


@pytest.mark.parametrize(("hostile", "said"), [
    (_swap_figure_for_link_out, r"'figures/a\.pdf': a symbolic link \(to .*secret\.pdf\)"),
    (_swap_figure_for_link_in, r"'figures/a\.pdf': a symbolic link \(to b\.pdf\)"),
    (_swap_folder_for_link_out, r"'figures/a\.pdf': resolves outside the build folder"),
    (_swap_paper_for_link, r"'paper\.tex': a symbolic link"),
    (_swap_figure_for_folder, r"'figures/a\.pdf': not a regular file"),
    (_swap_figure_for_fifo, r"'figures/a\.pdf': not a regular file"),
    (_include_outside, r"'\.\./secret\.pdf': an absolute or outside path"),
])
def test_the_bundle_holds_regular_files_from_inside_the_build_only(
        tmp_path: Path, hostile: Callable[[Path], None], said: str) -> None:
    build = small_build(tmp_path)
    out = tmp_path / "arxiv.tar.gz"
    assert arxiv.write_bundle(build, out, epoch=EPOCH) == [
        "paper.tex", "figures/a.pdf", "tables/t.tex"]
    out.unlink()
    hostile(build)
    with pytest.raises(arxiv.ArxivError, match=said) as err:
        arxiv.write_bundle(build, out, epoch=EPOCH)
    assert "\n" not in str(err.value)
    assert not out.exists() and not out.with_name(out.name + ".part").exists()
