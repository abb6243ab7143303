"""The core study, take three: its table, its regime figure and its manuscript variables, from
``core.json`` (:mod:`artifact.analysis.core`).

This module selects and formats; it estimates nothing. Templates: ``templates/tables/core.{md,
tex}.j2``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from matplotlib.axes import Axes

from artifact import files
from artifact.contract import core as contract
from artifact.errors import RenderError
from artifact.render.provenance import as_float, count
from artifact.render.text import environment

TABLES = ("core",)
TARGET_LABELS = {"q4_1": "Q4_1", "q8_0": "Q8_0", "f16": "F16"}
TASK_LABELS = {"study": "study", "edit": "edit"}
DRAFTER_LABELS = {"control": "control (no draft)", "ngram-mod": "ngram-mod",
                  "ngram-mod-k16": "ngram-mod k=16", "ngram-simple": "ngram-simple",
                  "draft-q2k": "draft Q2_K"}


def load(path: Path) -> contract.Core:
    """Read and validate one ``core.json``."""
    return contract.read(path, error=RenderError)


def cell_key(g: contract.Group, drafter: str) -> str:
    """A cell's key in ``v.core.cells`` and the claims: target, task, drafter.

    >>> cell_key({"target": "f16", "task": "edit"}, "ngram-mod")  # type: ignore[arg-type]
    'f16-edit-ngram-mod'
    """
    return f"{g['target']}-{g['task']}-{drafter}"


def cell_label(g: contract.Group, drafter: str) -> str:
    """A cell as the paper writes it.

    >>> cell_label({"target": "f16", "task": "edit"}, "draft-q2k")  # type: ignore[arg-type]
    'F16, edit, draft Q2_K'
    """
    return f"{TARGET_LABELS[g['target']]}, {TASK_LABELS[g['task']]}, {DRAFTER_LABELS[drafter]}"


def cell_prose(g: contract.Group, drafter: str) -> str:
    """A cell as a sentence names it.

    >>> cell_prose({"target": "f16", "task": "edit"}, "ngram-mod")  # type: ignore[arg-type]
    'ngram-mod on the F16 target, edit task'
    """
    return f"{DRAFTER_LABELS[drafter]} on the {TARGET_LABELS[g['target']]} target, " \
           f"{TASK_LABELS[g['task']]} task"


def _drafter_cells(c: contract.Core) -> list[tuple[contract.Group, str, contract.Cell]]:
    return [(g, d, cell) for g in c["groups"] for d, cell in contract.measured(g).items()
            if d != contract.CONTROL]


# --- the table -----------------------------------------------------------------------------

def table_context(c: contract.Core) -> dict[str, Any]:
    """One row per cell, groups in the campaign's order, the control first in each."""
    rows = []
    for g in c["groups"]:
        measured = contract.measured(g)  # a cell not computable has no row
        order = [d for d in (contract.CONTROL, *contract.DRAFTERS) if d in measured]
        for i, d in enumerate(order):
            cell = measured[d]
            rows.append({"target": TARGET_LABELS[g["target"]] if i == 0 else "",
                         "task": TASK_LABELS[g["task"]] if i == 0 else "",
                         "drafter": DRAFTER_LABELS[d], "speedup": cell["speedup"],
                         "predicted": cell["predicted"], "acceptance": cell["acceptance"],
                         "tau": cell["tokens_per_round"], "drafted": cell["drafted_prompts"],
                         "n": cell["speedup"]["n"], "sign_right": cell["sign_right"],
                         "inside": cell["inside_weak"], "first": i == 0})
    return {"rows": rows, "signs_right": c["signs_right"], "signs_judged": c["signs_judged"],
            "inside": c["inside_weak"],
            "passes": max((count(cell["repeats"]) for g in c["groups"]
                           for cell in contract.measured(g).values()), default=0)}


def render(c: contract.Core, name: str, fmt: str, templates: Path) -> str:
    env = environment(fmt, jinja2.FileSystemLoader(templates / "tables"))
    return env.get_template(f"{name}.{fmt}.j2").render(**table_context(c))


