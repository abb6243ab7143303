"""Workload realism, take three: tables, figure and manuscript variables from ``realism.json``.

``realism.json`` (:mod:`artifact.analysis.realism`) holds, per stratum, every deployment (one
drafter serving one side on its own server) with its means and acceptance, every synthetic
side's gaps against REAL-A with their verdicts against the declared margins, the floor (REAL-B
against REAL-A), the exact agreement of REAL-A and REAL-B, and the pool's drift. This module
selects and formats; it estimates nothing. Templates: ``templates/tables/realism*.{md,tex}.j2``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from matplotlib.axes import Axes

from artifact import files
from artifact.contract import realism as contract
from artifact.errors import RenderError
from artifact.render.provenance import as_float
from artifact.render.text import environment, is_missing

TABLES = ("realism", "realism_servers", "realism_floor")
QUANTITY_LABELS = {"speedup": "Speedup", "e2e": "E2E", "tpot": "TPOT", "ttft": "TTFT",
                   "acceptance": "Acceptance"}
MARKS = {"equivalent": "=", "differs": "≠", "cannot tell": "?"}
STRATUM_LABELS = {"r3-main": "chat, 1 stream", "r3-code": "code, 1 stream",
                  "r3-c5": "chat, 5 streams"}


def load(path: Path) -> contract.Realism:
    """Read and validate one ``realism.json``."""
    return contract.read(path, error=RenderError)


def side_label(side: str) -> str:
    """A side as the paper writes it.

    >>> side_label("real-b"), side_label("synthetic-english"), side_label("synthetic-recurrent")
    ('REAL-B', 'English', 'recurrent')
    """
    if side.startswith("real"):
        return side.upper()
    name = side.removeprefix("synthetic-")
    return "English" if name == "english" else name


def stratum_label(s: contract.Stratum) -> str:
    """A stratum in words: its sessions and streams.

    >>> stratum_label({"key": "r3-x", "protocol": {"session_set": "realism-code",
    ...     "concurrency": 5}})
    'realism-code, 5 streams'
    """
    if s["key"] in STRATUM_LABELS:
        return STRATUM_LABELS[s["key"]]
    n = s["protocol"]["concurrency"]
    return f"{s['protocol']['session_set']}, {n} stream{'' if n == 1 else 's'}"


def mark(verdict: str) -> str:
    return MARKS.get(verdict, "?")


def _gap_rows(s: contract.Stratum) -> list[dict[str, Any]]:
    """One row per (drafter, side): its gaps by quantity."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for g in s["gaps"]:
        row = rows.setdefault((g["drafter"], g["side"]), {
            "drafter": short_drafter(g["drafter"]), "side": side_label(g["side"]), "gaps": {}})
        row["gaps"][g["quantity"]] = g
    return list(rows.values())


def verdicts_context(r: contract.Realism) -> dict[str, Any]:
    p = r["parameters"]
    return {"strata": [{"label": stratum_label(s), "rows": _gap_rows(s),
                        "n_sessions": s["protocol"]["n_sessions"]} for s in r["strata"]],
            "quantities": list(contract.QUANTITIES), "labels": QUANTITY_LABELS,
            "margins": {q: 100 * m for q, m in p["margins"].items()}, "marks": MARKS,
            "eq_conf": round(100 * p["equivalence_confidence"]),
            "alpha": p["alpha"], "n_gaps": r["verdicts"]["n_gaps"]}


def servers_context(r: contract.Realism) -> dict[str, Any]:
    strata = []
    for s in r["strata"]:
        speed = {(g["drafter"], g["side"]): g["side_value"] for g in s["gaps"]
                 if g["quantity"] == "speedup"}
        speed.update({(g["drafter"], "real-a"): g["real"] for g in s["gaps"]
                      if g["quantity"] == "speedup"})
        rows = [{**v, "side_label": side_label(v["side"]), "short": short_drafter(v["drafter"]),
                 "speedup": speed.get((v["drafter"], v["side"]))} for v in s["servers"]]
        strata.append({"label": stratum_label(s), "rows": rows})
    return {"strata": strata, "confidence": round(100 * r["parameters"]["confidence"])}


