"""Figures from ``summary.json``, in one style.

Style: Okabe-Ito colours; STIX serif text (Times-like: the LaTeX output sets its body in
Times, the Typst output in this same STIX font); authored at the 6.5 in text width so that text
prints at 7.5 to 8 pt; saved as 600-dpi
PNG and vector PDF without timestamps or software stamps, so equal inputs give equal bytes.

Each ``plot_*`` function takes finished results and an ``Axes`` and returns what it drew (a
small frozen record), so tests check a figure without comparing pixels. ``FIGURES`` maps each
figure name to the function that builds the whole figure from a :class:`Summary`.
"""

from __future__ import annotations

import io
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
logging.getLogger("fontTools").setLevel(logging.ERROR)  # subsetting chatter, not problems

import matplotlib.pyplot as plt  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from artifact import files  # noqa: E402
from artifact.contract import accsplit as acc  # noqa: E402
from artifact.contract import core as ccontract  # noqa: E402
from artifact.contract import realism as rcontract  # noqa: E402
from artifact.contract import workload as wcontract  # noqa: E402
from artifact.render import catalogue  # noqa: E402
from artifact.render import core as rcore  # noqa: E402
from artifact.render import realism as rrealism  # noqa: E402
from artifact.render import workload as rworkload  # noqa: E402
from artifact.render.model import Summary, SummaryError, load  # noqa: E402
from artifact.render.text import is_missing  # noqa: E402

TEXT_WIDTH_IN = 6.5
DPI = catalogue.FIGURE_DPI
# Okabe & Ito (2008), "Color Universal Design": distinguishable under common colour blindness.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000",
             "#F0E442")
DOMAIN_COLOURS = {"overall": "#000000", "code": "#E69F00", "chat": "#56B4E9",
                  "math": "#009E73"}
STYLE: dict[str, Any] = {
    "font.family": "serif",
    "font.serif": ["STIXGeneral"],  # shipped with matplotlib: the same file everywhere
    "mathtext.fontset": "stix",
    "font.size": 8.0,
    "axes.labelsize": 8.0,
    "axes.titlesize": 8.0,
    "xtick.labelsize": 7.5,
    "ytick.labelsize": 7.5,
    "legend.fontsize": 7.5,
    "legend.frameon": False,
    "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.2,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "pdf.fonttype": 42,
    "svg.hashsalt": "specdec-artifact",
    "savefig.dpi": DPI,
    "figure.dpi": 100,
    # Every text is drawn as written: a `$` in data (a model name, a configuration, a prompt id)
    # would start mathtext, which fails on, or silently typesets, what follows. A label of ours
    # that is math says so itself (parse_math=True).
    "text.parse_math": False,
}
PNG_METADATA: dict[str, str | None] = {"Software": None}
PDF_METADATA: dict[str, str | None] = {"Creator": None, "Producer": None, "CreationDate": None}
SVG_METADATA: dict[str, str | None] = {"Date": None, "Creator": None}


# --- what the plot functions draw --------------------------------------------------------


@dataclass(frozen=True)
class Bars:
    """Grouped horizontal bars: one value per (group, category); ``None`` is not drawn."""

    categories: tuple[str, ...]
    groups: tuple[str, ...]
    values: Mapping[str, tuple[float | None, ...]]
    reference: float | None = None
    markers: Mapping[str, tuple[float | None, ...]] | None = None


@dataclass(frozen=True)
class Curve:
    label: str
    position: tuple[int, ...]
    mean: tuple[float, ...]
    ci_low: tuple[float, ...]
    ci_high: tuple[float, ...]
    n: tuple[int, ...] = ()  # requests that reached each position


@dataclass(frozen=True)
class Curves:
    """Per-position acceptance lines with their bootstrap bands."""

    curves: tuple[Curve, ...]


@dataclass(frozen=True)
class FitLine:
    label: str
    a: float
    beta: float
    alpha_be: float | None
    ci_low: float | None
    ci_high: float | None
    baseline: float | None = None  # this fit's baseline tok/s (matched prompts)
    colour: str | None = None  # one colour per run across panels


@dataclass(frozen=True)
class Breakeven:
    """OLS lines tok/s = a + beta * alpha, the baseline's tok/s and each break-even point."""

    lines: tuple[FitLine, ...]
    baseline: float | None


# --- plot functions ----------------------------------------------------------------------


def _val(x: Any) -> float | None:
    return None if is_missing(x) else float(x)