def write(data_path: Path, name: str, out_dir: Path, templates: Path) -> list[Path]:
    """Render the study's table in every format into ``out_dir``."""
    from artifact.render import catalogue

    c = load(data_path)
    return [files.write_text(p, render(c, name, p.suffix[1:], templates))
            for p in catalogue.table_files(name, out_dir)]


# --- manuscript variables ---------------------------------------------------------------------

def _span(xs: list[float]) -> dict[str, float | None]:
    return {"min": min(xs, default=None), "max": max(xs, default=None)}


def variables(c: contract.Core) -> dict[str, Any]:
    """What the text and the claims read (``v.core``): every cell by key, and selections."""
    cells: dict[str, Any] = {}
    for g in c["groups"]:
        for d, cell in contract.measured(g).items():
            key = cell_key(g, d)
            entry = {"label": cell_label(g, d), "prose": cell_prose(g, d),
                     "target": g["target"], "task": g["task"],
                     "drafter": d, "speedup": cell["speedup"],
                     "acceptance": cell["acceptance"], "tau": cell["tokens_per_round"],
                     "drafted_prompts": cell["drafted_prompts"],
                     "undrafted": cell["undrafted"], "predicted": cell["predicted"],
                     "sign_right": cell["sign_right"], "inside": cell["inside_weak"],
                     "pays": cell["speedup"]["lo"] is not None and cell["speedup"]["lo"] > 1,
                     "loses": cell["speedup"]["hi"] is not None and cell["speedup"]["hi"] < 1}
            cells[key] = entry
    drafted = _drafter_cells(c)
    best = max(drafted, key=lambda x: x[2]["speedup"]["mean"], default=None)
    ngram = [cell for g, d, cell in drafted if d != "draft-q2k"]
    undrafted = [cell["undrafted"] for cell in ngram if cell["undrafted"] is not None]
    controls = [contract.measured(g)[contract.CONTROL]["speedup"] for g in c["groups"]
                if contract.CONTROL in contract.measured(g)]
    costs = c["predictions"]["costs"] if c["predictions"] else {}
    return {
        "complete": len(c["groups"]) == len(contract.TARGETS) * len(contract.TASKS),
        "n_groups": len(c["groups"]), "n_cells": len(drafted),
        # every quiet request read, the no-draft runs' included
        "n_requests": sum(g["none_requests"] + sum(cell["n_requests"]
                                                   for cell in contract.measured(g).values())
                          for g in c["groups"]),
        "n_left_out": sum(c["left_out_contended"].values()),
        # prompts whose every pass gave the first pass's text, of the prompts read
        "prompts_same_text": c["prompts_same_text"], "prompts_read": c["prompts_read"],
        "machines": c["machines"], "dates": c["dates"],
        "passes": max((count(cell["repeats"]) for g in c["groups"]
                       for cell in contract.measured(g).values()), default=0),
        "n_prompts": max((cell["speedup"]["n"] for g in c["groups"]
                          for cell in contract.measured(g).values()), default=0),
        "signs_right": c["signs_right"], "signs_judged": c["signs_judged"],
        "inside": c["inside_weak"],
        "wrong_signs": [cell_prose(g, d) for g, d, cell in drafted
                        if cell["sign_right"] is False],
        # where the wrong signs lie: their tasks, and whether all are n-gram drafters
        "wrong_tasks": sorted({g["task"] for g, d, cell in drafted
                               if cell["sign_right"] is False}),
        "wrong_all_ngram": all(d != "draft-q2k" for g, d, cell in drafted
                               if cell["sign_right"] is False),
        "n_wrong": sum(1 for g, d, cell in drafted if cell["sign_right"] is False),
        "paying": [cell_prose(g, d) for g, d, cell in drafted if cells[cell_key(g, d)]["pays"]],
        "n_paying": sum(1 for e in cells.values() if e["pays"] and e["drafter"] != "control"),
        "n_losing": sum(1 for e in cells.values() if e["loses"] and e["drafter"] != "control"),
        "best": cells[cell_key(best[0], best[1])] if best else None,
        "cells": cells,
        "draft_q2k": _span([e["speedup"]["mean"] for e in cells.values()
                            if e["drafter"] == "draft-q2k"]),
        "lookup": {**_span([u["mean"] for u in undrafted]), "n_cells": len(undrafted),
                   "n_prompts": _span([as_float(u["n"]) for u in undrafted])},
        "control": {"lo": min((x["lo"] for x in controls if x["lo"] is not None), default=None),
                    "hi": max((x["hi"] for x in controls if x["hi"] is not None), default=None),
                    **_span([x["mean"] for x in controls])},
        # every n-gram drafter separated from the draft model in every group, after Holm
        "ngram_beat_draft": all(f"{d} > draft-q2k" in g["separated"] for g in c["groups"]
                                for d in contract.DRAFTERS if d != "draft-q2k"),
        # the other pairs that separate, by group, as the text names them
        "separated": [{"group": f"{TARGET_LABELS[g['target']]}, {TASK_LABELS[g['task']]}",
                       "pairs": pairs}
                      for g in c["groups"]
                      if (pairs := [" faster than ".join(DRAFTER_LABELS[d] for d in p.split(" > "))
                                    for p in g["separated"] if "draft-q2k" not in p])],
        "costs": costs,
        # a round with the draft model, in the target's decoding steps
        "draft_round_steps": _span([x["draft_round_ms"] / x["c1_ms"] for x in costs.values()]),
        "predictions_made_utc": c["predictions"]["made_utc"] if c["predictions"] else None,
        "warnings": c["warnings"],
    }


