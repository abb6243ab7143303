"""Tables from ``summary.json``: one Jinja template per table and format.

``templates/tables/<name>.md.j2`` (pandoc pipe table with its caption) and
``templates/tables/<name>.tex.j2`` (booktabs ``table`` float) are rendered with the same context,
built here from the summary; every printed string is escaped for its format
(:mod:`artifact.render.text`). Output: ``<out>/<name>.md`` and ``<out>/<name>.tex``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import jinja2

from artifact import files, paths
from artifact.contract import accsplit as acc
from artifact.contract import workload as wcontract
from artifact.render import catalogue, provenance
from artifact.render import core as rcore
from artifact.render import costmodel as rcostmodel
from artifact.render import realism as rrealism
from artifact.render import workload as rworkload
from artifact.render.model import Summary, SummaryError, load
from artifact.render.text import DASH, environment, interval, is_missing, marking, num


def _tok(s: Summary, run_id: str) -> float | None:
    """A final run's mean decoding tok/s; ``None`` when the run is not a final run."""
    fin = s.raw["final"].get(run_id)
    return fin["overall"]["tok_per_s"]["mean"] if fin else None


def _speedup(s: Summary) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for r in s.speedup_ids:
        sp = s.raw["speedup"][r]
        base = sp["baseline_run"]
        rows.append({
            "run": r, "label": s.configs[r].display, "drafter": s.configs[r].drafter_key,
            "quant": s.configs[r].target_quant,
            "baseline": s.configs[base].display if base in s.configs else base,
            "tok": _tok(s, r), "overall": sp["overall"], "by_domain": sp["by_domain"],
            "undrafted": {d: s.nothing_drafted(r, d) for d in s.domains},
            "base_tok": _tok(s, base),
        })
    bases = sorted({str(sp_base) for sp_base in (s.raw["speedup"][r]["baseline_run"]
                                                 for r in s.speedup_ids)})
    return {"rows": rows, "domains": s.domains,
            "show_target": len({x["quant"] for x in rows}) > 1,
            "base_tok": rows[0]["base_tok"] if len(bases) == 1 else None,
            "any_undrafted": any(any(x["undrafted"].values()) for x in rows)}


def _acceptance(s: Summary) -> dict[str, Any]:
    rows = [
        {"run": r, "label": s.label(r), "overall": s.raw["final"][r]["overall"],
         "by_domain": s.raw["final"][r]["by_domain"]}
        for r in s.final_ids if s.configs[r].drafter != "none"
    ]
    return {"rows": rows, "domains": s.domains}


def _hardware(s: Summary) -> dict[str, Any]:
    rows = [
        {"run": r, "label": s.configs[r].display, "quant": s.configs[r].target_quant,
         "stats": s.raw["final"][r]["overall"]}
        for r in s.final_ids
    ]
    env: dict[str, Any] = dict(s.raw["environment"] or {})
    return {"rows": rows, "gpu": env.get("gpu"),
            "show_target": len({x["quant"] for x in rows}) > 1}


def _breakeven(s: Summary) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for r in s.breakeven_ids:
        be = s.raw["breakeven"][r]
        base = be["baseline_run"]
        rows.append({
            "run": r, "label": s.label(r), "k": be["k"], "drafter": be["drafter"],
            "baseline": s.label(base) if base is not None and base in s.configs else base,
            "ctx": be["ctx_size"], "n_matched": be["n_matched"],
            "baseline_tok": be["baseline_tok_per_s"], "pooled": be["pooled"],
            "by_domain": be.get("by_domain", {}),
        })
    for x in rows:  # the baseline's mean over the prompts of this fit, when the analysis says
        x["baseline_tok"] = x["pooled"].get("baseline_tok_per_s", x["baseline_tok"])
    bases = {(x["baseline"], x["ctx"]) for x in rows}
    one = len(bases) == 1
    return {"rows": rows, "domains": s.domains, "show_baseline": not one,
            "baseline": rows[0]["baseline"] if one else None,
            "ctx": rows[0]["ctx"] if one else None}


def _beyond(fit: Any) -> str | None:
    """A break-even point outside [0, 1] in words, since an acceptance rate cannot be one: "> 1"
    (a rising line that reaches the baseline only past alpha = 1: no acceptance pays), "< 0" (a
    rising line already above the baseline at alpha = 0), "falling" (a line that falls with
    alpha has no break-even point); None for a point inside [0, 1]."""
    beta = fit.get("beta")
    if not is_missing(beta) and beta <= 0:
        return "falling"
    if fit["alpha_be"] > 1:
        return "> 1"
    if fit["alpha_be"] < 0:
        return "< 0"
    return None


def _fit_shows(fit: Any, digits: int = 2) -> tuple[Any, ...]:
    """The numbers :func:`fit_text` and :func:`fit_short` may print of a fit."""
    if not fit:
        return ()
    return tuple(fit.get(k) for k in ("alpha_be", "alpha_be_ci_low", "alpha_be_ci_high"))


