"""The cost model's table, from ``costmodel.json``: predicted against measured speedup per run.

``costmodel.json`` (:mod:`artifact.analysis.costmodel`) holds each model's fitted step cost
``c(n) = a + b·n`` and, per drafted run of the CPU study, its counters and the speedup the model
predicts beside the one measured. This module selects and formats; it estimates nothing.
Templates: ``templates/tables/costmodel.md.j2`` and ``costmodel.tex.j2``, rendered with the
same context; :func:`variables` is what the paper's text reads (``v.costmodel``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from artifact import files, paths
from artifact.errors import RenderError
from artifact.render.provenance import as_float
from artifact.render.text import environment

SCHEMA_VERSION = 1  # the costmodel.json this module reads
FAMILY_ORDER = ("final", "curves", "ksweep")
FORMATS = ("md", "tex")


def load(path: Path) -> dict[str, Any]:
    """Read ``costmodel.json``; a missing file or another schema is one line."""
    return checked(files.read_json(path, RenderError, where=paths.shown(path)), paths.shown(path))


def checked(data: Any, where: str) -> dict[str, Any]:
    """Parsed ``costmodel.json`` of the schema this renderer reads; another is one line."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
        got = data.get("schema") if isinstance(data, dict) else None
        raise RenderError(f"{where}: schema {got!r}, this renderer reads {SCHEMA_VERSION}")
    return data


def _order(item: tuple[str, Mapping[str, Any]]) -> tuple[int, str, int, str]:
    rid, r = item
    fam = r.get("family")
    rank = FAMILY_ORDER.index(fam) if fam in FAMILY_ORDER else len(FAMILY_ORDER)
    return rank, str(r.get("drafter")), int(r.get("k") or 0), rid


def display(r: Mapping[str, Any]) -> str:
    """A run's name as the paper's other tables write it (``draft model Q2_K k=8``,
    ``draft model Q4_1 (self)``, ``ngram-mod k=4``).

    >>> display({"label": "draft-simple m-q2_k Q2_K k=8", "draft_model": "m-q2_k",
    ...          "draft_quant": "Q2_K", "target_model": "m-q4_1", "k": 8})
    'draft model Q2_K k=8'
    >>> display({"label": "draft-simple m-q4_1 Q4_1", "draft_model": "m-q4_1",
    ...          "draft_quant": "Q4_1", "target_model": "m-q4_1", "k": None})
    'draft model Q4_1 (self)'
    >>> display({"label": "ngram-mod k=4", "draft_model": None, "k": 4})
    'ngram-mod k=4'
    """
    if not r.get("draft_model"):
        return str(r.get("label") or "")
    q = r.get("draft_quant")
    name = f"draft model {q}" if q else "draft model"
    if r.get("target_model") and r["draft_model"] == r["target_model"]:
        name += " (self)"
    return name if r.get("k") is None else f"{name} k={r['k']}"


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
    rows = [{"run": rid, "label": display(r), "family": r.get("family"), "k": r.get("k"),
             "mean_draft": r.get("mean_draft"), "acceptance": r.get("acceptance"),
             "predicted": r.get("predicted_speedup"), "measured": r.get("measured_speedup"),
             "reason": r.get("reason"), "extrapolated": r.get("extrapolated") is True}
            for rid, r in sorted(data.get("runs", {}).items(), key=_order)]
    models = [{"key": k, **m} for k, m in sorted(data.get("models", {}).items())]
    return {"rows": rows, "models": models,
            "any_unmeasured": any(r["measured"] is None for r in rows),
            "any_extrapolated": any(r["extrapolated"] for r in rows)}


def _span(xs: list[float]) -> dict[str, float] | None:
    return {"min": min(xs), "max": max(xs)} if xs else None


def variables(data: Mapping[str, Any]) -> dict[str, Any]:
    """What the paper's text reads of the cost model (``v.costmodel``): the fitted step costs
    per model, the target's key and, for the final runs, predicted against measured speedup:
    each draft-model run on its own (with its draft's one-token step over the target's), the
    n-gram runs as the span of each.

    >>> v = variables({"schema": 1, "models": {
    ...     "t": {"a_ms": 9.0, "b_ms": 8.0, "r2": 0.99, "c1_ms": 17.0},
    ...     "q": {"a_ms": 4.5, "b_ms": 4.0, "r2": 0.98, "c1_ms": 8.5}}, "runs": {
    ...     "d": {"label": "draft", "family": "final", "draft_model": "q", "k": None,
    ...           "target_model": "t", "acceptance": 0.9, "predicted_speedup": 0.8,
    ...           "measured_speedup": 0.5},
    ...     "n": {"label": "ngram", "family": "final", "draft_model": None, "k": None,
    ...           "target_model": "t", "acceptance": 0.6, "predicted_speedup": 1.0,
    ...           "measured_speedup": 0.9}}})
    >>> v["target"], v["draft"][0]["gap"], v["draft"][0]["step_ratio"], v["all_draft_below_1"]
    ('t', 0.30000000000000004, 0.5, True)
    >>> v["ngram"]["predicted"], v["ngram"]["measured"]
    ({'min': 1.0, 'max': 1.0}, {'min': 0.9, 'max': 0.9})
    """
    models = {k: {"a_ms": m.get("a_ms"), "b_ms": m.get("b_ms"), "r2": m.get("r2"),
                  "c1_ms": m.get("c1_ms")} for k, m in sorted(data.get("models", {}).items())}
    final = [r for _, r in sorted(data.get("runs", {}).items(), key=_order)
             if r.get("family") == "final" and r.get("predicted_speedup") is not None
             and r.get("measured_speedup") is not None]
    targets = sorted({str(r["target_model"]) for r in final if r.get("target_model")})
    target = targets[0] if len(targets) == 1 else None

    def step_ratio(draft: str) -> float | None:
        d, t = models.get(draft, {}).get("c1_ms"), models.get(target or "", {}).get("c1_ms")
        return as_float(d) / as_float(t) if d is not None and t else None

    draft = [{"label": display(r), "draft_model": r["draft_model"],
              "quant": r.get("draft_quant") or "lower-bit",
              "acceptance": r.get("acceptance"), "predicted": r["predicted_speedup"],
              "measured": r["measured_speedup"],
              "gap": r["predicted_speedup"] - r["measured_speedup"],
              "self": r["draft_model"] == target, "step_ratio": step_ratio(r["draft_model"])}
             for r in final if r.get("draft_model")]
    ngram = [r for r in final if not r.get("draft_model")]
    return {"models": models, "target": target, "draft": draft,
            "all_draft_below_1": bool(draft) and all(d["predicted"] < 1 for d in draft),
            "gap": _span([as_float(d["gap"]) for d in draft]),
            "ngram": {"n": len(ngram),
                      "predicted": _span([as_float(r["predicted_speedup"]) for r in ngram]),
                      "measured": _span([as_float(r["measured_speedup"]) for r in ngram])}}


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
