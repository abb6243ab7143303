"""The evaluator's hour: ``--budget 60m`` picks the runs that test the most claims in the time.

A claim is tested when every run it names is reproduced: each of its ``runs`` patterns, matched
against its study's campaign (:func:`artifact.reproduce.studies.claims_of`; the same rule as
"not run" in :func:`artifact.reproduce.compare.missing_runs`). Each run costs its ETA on this
machine: the committed run's own wall time (``metrics.json``), scaled to the prompts selected and
by this machine's calibrated speed ratio (:func:`artifact.reproduce.plan.expected_seconds`). The
ratio is the latest calibration recorded on this machine (a ``reproduction.json`` under
``experiments/reproductions/`` with this hardware's slug); with none yet, the committed runs'
time (ratio 1), and the plan says so.

The choice is greedy by claims served per second (:func:`choose`): among the claims not yet
tested, take the one whose missing runs cost least per claim they complete (a claim whose runs
are already chosen is free), while the total stays within the budget; repeat until nothing more
fits. A study of prompts may also be cut to the first N prompts of each domain: the plan is made
for every N of :data:`PROMPTS_PER_DOMAIN` (the same N for every study of prompts), and the one
testing the most claims wins, ties going to more prompts (narrower intervals), then to less
time. A study of sessions is planned by whole runs (its executor measures all sessions of a
run). Measurement windows are runs (the acceptance split's), chosen like any other.

>>> needs = [Need(claim="a", runs=frozenset({"x"})), Need(claim="b", runs=frozenset({"x", "y"})),
...          Need(claim="c", runs=frozenset({"z"}))]
>>> sorted(choose(needs, {"x": 10.0, "y": 5.0, "z": 40.0}, 20.0).runs)
['x', 'y']
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from artifact import paths, records
from artifact.claims import Claim
from artifact.errors import PlanError
from artifact.reproduce import plan, studies

# None: every prompt; never fewer than 2 per domain, below which a cell has no interval and a
# hardware-bound claim could only be "cannot tell"
PROMPTS_PER_DOMAIN: tuple[int | None, ...] = (None, 5, 3, 2)
_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
FORM = "a duration such as 45m, 1h, 90s or 1h30m"


def parse(text: str) -> float:
    """``--budget``'s duration in seconds; a bad one is one line naming the flag.

    >>> parse("60m"), parse("1h30m"), parse("90s")
    (3600.0, 5400.0, 90.0)
    >>> parse("1h30x")
    Traceback (most recent call last):
    ...
    artifact.errors.PlanError: --budget: expected a duration such as 45m, 1h, 90s or 1h30m, \
got '1h30x'
    """
    m = _DURATION.fullmatch(text.strip().lower())
    if not text.strip() or m is None or not any(m.groups()):
        raise PlanError(f"--budget: expected {FORM}, got {text!r}")
    h, mi, s = (int(g or 0) for g in m.groups())
    seconds = float(h * 3600 + mi * 60 + s)
    if seconds <= 0:
        raise PlanError(f"--budget: expected a duration above zero ({FORM}), got {text!r}")
    return seconds


@dataclass(frozen=True, kw_only=True)
class Need:
    """A claim and the runs it needs (keys of the cost mapping)."""

    claim: str
    runs: frozenset[str]


@dataclass(frozen=True, kw_only=True)
class Choice:
    """The runs chosen, the claims they test (in the order taken), and their total ETA."""

    runs: frozenset[str]
    tested: tuple[str, ...]
    seconds: float


def choose(needs: Sequence[Need], seconds: Mapping[str, float], budget_s: float) -> Choice:
    """Greedy by claims served per second, never above ``budget_s`` (module docstring).

    A need with a run that has no cost (no committed time) is never chosen. Ties go to the
    step completing more claims, then to the earlier claim.

    >>> n = [Need(claim="a", runs=frozenset({"x"})), Need(claim="b", runs=frozenset({"y"}))]
    >>> choose(n, {"x": 10.0, "y": 10.0}, 19.9).tested
    ('a',)
    """
    chosen: set[str] = set()
    tested: list[str] = []
    total = 0.0
    open_ = [n for n in needs if all(r in seconds for r in n.runs)]
    while open_:
        best: tuple[float, int, int] | None = None
        pick: set[str] = set()
        for i, n in enumerate(open_):
            extra = n.runs - chosen
            cost = sum(seconds[r] for r in extra)
            if total + cost > budget_s * (1 + 1e-12):
                continue
            gain = sum(1 for m in open_ if m.runs <= chosen | extra)
            rate = gain / cost if cost > 0 else float("inf")
            key = (rate, gain, -i)
            if best is None or key > best:
                best, pick = key, set(extra)
        if best is None:
            break
        chosen |= pick
        total += sum(seconds[r] for r in pick)
        tested += [m.claim for m in open_ if m.runs <= chosen]
        open_ = [m for m in open_ if not m.runs <= chosen]
    return Choice(runs=frozenset(chosen), tested=tuple(tested), seconds=total)


# --- the studies' runs, their costs and their claims -------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StudyRuns:
    """What one study offers the planner."""

    study: studies.Study
    runs: tuple[str, ...]  # its campaign's runs, in order
    claims: tuple[Claim, ...]  # its claims (studies.claims_of)
    committed: Mapping[str, Mapping[str, object]]  # run -> the committed metrics.json
    domains: Mapping[str, Mapping[str, int]]  # run -> prompts per domain in its records


def _key(study: str, run: str) -> str:
    return f"{study}:{run}"


def study_runs(study: studies.Study, run_ids: Sequence[str], ledger: Sequence[Claim],
               reference: Path) -> StudyRuns:
    """Read what the plan needs of a study: its committed runs' times and prompt counts."""
    committed: dict[str, Mapping[str, object]] = {}
    domains: dict[str, dict[str, int]] = {}
    for rid in run_ids:
        try:
            committed[rid] = records.read_json(reference / rid / records.METRICS)
        except (records.RecordError, ValueError, FileNotFoundError):
            continue  # no committed time: the run cannot be planned (said in the plan)
        domains[rid] = _domains(reference / rid / records.RESULTS)
    return StudyRuns(study=study, runs=tuple(run_ids),
                     claims=tuple(studies.claims_of(ledger, run_ids)), committed=committed,
                     domains=domains)


