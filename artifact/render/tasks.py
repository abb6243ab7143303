"""The doit tasks of the rendering half of the graph (``dodo.py`` imports them).

summary.json → tables (one subtask per catalogue table) and figures (one per catalogue figure)
→ vars.json → manuscript (paper.tex, paper.html, paper.pdf) → verify (claims report) → manifest.

Which tables and figures exist, their formats and the PDF engine come from
:mod:`artifact.render.catalogue`; each task's code dependencies are the files its action
imports, transitively (:func:`code`), so editing any of them reruns it. Definitions stay light:
the renderers (Jinja, matplotlib, pandoc) are imported inside the actions, so ``doit`` with
nothing to do stays well under a second.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from doit.tools import config_changed

from artifact import files, imports, paths, runfiles
from artifact.errors import doit_action
from artifact.log import stderr as log_stderr
from artifact.render import catalogue, layout
from artifact.render.catalogue import (
    FIGURE_DIR,
    TABLE_DIR,
    figure_files,
    table_files,
    table_html_files,
)

FIGURE_PARAMS = {"dpi": catalogue.FIGURE_DPI, "formats": list(catalogue.FIGURE_FORMATS)}

VARS = paths.BUILD / "vars.json"
SOURCES = paths.BUILD / "sources.json"  # each number of vars.json: the analysis fields it is from
NUMBERS_JSON = paths.BUILD / "numbers.json"  # every number paper.html prints, with its sources
NUMBERS_HTML = paths.BUILD / "numbers.html"
NUMBERS_TEMPLATE = paths.TEMPLATES / "numbers.html.j2"
# memory.json exists once the memory runs are measured (experiments/runs-memory/)
MEASURED_MEMORY = bool(runfiles.raw_run_files(paths.MEMORY_RUNS, (runfiles.MEMORY,)))
ANALYSES = [paths.SUMMARY, paths.ACCSPLIT, paths.WORKLOAD, paths.COSTMODEL, paths.REALISM,
            paths.CORE, *([paths.MEMORY] if MEASURED_MEMORY else [])]
PAPER = paths.MANUSCRIPT / "paper.md"
BIB = paths.MANUSCRIPT / "references.bib"
DEFAULTS = paths.MANUSCRIPT / "defaults"
REPORT = paths.BUILD / "report.md"
REPORT_HTML = paths.BUILD / "report.html"
MANIFEST = paths.BUILD / "MANIFEST.sha256"
REPORT_FIGURES = [FIGURE_DIR / f"{n}.png" for n in catalogue.FIGURE_NAMES]  # embedded
ARXIV = paths.BUILD / "arxiv.tar.gz"
CLAIMS_MAP = paths.ROOT / "docs" / "claims.md"  # claimsmap.PAGE, kept light here (a test: equal)
# The other studies' analyses: their fatal warnings fail `doit verify --strict` too.
STUDIES = [paths.ACCSPLIT, paths.WORKLOAD, paths.REALISM, paths.COSTMODEL, paths.CORE,
           *([paths.MEMORY] if MEASURED_MEMORY else [])]


def _s(ps: Any) -> list[str]:
    return [str(p) for p in ps]


def code(module: str) -> list[Path]:
    """The source files an action that imports ``module`` runs: editing one reruns the task."""
    return imports.closure(module)


# --- actions (heavy imports happen here) -----------------------------------------------------


@doit_action
def _render_table(name: str, data: Path) -> None:
    from artifact.render import tables  # Jinja

    tables.write_every(data, name, TABLE_DIR, paths.TEMPLATES)


@doit_action
def _render_figure(name: str, data: Path) -> None:
    from artifact.render import figures  # matplotlib

    figures.write(data, name, FIGURE_DIR, dpi=catalogue.FIGURE_DPI)


@doit_action
def _write_vars() -> None:
    from artifact.render import vars as rvars  # the summary loader, only when it runs

    rvars.write(paths.SUMMARY, VARS, paths.ACCSPLIT, paths.WORKLOAD, paths.COSTMODEL,
                paths.REALISM, paths.CORE, paths.MEMORY if MEASURED_MEMORY else None)


@doit_action
def _write_md(fmt: str) -> None:
    from artifact.render import manuscript  # Jinja, pypandoc

    manuscript.write_intermediate(fmt)


@doit_action
def _write_out(kind: str) -> None:
    from artifact.render import manuscript  # Jinja, pypandoc

    if kind == "tex":
        manuscript.write_tex()
    elif kind == "html":
        manuscript.write_html()
    else:
        manuscript.write_pdf()


@doit_action
def _verify(strict: bool) -> dict[str, bool]:
    from artifact.render import report  # Jinja, pypandoc

    report.verify(ledger=paths.CLAIMS, summary=paths.SUMMARY, variables=VARS,
                  out_dir=paths.BUILD, figures=REPORT_FIGURES, strict=strict,
                  studies=STUDIES)
    return {"strict": strict}  # saved by doit: what the cached verdict was derived under


def gate_is_current(task: Any, values: dict[str, Any]) -> bool:
    """The gate is never skipped: ``--strict`` always re-derives the verdict, and a default
    run reuses only a verdict that was itself derived without ``--strict``."""
    return not (task.options or {}).get("strict") and values.get("strict") is False


@doit_action
def _arxiv() -> None:
    import json

    from artifact.render import arxiv

    epoch = int(json.loads(VARS.read_text(encoding="utf-8"))["source_date_epoch"])
    members = arxiv.write_bundle(paths.BUILD, ARXIV, epoch=epoch)
    log_stderr("arxiv")(f"{ARXIV.relative_to(paths.ROOT)}: {len(members)} files "
                        f"({', '.join(members)}); compile with pdflatex paper.tex")


def manifest_inputs() -> list[Path]:
    """The paper's inputs, the raw runs included: the hash chain reaches the measurements."""
    return [Path(p) for p in _manifest_input_paths()]


