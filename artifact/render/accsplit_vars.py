"""Numbers the manuscript's acceptance-split section needs, selected from ``accsplit.json``.

Selections only (no statistic is estimated here): per drafter (``draft``, ``ngram``) and the
no-draft control (``none``), the cells, biases, window families, splits, batch contrasts and
shift steps the section prints, keyed so that ``paper.md`` and the claims ledger
(``vars:accsplit.<path>``) can name them. Budget-dependent entries are keyed ``n<budget>``
(``length`` and ``shift`` by the long budget), so the keys hold however many budgets there are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from artifact.contract import accsplit as acc


def key(config: str) -> str:
    """Short key of a configuration label.

    >>> key("draft Q2_K k=4"), key("ngram-mod k=4"), key("no draft")
    ('draft', 'ngram', 'none')
    """
    if config == "no draft":
        return "none"
    return "draft" if config.startswith("draft") else config.split("-")[0]


def _iv(iv: acc.Interval | None) -> dict[str, Any] | None:
    if iv is None:
        return None
    return {"n": iv["n"], "mean": iv["mean"], "low": iv["low"], "high": iv["high"],
            "over": iv["over"]}


def _family(f: acc.WindowFamily) -> dict[str, Any]:
    """One configuration and budget's windows as a family: the omnibus test, the pairs."""
    om = f["omnibus"]
    top = max(f["pairs"], key=lambda x: abs(x["diff"]["mean"] or 0.0), default=None)
    return {"windows": f["windows"], "n_windows": len(f["windows"]),
            "n_prompts": len(f["prompts"]), "chi2": om["statistic"], "df": om["df"],
            "p": om["p"], "w": om["kendall_w"], "reason": om["reason"],
            "n_pairs": len(f["pairs"]), "n_differ": f["n_differ"],
            "differ": [f"{x['b']} \u2212 {x['a']}" for x in f["pairs"] if x["differs"]],
            "largest": None if top is None else {
                "a": top["a"], "b": top["b"], "diff": _iv(top["diff"]), "p": top["p"],
                "p_holm": top["p_holm"]}}


def _machines(windows: Mapping[str, acc.WindowInfo]) -> list[dict[str, Any]]:
    """The machines (and binaries) the windows ran on, in the order of their first window:
    each with its windows, dates and binaries' sha256 prefixes (12 hex digits).

    >>> w = {"w1": {"machine": "A", "binary_sha256": ["ab" * 32], "dates": ["2026-11-30"]},
    ...      "w2": {"machine": "B", "binary_sha256": ["cd" * 32], "dates": ["2026-12-01"]}}
    >>> [(m["machine"], m["windows"], m["binaries"]) for m in _machines(w)]
    [('A', ['w1'], ['abababababab']), ('B', ['w2'], ['cdcdcdcdcdcd'])]
    """
    out: dict[str, dict[str, Any]] = {}
    for w, i in sorted(windows.items()):
        m = out.setdefault(i["machine"], {"machine": i["machine"], "windows": [], "dates": [],
                                          "binaries": []})
        m["windows"].append(w)
        m["dates"] = sorted(set(m["dates"]) | set(i["dates"]))
        m["binaries"] = sorted(set(m["binaries"]) | {b[:12] for b in i["binary_sha256"]})
    return list(out.values())


