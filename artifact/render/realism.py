"""Workload realism, take two: tables, figure and manuscript variables from ``realism.json``.

``realism.json`` (:mod:`artifact.analysis.realism`) holds, per server (no draft and each drafter)
and side (REAL-A, REAL-B, each synthetic condition), the medians, acceptance and speedups by turn
bin with their session-bootstrap intervals, and every side's gaps against REAL-A. This module
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
from artifact.render.text import environment, is_missing

TABLES = ("realism", "realism_bins", "realism_mech", "realism_strata")
GROUPS = (*contract.BINS, contract.ALL)
METRIC_LABELS = {"speedup_tpot": "speedup (TPOT)", "speedup_e2e": "speedup (E2E)",
                 "ttft_ms": "TTFT", "tpot_ms": "TPOT", "e2e_ms": "E2E"}


def load(path: Path) -> contract.Realism:
    """Read and validate one ``realism.json``."""
    return contract.read(path, error=RenderError)


def side_label(side: str) -> str:
    """A side as the paper writes it.

    >>> side_label("real-b"), side_label("synthetic-english")
    ('REAL-B', 'english')
    """
    return side.upper() if side.startswith("real") else side.removeprefix("synthetic-")


def _servers(r: contract.Realism | contract.Stratum) -> dict[str, contract.Server]:
    return {s["run_id"]: s for s in r["servers"]}


def headline_context(r: contract.Realism) -> dict[str, Any]:
    srv = _servers(r)
    rows = [{"server": srv[h["server"]]["label"], **h} for h in r["headline"]]
    return {"rows": rows, "confidence": round(100 * r["parameters"]["confidence"]),
            "n_sessions": r["protocol"]["n_sessions"]}


def bins_context(r: contract.Realism) -> dict[str, Any]:
    srv = _servers(r)
    rows = []
    for c in r["comparisons"]:
        for m in ("speedup_tpot", "tpot_ms", "e2e_ms"):
            if m not in c["metrics"]:
                continue
            rows.append({"server": srv[c["server"]]["label"], "side": side_label(c["side"]),
                         "floor": c["side"] == "real-b", "metric": METRIC_LABELS[m],
                         "cells": [c["metrics"][m][g]["signed"] for g in GROUPS]})
    return {"rows": rows, "groups": GROUPS,
            "min_sessions": r["parameters"]["min_sessions_interval"]}


def mech_context(r: contract.Realism) -> dict[str, Any]:
    drafters = [s for s in r["servers"] if s["drafter"] != "none"]
    first = r["servers"][0]
    rows = []
    for side in r["protocol"]["sides"]:
        b = first["sides"][side]
        rows.append({
            "side": side_label(side),
            "cpt": [b[g]["prompt_chars_per_token"] for g in contract.BINS],
            "cached": b[contract.ALL]["cached_tokens_mean"],
            "drafters": [{"acceptance": d["sides"][side][contract.ALL]["acceptance"]["value"],
                          "drafted": d["sides"][side][contract.ALL]["drafted_turns"]["value"],
                          "per_turn": d["sides"][side][contract.ALL]["accepted_per_turn"]}
                         for d in drafters]})
    return {"rows": rows, "bins": contract.BINS, "drafters": [d["label"] for d in drafters]}


def stratum_label(p: contract.Protocol) -> str:
    """A stratum as the paper names it: its session set and its client streams.

    >>> stratum_label({"session_set": "realism-code", "concurrency": 1})
    'realism-code, 1 stream'
    """
    n = p["concurrency"]
    return f"{p['session_set']}, {n} stream{'' if n == 1 else 's'}"


def stratum_key(p: contract.Protocol) -> str:
    """A stratum's key in ``v.realism.strata`` (and the claims): set and streams.

    >>> stratum_key({"session_set": "realism", "concurrency": 5})
    'realism-c5'
    """
    return f"{p['session_set']}-c{p['concurrency']}"


def strata_context(r: contract.Realism) -> dict[str, Any]:
    """The headline of every stratum, the main one first."""
    rows = []
    for st in [r, *r["strata"]]:
        srv = {s["run_id"]: s for s in st["servers"]}
        sides = {s["run_id"]: s["sides"] for s in st["servers"]}
        for h in st["headline"]:
            side = f"synthetic-{h['condition']}"
            rows.append({**h, "stratum": stratum_label(st["protocol"]),
                         "server": srv[h["server"]]["label"],
                         "acc_real": sides[h["server"]]["real-a"][contract.ALL]["acceptance"],
                         "acc_syn": sides[h["server"]][side][contract.ALL]["acceptance"]})
    n = sorted({st["protocol"]["n_sessions"] for st in [r, *r["strata"]]})
    return {"rows": rows, "confidence": round(100 * r["parameters"]["confidence"]),
            "sessions": " or ".join(str(x) for x in n)}


CONTEXTS = {"realism": headline_context, "realism_bins": bins_context,
            "realism_mech": mech_context, "realism_strata": strata_context}


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
    """What the section's text reads beyond the tables (``v.realism``): selections only. The
    main stratum's at the top level, each other stratum's under ``strata``."""
    return {**_stratum_variables(r), "mc_error_max": r["mc_error_max"],
            "resamples": r["parameters"]["bootstrap_resamples"],
            "min_sessions": r["parameters"]["min_sessions_interval"],
            "warnings": r["warnings"],
            "strata": {stratum_key(st["protocol"]): {
                **_stratum_variables(st), "label": stratum_label(st["protocol"]),
                "mc_error_max": st["mc_error_max"]} for st in r["strata"]}}


def _stratum_variables(r: contract.Stratum | contract.Realism) -> dict[str, Any]:
    srv = _servers(r)
    by_label = {s["drafter"]: s for s in r["servers"]}
    heads = {f"{h['server']}/{h['condition']}": h for h in r["headline"]}
    floors, floors_signed = {}, {}
    for c in r["comparisons"]:
        if c["side"] == "real-b":
            floors[c["server"]] = {m: c["metrics"][m][contract.ALL]["symmetric"]
                                   for m in c["metrics"]}
            floors_signed[c["server"]] = {m: c["metrics"][m][contract.ALL]["signed"]
                                          for m in c["metrics"]}
    dur = [s["duration_s"] for s in r["servers"] if s["duration_s"] is not None]
    firsts = [s["first_unix_s"] for s in r["servers"] if s["first_unix_s"] is not None]
    lasts = [s["last_unix_s"] for s in r["servers"] if s["last_unix_s"] is not None]
    cont = [s["contention"] for s in r["servers"] if s["contention"] is not None]
    return {
        "protocol": r["protocol"], "servers": srv, "by_drafter": by_label,
        "headline": heads, "headline_list": r["headline"], "floors": floors,
        "floors_signed": floors_signed,
        "order_effect": {o["server"]: o for o in r["order_effect"]},
        "measure_min": sum(dur) / 60 if dur else None,
        "wall_min": (max(lasts) - min(firsts)) / 60 if firsts and lasts else None,
        "dates": sorted({s["utc_date"] for s in r["servers"] if s["utc_date"]}),
        "machines": sorted({s["machine"] for s in r["servers"] if s["machine"]}),
        "binaries": sorted({s["binary_sha256"][:12] for s in r["servers"]
                            if s["binary_sha256"]}),
        "contention_max": max((c["max"] for c in cont if c["max"] is not None), default=None),
        "contention_median_max": max((c["median"] for c in cont if c["median"] is not None),
                                     default=None),
        "n_contended": sum(c["n_contended"] for c in cont),
        "n_turns_all": sum(c["n_turns"] for c in cont),
        "threshold": cont[0]["threshold_cores"] if cont else None,
        "min_bin_sessions": min((b["n_sessions"] for s in r["servers"]
                                 for side in s["sides"].values()
                                 for g, b in side.items() if g != contract.ALL), default=0),
        "max_abs_gap": max((abs(h["speedup_gap"]["signed"]["value"]) for h in r["headline"]
                            if h["speedup_gap"]["signed"]["value"] is not None), default=None),
        "n_beyond": sum(1 for h in r["headline"] for v in h["beyond_floor"].values() if v),
    }


# --- the figure ---------------------------------------------------------------------------

def _f(x: Any) -> float | None:
    return None if is_missing(x) else float(x)


def plot_gaps(ax: Axes, r: contract.Realism, server: str, metric: str,
              colours: dict[str, str], *, title: str = "") -> dict[str, list[float | None]]:
    """Each synthetic side's gap against REAL-A per bin (points, session-bootstrap intervals),
    over the noise floor (REAL-B against REAL-A, its symmetric size) shaded around 0. Returns
    the points drawn, by side."""
    comps = {c["side"]: c for c in r["comparisons"] if c["server"] == server
             and metric in c["metrics"]}
    x = list(range(len(GROUPS)))
    floor = comps.get("real-b")
    if floor is not None:
        for i, g in enumerate(GROUPS):
            f = _f(floor["metrics"][metric][g]["symmetric"]["value"])
            if f is not None:
                ax.fill_between([i - 0.42, i + 0.42], -f, f, color="0.85", lw=0, zorder=0,
                                label="noise floor (REAL-B vs REAL-A)" if i == 0 else None)
    ax.axhline(0.0, color="0.3", lw=0.6, zorder=1)
    syn = [s for s in comps if s.startswith("synthetic-")]
    drawn: dict[str, list[float | None]] = {}
    for k, side in enumerate(syn):
        off = (k - (len(syn) - 1) / 2) * 0.25
        pts: list[float | None] = []
        for i, g in enumerate(GROUPS):
            iv = comps[side]["metrics"][metric][g]["signed"]
            p, lo, hi = _f(iv["value"]), _f(iv["lo"]), _f(iv["hi"])
            pts.append(p)
            if p is None:
                continue
            if lo is not None and hi is not None:
                ax.errorbar([i + off], [p], yerr=[[p - lo], [hi - p]], fmt="none",
                            ecolor=colours[side], elinewidth=0.9, capsize=1.5, zorder=2)
            ax.plot([i + off], [p], "o", ms=3.2, color=colours[side], zorder=3,
                    mfc=colours[side] if lo is not None else "white",
                    label=side_label(side) if i == 0 else None)
        drawn[side] = pts
    ax.set_xticks(x, list(GROUPS))
    ax.set_xlabel("Turn")
    ax.set_title(title)
    return drawn