def _manifest_input_paths() -> list[str]:
    """:func:`manifest_inputs` as strings (what doit takes: no ``Path`` for each run file)."""
    return [*runfiles.raw_run_paths(paths.RUNS),
            *runfiles.raw_run_paths(paths.WORKLOAD_RUNS, runfiles.WORKLOAD_RUN_FILES),
            *runfiles.raw_run_paths(paths.REALISM_RUNS, runfiles.WORKLOAD_RUN_FILES),
            *runfiles.raw_run_paths(paths.PROCESS_RUNS, runfiles.WORKLOAD_RUN_FILES),
            str(paths.PROCESS_CAMPAIGN),  # the replicated stratum's declared analysis
            *_s(sorted(p for model in paths.COST_RUNS.glob("*") for p in model.glob("*.json*"))),
            *runfiles.raw_run_paths(paths.CORE_RUNS), str(paths.CORE_PREDICTIONS),
            *runfiles.raw_run_paths(paths.MEMORY_RUNS),
            *_s([*([paths.MEMORY] if MEASURED_MEMORY else []),
                 paths.SUMMARY, paths.ACCSPLIT, paths.WORKLOAD, paths.COSTMODEL, paths.REALISM,
                 paths.CORE, paths.CLAIMS,
                 PAPER, BIB,
                 *sorted(DEFAULTS.glob("*.yaml")), *sorted((paths.TEMPLATES).rglob("*.j2"))])]


def manifest_outputs() -> list[Path]:
    out = [VARS, SOURCES, NUMBERS_JSON, NUMBERS_HTML,
           *(p for n in catalogue.TABLE_NAMES for p in (*table_files(n), *table_html_files(n))),
           *(p for n in catalogue.FIGURE_NAMES for p in figure_files(n)),
           paths.BUILD / "paper.tex", paths.BUILD / "paper.html", paths.BUILD / "paper.pdf",
           REPORT, REPORT_HTML]
    return out


def write_manifest(listed: Sequence[Path | str], out: Path) -> None:
    """``sha256  path`` lines (paths relative to the repository), sorted by path."""
    lines = []
    for f in sorted(map(Path, listed), key=lambda p: p.relative_to(paths.ROOT).as_posix()):
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        lines.append(f"{digest}  {f.relative_to(paths.ROOT).as_posix()}\n")
    files.write_text(out, "".join(lines))


