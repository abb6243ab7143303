"""The core study, take three (issue 29): each cell's speedup with an interval over prompts,
beside what was predicted for it before it was measured.

Runs: ``experiments/runs-core/<target>-<task>-<drafter>`` and ``...-control``, the six runs of
one (target, task) measured as one interleave group over three passes
(``experiments/campaigns/core.toml``). A cell is (target, task, drafter).

**One request's decode time per token** is the server's ``predicted_ms / (predicted_n - 1)``
(decoding only: the prompt pass is apart). Contended requests are left out (and counted); the
records are read by :mod:`artifact.analysis.validate.core` (a repeated (prompt, pass) keeps its
first copy, impossible values and passes outside the campaign's are excluded, each named in a
warning), the predictions by :mod:`artifact.analysis.validate.predictions`.

**A prompt's speedup** in a cell is the no-draft run's time per token over the drafter's, each
averaged over the prompt's quiet passes first (passes of one prompt are not independent). The
**cell's speedup** is the mean over prompts, with a 95 % t-interval over prompts (n - 1 degrees
of freedom); the control (a second no-draft run) is a cell like any other, so the noise floor is
an interval too. Only prompts measured in both runs enter; a cell with none is not computable,
written as null.

**Rankings** within a (target, task): every pair of drafters is compared by a paired t-test over
prompts of their per-prompt speedups; p-values are Holm-adjusted over the pairs of that
(target, task), and an order is stated only for pairs whose adjusted p is below 0.05.

**Acceptance** is defined once: accepted over drafted tokens, pooled over a cell's quiet
requests. **Tokens per round** (τ) is (accepted + rounds) / rounds, rounds from the per-request
``/metrics`` deltas: what one verification yields.

**Undrafted prompts**: an n-gram drafter's prompts where it drafted nothing in any pass; their
speedup against the no-draft run is what looking for a draft costs, set beside the control.

**Passes agree**: greedy decoding on freshly started servers must give the same text in every
pass; each run's count of prompts whose passes differ is reported (it should be 0), each pass
that differs is named in a warning, and ``prompts_same_text`` of ``prompts_read`` counts the
prompts (once per run) whose passes all agree.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import files, hostinfo, paths, records
from artifact.analysis.validate import core as screen_core
from artifact.analysis.validate import predictions as screen_predictions
from artifact.contract import core as contract
from artifact.errors import AnalysisError, cli

TARGETS, TASKS, DRAFTERS, CONTROL = (contract.TARGETS, contract.TASKS, contract.DRAFTERS,
                                     contract.CONTROL)
DRAFTS = "spec_decode_num_drafts_total"
ALPHA = 0.05


@dataclass(frozen=True)
class Obs:
    """One quiet request of a core run."""

    prompt: str
    repeat: int
    ms_per_token: float
    drafted: int
    accepted: int
    rounds: int
    text: str


def read_run(run: Path, warnings: list[str]) -> tuple[list[Obs], int]:
    """A run's quiet requests (the first quiet copy per prompt and pass, screened by
    :mod:`artifact.analysis.validate.core`, whose set-aside records are named in ``warnings``)
    and the number of contended requests left out."""
    rows, contended = screen_core.read(run, warnings)
    return [Obs(r.prompt_id, r.repeat, r.timings.predicted_ms / (r.timings.predicted_n - 1),
                r.timings.draft_n or 0, r.timings.draft_n_accepted or 0,
                int((r.metrics_delta or {}).get(DRAFTS, 0)), "".join(r.event_text or []))
            for r in rows], contended


def per_prompt_ms(obs: Iterable[Obs]) -> dict[str, float]:
    """Mean time per token of each prompt over its passes.

    >>> per_prompt_ms([Obs("a", 0, 10.0, 0, 0, 0, ""), Obs("a", 1, 12.0, 0, 0, 0, "")])
    {'a': 11.0}
    """
    by: dict[str, list[float]] = defaultdict(list)
    for o in obs:
        by[o.prompt].append(o.ms_per_token)
    return {p: statistics.fmean(v) for p, v in sorted(by.items())}


def _t975(df: int) -> float:
    from artifact.stats import t_quantile  # numpy: imported here, `doit` loads this package

    return t_quantile(1 - ALPHA / 2, df)


def interval(xs: Sequence[float]) -> dict[str, Any]:
    """Mean and 95 % t-interval over the units ``xs`` (None ends below two units).

    >>> interval([1.0, 1.2, 1.1])["mean"]
    1.1
    """
    n = len(xs)
    mean = statistics.fmean(xs)
    if n < 2:
        return {"mean": round(mean, 4), "lo": None, "hi": None, "n": n}
    half = _t975(n - 1) * statistics.stdev(xs) / math.sqrt(n)
    return {"mean": round(mean, 4), "lo": round(mean - half, 4), "hi": round(mean + half, 4),
            "n": n}


def speedups(base: Mapping[str, float], run: Mapping[str, float]) -> dict[str, float]:
    """Per-prompt speedup: the baseline's time per token over the run's, on shared prompts.

    >>> speedups({"a": 20.0, "b": 10.0}, {"a": 10.0})
    {'a': 2.0}
    """
    return {p: base[p] / run[p] for p in sorted(base.keys() & run.keys())}


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm-adjusted p-values (step-down, monotone).

    >>> holm({"a": 0.01, "b": 0.04, "c": 0.03})
    {'a': 0.03, 'b': 0.06, 'c': 0.06}
    """
    order = sorted(pvalues, key=lambda k: pvalues[k])
    m = len(order)
    out: dict[str, float] = {}
    running = 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[k]))
        out[k] = round(running, 6)
    return dict(sorted(out.items()))