def _domains(results: Path) -> dict[str, int]:
    """How many distinct prompts of each domain a committed run's records hold."""
    seen: dict[str, set[str]] = {}
    try:
        lines = results.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "prompt_id" in row:
            seen.setdefault(str(row.get("domain", "")), set()).add(str(row["prompt_id"]))
    return {d: len(ids) for d, ids in seen.items()}


def run_seconds(s: StudyRuns, rid: str, per_domain: int | None, scale: float) -> float:
    """One run's ETA here for the first ``per_domain`` prompts of each domain (as execute.py
    times it: the committed requests, scaled by the share of prompts kept)."""
    metrics = s.committed[rid]
    counts = s.domains.get(rid, {})
    n_all = int(str(metrics.get("n_expected") or 0))
    n_unique = sum(counts.values())
    n: int | None = None
    if per_domain is not None and not s.study.sessions and n_unique:
        kept = sum(min(per_domain, c) for c in counts.values())
        n = round(n_all * kept / n_unique) or None
    return plan.expected_seconds(metrics, n, scale)


def needs_of(s: StudyRuns) -> list[Need]:
    """Each claim of the study and every run of its campaign its patterns match."""
    return [Need(claim=c.id, runs=frozenset(_key(s.study.name, r) for r in s.runs
                                            if any(fnmatch.fnmatchcase(r, p) for p in c.runs)))
            for c in s.claims]


@dataclass(frozen=True, kw_only=True)
class Planned:
    """The plan for a budget: per study its selection, with costs and claims served."""

    budget_s: float
    scale: float
    scale_source: str  # where the ratio comes from, for the plan's first line
    prompts_per_domain: int | None
    selections: dict[str, plan.Selection]  # study -> runs to reproduce (studies with any)
    seconds: dict[str, float]  # "study:run" -> ETA
    serves: dict[str, tuple[str, ...]]  # "study:run" -> tested claims that need it
    tested: tuple[str, ...]
    untested: tuple[str, ...]
    unplannable: tuple[str, ...]  # "study:run" without a committed time

    @property
    def total_s(self) -> float:
        return sum(self.seconds[_key(st, r)] for st, sel in self.selections.items()
                   for r in sel.runs)