# --- tasks -----------------------------------------------------------------------------------


def task_tables() -> Iterator[dict[str, Any]]:
    """Render the tables (Markdown and booktabs LaTeX) from summary.json."""
    for entry in catalogue.TABLES:
        name = entry.name
        yield {
            "name": name,
            "doc": f"table {name}: manuscript/build/tables/{name}.md and .tex, and for "
                   f"paper.html {name}.html.md (numbers linked) and {name}.numbers.json",
            "actions": [(_render_table, [name, entry.data])],
            "file_dep": _s([entry.data, *(paths.TEMPLATES / "tables" / f"{name}.{fmt}.j2"
                                          for fmt in catalogue.TABLE_FORMATS),
                            paths.CLAIMS, *code("artifact.render.tables"),
                            *code("artifact.render.numbers"), *code("artifact.claims")]),
            "targets": _s([*table_files(name), *table_html_files(name)]),
            "clean": True,
        }


def task_figures() -> Iterator[dict[str, Any]]:
    """Draw the figures (600-dpi PNG, vector PDF and SVG) from the analysis files."""
    for entry in catalogue.FIGURES:
        name = entry.name
        yield {
            "name": name,
            "doc": f"figure {name}: manuscript/build/figures/{name}.png, .pdf and .svg",
            "actions": [(_render_figure, [name, entry.data])],
            "file_dep": _s([entry.data, *code("artifact.render.figures")]),
            "targets": _s(figure_files(name)),
            "uptodate": [config_changed(FIGURE_PARAMS)],
            "clean": True,
        }


def task_manuscript() -> Iterator[dict[str, Any]]:
    """Build the paper: vars.json, then paper.tex, paper.html and paper.pdf."""
    yield {
        "name": "vars",
        "doc": "numbers the text needs beyond the schema: manuscript/build/vars.json",
        "actions": [_write_vars],
        "file_dep": _s([*ANALYSES,
                        *code("artifact.render.vars"), *code("artifact.render.memory"),
                        *code("artifact.render.accsplit_vars"),
                        *code("artifact.render.workload"), *code("artifact.render.costmodel"),
                        *code("artifact.render.realism"), *code("artifact.render.core")]),
        "targets": _s([VARS, SOURCES]),
        "clean": True,
    }
    manuscript_code = code("artifact.render.manuscript")
    tables_md = [TABLE_DIR / f"{n}.md" for n in catalogue.TABLE_NAMES]
    for fmt in catalogue.PAPER_FORMATS:
        html = fmt == "html"  # each number a link to numbers.html, which lists where it is from
        yield {
            "name": f"md-{fmt}",
            "doc": f"paper.md rendered for {fmt} (fails on an unresolved variable or claim)"
                   + ("; numbers.html and numbers.json: every number and where it comes from"
                      if html else ""),
            "actions": [(_write_md, [fmt])],
            "file_dep": _s([PAPER, VARS, paths.CLAIMS, paths.SUMMARY, *tables_md,
                            *manuscript_code,
                            *([SOURCES, *ANALYSES, NUMBERS_TEMPLATE,
                               *(p for n in catalogue.TABLE_NAMES for p in table_html_files(n))]
                              if html else [])]),
            "targets": _s([paths.BUILD / f"paper.{fmt}.md",
                           *([NUMBERS_JSON, NUMBERS_HTML] if html else [])]),
            "clean": True,
        }
    common = [BIB, VARS, *manuscript_code]
    tex_deps = [paths.BUILD / "paper.latex.md", DEFAULTS / "latex.yaml", *common]
    yield {
        "name": "tex",
        "doc": "standalone paper.tex beside tables/ and figures/ (arXiv-ready)",
        "actions": [(_write_out, ["tex"])],
        "file_dep": _s(tex_deps),
        "targets": _s([paths.BUILD / "paper.tex"]),
        "clean": True,
    }
    yield {
        "name": "html",
        "doc": "paper.html",
        "actions": [(_write_out, ["html"])],
        "file_dep": _s([paths.BUILD / "paper.html.md", DEFAULTS / "html.yaml", *common]),
        "targets": _s([paths.BUILD / "paper.html"]),
        "clean": True,
    }
    engine = catalogue.pdf_engine()
    if engine == "typst":
        pdf_deps = [paths.BUILD / "paper.typst.md", DEFAULTS / "typst.yaml",
                    *(FIGURE_DIR / f"{n}.svg" for n in catalogue.FIGURE_NAMES), *common]
    else:
        pdf_deps = [*tex_deps, paths.BUILD / "paper.tex",
                    *(FIGURE_DIR / f"{n}.pdf" for n in catalogue.FIGURE_NAMES),
                    *(TABLE_DIR / f"{n}.tex" for n in catalogue.TABLE_NAMES)]
    yield {
        "name": "pdf",
        "doc": "paper.pdf with a LaTeX engine if installed, else Typst (engine in engine.txt); "
               "fails on text outside the text area (layout check, with poppler's pdftotext)",
        "actions": [(_write_out, ["pdf"])],
        "file_dep": _s(pdf_deps),
        "targets": _s([paths.BUILD / "paper.pdf", paths.BUILD / "engine.txt"]),
        # rerun when poppler's pdftotext comes or goes: the layout check runs only with it
        "uptodate": [config_changed({"pdf_engine": engine, "layout_check": layout.available()})],
        "clean": True,
    }