def floor_context(r: contract.Realism) -> dict[str, Any]:
    strata = []
    for s in r["strata"]:
        exact = {e["drafter"]: e for e in s["exact"]}
        drift = {(d["drafter"], d["side"]): d for d in s["drift"]}
        rows: dict[str, dict[str, Any]] = {}
        for f in s["floors"]:
            row = rows.setdefault(f["drafter"], {"drafter": short_drafter(f["drafter"]),
                                                 "floors": {},
                                                 "exact": exact.get(f["drafter"]),
                                                 "drift": drift.get((f["drafter"], "real-a"))})
            row["floors"][f["quantity"]] = f
        strata.append({"label": stratum_label(s), "rows": list(rows.values())})
    return {"strata": strata, "quantities": ["e2e", "tpot", "ttft"], "labels": QUANTITY_LABELS,
            "confidence": round(100 * r["parameters"]["confidence"])}


CONTEXTS = {"realism": verdicts_context, "realism_servers": servers_context,
            "realism_floor": floor_context}


def render(r: contract.Realism, name: str, fmt: str, templates: Path) -> str:
    env = environment(fmt, jinja2.FileSystemLoader(templates / "tables"))
    return env.get_template(f"{name}.{fmt}.j2").render(**CONTEXTS[name](r))


def write(data_path: Path, name: str, out_dir: Path, templates: Path) -> list[Path]:
    """Render one of the study's tables in every format into ``out_dir``."""
    from artifact.render import catalogue

    r = load(data_path)
    return [files.write_text(p, render(r, name, p.suffix[1:], templates))
            for p in catalogue.table_files(name, out_dir)]


# --- manuscript variables ---------------------------------------------------------------

def variables(r: contract.Realism) -> dict[str, Any]:
    """What the section's text reads beyond the tables (``v.realism``): selections only. Each
    stratum under its key; gaps as ``gaps["<drafter>/<side>/<quantity>"]``, servers as
    ``servers["<drafter>/<side>"]``, floors as ``floors["<drafter>/<quantity>"]``."""
    p = r["parameters"]
    return {
        "strata": {s["key"]: _stratum_variables(s) for s in r["strata"]},
        "order": [s["key"] for s in r["strata"]], "pending": r["pending"],
        "verdicts": r["verdicts"], "margins": {q: 100 * m for q, m in p["margins"].items()},
        "resamples": p["bootstrap_resamples"], "eq_conf": round(100 * p["equivalence_confidence"]),
        "alpha": p["alpha"], "power": round(100 * p["power"]), "campaign": p["campaign"],
        # the superseded design's echo on the main sessions at one stream, by drafter
        "echo": {e["drafter"]: e for e in r["echo"]
                 if e["session_set"] == "realism" and e["concurrency"] == 1},
        "warnings": r["warnings"]}


def _stratum_variables(s: contract.Stratum) -> dict[str, Any]:
    gaps = {f"{g['drafter']}/{g['side']}/{g['quantity']}": g for g in s["gaps"]}
    cont = [v["contention"] for v in s["servers"] if v["contention"] is not None]
    mdes = [g["mde"] for g in s["gaps"] if g["quantity"] == "speedup" and g["mde"] is not None]
    holm = [g["mde_holm"] for g in s["gaps"]
            if g["quantity"] == "speedup" and g["mde_holm"] is not None]
    by_verdict: dict[str, list[contract.Gap]] = {v: [] for v in contract.VERDICTS}
    for g in s["gaps"]:
        by_verdict[g["verdict"]].append(g)
    return {
        "label": stratum_label(s), "protocol": s["protocol"],
        "servers": {f"{v['drafter']}/{v['side']}": v for v in s["servers"]},
        "drafters": list(dict.fromkeys(v["drafter"] for v in s["servers"])),
        "labels": {v["drafter"]: v["label"] for v in s["servers"]},
        "gaps": gaps, "by_verdict": by_verdict,
        "floors": {f"{f['drafter']}/{f['quantity']}": f for f in s["floors"]},
        "exact": {e["drafter"]: e for e in s["exact"]},
        "drift": {f"{d['drafter']}/{d['side']}": d for d in s["drift"]},
        "mde_speedup_min": min(mdes, default=None), "mde_speedup_max": max(mdes, default=None),
        # after the Holm correction over the family of gaps (issue 44)
        "mde_holm_speedup_min": min(holm, default=None),
        "mde_holm_speedup_max": max(holm, default=None),
        "contention_max": max((c["max"] for c in cont if c["max"] is not None), default=None),
        "contention_median_max": max((c["median"] for c in cont if c["median"] is not None),
                                     default=None),
        "n_contended": sum(c["n_contended"] for c in cont),
        "n_turns_all": sum(c["n_turns"] for c in cont),
        "threshold": cont[0]["threshold_cores"] if cont else None,
        "restarts": sum(max(0, v["server_starts"] - 1) for v in s["servers"]),
        "places_spread": max((max(v["places"]) - min(v["places"]) for v in s["servers"]
                              if v["places"]), default=0),
    }