def compute(a: acc.AccSplit) -> dict[str, Any]:
    """The ``accsplit`` entry of ``vars.json``."""
    p = a["protocol"]
    short, long = min(p["budgets"]), max(p["budgets"])
    walls = {w: i["wall_s"]["value"] for w, i in p["windows"].items()}
    machines = _machines(p["windows"])
    out: dict[str, Any] = {
        "n_prompts": len(p["prompts"]),
        "domains": sorted({x["domain"] for x in p["prompts"]}),
        "n_per_domain": max((sum(1 for x in p["prompts"] if x["domain"] == d)
                             for d in {x["domain"] for x in p["prompts"]}), default=0),
        "short": short, "long": long, "batches": p["batches"],
        "k": max((len(r["per_position"]) for r in a["by_config"]), default=0),
        "windows": sorted(p["windows"]), "n_windows": len(p["windows"]),
        "window_start": {w: i["start_utc"][11:16] for w, i in p["windows"].items()},
        "window_end": {w: i["end_utc"][11:16] for w, i in p["windows"].items()},
        "window_wall_min": {w: (v / 60.0 if v is not None else None) for w, v in walls.items()},
        "window_ms_per_token": {w: i["no_draft_ms_per_token"]["mean"]
                                for w, i in p["windows"].items()},
        "long_windows": sorted({c["window"] for c in a["by_window"]["cells"]
                                if c["budget"] == long}),
        "budget_windows": {f"n{b}": sorted({c["window"] for c in a["by_window"]["cells"]
                                            if c["budget"] == b}) for b in p["budgets"]},
        "long_budgets": [b for b in p["budgets"] if b != short],
        "timing_windows": p["timing_windows"],
        "loaded_windows": sorted(w for w, i in p["windows"].items()
                                 if not i["load"]["quiet"] and not i["load"]["other_machine"]),
        "other_machine_windows": sorted(w for w, i in p["windows"].items()
                                        if i["load"]["other_machine"]),
        "load_source": {w: i["load"]["source"] for w, i in p["windows"].items()},
        "machines": machines,
        # several machines, none sharing a date with another: date and machine change together
        "dates_are_machines": len(machines) > 1 and sum(len(m["dates"]) for m in machines)
        == len({d for m in machines for d in m["dates"]}),
        # foreign CPU per request (cores) in the windows with a contention record
        "window_foreign": {w: {"median": i["load"]["foreign_cores_median"],
                               "max": i["load"]["foreign_cores_max"]}
                           for w, i in sorted(p["windows"].items())
                           if i["load"]["foreign_cores_median"] is not None},
        "n_contended": sum(i["load"]["n_contended"] for i in p["windows"].values()),
        "set_aside": [x["condition"] for x in p["set_aside"]],
        "figure_definitions": a["acceptance_figures"]["definitions"],
        "headline": a["acceptance_figures"]["headline"],
        "wall_min_total": (p["wall_s_total"]["value"] or 0.0) / 60.0,
        "dates": p["dates"], "one_date": a["by_date"]["one_date"],
        "n_requests": p["n_requests"], "n_runs": p["n_runs"],
        "temperature": p["temperature"],
        "step_floor_ms": p["step_rule"]["floor_ms"], "step_fraction": p["step_rule"]["fraction"],
        "cell_sd_across_windows": a["by_window"]["cell_sd_across_windows"]["value"],
        "sources": {f"{s['quantity']} {s['sources']}".replace(" ", "_"):
                    {"n": s["n_compared"], "disagree": s["n_disagree"],
                     "max_diff": s["max_abs_diff"]["value"]}
                    for s in a["reconciliation"]["sources"]},
        # windows whose first run started before the previous window's last request ended
        "overlaps": [f"{w} began before {prev} ended"
                     for prev, w in zip(sorted(p["windows"]), sorted(p["windows"])[1:],
                                        strict=False)
                     if p["windows"][w]["start_utc"] < p["windows"][prev]["end_utc"]],
        # batch (b2, b4, ...) -> the windows that ran it, each beside its own batch-1 runs
        "batch_windows": {f"b{b}": sorted({r["window"] for r in a["batch_split"]
                                           if r["batch"] == b})
                          for b in sorted({r["batch"] for r in a["batch_split"]
                                           if r["batch"] > 1})},
        "by": {},
    }
    by: dict[str, dict[str, Any]] = out["by"]
    for r in a["by_config"]:
        d = by.setdefault(key(r["config"]), {"label": r["config"]})
        tag = f"b{r['batch']}_n{r['budget']}"
        d[tag] = {"pooled": r["pooled_accepted_per_round"]["value"],
                  "pooled_ci": _iv(r["pooled_over_prompts"]),
                  "per_window": _iv(r["accepted_per_round"]),
                  "pos": [x["value"] for x in r["per_position"]]}
    for rr in a["reconciliation"]["rows"]:
        d = by.setdefault(key(rr["config"]), {"label": rr["config"]})
        d["server"] = _iv(rr["server_accepted_per_round"])
        d["bias"] = {k: _iv(e["bias"]) for k, e in rr["estimators"].items()}
        d["estimate"] = {k: _iv(e["value"]) for k, e in rr["estimators"].items()}
        d["steps_diff"] = _iv(rr["steps_minus_server_steps"])
        d["recon"] = {"n": rr["n_requests"], "not_quiet": rr["n_not_quiet"],
                      "windows": rr["windows"]}
    for f in a["by_window"]["families"]:
        by.setdefault(key(f["config"]), {}).setdefault("windows", {})[f"n{f['budget']}"] = \
            _family(f)
    for fr in a["acceptance_figures"]["rows"]:
        by.setdefault(key(fr["config"]), {}).setdefault("figures", {})[f"n{fr['budget']}"] = {
            name: _iv(fr[name])
            for name in ("pooled", "mean_of_windows", "mean_of_prompts", "mean_of_requests")}
    for lr in a["length_split"]:
        by.setdefault(key(lr["config"]), {}).setdefault("length", {})[
            f"n{lr['long_budget']}"] = {
                "short_budget": lr["short_budget"], "long_budget": lr["long_budget"],
                "windows": lr["windows"], "k": lr["k"],
                "short": _iv(lr["short"]), "long": _iv(lr["long"]),
                "late": lr["late"]["value"], "late_by_prompt": _iv(lr["late_by_prompt"]),
                "cut": lr["n_prompts_cut"], "undefined": lr["n_prompts_undefined"],
                "interval_cut": lr["interval_cut"],
                "prefix": lr["short_is_prefix_of_long"], "pairs": lr["n_pairs"]}
    for sr in a["segment_split"]:
        by.setdefault(key(sr["config"]), {})["segments"] = {
            "both": sr["n_both_segments"], "single": sr["n_single_segment"],
            "answers": sr["n_answers"], "validation_bias": _iv(sr["validation_bias"]),
            **{k: {"acc": v["accepted_per_step"]["value"], "tokens": v["tokens"],
                   "tok_s": v["tok_per_s"]["value"]} for k, v in sr["segments"].items()}}
    for br in a["batch_split"]:
        by.setdefault(key(br["config"]), {}).setdefault("batch", {}).setdefault(
            br["window"], {})[f"b{br['batch']}"] = {
                "pooled": br["pooled_accepted_per_round"]["value"],
                "tok_s": br["server_tok_per_s"]["mean"], "n": br["n_requests"],
                "quiet": br["quiet"]}
    for bc in a["batch_contrasts"]:
        by.setdefault(key(bc["config"]), {}).setdefault("batch_vs_b1", {})[
            f"{bc['window']}_b{bc['batch']}"] = {
                "window": bc["window"], "batch": bc["batch"], "budget": bc["budget"],
                "diff": _iv(bc["acceptance_diff"]), "control": bc["has_control"],
                "speedup": _iv(bc["speedup"]), "speedup_b1": _iv(bc["speedup_b1"]),
                "note": bc["note"]}
    for dc in a["by_date"]["cells"]:  # pooled accepted per round per date, batch 1
        by.setdefault(key(dc["config"]), {}).setdefault("by_date", {}).setdefault(
            f"n{dc['budget']}", {})[dc["date"]] = {
                "pooled": dc["pooled_accepted_per_round"]["value"], "n": dc["n_requests"]}
    for sh in a["shift"]:
        by.setdefault(key(sh["config"]), {}).setdefault("shift", {})[
            f"n{sh['to_cell']['budget']}"] = {"windows": sh["windows"],
            "from": sh["from_cell"]["prompt_id"], "to": sh["to_cell"]["prompt_id"],
            "a_short": sh["a_short"]["value"], "b_short": sh["b_short"]["value"],
            "b_long": sh["b_long"]["value"], "prompt_step": _iv(sh["prompt_step"]),
            "length_step": _iv(sh["length_step"]), "total": _iv(sh["total"])}
    return out
