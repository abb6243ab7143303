"""doit task definitions for the rendering half of the graph (imported by ``dodo.py``).

summary.json → tables (one subtask per table) and figures (one per figure) → vars.json →
manuscript (paper.tex, paper.html, paper.pdf) → verify (claims report) → manifest.

Definitions stay light: only the standard library and :mod:`artifact.paths` are imported here,
the renderers (Jinja, matplotlib, pandoc) are imported inside the actions, so ``doit`` with
nothing to do stays well under a second.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from doit.tools import config_changed

from artifact import paths

# Kept equal to artifact.render.tables.NAMES / figures.NAMES by a test (importing those
# modules here would load Jinja and matplotlib on every `doit list`).
TABLES = ("speedup", "acceptance", "hardware", "breakeven")
FIGURES = ("speedup", "positions", "breakeven", "hardware")
FIGURE_DPI = 600
FIGURE_PARAMS = {"dpi": FIGURE_DPI, "formats": ["png", "pdf"]}
MD_FORMATS = ("latex", "html", "typst")

RENDER = paths.ROOT / "artifact" / "render"
TABLE_DIR = paths.BUILD / "tables"
FIGURE_DIR = paths.BUILD / "figures"
VARS = paths.BUILD / "vars.json"
PAPER = paths.MANUSCRIPT / "paper.md"
BIB = paths.MANUSCRIPT / "references.bib"
DEFAULTS = paths.MANUSCRIPT / "defaults"
REPORT = paths.BUILD / "report.md"
REPORT_HTML = paths.BUILD / "report.html"
MANIFEST = paths.BUILD / "MANIFEST.sha256"
CORE = [RENDER / "model.py", RENDER / "text.py"]


def _s(ps: Any) -> list[str]:
    return [str(p) for p in ps]


def table_targets(name: str) -> list[Path]:
    return [TABLE_DIR / f"{name}.md", TABLE_DIR / f"{name}.tex"]


def figure_targets(name: str) -> list[Path]:
    return [FIGURE_DIR / f"{name}.png", FIGURE_DIR / f"{name}.pdf"]


def pdf_engine() -> str:
    """The engine the PDF will use (``which`` only: cheap enough for a task definition)."""
    forced = os.environ.get("SPECDEC_PDF_ENGINE")
    if forced:
        return forced
    return next((e for e in ("pdflatex", "xelatex", "lualatex") if shutil.which(e)), "typst")


# --- actions (heavy imports happen here) -----------------------------------------------------


def _render_table(name: str) -> None:
    from artifact.render import tables

    tables.write(paths.SUMMARY, name, TABLE_DIR, paths.TEMPLATES)


def _render_figure(name: str) -> None:
    from artifact.render import figures

    figures.write(paths.SUMMARY, name, FIGURE_DIR, dpi=FIGURE_DPI)


def _write_vars() -> None:
    from artifact.render import vars as rvars

    rvars.write(paths.SUMMARY, VARS)


def _write_md(fmt: str) -> None:
    from artifact.render import manuscript

    manuscript.write_intermediate(fmt)


def _write_out(kind: str) -> None:
    from artifact.render import manuscript

    {"tex": manuscript.write_tex, "html": manuscript.write_html,
     "pdf": manuscript.write_pdf}[kind]()


def _verify(strict: bool) -> None:
    from artifact.render import report

    report.verify(ledger=paths.CLAIMS, summary=paths.SUMMARY, variables=VARS,
                  out_dir=paths.BUILD, figures=[FIGURE_DIR / f"{n}.png" for n in FIGURES],
                  strict=strict)


def manifest_inputs() -> list[Path]:
    return [paths.SUMMARY, paths.CLAIMS, PAPER, BIB, *sorted(DEFAULTS.glob("*.yaml")),
            *sorted((paths.TEMPLATES).rglob("*.j2"))]


def manifest_outputs() -> list[Path]:
    out = [VARS, *(p for n in TABLES for p in table_targets(n)),
           *(p for n in FIGURES for p in figure_targets(n)),
           paths.BUILD / "paper.tex", paths.BUILD / "paper.html", paths.BUILD / "paper.pdf",
           REPORT, REPORT_HTML]
    return out


def write_manifest(files: list[Path], out: Path) -> None:
    """``sha256  path`` lines (paths relative to the repository), sorted by path."""
    lines = []
    for f in sorted(files, key=lambda p: p.relative_to(paths.ROOT).as_posix()):
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        lines.append(f"{digest}  {f.relative_to(paths.ROOT).as_posix()}\n")
    out.write_text("".join(lines), encoding="utf-8")


# --- tasks -----------------------------------------------------------------------------------


def task_tables() -> Iterator[dict[str, Any]]:
    """Render the tables (Markdown and booktabs LaTeX) from summary.json."""
    for name in TABLES:
        yield {
            "name": name,
            "doc": f"table {name}: manuscript/build/tables/{name}.md and .tex",
            "actions": [(_render_table, [name])],
            "file_dep": _s([paths.SUMMARY, paths.TEMPLATES / "tables" / f"{name}.md.j2",
                            paths.TEMPLATES / "tables" / f"{name}.tex.j2",
                            RENDER / "tables.py", *CORE]),
            "targets": _s(table_targets(name)),
            "clean": True,
        }


def task_figures() -> Iterator[dict[str, Any]]:
    """Draw the figures (600-dpi PNG and vector PDF) from summary.json."""
    for name in FIGURES:
        yield {
            "name": name,
            "doc": f"figure {name}: manuscript/build/figures/{name}.png and .pdf",
            "actions": [(_render_figure, [name])],
            "file_dep": _s([paths.SUMMARY, RENDER / "figures.py", *CORE]),
            "targets": _s(figure_targets(name)),
            "uptodate": [config_changed(FIGURE_PARAMS)],
            "clean": True,
        }


def task_manuscript() -> Iterator[dict[str, Any]]:
    """Build the paper: vars.json, then paper.tex, paper.html and paper.pdf."""
    yield {
        "name": "vars",
        "doc": "numbers the text needs beyond the schema: manuscript/build/vars.json",
        "actions": [_write_vars],
        "file_dep": _s([paths.SUMMARY, RENDER / "vars.py", *CORE]),
        "targets": _s([VARS]),
        "clean": True,
    }
    tables_md = [TABLE_DIR / f"{n}.md" for n in TABLES]
    for fmt in MD_FORMATS:
        yield {
            "name": f"md-{fmt}",
            "doc": f"paper.md rendered for {fmt} (fails on an unresolved variable or claim)",
            "actions": [(_write_md, [fmt])],
            "file_dep": _s([PAPER, VARS, paths.CLAIMS, paths.SUMMARY, *tables_md,
                            RENDER / "manuscript.py", paths.ROOT / "artifact" / "claims.py",
                            *CORE]),
            "targets": _s([paths.BUILD / f"paper.{fmt}.md"]),
            "clean": True,
        }
    common = [BIB, VARS, RENDER / "manuscript.py"]
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
    engine = pdf_engine()
    if engine == "typst":
        pdf_deps = [paths.BUILD / "paper.typst.md", DEFAULTS / "typst.yaml",
                    *(FIGURE_DIR / f"{n}.png" for n in FIGURES), *common]
    else:
        pdf_deps = [*tex_deps, paths.BUILD / "paper.tex",
                    *(FIGURE_DIR / f"{n}.pdf" for n in FIGURES),
                    *(TABLE_DIR / f"{n}.tex" for n in TABLES)]
    yield {
        "name": "pdf",
        "doc": "paper.pdf with a LaTeX engine if installed, else Typst (engine in engine.txt)",
        "actions": [(_write_out, ["pdf"])],
        "file_dep": _s(pdf_deps),
        "targets": _s([paths.BUILD / "paper.pdf", paths.BUILD / "engine.txt"]),
        "uptodate": [config_changed({"pdf_engine": engine})],
        "clean": True,
    }


def task_verify() -> dict[str, Any]:
    """Recompute every claim in experiments/claims.toml; write the reproduction report."""
    return {
        "actions": [_verify],
        "params": [{"name": "strict", "long": "strict", "type": bool, "default": False,
                    "help": "fail when a claim is not reproduced within its tolerance"}],
        "file_dep": _s([paths.CLAIMS, paths.SUMMARY, VARS, paths.TEMPLATES / "report.md.j2",
                        paths.ROOT / "artifact" / "claims.py", RENDER / "report.py",
                        *(FIGURE_DIR / f"{n}.png" for n in FIGURES)]),
        "targets": _s([REPORT, REPORT_HTML]),
        "clean": True,
    }


def task_manifest() -> dict[str, Any]:
    """Write manuscript/build/MANIFEST.sha256 of every input and output of the paper."""
    files = [*manifest_inputs(), *manifest_outputs()]
    return {
        "actions": [(write_manifest, [files, MANIFEST])],
        "file_dep": _s(files),
        "targets": _s([MANIFEST]),
        "clean": True,
    }