def fit_short(fit: Any, digits: int = 2) -> Any:
    """A break-even point without its interval, for the narrow domain columns: in parentheses
    when its interval is wider than [0, 1], an em dash when there is no fit, in words when it
    lies outside [0, 1] (:func:`_beyond`).

    >>> fit_short({"status": "ok", "alpha_be": 0.4, "alpha_be_ci_low": 0.3,
    ...            "alpha_be_ci_high": 0.5, "beta": 3.0}), fit_short({"status": "ok",
    ...            "alpha_be": 0.3, "alpha_be_ci_low": -32.0, "alpha_be_ci_high": 31.0})
    ('0.40', '(0.30)')
    >>> fit_short({"status": "ok", "alpha_be": 2.9, "beta": 12.0}), fit_short(
    ...     {"status": "ok", "alpha_be": -9.1, "beta": -2.0})
    ('> 1', 'falling')
    """
    if not fit or fit.get("status") != "ok" or is_missing(fit.get("alpha_be")):
        return None
    beyond = _beyond(fit)
    if beyond:
        return beyond
    lo, hi = fit.get("alpha_be_ci_low"), fit.get("alpha_be_ci_high")
    wide = is_missing(lo) or is_missing(hi) or (hi - lo >= 1.0 and lo <= 1.0 and hi >= 0.0)
    text = num(fit["alpha_be"], digits)
    return f"({text})" if wide else text


def fit_text(fit: Any, digits: int = 2) -> Any:
    """A break-even fit as ``alpha_be [lo, hi]``; a failed fit says why instead of a bare dash;
    a point outside [0, 1] is said in words (:func:`_beyond`), with the interval's lower end
    when the whole interval lies above 1.

    >>> fit_text({"status": "too_few_points", "alpha_be": None})
    '— (too few points)'
    >>> fit_text({"status": "ok", "alpha_be": 2.97, "alpha_be_ci_low": 2.18,
    ...           "alpha_be_ci_high": 5.47, "beta": 12.6})
    '> 1 (95% CI from 2.18)'
    >>> fit_text({"status": "ok", "alpha_be": -0.79, "beta": -2.7})
    '— (falling line)'
    >>> fit_text(None)
    """
    if not fit:
        return None
    if fit.get("status") != "ok" or is_missing(fit.get("alpha_be")):
        return f"{DASH} ({str(fit.get('status', 'no fit')).replace('_', ' ')})"
    beyond = _beyond(fit)
    if beyond == "falling":
        return f"{DASH} (falling line)"
    lo = fit.get("alpha_be_ci_low")
    if beyond == "> 1":
        return f"> 1 (95% CI from {num(lo, digits)})" if not is_missing(lo) and lo > 1 \
            else "> 1"
    if beyond == "< 0":
        return "< 0"
    return interval(fit["alpha_be"], fit.get("alpha_be_ci_low"), fit.get("alpha_be_ci_high"),
                    digits)


# One per catalogue table (a test checks the two agree).
CONTEXTS: dict[str, Callable[[Summary], dict[str, Any]]] = {
    "speedup": _speedup,
    "acceptance": _acceptance,
    "hardware": _hardware,
    "breakeven": _breakeven,
}


# --- the acceptance-split study (accsplit.json) ------------------------------------------


def _acc_cells(a: acc.AccSplit) -> dict[str, Any]:
    """Accepted per round per drafter, prompt and budget at batch 1 (section 1)."""
    budgets = sorted({r["budget"] for r in a["by_prompt_budget"]})
    by = {(r["config"], r["prompt_id"], r["budget"]): r for r in a["by_prompt_budget"]}
    keys = sorted({(r["config"], r["prompt_id"]) for r in a["by_prompt_budget"]})
    rows = [{"config": c, "prompt": p, "cells": [by.get((c, p, b)) for b in budgets]}
            for c, p in keys]
    cells = a["by_window"]["cells"]
    budget_windows = {b: provenance.count({c["window"] for c in cells if c["budget"] == b},
                                          within=cells)
                      for b in budgets}
    return {"rows": rows, "budgets": budgets, "budget_windows": budget_windows,
            "windows": provenance.count(a["protocol"]["windows"]),
            "timing_windows": a["protocol"]["timing_windows"]}


def _acc_recon(a: acc.AccSplit) -> dict[str, Any]:
    """Client-side estimators against the server's accepted per round (section 3)."""
    return {"rows": a["reconciliation"]["rows"], "sources": a["reconciliation"]["sources"],
            "estimators": ESTIMATOR_LABELS,
            "timing_windows": a["protocol"]["timing_windows"]}


def _acc_figures(a: acc.AccSplit) -> dict[str, Any]:
    """The four ways of summing accepted per round, side by side (section 4)."""
    f = a["acceptance_figures"]
    return {"rows": f["rows"], "definitions": f["definitions"], "headline": f["headline"]}


ESTIMATOR_LABELS = {"tps_x_gap_p50": "tok/s \u00d7 median gap \u2212 1",
                    "tps_x_gap_mean": "tok/s \u00d7 mean gap \u2212 1",
                    "tokens_per_step": "tokens per step \u2212 1"}