def _paired_p(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy import stats

    diffs = [x - y for x, y in zip(a, b, strict=True)]
    if len(diffs) < 2 or statistics.pstdev(diffs) == 0:
        return 1.0 if all(d == 0 for d in diffs) else 0.0
    return float(stats.ttest_rel(a, b).pvalue)


def passes_disagree(obs: Iterable[Obs]) -> int:
    """Prompts whose quiet passes gave different text (greedy on fresh servers: expect 0).

    >>> passes_disagree([Obs("a", 0, 1, 0, 0, 0, "x"), Obs("a", 1, 1, 0, 0, 0, "y"),
    ...                  Obs("b", 0, 1, 0, 0, 0, "z")])
    1
    """
    texts: dict[str, set[str]] = defaultdict(set)
    for o in obs:
        texts[o.prompt].add(o.text)
    return sum(1 for v in texts.values() if len(v) > 1)


def _cell(obs: Sequence[Obs], base: Mapping[str, float]) -> dict[str, Any] | None:
    """A cell's statistics; None (not computable) when no prompt was measured in both runs."""
    ups = speedups(base, per_prompt_ms(obs))
    if not ups:
        return None
    drafted = sum(o.drafted for o in obs)
    accepted = sum(o.accepted for o in obs)
    rounds = sum(o.rounds for o in obs)
    undrafted = {o.prompt for o in obs} - {o.prompt for o in obs if o.drafted > 0}
    und = [ups[p] for p in sorted(undrafted) if p in ups]
    return {"speedup": interval(list(ups.values())), "per_prompt": {p: round(x, 4)
                                                                    for p, x in ups.items()},
            "repeats": sorted({o.repeat for o in obs}), "n_requests": len(obs),
            "acceptance": round(accepted / drafted, 4) if drafted else None,
            "tokens_per_round": round((accepted + rounds) / rounds, 3) if rounds else None,
            "drafted_prompts": len({o.prompt for o in obs if o.drafted > 0}),
            "undrafted": interval(und) if und else None,
            "passes_disagree": passes_disagree(obs)}


def _judge(cell: dict[str, Any], p: Mapping[str, Any] | None) -> None:
    """Set a cell's prediction and the verdicts on it (all null for the control)."""
    if p is None:
        cell.update(predicted=None, sign_right=None, inside=None)
        return
    m = cell["speedup"]["mean"]
    cell["predicted"] = {k: p[k] for k in ("predicted", "lo", "hi", "sign")}
    cell["sign_right"] = (m > 1) == (p["predicted"] > 1)
    cell["inside"] = p["lo"] <= m <= p["hi"]


def _rank(given: Mapping[str, Mapping[str, Any] | None]) -> tuple[dict[str, float], list[str]]:
    """Holm-adjusted pairwise p-values of a group's computable drafter cells, and the pairs they
    separate."""
    cells = {d: c for d, c in given.items() if c is not None}
    pvals = {}
    for i, a in enumerate(DRAFTERS):
        for b in DRAFTERS[i + 1:]:
            if a in cells and b in cells:
                ua, ub = cells[a]["per_prompt"], cells[b]["per_prompt"]
                common = sorted(ua.keys() & ub.keys())
                pvals[f"{a} vs {b}"] = _paired_p([ua[p] for p in common],
                                                 [ub[p] for p in common])
    adj = holm(pvals) if pvals else {}
    order = []
    for pair, padj in adj.items():
        if padj < ALPHA:
            a, b = pair.split(" vs ")
            ma, mb = cells[a]["speedup"]["mean"], cells[b]["speedup"]["mean"]
            order.append(f"{a} > {b}" if ma > mb else f"{b} > {a}")
    return adj, order


def machine_of(run: Path, dates: set[str], starts: list[tuple[str, str]] | None = None) -> str:
    """The machine a run's fingerprint names (CPU model and cores); the day it started is added
    to ``dates``, and (run, start time) to ``starts``. A config without a fingerprint names an
    unknown machine."""
    try:
        env = records.read_json(run / records.CONFIG).get("environment")
    except records.RecordError:
        env = None
    if isinstance(env, dict):
        start = env.get("start_time")
        if isinstance(start, str) and len(start) >= 10:
            dates.add(start[:10])
            if starts is not None:
                starts.append((run.name, start))
    return hostinfo.machine_name(env)


def _not_computable(g: str, d: str, obs: Sequence[Obs], base: Mapping[str, float]) -> str:
    why = ("no quiet request of the no-draft run" if not base else
           "no quiet request (every request contended or excluded)" if not obs else
           "no prompt measured in both this run and the no-draft run")
    return f"group {g}: cell {d}: not computable, written as null: {why}"


def build(root: Path = paths.CORE_RUNS,
          predictions: Path = paths.CORE_PREDICTIONS) -> contract.Core:
    """Every measured (target, task): its cells, control, rankings and predictions, checked
    against the contract (:mod:`artifact.contract.core`)."""
    pred, meta = screen_predictions.read(predictions)
    groups: list[dict[str, Any]] = []
    left_out: dict[str, int] = {}
    warnings: list[str] = []
    machines: set[str] = set()
    dates: set[str] = set()
    starts: list[tuple[str, str]] = []
    same_text = prompts_read = 0
    if meta is None:
        warnings.append(f"{paths.shown(predictions)}: no predictions file: cells are not judged")
    for target in TARGETS:
        for task in TASKS:
            g = f"{target}-{task}"
            if not (root / f"{g}-none" / records.RESULTS).is_file():
                warnings.append(f"group {g}: run {g}-none has no results; run skipped")
                continue
            runs: dict[str, list[Obs]] = {}
            for d in ("none", CONTROL, *DRAFTERS):
                path = root / f"{g}-{d}"
                if (path / records.RESULTS).is_file():
                    runs[d], busy = read_run(path, warnings)
                    machines.add(machine_of(path, dates, starts))
                    if busy:
                        left_out[f"{g}-{d}"] = busy
                    same_text += screen_core.differing(
                        ((o.prompt, o.repeat, o.text) for o in runs[d]), path.name, warnings)
                    prompts_read += len({o.prompt for o in runs[d]})
                else:
                    warnings.append(f"group {g}: run {g}-{d} has no results; run skipped")
            base = per_prompt_ms(runs["none"])
            cells: dict[str, dict[str, Any] | None] = {}
            for d in (CONTROL, *DRAFTERS):
                if d in runs:
                    cell = cells[d] = _cell(runs[d], base)
                    if cell is None:
                        warnings.append(_not_computable(g, d, runs[d], base))
                        continue
                    _judge(cell, pred.get((target, task, d)) if d != CONTROL else None)
            adj, order = _rank(cells)
            groups.append({"target": target, "task": task, "none_passes_disagree":
                           passes_disagree(runs["none"]), "none_requests": len(runs["none"]),
                           "cells": cells,
                           "holm": adj, "separated": order})
    judged = [c for g in groups for c in g["cells"].values()
              if c is not None and c["sign_right"] is not None]
    if meta is not None and (late := screen_predictions.made_after(meta, starts)) is not None:
        warnings.append(late)
    doc = {"schema_version": contract.SCHEMA_VERSION, "groups": groups,
           "left_out_contended": left_out, "machines": sorted(machines), "dates": sorted(dates),
           "signs_right": sum(1 for c in judged if c["sign_right"]),
           "signs_judged": len(judged), "inside": sum(1 for c in judged if c["inside"]),
           "prompts_same_text": same_text, "prompts_read": prompts_read,
           "predictions": meta, "warnings": sorted(warnings)}
    return contract.validate(doc, source=paths.shown(root), error=AnalysisError)


def write(root: Path, out: Path, predictions: Path = paths.CORE_PREDICTIONS) -> contract.Core:
    """Build ``core.json`` from the runs under ``root`` and write it atomically."""
    doc = build(root, predictions)
    files.write_json(out, doc)
    return doc


def lines(doc: Mapping[str, Any]) -> list[str]:
    """One line per measured cell: speedup [interval] over prompts, prediction, acceptance."""
    out = []
    for g in doc["groups"]:
        for d, c in g["cells"].items():
            if c is None:
                out.append(f"{g['target']:5s} {g['task']:6s} {d:14s} not computable")
                continue
            s = c["speedup"]
            p = c.get("predicted")
            iv = f"[{s['lo']:.3f}, {s['hi']:.3f}]" if s["lo"] is not None else "[-]"
            out.append(f"{g['target']:5s} {g['task']:6s} {d:14s} {s['mean']:.3f} {iv} "
                       f"n={s['n']:2d} passes={len(c['repeats'])}"
                       + (f"  predicted {p['predicted']:.3f} [{p['lo']:.3f}, {p['hi']:.3f}]"
                          f" sign {'right' if c['sign_right'] else 'WRONG'}"
                          f"{'' if c['inside'] else ', outside'}" if p else "")
                       + (f"  alpha {c['acceptance']:.3f} tau {c['tokens_per_round']:.2f}"
                          if c["acceptance"] is not None else "")
                       + (f"  undrafted {c['undrafted']['mean']:.3f} (n={c['undrafted']['n']})"
                          if c["undrafted"] else "")
                       + (f"  passes differ on {c['passes_disagree']}"
                          if c["passes_disagree"] else ""))
        if g["separated"]:
            out.append(f"      separated after Holm: {'; '.join(g['separated'])}")
    out.append(f"signs right: {doc['signs_right']} of {doc['signs_judged']}; inside the "
               f"prediction interval: {doc['inside']}")
    out.extend(f"warning: {w}" for w in doc["warnings"])
    return out


@cli
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m artifact.analysis.core",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=Path, default=paths.CORE_RUNS)
    ap.add_argument("--out", type=Path, default=None, help="write the JSON here as well")
    args = ap.parse_args(argv)
    doc = build(args.runs)
    if not doc["groups"]:
        raise AnalysisError(f"{paths.shown(args.runs)}: no core group measured there "
                            "(runs <target>-<task>-none of experiments/campaigns/core.toml)")
    if args.out is not None:
        files.write_json(args.out, doc)
    print("\n".join(lines(doc)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