def plot_bars(
    ax: Axes,
    categories: Sequence[str],
    values: Mapping[str, Sequence[float | None]],
    *,
    colours: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    reference: float | None = None,
    markers: Mapping[str, Sequence[float | None]] | None = None,
    hatched: Mapping[str, Sequence[bool]] | None = None,
    xlabel: str = "",
) -> Bars:
    """Horizontal grouped bars, first category on top; a missing value leaves a gap.

    A bar flagged in ``hatched`` is drawn as an outline with hatching (e.g. a speedup measured
    where nothing was drafted), so it reads apart from the others.
    """
    groups = tuple(values)
    n = len(groups)
    height = 0.8 / max(n, 1)
    for gi, g in enumerate(groups):
        colour = (colours or {}).get(g, OKABE_ITO[gi % len(OKABE_ITO)])
        ys = [ci + (gi - (n - 1) / 2) * height for ci in range(len(categories))]
        flags = list((hatched or {}).get(g, [False] * len(categories)))
        pairs = [(y, v, h) for y, v, h in zip(ys, values[g], flags, strict=True)
                 if v is not None]
        solid = [(y, v) for y, v, h in pairs if not h]
        ax.barh([y for y, _ in solid], [v for _, v in solid], height=height * 0.9,
                color=colour, label=(labels or {}).get(g, g if n > 1 else None), linewidth=0)
        outlined = [(y, v) for y, v, h in pairs if h]
        if outlined:
            ax.barh([y for y, _ in outlined], [v for _, v in outlined], height=height * 0.9,
                    facecolor="none", edgecolor=colour, hatch="//////", linewidth=0.6)
        for y, v in zip(ys, values[g], strict=True):
            if v is None:  # missing is not zero: say so where the bar would start
                ax.text(0.0, y, " n/a", va="center", ha="left", fontsize=6.0, color=colour)
    for mi, (name, ms) in enumerate((markers or {}).items()):
        pts = [(ci, v) for ci, v in enumerate(ms) if v is not None]
        ax.plot([v for _, v in pts], [c for c, _ in pts], linestyle="none",
                marker=("o", "|", "x")[mi % 3], markersize=3.5, color="#000000",
                markeredgewidth=1.0, label=name)
    ax.set_yticks(range(len(categories)), list(categories))
    ax.set_ylim(max(len(categories), 1) - 0.5, -0.5)  # no category (no run): one empty row
    if reference is not None:
        ax.axvline(reference, color="#000000", linewidth=0.7, linestyle="--")
    ax.set_xlabel(xlabel)
    ax.tick_params(axis="y", length=0)
    return Bars(
        categories=tuple(categories), groups=groups,
        values={g: tuple(values[g]) for g in groups}, reference=reference,
        markers={k: tuple(v) for k, v in markers.items()} if markers else None,
    )


def plot_speedup(ax: Axes, summary: Summary) -> Bars:
    """Mean matched speedup per configuration, overall and by domain, with the line at 1."""
    ids = summary.speedup_ids
    groups = ["overall", *summary.domains]
    values: dict[str, list[float | None]] = {g: [] for g in groups}
    undrafted: dict[str, list[bool]] = {g: [] for g in groups}
    for r in ids:
        sp = summary.raw["speedup"][r]
        values["overall"].append(_val(sp["overall"]["mean_ratio"]))
        undrafted["overall"].append(summary.nothing_drafted(r, None))
        for d in summary.domains:
            ratios = sp["by_domain"].get(d)
            values[d].append(_val(ratios["mean_ratio"] if ratios else None))
            undrafted[d].append(summary.nothing_drafted(r, d))
    drawn = plot_bars(
        ax, [summary.label(r) for r in ids], values, colours=DOMAIN_COLOURS,
        reference=1.0, hatched=undrafted, labels={g: g for g in groups},
        xlabel="Speedup over no draft (mean of matched tok/s ratios)",
    )
    handles, labels = ax.get_legend_handles_labels()
    if any(any(v) for v in undrafted.values()):
        handles.append(Patch(facecolor="none", edgecolor="#000000", hatch="//////",
                             linewidth=0.6))
        labels.append("nothing drafted in the domain")
    ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 1.0),
              ncols=len(handles), borderaxespad=0.2)
    return drawn


MIN_BAND_REQUESTS = 5  # positions reached by fewer requests get no bootstrap band


