"""The workload study's tables, figure and manuscript variables, from ``workload.json``.

``workload.json`` is the study's second file beside ``summary.json`` (``experiments/analysis/``),
like ``accsplit.json``: the catalogue entries of its tables and figure name it (``data``), and
the renderers read the path they are handed. Everything here is a selection or a formatting of
that file: no estimate is made here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes

from artifact.contract import workload as contract
from artifact.errors import RenderError
from artifact.render.provenance import as_float
from artifact.render.text import is_missing

METRIC_LABELS = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "e2e_ms": "E2E latency"}


def load(path: Path) -> contract.Workload:
    """Read and validate one ``workload.json``."""
    return contract.read(path, error=RenderError)


# --- tables -------------------------------------------------------------------------------


def bins_context(w: contract.Workload) -> dict[str, Any]:
    """Per condition, per turn bin and over all turns: REAL p50 and the SYNTHETIC difference."""
    groups = []
    for name in w["order"]:
        c = w["conditions"][name]
        rows = [{"bin": b, "entry": c["bins"][b]} for b in contract.BINS
                if c["bins"][b]["real"]["n_turns"] or c["bins"][b]["synthetic"]["n_turns"]]
        rows.append({"bin": "all", "entry": c["aggregate"]})
        groups.append({"condition": name, "rows": rows})
    floor = [{"bin": b, "max": w["noise_floor"]["max_abs_pct"].get(b, {})}
             for b in (*contract.BINS, "all")]
    return {"groups": groups, "floor": floor, "metrics": contract.METRICS,
            "confidence": round(100 * w["parameters"]["confidence"]),
            "resamples": w["parameters"]["bootstrap_resamples"]}


def ablation_context(w: contract.Workload) -> dict[str, Any]:
    rows = []
    for r in w["ablation"]:
        c = w["conditions"][r["condition"]]
        agg = c["aggregate"]
        rows.append({"condition": r["condition"], "knobs": r["knobs"], "diff": r["diff"],
                     "beyond": r["beyond_floor"], "cpt_real": c["chars_per_token_real"],
                     "cpt_synth": c["chars_per_token_synthetic"],
                     "cached_real": agg["real"]["cached_tokens_mean"],
                     "cached_synth": agg["synthetic"]["cached_tokens_mean"],
                     "acc_real": agg["real"]["acceptance"],
                     "acc_synth": agg["synthetic"]["acceptance"]})
    return {"rows": rows, "metrics": contract.METRICS,
            "floor": w["noise_floor"]["max_abs_pct"].get("all", {})}


# --- manuscript variables ---------------------------------------------------------------


def variables(w: contract.Workload) -> dict[str, Any]:
    """What the workload section prints beyond the tables (selections of the file)."""
    conds = w["conditions"]
    first = conds[w["order"][0]] if w["order"] else None
    durations = [c["duration_s"] for c in conds.values() if c["duration_s"] is not None]
    return {
        "conditions": conds,
        "order": w["order"],
        "floor": w["noise_floor"]["max_abs_pct"],
        "ablation": {r["condition"]: r for r in w["ablation"]},
        "n_sessions": first["n_sessions"] if first else None,
        "n_turns": first["n_turns"] if first else None,
        "measure_min": sum(durations) / 60 if durations else None,
        "warnings": w["warnings"],
        "resamples": w["parameters"]["bootstrap_resamples"],
    }


# --- the figure ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BinDiffs:
    """What :func:`plot_bins` drew: per condition, per bin, the difference and its interval;
    the noise-floor band per bin."""

    bins: tuple[str, ...]
    conditions: tuple[str, ...]
    pct: dict[str, tuple[float | None, ...]]
    lo: dict[str, tuple[float | None, ...]]
    hi: dict[str, tuple[float | None, ...]]
    floor: tuple[float | None, ...]


def _f(x: Any) -> float | None:
    return None if is_missing(x) else as_float(x)


def plot_bins(ax: Axes, w: contract.Workload, metric: str, colours: dict[str, str], *,
              title: str = "") -> BinDiffs:
    """SYNTHETIC against REAL per turn bin for every condition (points with their session-
    bootstrap intervals, dodged), over the noise floor (REAL against REAL) shaded around 0."""
    bins = contract.BINS
    x = list(range(len(bins)))
    floor = tuple(_f(w["noise_floor"]["max_abs_pct"].get(b, {}).get(metric)) for b in bins)
    for i, f in enumerate(floor):
        if f is not None:
            ax.fill_between([i - 0.42, i + 0.42], -f, f, color="0.85", lw=0, zorder=0,
                            label="noise floor (REAL vs REAL)" if i == 0 else None)
    ax.axhline(0.0, color="0.3", lw=0.6, zorder=1)
    n = max(len(w["order"]), 1)
    pct: dict[str, tuple[float | None, ...]] = {}
    lo: dict[str, tuple[float | None, ...]] = {}
    hi: dict[str, tuple[float | None, ...]] = {}
    for k, name in enumerate(w["order"]):
        c = w["conditions"][name]
        ds = [c["bins"][b]["diff"][metric] for b in bins]
        pct[name] = tuple(_f(d["pct"]) for d in ds)
        lo[name] = tuple(_f(d["lo"]) for d in ds)
        hi[name] = tuple(_f(d["hi"]) for d in ds)
        off = (k - (n - 1) / 2) * 0.8 / n
        for i in x:
            p, a, b = pct[name][i], lo[name][i], hi[name][i]
            if p is None:
                continue
            if a is not None and b is not None:
                ax.errorbar([i + off], [p], yerr=[[p - a], [b - p]], fmt="none",
                            ecolor=colours[name], elinewidth=0.9, capsize=1.5, zorder=2)
            ax.plot([i + off], [p], "o", ms=3.2, color=colours[name], zorder=3,
                    mfc=colours[name] if a is not None else "white",
                    label=name if i == next(j for j in x if pct[name][j] is not None) else None)
    ax.set_xticks(x, [f"{b}" for b in bins])
    ax.set_xlabel("Turn")
    ax.set_title(title)
    return BinDiffs(bins=bins, conditions=tuple(w["order"]), pct=pct, lo=lo, hi=hi,
                    floor=floor)
