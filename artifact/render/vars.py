"""Numbers the manuscript needs beyond the schema, computed from ``summary.json`` only.

``compute(summary)`` returns a plain, JSON-ready dict (``manuscript/build/vars.json``): counts,
the environment fingerprint, each configuration's speedup ranked, the best and worst, what draft
models do, per-domain winners, position curves' ends and break-even points. Selections only: no
statistic is estimated here (that is the analysis's job). Floats are rounded to 6 significant
digits and keys sorted, so equal summaries give equal bytes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from artifact import files, paths
from artifact.render import provenance
from artifact.render.model import Summary, SummaryError, from_json
from artifact.render.provenance import as_float, as_int
from artifact.render.text import is_missing

# 2000-01-01T00:00:00Z: used for SOURCE_DATE_EPOCH when no run recorded a start time.
FALLBACK_EPOCH = 946684800


def epoch(timestamp: str | None) -> int:
    """Seconds since 1970 of an ISO-8601 time, or :data:`FALLBACK_EPOCH`.

    >>> epoch("2026-11-29T11:30:00+00:00"), epoch(None)
    (1795951800, 946684800)
    """
    if not timestamp:
        return FALLBACK_EPOCH
    try:
        return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return FALLBACK_EPOCH


def _models(hashes: Any) -> list[dict[str, str]]:
    """Model files and their short SHA-256, sorted by key.

    The summary merges ``model_sha256`` over the runs into ``{model key: sha256}``; a single
    string (one model, no key) is accepted too.

    >>> _models({"m-q4": "ab" * 32})
    [{'model': 'm-q4', 'sha256': 'abababababab'}]
    >>> _models("cd" * 32), _models(None)
    ([{'model': 'model', 'sha256': 'cdcdcdcdcdcd'}], [])
    """
    if isinstance(hashes, str):
        hashes = {"model": hashes}
    if not isinstance(hashes, dict):
        return []
    return [{"model": str(k), "sha256": str(v)[:12]} for k, v in sorted(hashes.items())]


def _speedups(s: Summary) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for r in s.speedup_ids:
        sp = s.raw["speedup"][r]["overall"]
        c = s.configs[r]
        by_domain = {d: v["mean_ratio"] for d, v in s.raw["speedup"][r]["by_domain"].items()}
        fin = s.raw["final"].get(r)
        st: dict[str, Any] = dict(fin["overall"]) if fin else {}
        alpha = (st.get("alpha") or {}).get("mean")
        rows.append({
            "run": r, "label": s.label(r), "drafter": c.drafter, "drafter_key": c.drafter_key,
            "target_quant": c.target_quant, "uses_draft_model": c.uses_draft_model,
            "draft_quant": c.draft_quant, "k": c.k,
            "speedup": sp["mean_ratio"], "median_ratio": sp["median_ratio"],
            "ratio_of_means": sp["ratio_of_means"], "n_matched": sp["n_matched"],
            "alpha": alpha, "alpha_pooled": st.get("alpha_pooled"), "tau": st.get("tau_mean"),
            "n": st.get("n"), "n_drafted": st.get("n_drafted"),
            "tok_per_s": (st.get("tok_per_s") or {}).get("mean"),
            "ttft_ms": (st.get("ttft_ms") or {}).get("mean"), "by_domain": by_domain,
            "self_draft": c.uses_draft_model and c.draft_quant == c.target_quant,
            "faster": sp["mean_ratio"] is not None and sp["mean_ratio"] > 1.0,
        })
    known = [x for x in rows if x["speedup"] is not None]
    known.sort(key=lambda x: (-x["speedup"], x["run"]))
    return known + [x for x in rows if x["speedup"] is None]


def _informative(lo: Any, hi: Any) -> bool:
    """Whether a break-even interval says something about acceptance in [0, 1].

    >>> _informative(0.4, 0.7), _informative(-4.1, 4.4), _informative(1.9, 3.8)
    (True, False, True)
    """
    if is_missing(lo) or is_missing(hi):
        return False
    return bool(hi - lo < 1.0 or lo > 1.0 or hi < 0.0)


def pick_first(xs: list[dict[str, Any]]) -> dict[str, Any] | None:
    return xs[0] if xs else None


def _conditions(s: Summary) -> dict[str, Any]:
    """How the core study was measured (issue 16): interleaved or not, its noise control (each
    control run over the baseline beside it), and how busy the machine was while it measured."""
    raw = s.raw
    runs = raw["runs"]
    groups = sorted({str(r["interleave"]) for r in runs.values() if r.get("interleave")})
    controls: list[dict[str, Any]] = []
    for rid, e in sorted(raw.get("controls", {}).items()):
        o = e["overall"]
        controls.append({"run": rid, "baseline_run": e["baseline_run"],
                         "ctx_size": runs[rid]["ctx_size"], "mean_ratio": o["mean_ratio"],
                         "median_ratio": o["median_ratio"],
                         "deviation_pct": None if o["mean_ratio"] is None
                         or is_missing(o["mean_ratio"])
                         else 100.0 * (as_float(o["mean_ratio"]) - 1.0),
                         "n": o["n_matched"],
                         "by_domain": {d: r["mean_ratio"]
                                       for d, r in sorted(e["by_domain"].items())}})
    cont: list[dict[str, Any]] = [dict(c) for r in runs.values()
                                  if (c := r.get("contention")) is not None]
    measured = [c for c in cont if c["foreign_cores_median"] is not None]

    def most(key: str) -> float | None:
        xs = [as_float(c[key]) for c in measured if c[key] is not None]
        return max(xs) if xs else None

    medians = sorted(as_float(c["foreign_cores_median"]) for c in measured)
    thresholds = sorted({c["threshold_cores"] for c in measured
                         if c["threshold_cores"] is not None})
    return {
        "interleaved": bool(runs) and all(r.get("interleave") for r in runs.values()),
        "groups": groups,
        "controls": controls,
        "control_max_abs_pct": max((abs(as_float(c["deviation_pct"])) for c in controls
                                    if c["deviation_pct"] is not None), default=None),
        "contention": {
            "n_runs": len(cont), "n_runs_unrecorded": len(runs) - len(cont),
            "threshold_cores": thresholds[0] if len(thresholds) == 1 else None,
            "median_of_run_medians": medians[len(medians) // 2] if medians else None,
            "max_run_median": medians[-1] if medians else None,
            "max_run_p95": most("foreign_cores_p95"), "max": most("foreign_cores_max"),
            "n_contended": sum(as_int(c["n_contended"]) for c in cont),
            "n_requests": sum(as_int(c["n"]) for c in cont),
            "gates_passed": all(c["gate_passed"] is not False for c in cont),
            "max_load1": most("load1_max"), "max_steal": most("steal_cores_max"),
        } if cont else None,
    }


def compute(s: Summary) -> dict[str, Any]:
    """Every derived number the manuscript prints, from the summary alone."""
    raw = s.raw
    runs = raw["runs"]
    env: dict[str, Any] = dict(raw["environment"] or {})  # null when there are no runs
    fams = Counter(str(r["family"]) for r in runs.values())
    finals = [runs[r] for r in s.final_ids]
    speedups = _speedups(s)
    ranked = [x for x in speedups if x["speedup"] is not None]
    draft_model = [x for x in ranked if x["uses_draft_model"]]
    ngram = [x for x in ranked if not x["uses_draft_model"]]

    baselines: list[dict[str, Any]] = []
    for r in s.final_ids:
        if s.configs[r].drafter == "none":
            st = raw["final"][r]["overall"]
            baselines.append({"run": r, "label": s.label(r),
                              "target_quant": s.configs[r].target_quant,
                              "tok_per_s": st["tok_per_s"]["mean"],
                              "tok_per_s_median": st["tok_per_s"]["median"],
                              "ttft_ms": st["ttft_ms"]["mean"]})

    by_domain: dict[str, dict[str, Any]] = {}
    for d in s.domains:
        # a domain in which the drafter drafted nothing is a control cell, not a result
        cand = [(x["by_domain"].get(d), x) for x in ranked
                if not s.nothing_drafted(x["run"], d)]
        cand = [(v, x) for v, x in cand if v is not None]
        if cand:
            v, x = max(cand, key=lambda t: (t[0], t[1]["run"]))
            by_domain[d] = {"best_label": x["label"], "best_speedup": v}

    curves: list[dict[str, Any]] = []
    curve_runs = [r for r in s.curve_ids if s.configs[r].family == "curves"] or s.curve_ids
    for r in curve_runs:  # the runs of the positions figure
        pos = raw["positions"][r]["all"]
        curves.append({"run": r, "label": s.label(r), "k": s.configs[r].k,
                       "first": pos[0]["mean"], "last": pos[-1]["mean"],
                       "last_position": pos[-1]["position"]})

    breakeven: list[dict[str, Any]] = []
    for r in s.breakeven_ids:
        be = raw["breakeven"][r]
        f = be["pooled"]
        entry = raw["positions"].get(r)
        pos = entry["all"] if entry else []
        longest = max((p["position"] for p in pos), default=None)
        base = f["baseline_tok_per_s"]
        ok = f["status"] == "ok" and f["a"] is not None and f["beta"] is not None
        breakeven.append({
            "run": r, "label": s.label(r), "k": be["k"], "drafter": be["drafter"],
            "uses_draft_model": s.configs[r].uses_draft_model,
            # the longest draft position logged: beyond k, k did not bind
            "max_position": longest,
            "k_binding": None if longest is None or be["k"] is None
            else longest <= be["k"],
            "status": f["status"], "n": f["n"], "r2": f["r2"],
            "alpha_be": f["alpha_be"], "ci_low": f["alpha_be_ci_low"],
            "ci_high": f["alpha_be_ci_high"], "beta": f["beta"],
            "baseline_tok_per_s": base,
            # informative: the interval is narrower than the whole range of alpha, or lies
            # wholly outside it (no acceptance rate reaches the baseline, or any does)
            "informative": ok and _informative(f["alpha_be_ci_low"], f["alpha_be_ci_high"]),
            # the fitted line at alpha = 1 over the baseline: the speedup perfect acceptance
            # would give at this k (arithmetic on the fit, no new estimate)
            "ceiling": (f["a"] + f["beta"]) / base
            if ok and base and f["a"] is not None and f["beta"] is not None else None,
        })
    informative = [b for b in breakeven if b["informative"]]
    # the two acceptances of the acceptance table, where they differ most
    both = [x for x in ranked if not is_missing(x["alpha"]) and not is_missing(x["alpha_pooled"])]
    alpha_apart = max(both, key=lambda x: (abs(x["alpha"] - x["alpha_pooled"]), x["run"]),
                      default=None)
    be_ok = [b for b in informative if b["alpha_be"] is not None]
    k_ignored = sorted({s.configs[b["run"]].drafter for b in breakeven
                        if b["k_binding"] is False})
    be_draft = [b for b in informative if b["uses_draft_model"] and b["ceiling"] is not None]
    be_summary = {
        "n": len(breakeven), "n_informative": len(informative),
        "uninformative_labels": [b["label"] for b in breakeven if not b["informative"]],
        "uninformative_drafters": sorted({b["drafter"] for b in breakeven
                                          if not b["informative"]}),
        "max_n_uninformative": max((b["n"] for b in breakeven if not b["informative"]),
                                   default=None),
        # draft-model k-sweeps whose whole interval lies above 1: no acceptance pays off
        "unreachable": [b for b in be_draft if b["ci_low"] is not None and b["ci_low"] > 1.0],
        "draft_best_ceiling": max(be_draft, key=lambda b: (b["ceiling"], b["run"]))
        if be_draft else None,
    }

    # Control cells: a drafter that proposed no draft in a domain decodes like no draft, so
    # its speedup there shows how far two runs of the same work differ on this machine.
    undrafted = [
        {"run": x["run"], "label": x["label"], "domain": d, "speedup": x["by_domain"][d]}
        for x in ranked for d in s.domains
        if x["by_domain"].get(d) is not None and s.nothing_drafted(x["run"], d)
    ]
    noise = {
        "undrafted": undrafted,
        "n_undrafted": len(undrafted),
        "max_undrafted": max(undrafted, key=lambda u: (abs(u["speedup"] - 1.0), u["run"]))
        if undrafted else None,
    }
    ngram_speedups = [x["speedup"] for x in ngram]

    def pick(xs: list[dict[str, Any]], i: int) -> dict[str, Any] | None:
        return xs[i] if xs else None

    def distinct(key: str) -> list[Any]:
        return sorted({json.dumps(r.get(key), sort_keys=True) for r in finals})

    out: dict[str, Any] = {
        "environment": {
            "os": env.get("os"),
            "cpu_model": env.get("cpu_model"), "cpu_cores": env.get("cpu_cores"),
            "gpu": env.get("gpu") or "none", "has_gpu": env.get("gpu") is not None,
            "llama_cpp_version": env.get("llama_cpp_version"),
            "binary_sha256": (env.get("binary_sha256") or "")[:12],
            "models": _models(env.get("model_sha256")),
            "python": env.get("python"), "packages": dict(sorted(env.get("packages", {}).items())),
            "start_time_first": env.get("start_time_first"),
            "start_time_last": env.get("start_time_last"),
            "date": (env.get("start_time_last") or "")[:10] or None,
        },
        "source_date_epoch": epoch(env.get("start_time_last")),
        "counts": {
            "runs": len(runs), "by_family": dict(sorted(fams.items())),
            "final": len(finals), "configurations": len(speedups),
            "records": sum(as_int(r["n_records"]) for r in runs.values()),
            "excluded": sum(as_int(r["n_excluded"]) for r in runs.values()),
            "errors": sum(as_int(r["n_errors"]) for r in runs.values()),
            "bad_lines": sum(as_int(r["n_bad_lines"]) for r in runs.values()),
            "incomplete": sum(1 for r in runs.values() if not r["complete"]),
            "log_pairing_failed": sum(1 for r in runs.values() if not r["log_pairing"]["ok"]),
            "warnings": len(raw["warnings"]),
            "faster": sum(1 for x in ranked if x["faster"]),
            "slower": sum(1 for x in ranked if not x["faster"]),
        },
        "setup": {
            "targets": sorted({s.configs[r].target for r in s.final_ids}),
            "target_quants": sorted({s.configs[r].target_quant for r in s.final_ids}),
            "drafters": sorted({s.configs[r].drafter for r in s.final_ids} - {"none"}),
            "domains": s.domains,
            "n_predict": [json.loads(x) for x in distinct("n_predict")],
            "ctx_size": [json.loads(x) for x in distinct("ctx_size")],
            "temperature": sorted({r["sampling"]["temperature"] for r in finals}),
            "concurrency": [json.loads(x) for x in distinct("concurrency")],
            "n_prompts": sorted({raw["final"][r]["overall"]["n"] for r in s.final_ids}),
            "n_per_domain": sorted({st["n"] for r in s.final_ids
                                    for st in raw["final"][r]["by_domain"].values()}),
        },
        "baselines": baselines,
        "baseline": pick(baselines, 0),
        "speedups": speedups,
        "best": pick(ranked, 0),
        "worst": pick(ranked, -1),
        "best_ngram": pick(ngram, 0),
        "draft_model": {
            "n": len(draft_model), "runs": draft_model,
            "best": pick(draft_model, 0),
            "worst": pick(draft_model, -1),
            "self": pick_first([x for x in draft_model if x["self_draft"]]),
            "lower_bit": pick_first([x for x in draft_model if not x["self_draft"]]),
            "all_slower": bool(draft_model) and all(not x["faster"] for x in draft_model),
        },
        "ngram": {
            "n": len(ngram), "runs": ngram,
            "n_faster": sum(1 for x in ngram if x["faster"]),
            "min_speedup": min(ngram_speedups) if ngram_speedups else None,
            "max_speedup": max(ngram_speedups) if ngram_speedups else None,
            "faster_labels": [x["label"] for x in ngram if x["faster"]],
            "max_tau": max((x["tau"] for x in ngram if x["tau"] is not None), default=None),
            "max_tau_label": max(((x["tau"], x["label"]) for x in ngram if x["tau"] is not None),
                                 default=(None, None))[1],
            "min_drafted": min((x["n_drafted"] for x in ngram if x["n_drafted"] is not None),
                               default=None),
            "max_drafted": max((x["n_drafted"] for x in ngram if x["n_drafted"] is not None),
                               default=None),
            "n_requests": max((x["n"] for x in ngram if x["n"] is not None), default=None),
        },
        "noise": noise,
        "conditions": _conditions(s),
        "by_domain": by_domain,
        "curves": curves,
        "breakeven": breakeven,
        "breakeven_summary": be_summary,
        "k_ignored": k_ignored,
        "breakeven_lowest": min(be_ok, key=lambda b: (b["alpha_be"], b["run"])) if be_ok else None,
        "alpha_apart": alpha_apart,
        "warnings": list(raw["warnings"]),
    }
    return dict(files.to_plain(out))


def dumps(v: dict[str, Any]) -> str:
    """The canonical bytes of ``vars.json``."""
    return files.dumps_json(v, ensure_ascii=False)


def compute_all(summary: Any, studies: Mapping[str, Any],
                where: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every variable from the parsed analysis files: ``summary`` (``summary.json``) and
    ``studies``, by key (``accsplit``, ``workload``, ``costmodel``, ``realism``, ``core``: each
    file's parsed JSON, absent when not given); ``where`` names each file in errors. Plain data
    in, plain data out; given tagged data (:mod:`artifact.render.provenance`), the numbers out
    carry the fields they came from."""
    names = {**SOURCES, **(where or {})}
    v = compute(from_json(summary, source=names["summary"]))
    for key, data in studies.items():
        v[key] = files.to_plain(_STUDIES[key](data, names[key]))
    v.setdefault("memory", None)  # measured apart, and later: the text says so when absent
    return v