def task_verify() -> dict[str, Any]:
    """Recompute every claim in experiments/claims.toml from the committed runs; print the
    verdict (claims within tolerance out of all, one line per failure); write the claims report."""
    return {
        "actions": [_verify],
        "params": [{"name": "strict", "long": "strict", "type": bool, "default": False,
                    "help": "fail when a claim is not reproduced within its tolerance, or "
                            "the analysis raised a warning of a fatal class"}],
        "file_dep": _s([paths.CLAIMS, paths.SUMMARY, *STUDIES, VARS,
                        paths.TEMPLATES / "report.md.j2",
                        paths.TEMPLATES / "report.html.j2", paths.BUILD / "paper.html",
                        *code("artifact.render.report"), *REPORT_FIGURES]),
        "targets": _s([REPORT, REPORT_HTML]),
        "uptodate": [gate_is_current],
        "clean": True,
    }


def task_arxiv() -> dict[str, Any]:
    """Write manuscript/build/arxiv.tar.gz: paper.tex and the figures and tables it includes."""
    return {
        "actions": [_arxiv],
        "file_dep": _s([paths.BUILD / "paper.tex", VARS, *code("artifact.render.arxiv"),
                        *(FIGURE_DIR / f"{n}.pdf" for n in catalogue.FIGURE_NAMES),
                        *(TABLE_DIR / f"{n}.tex" for n in catalogue.TABLE_NAMES)]),
        "targets": _s([ARXIV]),
        "clean": True,
    }


@doit_action
def _readme() -> None:
    from artifact.render import claimsmap

    changed = claimsmap.write()
    log_stderr("readme")(f"{paths.shown(claimsmap.PAGE)}: claims map "
                         + ("rewritten" if changed else "already current"))


def task_readme() -> dict[str, Any]:
    """Rewrite the claims map of docs/claims.md from experiments/claims.toml and the runs."""
    return {
        "actions": [_readme],
        "file_dep": _s([paths.CLAIMS, *code("artifact.render.claimsmap")]),
        "targets": _s([CLAIMS_MAP]),
        # the page is committed and its prose edited by hand, and the section also follows
        # the committed runs (their durations and machine): always rerun, it is cheap
        "uptodate": [False],
        "verbosity": 2,
    }


def task_manifest() -> dict[str, Any]:
    """Write manuscript/build/MANIFEST.sha256 of every input and output of the paper."""
    listed = [*_manifest_input_paths(), *_s(manifest_outputs())]
    return {
        "actions": [(doit_action(write_manifest), [listed, MANIFEST])],
        "file_dep": listed,
        "targets": _s([MANIFEST]),
        "clean": True,
    }