def plot_positions(
    ax: Axes, curves: Sequence[Curve], *, title: str = "", colours: Sequence[str] = OKABE_ITO,
) -> Curves:
    """Acceptance at each draft position with its bootstrap band, one line per run; with one
    curve, the number of requests behind it is written in the panel. The band is drawn only at
    positions that at least :data:`MIN_BAND_REQUESTS` requests reached: a bootstrap over one to
    a few requests says nothing about their spread."""
    for i, c in enumerate(curves):
        colour = colours[i % len(colours)]
        enough = [not c.n or k >= MIN_BAND_REQUESTS for k in (c.n or c.position)]
        ax.fill_between(c.position, c.ci_low, c.ci_high, where=enough, color=colour,
                        alpha=0.25, linewidth=0)
        ax.plot(c.position, c.mean, color=colour, marker="o",
                markersize=2.5 if len(c.position) <= 16 else 1.0, label=c.label)
    if len(curves) == 1 and curves[0].n:
        n = curves[0].n[0]
        ax.text(0.97, 0.97, f"{n} request{'s' if n != 1 else ''}", transform=ax.transAxes,
                ha="right", va="top", fontsize=7.0)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("Draft position $i$", parse_math=True)
    if title:
        ax.set_title(title)
    if curves:
        xs = sorted({p for c in curves for p in c.position})
        ax.set_xticks(xs if len(xs) <= 16 else xs[::max(1, len(xs) // 8)])
    else:
        _no_data(ax, "no per-position data")
    return Curves(tuple(curves))


def _no_data(ax: Axes, text: str) -> None:
    """Say so in an empty panel instead of drawing bare axes."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center",
            fontsize=7.5, color="#555555")
    ax.set_xticks([])


def position_curves(
    summary: Summary, domain: str | None, runs: Sequence[str] | None = None
) -> list[Curve]:
    """The curves of every run with positions (or of ``runs``), pooled (``None``) or for one
    domain."""
    out = []
    for r in summary.curve_ids if runs is None else runs:
        entry = summary.raw["positions"][r]
        pos = entry["all"] if domain is None else entry.get("by_domain", {}).get(domain, [])
        if not pos:
            continue
        out.append(Curve(
            label=summary.label(r),
            position=tuple(int(p["position"]) for p in pos),
            mean=tuple(float(p["mean"]) for p in pos),
            ci_low=tuple(float(p["ci_low"]) for p in pos),
            ci_high=tuple(float(p["ci_high"]) for p in pos),
            n=tuple(int(p["n"]) for p in pos),
        ))
    return out


def plot_breakeven(
    ax: Axes, lines: Sequence[FitLine], baseline: float | None, *, title: str = "",
    relative: bool = False,
) -> Breakeven:
    """Fitted tok/s against alpha per run, the baseline's tok/s and alpha_be with its CI.

    With ``relative``, each line is divided by its own baseline (the no-draft run over the same
    prompts), so every baseline is the dashed line at 1 and the line's value at alpha = 1 is the
    speedup perfect acceptance would give. A break-even point is drawn only for a line of
    positive slope (more acceptance, more speed: on a line that falls, the point where it
    crosses the baseline is not where drafting starts to pay) and only where its interval says
    something: a marker at the right edge when the whole interval lies above 1, none when the
    interval is wider than [0, 1].
    """
    beyond = 0
    for i, ln in enumerate(lines):
        colour = ln.colour or OKABE_ITO[i % len(OKABE_ITO)]
        base = ln.baseline if ln.baseline is not None else baseline
        scale = 1.0
        if relative:
            if not base:
                continue
            scale = 1.0 / base
        ax.plot([0.0, 1.0], [ln.a * scale, (ln.a + ln.beta) * scale], color=colour,
                label=ln.label)
        if ln.alpha_be is None or base is None or ln.beta <= 0:
            continue
        y = 1.0 if relative else base
        lo = ln.alpha_be if ln.ci_low is None else ln.ci_low
        hi = ln.alpha_be if ln.ci_high is None else ln.ci_high
        if lo > 1.0:  # no acceptance rate reaches the baseline: say so at the right edge,
            # one marker beside the other when several runs never break even
            ax.plot([1.0 + 0.04 * beyond], [y], marker=">", markersize=4, color=colour,
                    clip_on=False, linestyle="none")
            beyond += 1
        elif 0.0 <= ln.alpha_be <= 1.0 and hi - lo < 1.0:  # an interval that says something
            ax.errorbar([ln.alpha_be], [y],
                        xerr=[[ln.alpha_be - max(lo, 0.0)], [min(hi, 1.0) - ln.alpha_be]],
                        color=colour, marker="o", markersize=3, capsize=2, linewidth=1.0)
    ref = 1.0 if relative else baseline
    if ref is not None:
        ax.axhline(ref, color="#000000", linestyle="--", linewidth=0.7,
                   label="no-draft baseline")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel(r"Acceptance rate $\alpha$", parse_math=True)
    if title:
        ax.set_title(title)
    if not lines:
        _no_data(ax, "no fit")
    return Breakeven(tuple(lines), baseline)


def breakeven_lines(summary: Summary, domain: str | None) -> tuple[list[FitLine], float | None]:
    """Fits with status ``ok`` for each k-sweep run (pooled or one domain) and the baseline
    (``None`` unless every run has the same)."""
    lines = []
    baselines = set()
    for i, r in enumerate(summary.breakeven_ids):
        be = summary.raw["breakeven"][r]
        fit = be["pooled"] if domain is None else be.get("by_domain", {}).get(domain)
        if be["baseline_tok_per_s"] is not None:
            baselines.add(float(be["baseline_tok_per_s"]))
        if not fit or fit["status"] != "ok" or fit["a"] is None or fit["beta"] is None:
            continue
        base = fit.get("baseline_tok_per_s", be["baseline_tok_per_s"])
        lines.append(FitLine(
            label=summary.label(r), a=float(fit["a"]), beta=float(fit["beta"]),
            alpha_be=_val(fit["alpha_be"]), ci_low=_val(fit["alpha_be_ci_low"]),
            ci_high=_val(fit["alpha_be_ci_high"]), baseline=_val(base),
            colour=OKABE_ITO[i % len(OKABE_ITO)],
        ))
    baseline = baselines.pop() if len(baselines) == 1 else None
    return lines, baseline


# --- whole figures -------------------------------------------------------------------------


def _figure(height_in: float, ncols: int = 1, nrows: int = 1, **kw: Any) -> tuple[Figure, Any]:
    fig, axes = plt.subplots(nrows, ncols, figsize=(TEXT_WIDTH_IN, height_in),
                             layout="constrained", **kw)
    return fig, axes


def _fig_legend(fig: Figure, handles: Sequence[Any], labels: Sequence[str], most: int) -> None:
    """One legend under the panels in at most ``most`` columns, fewer while it is wider than
    the figure (long labels in one row would run past the page's text area)."""
    width = fig.get_window_extent().width
    for ncols in range(min(most, len(labels)), 0, -1):
        legend = fig.legend(list(handles), list(labels), loc="outside lower center", ncols=ncols)
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        if ncols == 1 or legend.get_window_extent(renderer).width <= width:
            return
        legend.remove()


def fig_speedup(summary: Summary) -> Figure:
    n = len(summary.speedup_ids)
    fig, ax = _figure(1.0 + 0.32 * n)
    plot_speedup(ax, summary)
    return fig


def _panels(summary: Summary) -> list[tuple[str | None, str]]:
    return [(None, "all domains"), *((d, d) for d in summary.domains)]


def fig_positions(summary: Summary) -> Figure:
    """One row per run, since the drafters' draft lengths differ by an order of magnitude;
    columns: all domains, then each domain."""
    panels = _panels(summary)
    runs = [r for r in summary.curve_ids if summary.configs[r].family == "curves"]
    runs = runs or summary.curve_ids
    rows: list[str | None] = list(runs) or [None]
    fig, axes = _figure(0.35 + 1.75 * len(rows), ncols=len(panels), nrows=len(rows),
                        sharey=True, squeeze=False)
    for ri, r in enumerate(rows):
        colour = OKABE_ITO[ri % len(OKABE_ITO)]
        for ci, (dom, title) in enumerate(panels):
            ax = axes[ri][ci]
            curves = [] if r is None else position_curves(summary, dom, [r])
            plot_positions(ax, curves, title=title if ri == 0 else "", colours=[colour])
            if ri < len(rows) - 1:
                ax.set_xlabel("")
        label = "" if r is None else summary.label(r)
        axes[ri][0].set_ylabel(f"{label}\nacceptance" if label else "Acceptance")
    return fig


def fig_breakeven(summary: Summary) -> Figure:
    panels = _panels(summary)
    fig, grid = _figure(2.3, ncols=len(panels), sharey=True, squeeze=False)
    axes = list(grid[0])  # one panel (no domain: an empty runs folder) is still a list
    for ax, (dom, title) in zip(axes, panels, strict=True):
        lines, base = breakeven_lines(summary, dom)
        plot_breakeven(ax, lines, base, title=title, relative=True)
    axes[0].set_ylabel("Fitted tok/s over no-draft tok/s")
    seen: dict[str, Any] = {}
    for ax in axes:  # a run may have no pooled fit but a domain fit: gather every label once
        for h, lb in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lb, h)
    if seen:
        _fig_legend(fig, list(seen.values()), list(seen), 4)
    return fig


def plot_hardware(ax_tok: Axes, ax_ttft: Axes, summary: Summary) -> tuple[Bars, Bars]:
    """Decoding throughput and TTFT per final configuration (bar: mean; marks: median, p95)."""
    ids = summary.final_ids
    cats = [summary.label(r) for r in ids]
    st = [summary.raw["final"][r]["overall"] for r in ids]
    tok = plot_bars(
        ax_tok, cats, {"mean": [_val(s["tok_per_s"]["mean"]) for s in st]},
        colours={"mean": OKABE_ITO[0]}, labels={"mean": "mean"},
        markers={"median": [_val(s["tok_per_s"]["median"]) for s in st]},
        xlabel="Decoding tok/s",
    )
    ttft = plot_bars(
        ax_ttft, cats, {"mean": [_val(s["ttft_ms"]["mean"]) for s in st]},
        colours={"mean": OKABE_ITO[1]}, labels={"mean": "mean"},
        markers={"median": [_val(s["ttft_ms"]["median"]) for s in st],
                 "p95": [_val(s["ttft_ms"]["p95"]) for s in st]},
        xlabel="Time to first token (ms)",
    )
    ax_ttft.tick_params(axis="y", labelleft=False)
    order = ("mean", "median", "p95")
    for ax in (ax_tok, ax_ttft):
        pairs = sorted(zip(*ax.get_legend_handles_labels(), strict=True),
                       key=lambda hl: order.index(hl[1]) if hl[1] in order else 99)
        ax.legend([h for h, _ in pairs], [lb for _, lb in pairs], loc="lower left",
                  bbox_to_anchor=(0.0, 1.0), ncols=3, borderaxespad=0.2)
    return tok, ttft


def fig_hardware(summary: Summary) -> Figure:
    n = len(summary.final_ids)
    fig, (a, b) = _figure(1.0 + 0.3 * n, ncols=2, sharey=True)
    plot_hardware(a, b, summary)
    return fig


# --- the acceptance-split study (accsplit.json) ------------------------------------------


@dataclass(frozen=True)
class PositionLines:
    """Per-position acceptance lines: one per (drafter, batch)."""

    labels: tuple[str, ...]
    rates: tuple[tuple[float | None, ...], ...]


@dataclass(frozen=True)
class PromptPoints:
    """Accepted per round per prompt: mean and interval per drafter (None: no value)."""

    prompts: tuple[str, ...]
    configs: tuple[str, ...]
    mean: Mapping[str, tuple[float | None, ...]]
    low: Mapping[str, tuple[float | None, ...]]
    high: Mapping[str, tuple[float | None, ...]]
    n: Mapping[str, tuple[int, ...]]


def plot_acc_positions(ax: Axes, rows: Sequence[acc.ConfigRow], *, budget: int) -> PositionLines:
    """Accepted at draft position i per round at batch 1, one line per drafter (one budget,
    pooled over its windows; batches are compared within their window in panel c)."""
    labels, rates = [], []
    configs = sorted({r["config"] for r in rows})
    for ci, config in enumerate(configs):
        for r in (r for r in rows if r["config"] == config and r["budget"] == budget
                  and r["batch"] == 1):
            ys = tuple(p["value"] for p in r["per_position"])
            if not ys:
                continue
            label = config
            xs = list(range(1, len(ys) + 1))
            ax.plot(xs, [math.nan if y is None else y for y in ys], "-", marker="o",
                    markersize=2.5, color=OKABE_ITO[ci % len(OKABE_ITO)], label=label)
            labels.append(label)
            rates.append(ys)
    ax.set_xlabel("Draft position")
    ax.set_ylabel("Accepted at the position, per round")
    ax.set_ylim(0.0, 1.0)
    ax.set_title(f"(a) By position, batch 1, {budget} tokens", loc="left")
    if labels:  # below the axes: inside, it hides the draft model's lines
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)
        ax.set_xticks(range(1, max(len(r) for r in rates) + 1))
    return PositionLines(tuple(labels), tuple(rates))


def plot_acc_prompts(ax: Axes, rows: Sequence[acc.PromptBudgetRow], *, budget: int
                     ) -> PromptPoints:
    """Accepted per round per prompt across windows: mean and 95% t-interval over runs."""
    cells = [r for r in rows if r["budget"] == budget]
    prompts = tuple(sorted({r["prompt_id"] for r in cells}))
    configs = tuple(sorted({r["config"] for r in cells}))
    by = {(r["config"], r["prompt_id"]): r["accepted_per_round"] for r in cells}
    mean: dict[str, tuple[float | None, ...]] = {}
    low: dict[str, tuple[float | None, ...]] = {}
    high: dict[str, tuple[float | None, ...]] = {}
    ns: dict[str, tuple[int, ...]] = {}
    width = 0.8 / max(len(configs), 1)
    for ci, config in enumerate(configs):
        ivs = [by.get((config, p)) for p in prompts]
        mean[config] = tuple(iv["mean"] if iv else None for iv in ivs)
        low[config] = tuple(iv["low"] if iv else None for iv in ivs)
        high[config] = tuple(iv["high"] if iv else None for iv in ivs)
        ns[config] = tuple(iv["n"] if iv else 0 for iv in ivs)
        colour = OKABE_ITO[ci % len(OKABE_ITO)]
        for pi, (m, lo, hi) in enumerate(zip(mean[config], low[config], high[config],
                                             strict=True)):
            if m is None:
                continue
            y = pi + (ci - (len(configs) - 1) / 2) * width
            if lo is not None and hi is not None:
                ax.plot([lo, hi], [y, y], color=colour, linewidth=1.0)
            ax.plot([m], [y], "o", color=colour, markersize=3.0,
                    label=config if pi == next(i for i, v in enumerate(mean[config])
                                               if v is not None) else None)
    k = max((len(r["per_position"]) for r in cells), default=0)
    if k:  # accepted per round lies in [0, k]; the analysis cuts its intervals there
        ax.set_xlim(0.0, float(k))
    ax.set_yticks(range(len(prompts)))
    ax.set_yticklabels(list(prompts))
    ax.invert_yaxis()
    ax.set_xlabel("Accepted per round (mean, 95% CI over windows)")
    ax.set_title(f"(b) By prompt across windows, {budget} tokens", loc="left")
    if configs:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=len(configs))
    return PromptPoints(prompts, configs, mean, low, high, ns)


@dataclass(frozen=True)
class BatchPoints:
    """Batch b minus batch 1 inside one window, per drafter: mean and interval over prompts."""

    labels: tuple[str, ...]  # "w2: batch 2", ...
    configs: tuple[str, ...]
    mean: Mapping[str, tuple[float | None, ...]]


def plot_acc_batch(ax: Axes, rows: Sequence[acc.BatchContrast], *, budget: int) -> BatchPoints:
    """Accepted per round at batch b minus batch 1 of the same window, paired by prompt (mean
    and 95% t-interval over prompts), one row per (window, batch), one colour per drafter."""
    cells = [r for r in rows if r["budget"] == budget]
    labels = tuple(sorted({f"{r['window']}: batch {r['batch']}" for r in cells}))
    configs = tuple(sorted({r["config"] for r in cells}))
    by = {(r["config"], f"{r['window']}: batch {r['batch']}"): r["acceptance_diff"]
          for r in cells}
    width = 0.8 / max(len(configs), 1)
    mean: dict[str, tuple[float | None, ...]] = {}
    for ci, config in enumerate(configs):
        colour = OKABE_ITO[ci % len(OKABE_ITO)]
        ivs = [by.get((config, lab)) for lab in labels]
        mean[config] = tuple(iv["mean"] if iv else None for iv in ivs)
        for li, iv in enumerate(ivs):
            if iv is None or iv["mean"] is None:
                continue
            y = li + (ci - (len(configs) - 1) / 2) * width
            if iv["low"] is not None and iv["high"] is not None:
                ax.plot([iv["low"], iv["high"]], [y, y], color=colour, linewidth=1.0)
            ax.plot([iv["mean"]], [y], "o", color=colour, markersize=3.0)
    ax.axvline(0.0, color="0.6", linewidth=0.6)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(list(labels))
    ax.invert_yaxis()
    ax.set_xlabel("Batch b \u2212 batch 1")
    ax.set_title("(c) Same window", loc="left")  # colours as in (a) and (b): no legend
    return BatchPoints(labels, configs, mean)


def fig_accsplit(data: acc.AccSplit) -> Figure:
    budget = min(data["protocol"]["budgets"])
    contrasts = data["batch_contrasts"]
    if contrasts:  # (c) below (a) and (b): beside them it squeezes (b)'s prompt labels
        fig = plt.figure(figsize=(TEXT_WIDTH_IN, 4.0), layout="constrained")
        axd = fig.subplot_mosaic([["a", "b"], ["c", "c"]], width_ratios=[1.0, 1.35],
                                 height_ratios=[2.6, 1.0])
        a, b = axd["a"], axd["b"]
        plot_acc_batch(axd["c"], contrasts, budget=budget)
    else:
        fig, (a, b) = _figure(2.6, ncols=2, width_ratios=[1.0, 1.35])
    plot_acc_positions(a, data["by_config"], budget=budget)
    plot_acc_prompts(b, data["by_prompt_budget"], budget=budget)
    return fig


# One per catalogue figure of accsplit.json.
ACCSPLIT_FIGURES: dict[str, Callable[[acc.AccSplit], Figure]] = {"accsplit": fig_accsplit}


# One per catalogue figure (a test checks the two agree).
FIGURES: dict[str, Callable[[Summary], Figure]] = {
    "speedup": fig_speedup,
    "positions": fig_positions,
    "breakeven": fig_breakeven,
    "hardware": fig_hardware,
}


def fig_workload(w: wcontract.Workload) -> Figure:
    """SYNTHETIC against REAL per turn bin, one panel per latency, conditions side by side."""
    fig, axes = _figure(2.5, ncols=len(wcontract.METRICS))
    colours = {c: OKABE_ITO[i % len(OKABE_ITO)] for i, c in enumerate(w["order"])}
    for ax, m in zip(list(axes), wcontract.METRICS, strict=True):
        rworkload.plot_bins(ax, w, m, colours, title=rworkload.METRIC_LABELS[m])
    axes[0].set_ylabel("SYNTHETIC vs REAL median (%)")
    handles, labels = axes[0].get_legend_handles_labels()
    if labels:
        _fig_legend(fig, handles, labels, 5)
    return fig


def fig_realism(r: rcontract.Realism) -> Figure:
    """Every gap of a synthetic side against REAL-A with its 90 % interval over the declared
    margin, the floor in grey: a row of panels (speedup, E2E, TPOT, acceptance) per stratum."""
    from matplotlib.lines import Line2D

    quantities = ("speedup", "e2e", "tpot", "acceptance")
    strata = r["strata"]
    n_rows = max(1, len(strata))
    fig, axes = _figure(2.1 * n_rows + 0.4, ncols=len(quantities), nrows=n_rows)
    grid = axes if n_rows > 1 else [axes]
    sides = sorted({g["side"] for s in strata for g in s["gaps"]})
    colours = {s: OKABE_ITO[i % len(OKABE_ITO)] for i, s in enumerate(sides)}
    for row, s in zip(grid, strata, strict=False):
        for k, (ax, q) in enumerate(zip(row, quantities, strict=True)):
            title = rrealism.QUANTITY_LABELS[q]
            if k == 0:
                title = f"{rrealism.stratum_label(s)}: {title}"
            rrealism.plot_gaps(ax, s, q, colours, title=title, labels=k == 0)
    handles: list[Any] = [Line2D([], [], color=colours[s], marker="o", ls="none", ms=4)
                          for s in sides]
    labels = [rrealism.side_label(s) for s in sides]
    handles += [Line2D([], [], color="0.45", marker="o", ls="none", ms=4),
                Line2D([], [], color="0.3", marker="o", ls="none", ms=4),
                Line2D([], [], color="0.3", marker="s", ls="none", ms=4),
                Line2D([], [], color="0.3", marker="o", mfc="white", ls="none", ms=4)]
    labels += ["floor (REAL-B)", "equivalent", "differs", "cannot tell"]
    _fig_legend(fig, handles, labels, 4)
    return fig


def fig_regime(c: ccontract.Core) -> Figure:
    """The core study's map: each (target, task, drafter) cell's measured speedup against the
    one predicted for it before it was measured."""
    from matplotlib.lines import Line2D

    fig, (ax, zoom) = _figure(3.5, ncols=2)
    colours = {d: OKABE_ITO[i] for i, d in enumerate(ccontract.DRAFTERS)}
    rcore.plot_regime(ax, c, colours)
    ax.set_title("(a) every cell")
    # the n-gram cells crowd around 1: the same axes, closer
    rcore.plot_regime(zoom, c, colours, drafters=tuple(d for d in ccontract.DRAFTERS
                                                       if d != "draft-q2k"), lims=(0.8, 1.3))
    zoom.set_title("(b) the n-gram drafters, closer")
    zoom.set_ylabel("")
    handles: list[Any] = [Line2D([], [], color=colours[d], marker="o", ls="none", ms=4.2)
                          for d in ccontract.DRAFTERS]
    labels = [rcore.DRAFTER_LABELS[d] for d in ccontract.DRAFTERS]
    for task in ccontract.TASKS:
        handles.append(Line2D([], [], color="0.3", marker=rcore.MARKERS[task], ls="none",
                              ms=4.2))
        labels.append(f"task: {rcore.TASK_LABELS[task]}")
    for target, fill in (("q4_1", "none"), ("q8_0", "bottom"), ("f16", "full")):
        handles.append(Line2D([], [], color="0.3", marker="o", ls="none", ms=4.2,
                              fillstyle="bottom" if fill == "bottom" else "full",
                              mfc="white" if fill == "none" else "0.3",
                              markerfacecoloralt="white"))
        labels.append(f"target: {rcore.TARGET_LABELS[target]}")
    _fig_legend(fig, handles, labels, 5)
    return fig


# One per catalogue figure of core.json (the core study, take three).
CORE_FIGURES: dict[str, Callable[[ccontract.Core], Figure]] = {"regime": fig_regime}


# One per catalogue figure of realism.json (workload realism, take three).
REALISM_FIGURES: dict[str, Callable[[rcontract.Realism], Figure]] = {"realism": fig_realism}


# One per catalogue figure of workload.json (the workload study).
WORKLOAD_FIGURES: dict[str, Callable[[wcontract.Workload], Figure]] = {
    "workload": fig_workload,
}


def save(fig: Figure, stem: Path, *, dpi: int = DPI) -> list[Path]:
    """Write ``stem.png`` (600 dpi), ``stem.pdf`` and ``stem.svg`` (vector: LaTeX takes the PDF,
    Typst the SVG), with no timestamps."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    png, pdf, svg = (stem.with_suffix(f".{ext}") for ext in ("png", "pdf", "svg"))
    for path, kw in ((png, {"dpi": dpi, "metadata": PNG_METADATA}),
                     (pdf, {"metadata": PDF_METADATA}), (svg, {"metadata": SVG_METADATA})):
        buf = io.BytesIO()  # drawn in memory, then written atomically: never half a figure
        fig.savefig(buf, format=path.suffix[1:], **kw)
        files.write_bytes(path, buf.getvalue())
    plt.close(fig)
    return [png, pdf, svg]


def write(data_path: Path, name: str, out_dir: Path, *, dpi: int = DPI) -> list[Path]:
    """Build one figure from the file its catalogue entry names; save it under ``out_dir``."""
    if name in CORE_FIGURES:
        c = ccontract.read(data_path, error=SummaryError)
        with plt.rc_context(STYLE):  # type: ignore[arg-type]
            return save(CORE_FIGURES[name](c), out_dir / name, dpi=dpi)
    if name in ACCSPLIT_FIGURES:
        data = acc.read(data_path, error=SummaryError)
        with plt.rc_context(STYLE):  # type: ignore[arg-type]
            return save(ACCSPLIT_FIGURES[name](data), out_dir / name, dpi=dpi)
    if name in REALISM_FIGURES:
        r = rcontract.read(data_path, error=SummaryError)
        with plt.rc_context(STYLE):  # type: ignore[arg-type]
            return save(REALISM_FIGURES[name](r), out_dir / name, dpi=dpi)
    if name in WORKLOAD_FIGURES:
        w = wcontract.read(data_path, error=SummaryError)
        with plt.rc_context(STYLE):  # type: ignore[arg-type]
            return save(WORKLOAD_FIGURES[name](w), out_dir / name, dpi=dpi)
    summary = load(data_path)
    with plt.rc_context(STYLE):  # type: ignore[arg-type]
        fig = FIGURES[name](summary)
        return save(fig, out_dir / name, dpi=dpi)
