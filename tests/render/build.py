"""A whole clean build into one directory, as the doit tasks do it (for tests)."""

from __future__ import annotations

from pathlib import Path

from artifact import paths
from artifact.render import catalogue, figures, manuscript, tables
from artifact.render import vars as rvars

from .accsplit_fixture import write_accsplit


def build_all(summary: Path, build: Path, *, pdf: bool = False) -> Path:
    """Every table, figure and paper format; accsplit.json is the fixture's, beside summary."""
    accsplit = write_accsplit(summary.parent / "accsplit.json")
    data = {paths.SUMMARY: summary, paths.ACCSPLIT: accsplit}
    for entry in catalogue.TABLES:
        tables.write(data[entry.data], entry.name, build / "tables", paths.TEMPLATES)
    for entry in catalogue.FIGURES:
        figures.write(data[entry.data], entry.name, build / "figures")
    rvars.write(summary, build / "vars.json", accsplit)
    for fmt in catalogue.PAPER_FORMATS:
        manuscript.write_intermediate(fmt, build=build, summary=summary)
    manuscript.write_tex(build=build)
    manuscript.write_html(build=build)
    if pdf:
        manuscript.write_pdf(build=build)
    return build