def _accsplit(data: Any, source: str) -> Any:
    from artifact.contract import accsplit as acc  # only with the study's file
    from artifact.render import accsplit_vars

    return accsplit_vars.compute(acc.validate(data, source=source,
                                              error=SummaryError))


def _workload(data: Any, source: str) -> Any:
    from artifact.contract import workload as wcontract  # only with the study's file
    from artifact.render import workload as rworkload

    return rworkload.variables(wcontract.validate(data, source=source,
                                                  error=SummaryError))


def _costmodel(data: Any, source: str) -> Any:
    from artifact.render import costmodel as rcost  # only with the cost model's file

    return rcost.variables(rcost.checked(data, source))


def _realism(data: Any, source: str) -> Any:
    from artifact.contract import realism as rcontract  # only with the study's file
    from artifact.render import realism as rrealism

    return rrealism.variables(rcontract.validate(data, source=source,
                                                 error=SummaryError))


def _core(data: Any, source: str) -> Any:
    from artifact.contract import core as ccontract  # only with the study's file
    from artifact.render import core as rcore

    return rcore.variables(ccontract.validate(data, source=source, error=SummaryError))


def _memory(data: Any, source: str) -> Any:
    from artifact.render import memory as rmemory  # only with the memory runs' file

    return rmemory.variables(rmemory.checked(data, source))


