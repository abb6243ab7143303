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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from artifact import files, hostinfo, paths, records
from artifact.analysis import core_control
from artifact.analysis import core_verdicts as V
from artifact.analysis.validate import core as screen_core
from artifact.analysis.validate import predictions as screen_predictions
from artifact.contract import core as contract
from artifact.errors import AnalysisError, cli

TARGETS, TASKS, DRAFTERS, CONTROL = (contract.TARGETS, contract.TASKS, contract.DRAFTERS,
                                     contract.CONTROL)
DRAFTS = "spec_decode_num_drafts_total"
ALPHA = 0.05
holm = V.holm
Posthoc = Mapping[tuple[str, str, str], dict[str, Any] | None]  # (target, task, drafter)


@dataclass(frozen=True, kw_only=True)
class Family:
    """A model family measured by the core study's design: the same tasks and drafter names."""

    name: str  # its key in core.json (``family`` at the top, or under ``families``)
    targets: tuple[str, ...]  # its target quantizations, in the campaign's order
    runs: Path  # <target>-<task>-<drafter> run folders
    predictions: Path  # committed before its study runs


SMOLLM2 = Family(name="smollm2-135m", targets=TARGETS, runs=paths.CORE_RUNS,
                 predictions=paths.CORE_PREDICTIONS)
GEMMA = Family(name="gemma3-270m", targets=contract.GEMMA_TARGETS, runs=paths.GEMMA_RUNS,
               predictions=paths.GEMMA_PREDICTIONS)


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
    round_pos: int | None = None  # its place in the interleave round (0 first)


