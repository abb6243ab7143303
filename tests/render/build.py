"""A whole clean build into one directory, as the doit tasks do it (for tests)."""

from __future__ import annotations

from pathlib import Path

from artifact import paths
from artifact.render import catalogue, figures, manuscript, tables
from artifact.render import vars as rvars


def build_all(summary: Path, build: Path, *, pdf: bool = False) -> Path:
    for name in catalogue.TABLE_NAMES:
        tables.write(summary, name, build / "tables", paths.TEMPLATES)
    for name in catalogue.FIGURE_NAMES:
        figures.write(summary, name, build / "figures")
    rvars.write(summary, build / "vars.json")
    for fmt in catalogue.PAPER_FORMATS:
        manuscript.write_intermediate(fmt, build=build, summary=summary)
    manuscript.write_tex(build=build)
    manuscript.write_html(build=build)
    if pdf:
        manuscript.write_pdf(build=build)
    return build