# --- the figure ------------------------------------------------------------------------------

MARKERS = {"study": "o", "edit": "s"}


def plot_regime(ax: Axes, c: contract.Core, colours: dict[str, str], *,
                drafters: tuple[str, ...] = contract.DRAFTERS,
                lims: tuple[float, float] | None = None) -> list[tuple[float, float]]:
    """Measured against predicted speedup, one point per drafter cell of ``drafters``: the
    prediction interval across, the measured interval (over prompts) up; the diagonal and the
    line 1 on both axes, within ``lims`` (default: every point in view). Target by fill (Q4_1
    open, Q8_0 half, F16 filled), task by marker. Returns the points."""
    fills = {"q4_1": "none", "q8_0": "bottom", "f16": "full"}
    pts = []
    for g, d, cell in _drafter_cells(c):
        p = cell["predicted"]
        if p is None or d not in drafters:
            continue
        s = cell["speedup"]
        x, y = p["predicted"], s["mean"]
        pts.append((x, y))
        yerr = None
        if s["lo"] is not None and s["hi"] is not None:
            yerr = [[y - s["lo"]], [s["hi"] - y]]
        ax.errorbar([x], [y], xerr=[[x - p["lo"]], [p["hi"] - x]], yerr=yerr, fmt="none",
                    ecolor=colours[d], elinewidth=0.6, alpha=0.55, capsize=0, zorder=2)
        fill = fills[g["target"]]
        ax.plot([x], [y], MARKERS[g["task"]], ms=4.2, color=colours[d], zorder=3,
                fillstyle="full" if fill == "full" else fill if fill != "none" else "full",
                mfc="white" if fill == "none" else colours[d], mec=colours[d],
                markerfacecoloralt="white", mew=0.8)
    lo, hi = lims or (min([v for xy in pts for v in xy] + [0.9]) - 0.05,
                      max([v for xy in pts for v in xy] + [1.1]) + 0.05)
    ax.plot([lo, hi], [lo, hi], color="0.45", lw=0.6, ls="--", zorder=1)
    ax.axhline(1.0, color="0.3", lw=0.6, zorder=1)
    ax.axvline(1.0, color="0.3", lw=0.6, zorder=1)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("Predicted speedup (before measuring)")
    ax.set_ylabel("Measured speedup (mean over prompts)")
    return pts