def make(offers: Sequence[StudyRuns], budget_s: float, *, scale: float = 1.0,
         scale_source: str = "") -> Planned:
    """The plan testing the most claims within ``budget_s`` (module docstring); one line
    naming the flag when not one claim fits."""
    needs = [n for s in offers for n in needs_of(s)]
    best: tuple[tuple[int, float, float], Choice, int | None, dict[str, float]] | None = None
    for per_domain in PROMPTS_PER_DOMAIN:
        seconds = {_key(s.study.name, r): run_seconds(s, r, per_domain, scale)
                   for s in offers for r in s.committed}
        got = choose(needs, seconds, budget_s)
        key = (len(got.tested), float("inf") if per_domain is None else per_domain,
               -got.seconds)
        if best is None or key > best[0]:
            best = (key, got, per_domain, seconds)
    assert best is not None
    _, got, per_domain, seconds = best
    if not got.tested:  # said at the fewest prompts, the cheapest the plan could be
        least = PROMPTS_PER_DOMAIN[-1]
        raise PlanError(_impossible(needs, {_key(s.study.name, r): run_seconds(s, r, least, scale)
                                            for s in offers for r in s.committed}, budget_s))
    selections: dict[str, plan.Selection] = {}
    for s in offers:
        runs = tuple(r for r in s.runs if _key(s.study.name, r) in got.runs)
        if not runs:
            continue
        ppd = None if s.study.sessions else per_domain
        full = len(runs) == len(s.runs) and ppd is None
        selections[s.study.name] = plan.Selection(label="full" if full else "subset",
                                                  runs=runs, prompts_per_domain=ppd)
    by_need = {n.claim: n for n in needs}
    serves = {r: tuple(c for c in got.tested if r in by_need[c].runs) for r in got.runs}
    return Planned(budget_s=budget_s, scale=scale, scale_source=scale_source,
                   prompts_per_domain=per_domain, selections=selections,
                   seconds={r: seconds[r] for r in got.runs}, serves=serves,
                   tested=got.tested,
                   untested=tuple(n.claim for n in needs if n.claim not in got.tested),
                   unplannable=tuple(_key(s.study.name, r) for s in offers for r in s.runs
                                     if r not in s.committed))


def _impossible(needs: Sequence[Need], seconds: Mapping[str, float], budget_s: float) -> str:
    timed = [(sum(seconds[r] for r in n.runs), n) for n in needs
             if n.runs and all(r in seconds for r in n.runs)]
    if not timed:
        return ("--budget: no claim can be planned: none has every run it needs in the "
                "committed runs (no metrics.json to time them by)")
    cost, cheapest = min(timed, key=lambda t: t[0])
    return (f"--budget {plan.clock(budget_s)}: too short to test any claim: the cheapest, "
            f"{cheapest.claim}, needs {len(cheapest.runs)} run(s) of about "
            f"{plan.clock(cost)} even at two prompts per domain; give at least that")


def known_scale(slug: str, root: Path = paths.REPRODUCTIONS) -> tuple[float, str] | None:
    """The latest calibrated speed ratio recorded on hardware ``slug`` (a reproduction's
    ``reproduction.json``), with the folder it comes from; ``None`` when there is none."""
    for folder in sorted(root.glob(f"{slug}-*"), reverse=True):
        try:
            m = plan.read_manifest(folder)
        except PlanError:
            continue
        c = (m or {}).get("calibration") or {}
        scale = c.get("scale")
        if (isinstance(m, dict) and (m.get("hardware") or {}).get("slug") == slug
                and not c.get("skipped") and isinstance(scale, int | float) and scale > 0):
            return float(scale), paths.shown(folder)
    return None


def lines(p: Planned) -> list[str]:
    """The plan as printed: the ratio used, each study's runs with the claims each serves and
    its ETA, the total, and what is left untested."""
    per = ("every prompt" if p.prompts_per_domain is None else
           f"the first {p.prompts_per_domain} prompt(s) of each domain")
    out = [f"budget {plan.clock(p.budget_s)}: {p.scale_source}",
           f"plan: {len(p.tested)} of {len(p.tested) + len(p.untested)} claims tested in "
           f"~{plan.clock(p.total_s)} (studies of prompts: {per}; greedy by claims served per "
           "second)"]
    for study, sel in p.selections.items():
        eta = sum(p.seconds[_key(study, r)] for r in sel.runs)
        out.append(f"study {study}: {len(sel.runs)} run(s), ~{plan.clock(eta)}")
        for r in sel.runs:
            k = _key(study, r)
            out.append(f"  {r:36s} ~{plan.clock(p.seconds[k]):>7s}  serves "
                       f"{', '.join(p.serves[k]) or 'none'}")
    if p.untested:
        out.append(f"not tested within the budget: {', '.join(p.untested)}")
    if p.unplannable:
        out.append("no committed time to plan by (left out): " + ", ".join(p.unplannable))
    return out
