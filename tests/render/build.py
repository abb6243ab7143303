"""A whole clean build into one directory, as the doit tasks do it (for tests)."""

from __future__ import annotations

from pathlib import Path

from artifact import paths
from artifact.render import catalogue, figures, manuscript, tables
from artifact.render import vars as rvars
from tests.workload_corpus import write_workload_fixture

from .accsplit_fixture import write_accsplit
from .core_fixture import write_core_fixture
from .costmodel_fixture import write_costmodel
from .memory_fixture import write_memory
from .realism_fixture import write_realism_fixture


def build_all(summary: Path, build: Path, *, pdf: bool = False) -> Path:
    """Every table, figure and paper format; accsplit.json, costmodel.json, workload.json,
    realism.json and core.json are the fixtures', beside summary (the last three: kept when
    already there)."""
    accsplit = write_accsplit(summary.parent / "accsplit.json")
    cost = write_costmodel(summary.parent / "costmodel.json")
    workload = summary.parent / "workload.json"
    if not workload.exists():
        write_workload_fixture(workload)
    realism = summary.parent / "realism.json"
    if not realism.exists():
        write_realism_fixture(realism)
    core = summary.parent / "core.json"
    if not core.exists():
        write_core_fixture(core)
    data = {paths.SUMMARY: summary, paths.ACCSPLIT: accsplit, paths.WORKLOAD: workload,
            paths.COSTMODEL: cost, paths.REALISM: realism, paths.CORE: core}
    for entry in catalogue.TABLES:
        tables.write_every(data[entry.data], entry.name, build / "tables", paths.TEMPLATES)
    for entry in catalogue.FIGURES:
        figures.write(data[entry.data], entry.name, build / "figures")
    memory = write_memory(summary.parent / "memory.json")
    rvars.write(summary, build / "vars.json", accsplit, workload, cost, realism, core, memory)
    for fmt in catalogue.PAPER_FORMATS:
        manuscript.write_intermediate(fmt, build=build, summary=summary)
    manuscript.write_tex(build=build)
    manuscript.write_html(build=build)
    if pdf:
        manuscript.write_pdf(build=build)
    return build