_STUDIES: dict[str, Callable[[Any, str], Any]] = {
    "accsplit": _accsplit, "workload": _workload, "costmodel": _costmodel,
    "realism": _realism, "core": _core, "memory": _memory,
}
# the name each analysis file is known by in errors and in provenance (experiments/analysis/)
SOURCES = {"summary": "summary.json", "accsplit": "accsplit.json",
           "workload": "workload.json", "costmodel": "costmodel.json",
           "realism": "realism.json", "core": "core.json", "memory": "memory.json"}


def read_inputs(summary_path: Path, studies: Mapping[str, Path | None]
                ) -> tuple[Any, dict[str, Any], dict[str, str]]:
    """The parsed ``summary.json``, each given study file by key, and the name of each file
    for its errors (the path as given)."""
    given = {"summary": summary_path, **{k: p for k, p in studies.items() if p is not None}}
    # as each study's own reader names it (the cost model's, relative to the repository)
    where = {k: paths.shown(p) if k == "costmodel" else str(p) for k, p in given.items()}
    data = {k: files.read_json(p, SummaryError, where=where[k]) for k, p in given.items()}
    summary = data.pop("summary")
    return summary, data, where


def write(summary_path: Path, out: Path, accsplit_path: Path | None = None,
          workload_path: Path | None = None, costmodel_path: Path | None = None,
          realism_path: Path | None = None, core_path: Path | None = None,
          memory_path: Path | None = None) -> Path:
    """Compute the variables from ``summary.json`` (and, when given, the acceptance-split
    study's ``accsplit.json`` under the key ``accsplit`` and the workload study's
    ``workload.json`` under the key ``workload``, and the cost model's ``costmodel.json`` under
    ``costmodel``, workload realism's ``realism.json`` under ``realism``, and the core study's
    ``core.json`` under ``core``, the memory runs' ``memory.json`` under ``memory``) and write
    ``vars.json``; beside it, ``sources.json``: each
    number's key and the analysis fields it was computed from
    (:func:`artifact.render.provenance.field_sources`)."""
    summary, studies, where = read_inputs(summary_path, {
        "accsplit": accsplit_path, "workload": workload_path, "costmodel": costmodel_path,
        "realism": realism_path, "core": core_path, "memory": memory_path})
    v = compute_all(summary, studies, where)
    tagged = compute_all(provenance.tag(summary, SOURCES["summary"]),
                         {k: provenance.tag(d, SOURCES[k]) for k, d in studies.items()}, where)
    files.write_text(out.with_name(SOURCES_NAME),
                     dumps(dict(provenance.field_sources(tagged))))
    return files.write_text(out, dumps(v))


SOURCES_NAME = "sources.json"
