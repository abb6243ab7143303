"""The classes of the analysis warnings: which are fatal to ``doit verify --strict``.

The analysis writes its warnings as one-line strings into ``summary.json``. Each falls into one
class (the first pattern that matches; ``other`` when none does). A **fatal** class means a
number the paper would state is wrong or missing because of the input (a run left out, a
baseline of another protocol, a duplicated or impossible record); ``verify --strict`` fails on
any of them. The other classes are reported (printed when the analysis runs, listed in the
claims report) but do not fail the gate.

>>> classify("run final-mod: results.jsonl: 2 duplicate record(s) excluded, first copy kept: a#0")
'duplicate-records'
>>> CLASSES[classify("run x: speedup: baseline b measured another protocol: top_k")].fatal
True
>>> [(c, len(ws)) for c, ws in grouped(["a: not computable, written as null: x", "b?"]).items()]
[('not-computable', 1), ('other', 1)]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class WarningClass:
    name: str
    pattern: str  # a regular expression searched in the warning's text
    fatal: bool
    meaning: str  # one line for the report


_LIST = (
    WarningClass("run-left-out", r"; run skipped$|: incomplete \(", True,
                 "a run of the study was left out (unusable config, duplicate id, unfinished)"),
    WarningClass("baseline-mismatch",
                 r"measured another protocol|no matching baseline|several final no-draft|"
                 r"two matching baselines|no final no-draft run|no baseline run|"
                 r"shares no prompt id",
                 True, "a speedup or break-even has no baseline of the same protocol"),
    WarningClass("duplicate-records", r"duplicate record\(s\)", True,
                 "a prompt was recorded twice in one run (first copy kept)"),
    WarningClass("impossible-records", r"with impossible values", True,
                 "records whose values cannot be measurements were excluded"),
    WarningClass("off-plan", r"disagree with the plan", True,
                 "workload turns that the run's plan (sessions.jsonl) does not hold, or whose "
                 "token counts disagree with it, were excluded"),
    WarningClass("one-sided", r"measured on one side only", True,
                 "workload sessions without both sides were left out of the paired comparison"),
    WarningClass("off-lock", r"session lock", True,
                 "workload turns of a session that its set's id lock "
                 "(experiments/sessions/<set>.txt) does not hold were excluded, or a run was "
                 "measured under another id lock"),
    WarningClass("unknown-contention", r"with no contention fields", True,
                 "realism turns that recorded no contention window were analysed as if "
                 "quiet (whether the machine was quiet is unknown)"),
    WarningClass("predicted-after", r"predictions made after the runs started", True,
                 "the core study's predictions were made after its first run started (not "
                 "committed before it was measured)"),
    WarningClass("environment-differs", r"differs between runs", False,
                 "the final runs were not all measured on the same build, model or machine"),
    WarningClass("implausible-rates", r"implausible decode rate", False,
                 "decode rates far from their run's median (kept, flagged)"),
    WarningClass("not-computable", r"not computable, written as (null|empty)", False,
                 "a statistic had no data (e.g. no request drafted in a domain)"),
    WarningClass("missing-passes", r"pass\(es\) of the campaign's \d+ with no record", False,
                 "a declared pass of a prompt has no record: the prompt's mean is over the "
                 "passes it has"),
    WarningClass("passes-differ", r"passes gave different text", False,
                 "greedy passes of a prompt gave different text (kept, named)"),
    WarningClass("unreadable-lines", r"unreadable line\(s\) skipped", False,
                 "lines of a JSONL file could not be read (e.g. torn by a crash)"),
    WarningClass("no-records", r"no readable records|every record excluded", False,
                 "a run has no usable record"),
    WarningClass("server-log", r"server\.log", False,
                 "a server log is missing or lacks what the acceptance analysis needs"),
    WarningClass("contended", r"contended", False,
                 "requests measured while other processes used the CPU (left out of timing "
                 "statistics, kept for acceptance)"),
    WarningClass("state-reset", r"keeps state across requests", False,
                 "a drafter with state across requests was restarted mid-run (its pool emptied)"),
    WarningClass("not-a-run", r"not a run, skipped|: missing$", False,
                 "a folder or file of the runs directory is not part of a run"),
)
OTHER = WarningClass("other", "", False, "not classified")
CLASSES = {c.name: c for c in (*_LIST, OTHER)}


def classify(warning: str) -> str:
    """The class name of one warning."""
    return next((c.name for c in _LIST if re.search(c.pattern, warning)), OTHER.name)


def grouped(warnings: Iterable[str]) -> dict[str, list[str]]:
    """Warnings by class, fatal classes first, each class in the order given."""
    out: dict[str, list[str]] = {}
    for w in warnings:
        out.setdefault(classify(w), []).append(w)
    order = list(CLASSES)
    return dict(sorted(out.items(), key=lambda kv: (not CLASSES[kv[0]].fatal,
                                                    order.index(kv[0]))))


def fatal(warnings: Iterable[str]) -> list[str]:
    """The warnings of a fatal class."""
    return [w for w in warnings if CLASSES[classify(w)].fatal]


def lines(warnings: Iterable[str]) -> list[str]:
    """Grouped, printable: a heading line per class, then its warnings indented."""
    out = []
    for name, ws in grouped(warnings).items():
        c = CLASSES[name]
        out.append(f"{name} ({len(ws)}{', fatal under --strict' if c.fatal else ''}): "
                   f"{c.meaning}")
        out.extend(f"  {w}" for w in ws)
    return out