def read_run(run: Path, warnings: list[str]) -> tuple[list[Obs], int]:
    """A run's quiet requests (the first quiet copy per prompt and pass, screened by
    :mod:`artifact.analysis.validate.core`, whose set-aside records are named in ``warnings``)
    and the number of contended requests left out."""
    rows, contended = screen_core.read(run, warnings)
    return [Obs(r.prompt_id, r.repeat, r.timings.predicted_ms / (r.timings.predicted_n - 1),
                r.timings.draft_n or 0, r.timings.draft_n_accepted or 0,
                int((r.metrics_delta or {}).get(DRAFTS, 0)), "".join(r.event_text or []),
                None if r.round_pos is None else int(r.round_pos))
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


def _judge(cell: dict[str, Any], p: Mapping[str, Any] | None,
           control: Mapping[str, Any] | None, new_prompts: int) -> None:
    """Set a cell's prediction and the verdicts on it (all null for the control):
    ``sign_verdict`` from the measured interval, ``sign_right`` from the point mean,
    ``inside_weak``, the interval scores (the reference: no change, the group's control
    interval) and the pilot that would have sufficed."""
    if p is None:
        cell.update(predicted=None, sign_right=None, sign_verdict=None, inside_weak=None,
                    interval_score=None, pilot_needed=None)
        return
    s = cell["speedup"]
    m = s["mean"]
    cell["predicted"] = {k: p[k] for k in ("predicted", "lo", "hi", "sign")}
    cell["sign_right"] = (m > 1) == (p["predicted"] > 1)
    cell["sign_verdict"] = V.sign_verdict(s["lo"], s["hi"], p["sign"])
    cell["inside_weak"] = p["lo"] <= m <= p["hi"]
    ref = (None if control is None or control["lo"] is None or control["hi"] is None else
           round(V.interval_score(control["lo"], control["hi"], m), 4))
    cell["interval_score"] = {"prediction": round(V.interval_score(p["lo"], p["hi"], m), 4),
                              "reference": ref}
    per, n = p.get("per_prompt"), p.get("n_pilot_prompts")
    cell["pilot_needed"] = (
        {"n_pilot": None, "why": "the predictions file gives no per-prompt pilot predictions",
         "var_boot": None, "s": None, "floor_half": None, "distance_to_1": None}
        if per is None or n is None else
        V.pilot_needed(p["predicted"], p["lo"], p["hi"], list(per.values()), n, new_prompts))


def _raw_pvalues(cells: Mapping[str, Mapping[str, Any] | None]) -> dict[str, float]:
    """Paired t-test p over prompts of every pair of a group's computable drafter cells."""
    ok = {d: c for d, c in cells.items() if c is not None}
    pvals = {}
    for i, a in enumerate(DRAFTERS):
        for b in DRAFTERS[i + 1:]:
            if a in ok and b in ok:
                ua, ub = ok[a]["per_prompt"], ok[b]["per_prompt"]
                common = sorted(ua.keys() & ub.keys())
                pvals[f"{a} vs {b}"] = round(_paired_p([ua[p] for p in common],
                                                       [ub[p] for p in common]), 6)
    return dict(sorted(pvals.items()))


def _separated(cells: Mapping[str, Mapping[str, Any] | None],
               adjusted: Mapping[str, float]) -> list[str]:
    """'a > b' for each pair whose adjusted p is below 0.05, the faster first."""
    order = []
    for pair, padj in adjusted.items():
        if padj < ALPHA:
            a, b = pair.split(" vs ")
            ca, cb = cells[a], cells[b]
            assert ca is not None and cb is not None  # a pair is of computable cells
            ma, mb = ca["speedup"]["mean"], cb["speedup"]["mean"]
            order.append(f"{a} > {b}" if ma > mb else f"{b} > {a}")
    return order


def _pairs(g: str, none: Sequence[Obs], ctrl: Sequence[Obs]) -> list[core_control.Pair]:
    """Each (prompt, pass) of a group measured quietly by both no-draft runs, with places."""
    first = {(o.prompt, o.repeat): o for o in reversed(none)}
    out = []
    for o in ctrl:
        n = first.get((o.prompt, o.repeat))
        if n is not None and o.round_pos is not None and n.round_pos is not None:
            out.append(core_control.Pair(g, f"{o.prompt}#{o.repeat}",
                                         n.ms_per_token / o.ms_per_token, o.round_pos,
                                         n.round_pos))
    return out


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


@dataclass
class _Seen:
    """What every family's runs add to the whole file."""

    machines: set[str] = field(default_factory=set)
    dates: set[str] = field(default_factory=set)
    same_text: int = 0
    prompts_read: int = 0


def measured_groups(family: Family, root: Path) -> list[str]:
    """The family's (target, task) groups whose no-draft run has results under ``root``."""
    return [f"{t}-{k}" for t in family.targets for k in TASKS
            if (root / f"{t}-{k}-none" / records.RESULTS).is_file()]


def study(family: Family, root: Path, predictions: Path, seen: _Seen, warnings: list[str],
          posthoc: Posthoc | None = None) -> dict[str, Any]:
    """One model family's groups, cells and verdicts (the fields of
    :class:`artifact.contract.core.Study`); its warnings are added to ``warnings``."""
    pred, meta = screen_predictions.read(predictions, targets=family.targets)
    new_prompts = screen_predictions.new_prompts(predictions) if meta is not None else 0
    groups: list[dict[str, Any]] = []
    left_out: dict[str, int] = {}
    starts: list[tuple[str, str]] = []
    raw: dict[str, dict[str, float]] = {}
    pairs: list[core_control.Pair] = []
    control_ups: dict[str, dict[str, float]] = {}
    control_means: dict[str, float] = {}
    if meta is None:
        warnings.append(f"{paths.shown(predictions)}: no predictions file: cells are not judged")
    for target in family.targets:
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
                    seen.machines.add(machine_of(path, seen.dates, starts))
                    if busy:
                        left_out[f"{g}-{d}"] = busy
                    seen.same_text += screen_core.differing(
                        ((o.prompt, o.repeat, o.text) for o in runs[d]), path.name, warnings)
                    seen.prompts_read += len({o.prompt for o in runs[d]})
                else:
                    warnings.append(f"group {g}: run {g}-{d} has no results; run skipped")
            base = per_prompt_ms(runs["none"])
            cells: dict[str, dict[str, Any] | None] = {}
            ctrl = _cell(runs[CONTROL], base) if CONTROL in runs else None
            if ctrl is not None:
                control_ups[g] = ctrl["per_prompt"]
                control_means[g] = ctrl["speedup"]["mean"]
                pairs.extend(_pairs(g, runs["none"], runs[CONTROL]))
            for d in (CONTROL, *DRAFTERS):
                if d in runs:
                    cell = cells[d] = ctrl if d == CONTROL else _cell(runs[d], base)
                    if cell is None:
                        warnings.append(_not_computable(g, d, runs[d], base))
                        continue
                    key = (target, task, d)
                    _judge(cell, pred.get(key) if d != CONTROL else None,
                           None if ctrl is None else ctrl["speedup"], new_prompts)
                    cell["posthoc"] = (posthoc.get(key) if posthoc is not None
                                       and d != CONTROL else None)
            raw[g] = _raw_pvalues(cells)
            groups.append({"target": target, "task": task, "none_passes_disagree":
                           passes_disagree(runs["none"]), "none_requests": len(runs["none"]),
                           "cells": cells, "p_raw": raw[g]})
    adjusted = V.study_holm(raw)
    for gr in groups:
        gr["p_holm"] = adjusted[f"{gr['target']}-{gr['task']}"]
        gr["separated"] = _separated(gr["cells"], gr["p_holm"])
    judged = [(d, c) for gr in groups for d, c in gr["cells"].items()
              if c is not None and c["sign_right"] is not None]
    if meta is not None and (late := screen_predictions.made_after(meta, starts)) is not None:
        warnings.append(late)
    scored = [(d, c["interval_score"]["prediction"], c["interval_score"]["reference"])
              for d, c in judged if c["interval_score"]["reference"] is not None]
    return {"groups": groups, "left_out_contended": left_out,
            "signs_right": sum(1 for _, c in judged if c["sign_right"]),
            "signs_judged": len(judged),
            "sign_verdicts": V.tally((d, c["sign_verdict"]) for d, c in judged),
            "holm_tests": sum(len(v) for v in raw.values()),
            "inside_weak": sum(1 for _, c in judged if c["inside_weak"]),
            "interval_scores": V.mean_scores(scored),
            "control": (core_control.control(control_ups, control_means, pairs)
                        if control_means else None),
            "predictions": meta}


def build(root: Path = paths.CORE_RUNS, predictions: Path = paths.CORE_PREDICTIONS, *,
          family: Family | None = None, others: Sequence[Family] | None = None,
          posthoc: Posthoc | None = None) -> contract.Core:
    """Every measured (target, task) of ``family`` (SmolLM2 by default; runs under ``root``,
    predictions ``predictions``) at the top of the file, and of each family of ``others``
    (default: Gemma 3 270M) whose runs folder holds a measured group, under ``families``;
    checked against the contract (:mod:`artifact.contract.core`). ``posthoc``: by (target,
    task, drafter) of ``family``, a post-hoc prediction stored in the cell as ``posthoc``."""
    family = family or SMOLLM2
    seen = _Seen()
    warnings: list[str] = []
    top = study(family, root, predictions, seen, warnings, posthoc)
    more: dict[str, Any] = {}
    for fam in (GEMMA,) if others is None else others:
        if fam.name == family.name or not measured_groups(fam, fam.runs):
            continue  # not measured yet: nothing emitted, nothing warned
        said: list[str] = []
        more[fam.name] = study(fam, fam.runs, fam.predictions, seen, said)
        warnings.extend(f"{fam.name}: {w}" for w in said)
    doc = {"schema_version": contract.SCHEMA_VERSION, "family": family.name, **top,
           "families": more, "machines": sorted(seen.machines), "dates": sorted(seen.dates),
           "prompts_same_text": seen.same_text, "prompts_read": seen.prompts_read,
           "warnings": sorted(warnings)}
    return contract.validate(doc, source=paths.shown(root), error=AnalysisError)


def write(root: Path, out: Path, predictions: Path = paths.CORE_PREDICTIONS, *,
          posthoc: Posthoc | None = None) -> contract.Core:
    """Build ``core.json`` from the runs under ``root`` and write it atomically."""
    doc = build(root, predictions, posthoc=posthoc)
    files.write_json(out, doc)
    return doc


def _study_lines(doc: Mapping[str, Any]) -> list[str]:
    out = []
    for g in doc["groups"]:
        for d, c in g["cells"].items():
            if c is None:
                out.append(f"{g['target']:6s} {g['task']:6s} {d:14s} not computable")
                continue
            s = c["speedup"]
            p = c.get("predicted")
            iv = f"[{s['lo']:.3f}, {s['hi']:.3f}]" if s["lo"] is not None else "[-]"
            out.append(f"{g['target']:6s} {g['task']:6s} {d:14s} {s['mean']:.3f} {iv} "
                       f"n={s['n']:2d} passes={len(c['repeats'])}"
                       + (f"  predicted {p['predicted']:.3f} [{p['lo']:.3f}, {p['hi']:.3f}]"
                          f" sign {c['sign_verdict']}"
                          f" (point {'right' if c['sign_right'] else 'WRONG'})"
                          f" score {c['interval_score']['prediction']:.3f}"
                          f" vs {c['interval_score']['reference']}"
                          f" pilot {c['pilot_needed']['n_pilot']}" if p else "")
                       + (f"  alpha {c['acceptance']:.3f} tau {c['tokens_per_round']:.2f}"
                          if c["acceptance"] is not None else "")
                       + (f"  undrafted {c['undrafted']['mean']:.3f} (n={c['undrafted']['n']})"
                          if c["undrafted"] else "")
                       + (f"  passes differ on {c['passes_disagree']}"
                          if c["passes_disagree"] else ""))
        if g["separated"]:
            out.append(f"       separated after Holm over the study's {doc['holm_tests']} tests: "
                       f"{'; '.join(g['separated'])}")
    for fam, t in doc["sign_verdicts"].items():
        sc = doc["interval_scores"][fam]
        out.append(f"{fam}: signs right {t['right']}, wrong {t['wrong']}, undecided "
                   f"{t['undecided']}; interval score {sc['prediction']} against the control's "
                   f"{sc['reference']} ({sc['better']} better)")
    out.append(f"signs right by the point mean: {doc['signs_right']} of {doc['signs_judged']}; "
               f"inside the prediction interval (weak): {doc['inside_weak']}")
    if (c := doc["control"]) is not None:
        po, o, pl = c["pooled"], c["order"], c["place"]
        out.append(f"control: pooled {po['mean']} [{po['lo']}, {po['hi']}] over {po['n']} "
                   f"prompts (p vs 1 {po['p_vs_1']}); groups above 1: "
                   f"{c['sign_test']['above']} of {c['sign_test']['n']} "
                   f"(p {c['sign_test']['p']}); order: first {o['control_first']['mean']} "
                   f"after {o['control_after']['mean']} (p {o['p']}); place slope "
                   f"{pl['slope']} (p {pl['p']})")
    return out


def lines(doc: Mapping[str, Any]) -> list[str]:
    """One line per measured cell: speedup [interval] over prompts, prediction and its verdicts,
    acceptance; then the tallies, the control, each other family, the warnings."""
    out = _study_lines(doc)
    for name, sub in doc["families"].items():
        out.append(f"--- {name}")
        out.extend(_study_lines(sub))
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