# --- the figure ---------------------------------------------------------------------------

def _f(x: Any) -> float | None:
    return None if is_missing(x) else as_float(x)


VERDICT_STYLE = {"equivalent": ("o", True), "differs": ("s", True), "cannot tell": ("o", False)}


def row_keys(s: contract.Stratum) -> list[tuple[str, str]]:
    """The (drafter, side) rows of a stratum's figure panels, top to bottom: each drafter's floor
    (REAL-B), then its synthetic sides."""
    keys = {(g["drafter"], g["side"]) for g in [*s["floors"], *s["gaps"]]}
    drafters = list(dict.fromkeys(v["drafter"] for v in s["servers"]))
    return sorted(keys, key=lambda k: (drafters.index(k[0]) if k[0] in drafters else 99,
                                       k[1] != "real-b", k[1]))


def plot_gaps(ax: Axes, s: contract.Stratum, quantity: str, colours: dict[str, str], *,
              title: str = "", labels: bool = True) -> list[tuple[str, float]]:
    """Each (drafter, side) gap of one quantity as a point with its 90 % interval (the one a
    verdict of equivalence reads), the floor (REAL-B against REAL-A) in grey, over the declared
    margin shaded around 0; filled circle: equivalent, square: differs, open: cannot tell. The
    rows are the stratum's (:func:`row_keys`), so panels of one stratum line up. Returns the
    (row label, value) pairs drawn, top to bottom."""
    keys = row_keys(s)
    got = {(g["drafter"], g["side"]): g for g in [*s["floors"], *s["gaps"]]
           if g["quantity"] == quantity}
    drawn: list[tuple[str, float]] = []
    margin = next((g["margin"] for g in got.values()), None)
    if margin is not None:
        ax.axvspan(-margin, margin, color="0.9", lw=0, zorder=0)
    ax.axvline(0.0, color="0.3", lw=0.6, zorder=1)
    for i, key in enumerate(keys):
        g = got.get(key)
        value = _f(g["value"]) if g is not None else None
        if g is None or value is None:
            continue
        y = len(keys) - 1 - i
        lo, hi = _f(g["ci90"][0]), _f(g["ci90"][1])
        c = "0.45" if key[1] == "real-b" else colours.get(key[1], "C0")
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [y, y], color=c, lw=1.1, zorder=2)
        shape, filled = VERDICT_STYLE.get(g["verdict"], ("o", False))
        ax.plot([value], [y], shape, ms=4, color=c, mfc=c if filled else "white", zorder=3)
        drawn.append((row_label(key), value))
    ax.set_yticks(range(len(keys)), [row_label(k) for k in reversed(keys)], fontsize=6.5)
    ax.tick_params(labelleft=labels)
    ax.set_ylim(-0.6, len(keys) - 0.4)
    unit = "points" if quantity == "acceptance" else "%"
    ax.set_xlabel(f"gap ({unit})")
    ax.set_title(title, fontsize=8)
    return drawn


def row_label(key: tuple[str, str]) -> str:
    """A figure row: drafter and side.

    >>> row_label(("draft-simple", "real-b"))
    'draft Q2_K: REAL-B'
    """
    return f"{short_drafter(key[0])}: {side_label(key[1])}"


def short_drafter(drafter: str) -> str:
    """A drafter in a figure's row label.

    >>> short_drafter("draft-simple"), short_drafter("none")
    ('draft Q2_K', 'no draft')
    """
    return {"none": "no draft", "draft-simple": "draft Q2_K"}.get(drafter, drafter)
