"""The cost model's table, from ``costmodel.json``: predicted against measured speedup per run.

``costmodel.json`` (:mod:`artifact.analysis.costmodel`) holds each model's fitted step cost
``c(n) = a + b·n`` and, per drafted run of the CPU study, its counters and the speedup the model
predicts beside the one measured. This module selects and formats; it estimates nothing.
Templates: ``templates/tables/costmodel.md.j2`` and ``costmodel.tex.j2``, rendered with the
same context. (Not yet in the catalogue: wiring the table into the manuscript is separate.)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from artifact import files, paths
from artifact.errors import RenderError
from artifact.render.text import environment

SCHEMA_VERSION = 1  # the costmodel.json this module reads
FAMILY_ORDER = ("final", "curves", "ksweep")
FORMATS = ("md", "tex")


def load(path: Path) -> dict[str, Any]:
    """Read ``costmodel.json``; a missing file or another schema is one line."""
    data: dict[str, Any] = files.read_json(path, RenderError, where=paths.shown(path))
    if data.get("schema") != SCHEMA_VERSION:
        raise RenderError(f"{paths.shown(path)}: schema {data.get('schema')!r}, this renderer "
                          f"reads {SCHEMA_VERSION}")
    return data


def _order(item: tuple[str, Mapping[str, Any]]) -> tuple[int, str, int, str]:
    rid, r = item
    fam = r.get("family")
    rank = FAMILY_ORDER.index(fam) if fam in FAMILY_ORDER else len(FAMILY_ORDER)
    return rank, str(r.get("drafter")), int(r.get("k") or 0), rid


def context(data: Mapping[str, Any]) -> dict[str, Any]:
    """Rows (one per drafted run: label, k, mean draft length, acceptance, predicted and
    measured speedup) and the fitted step costs of the models, by key.

    >>> c = context({"schema": 1, "models": {"t": {"a_ms": 9.0, "b_ms": 8.0, "r2": 0.99,
    ...     "c1_ms": 17.0, "n_points": 17}}, "runs": {"r": {"label": "ngram-mod", "family":
    ...     "final", "drafter": "ngram-mod", "k": None, "mean_draft": 4.0, "acceptance": 0.5,
    ...     "predicted_speedup": 1.1, "measured_speedup": None, "draft_model": None}}})
    >>> [(r["run"], r["k"], r["measured"]) for r in c["rows"]], c["models"][0]["key"]
    ([('r', None, None)], 't')
    """
    rows = [{"run": rid, "label": r.get("label"), "family": r.get("family"), "k": r.get("k"),
             "mean_draft": r.get("mean_draft"), "acceptance": r.get("acceptance"),
             "predicted": r.get("predicted_speedup"), "measured": r.get("measured_speedup"),
             "reason": r.get("reason"), "extrapolated": r.get("extrapolated") is True}
            for rid, r in sorted(data.get("runs", {}).items(), key=_order)]
    models = [{"key": k, **m} for k, m in sorted(data.get("models", {}).items())]
    return {"rows": rows, "models": models,
            "any_unmeasured": any(r["measured"] is None for r in rows),
            "any_extrapolated": any(r["extrapolated"] for r in rows)}


def render(data: Mapping[str, Any], fmt: str, templates: Path = paths.TEMPLATES) -> str:
    """The table in one format (``md`` or ``tex``) as text."""
    if fmt not in FORMATS:
        raise RenderError(f"costmodel table: format {fmt!r} (have: {', '.join(FORMATS)})")
    env = environment(fmt, jinja2.FileSystemLoader(templates / "tables"))
    return env.get_template(f"costmodel.{fmt}.j2").render(**context(data))


def write(data_path: Path, out_dir: Path, templates: Path = paths.TEMPLATES) -> list[Path]:
    """Render ``costmodel.md`` and ``costmodel.tex`` into ``out_dir``; returns the files."""
    data = load(data_path)
    return [files.write_text(out_dir / f"costmodel.{fmt}", render(data, fmt, templates))
            for fmt in FORMATS]
