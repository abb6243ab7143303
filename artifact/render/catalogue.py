"""The one catalogue of what the paper is made of: tables, figures, formats and the PDF engine.

Read by the doit tasks (which subtasks exist and what they write), the renderers (which formats
they write) and the manuscript (floats are numbered in catalogue order, and placing them in
another order fails the build). Standard library and :mod:`artifact.paths` only, so that
``doit list`` stays fast. A new table or figure is one entry here, plus its template or ``fig_*``
function (a test checks that each entry has one and each renderer has an entry).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from artifact import paths


@dataclass(frozen=True)
class Entry:
    """A table or figure: its name (file stem, ``tbl:``/``fig:`` label) and the file it reads."""

    name: str
    data: Path = paths.SUMMARY


# In the order the paper numbers them.
TABLES = (Entry("core", data=paths.CORE),
          Entry("speedup"), Entry("acceptance"), Entry("hardware"), Entry("breakeven"),
          Entry("costmodel", data=paths.COSTMODEL),
          Entry("accsplit_cells", data=paths.ACCSPLIT),
          Entry("accsplit_figures", data=paths.ACCSPLIT),
          Entry("accsplit_recon", data=paths.ACCSPLIT),
          Entry("realism", data=paths.REALISM), Entry("realism_servers", data=paths.REALISM),
          Entry("realism_floor", data=paths.REALISM),
          Entry("workload", data=paths.WORKLOAD), Entry("ablation", data=paths.WORKLOAD))
FIGURES = (Entry("regime", data=paths.CORE),
           Entry("speedup"), Entry("positions"), Entry("breakeven"), Entry("hardware"),
           Entry("accsplit", data=paths.ACCSPLIT), Entry("realism", data=paths.REALISM),
           Entry("workload", data=paths.WORKLOAD))
TABLE_NAMES = tuple(e.name for e in TABLES)
FIGURE_NAMES = tuple(e.name for e in FIGURES)

TABLE_FORMATS = ("md", "tex")  # pandoc pipe table (HTML, Typst), booktabs float (LaTeX)
FIGURE_FORMATS = ("png", "pdf", "svg")  # raster for HTML; vector: PDF for LaTeX, SVG for Typst
FIGURE_DPI = 600
PAPER_FORMATS = ("latex", "html", "typst")  # one intermediate paper.<fmt>.md each
LATEX_ENGINES = ("pdflatex", "xelatex", "lualatex")  # the first on PATH makes the PDF

TABLE_DIR = paths.BUILD / "tables"
FIGURE_DIR = paths.BUILD / "figures"


def table_files(name: str, out_dir: Path = TABLE_DIR) -> list[Path]:
    return [out_dir / f"{name}.{fmt}" for fmt in TABLE_FORMATS]


def table_html_files(name: str, out_dir: Path = TABLE_DIR) -> list[Path]:
    """paper.html's version of a table (its numbers linked) and the list of those numbers."""
    return [out_dir / f"{name}.html.md", out_dir / f"{name}.numbers.json"]


def figure_files(name: str, out_dir: Path = FIGURE_DIR) -> list[Path]:
    return [out_dir / f"{name}.{fmt}" for fmt in FIGURE_FORMATS]


def latex_engine() -> str | None:
    """The first LaTeX engine on PATH, unless ``SPECDEC_PDF_ENGINE`` names one (``typst``:
    none). Cheap (``which`` only): the PDF task's definition asks it."""
    forced = os.environ.get("SPECDEC_PDF_ENGINE")
    if forced:
        return None if forced == "typst" else forced
    return next((e for e in LATEX_ENGINES if shutil.which(e)), None)


def pdf_engine() -> str:
    """What will make ``paper.pdf``: a LaTeX engine, else ``typst``."""
    return latex_engine() or "typst"