# One per catalogue table of accsplit.json.
ACCSPLIT_CONTEXTS: dict[str, Callable[[acc.AccSplit], dict[str, Any]]] = {
    "accsplit_cells": _acc_cells,
    "accsplit_figures": _acc_figures,
    "accsplit_recon": _acc_recon,
}

# The core study's table, from core.json (rendered by artifact.render.core).
CORE_TABLES = rcore.TABLES

# The cost model's table, from costmodel.json (rendered by artifact.render.costmodel).
COSTMODEL_TABLES = ("costmodel",)


# Workload realism's tables, from realism.json (rendered by artifact.render.realism).
REALISM_TABLES = rrealism.TABLES

# One per catalogue table of workload.json (the workload study).
WORKLOAD_CONTEXTS: dict[str, Callable[[wcontract.Workload], dict[str, Any]]] = {
    "workload": rworkload.bins_context,
    "ablation": rworkload.ablation_context,
}


def _env(fmt: str, templates: Path) -> jinja2.Environment:
    env = environment(fmt, jinja2.FileSystemLoader(templates / "tables"))
    if fmt == "md":  # paper.html's table links each break-even point to where it comes from
        env.filters["fit"], env.filters["fit_short"] = marking(fit_text, _fit_shows), \
            marking(fit_short, _fit_shows)
    else:
        env.filters["fit"], env.filters["fit_short"] = fit_text, fit_short
    return env


def render(summary: Summary, name: str, fmt: str, templates: Path) -> str:
    """One table in one format (``md`` or ``tex``) as text."""
    return _env(fmt, templates).get_template(f"{name}.{fmt}.j2").render(
        **CONTEXTS[name](summary))


def render_accsplit(data: acc.AccSplit, name: str, fmt: str, templates: Path) -> str:
    """One table of the acceptance-split study in one format."""
    return _env(fmt, templates).get_template(f"{name}.{fmt}.j2").render(
        **ACCSPLIT_CONTEXTS[name](data))


def render_workload(w: wcontract.Workload, name: str, fmt: str, templates: Path) -> str:
    """One table of the workload study in one format."""
    return _env(fmt, templates).get_template(f"{name}.{fmt}.j2").render(
        **WORKLOAD_CONTEXTS[name](w))


def write_every(data_path: Path, name: str, out_dir: Path, templates: Path,
                ledger: Path = paths.CLAIMS) -> list[Path]:
    """Every version of one table: Markdown and LaTeX (:func:`write`), and paper.html's, with
    each number linked to where it comes from (:func:`write_html`; the claims ``ledger`` names
    the claim that checks a number, in its hover text)."""
    from artifact.claims import load as load_claims
    from artifact.render import numbers

    written = write(data_path, name, out_dir, templates)
    describe = numbers.resolver([data_path], load_claims(ledger)).title
    return written + write_html(data_path, name, out_dir, templates, describe=describe)


def write_html(data_path: Path, name: str, out_dir: Path, templates: Path,
               describe: Callable[[provenance.Entry], str] | None = None) -> list[Path]:
    """The table as ``paper.html`` shows it: its Markdown with each number read from
    ``data_path`` a link to its row in ``numbers.html`` (``<name>.html.md``), and those numbers
    with the fields they were read from (``<name>.numbers.json``)."""
    registry = provenance.Registry(describe=describe, prefix=f"t-{name}-")
    with tempfile.TemporaryDirectory() as tmp, \
            files.reading_through(lambda obj, path: provenance.tag(obj, path.name)), \
            provenance.recording(registry):
        write(data_path, name, Path(tmp), templates)
        text = (Path(tmp) / f"{name}.md").read_text(encoding="utf-8")
    if registry.untracked:
        raise SummaryError(f"table {name}: {len(registry.untracked)} numbers printed without "
                           f"a source (first: {registry.untracked[0]!r})")
    md, numbers = catalogue.table_html_files(name, out_dir)
    entries = [asdict(e) for e in registry.entries if f"{{#{e.anchor} " in text]
    return [files.write_text(md, text),
            files.write_text(numbers, files.dumps_json({"numbers": entries}, ensure_ascii=False))]


def write(data_path: Path, name: str, out_dir: Path, templates: Path) -> list[Path]:
    """Render one table in every format into ``out_dir`` from the file its catalogue entry
    names; returns the files written."""
    if name in CORE_TABLES:
        return rcore.write(data_path, name, out_dir, templates)
    if name in COSTMODEL_TABLES:
        return rcostmodel.write(data_path, out_dir, templates)
    if name in REALISM_TABLES:
        return rrealism.write(data_path, name, out_dir, templates)
    if name in WORKLOAD_CONTEXTS:
        w = wcontract.read(data_path, error=SummaryError)
        return [files.write_text(path, render_workload(w, name, path.suffix[1:], templates))
                for path in catalogue.table_files(name, out_dir)]
    if name in ACCSPLIT_CONTEXTS:
        data = acc.read(data_path, error=SummaryError)
        return [files.write_text(path, render_accsplit(data, name, path.suffix[1:], templates))
                for path in catalogue.table_files(name, out_dir)]
    summary = load(data_path)
    return [files.write_text(path, render(summary, name, path.suffix[1:], templates))
            for path in catalogue.table_files(name, out_dir)]
