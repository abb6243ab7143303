"""The studies a reproduction knows, each with everything ``--study NAME`` needs.

A study names its campaign file, its committed reference runs, how a subset of it is cut below
the runs (prompts per domain, measurement windows, or sessions) and its kick: the smallest run
set that still goes through its whole pipeline on the real server. Its claims are those of
``experiments/claims.toml`` whose runs all belong to its campaign (:func:`claims_of`), so no
claim list is kept by hand.

=========  ==============================  ========================  ========  ==================
study      campaign                        reference runs            subsets   kick
=========  ==============================  ========================  ========  ==================
first      cpu-study.toml                  experiments/runs          prompts   3 runs, 1 prompt
                                                                               per domain
core       core.toml                       experiments/runs-core     prompts   the Q4_1 x edit
                                                                               group's none,
                                                                               control, ngram-mod
                                                                               and draft, 1 prompt
accsplit   accsplit.toml                   experiments/runs          windows   w6's three batch-1
                                                                               cells, 1 prompt
                                                                               per domain
realism    realism.toml                    experiments/runs-realism  sessions  r3-main: none and
                                                                               ngram-mod on REAL-A,
                                                                               REAL-B and English,
                                                                               2 sessions
=========  ==============================  ========================  ========  ==================

>>> [s.name for s in STUDIES.values()]
['first', 'core', 'accsplit', 'realism']
>>> STUDIES["core"].reference.name
'runs-core'
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from artifact import paths
from artifact.claims import Claim

Unit = Literal["prompts", "windows", "sessions"]
ALL = "all"


@dataclass(frozen=True, kw_only=True)
class Study:
    """One study: what ``--study NAME`` reruns and compares with."""

    name: str
    description: str  # one line for --help and the plan
    campaign: Path
    reference: Path  # the committed runs it is compared with
    unit: Unit  # how a subset is cut below the runs
    kick_runs: tuple[str, ...]  # the kick: its runs (the first is the no-draft baseline)
    kick_prompts_per_domain: int | None = None  # prompt studies: the kick's prompts
    kick_sessions: int | None = None  # session studies: the kick's sessions per run

    @property
    def sessions(self) -> bool:
        """A study of multi-turn sessions (its runs deployed per side), not of prompts."""
        return self.unit == "sessions"


STUDIES: dict[str, Study] = {s.name: s for s in (
    Study(name="first", description="the first campaign: drafters against no draft, "
                                    "break-even, noise controls",
          campaign=paths.STUDY, reference=paths.RUNS, unit="prompts",
          kick_runs=("final-none", "final-ngram-mod", "final-draft-self"),
          kick_prompts_per_domain=1),
    Study(name="core", description="the core study, take three: targets x tasks x drafters, "
                                   "three interleaved passes",
          campaign=paths.CAMPAIGNS / "core.toml", reference=paths.CORE_RUNS, unit="prompts",
          kick_runs=("q4_1-edit-none", "q4_1-edit-control", "q4_1-edit-ngram-mod",
                     "q4_1-edit-draft-q2k"),
          kick_prompts_per_domain=1),
    Study(name="accsplit", description="the acceptance split: prompt, budget, segment, batch "
                                       "and window",
          campaign=paths.CAMPAIGNS / "accsplit.toml", reference=paths.RUNS, unit="windows",
          kick_runs=("w6-b1-n128-none", "w6-b1-n128-ngram-mod", "w6-b1-n128-draft-q2k"),
          kick_prompts_per_domain=1),
    Study(name="realism", description="workload realism, take three: every side its own "
                                      "deployment",
          campaign=paths.REALISM_CAMPAIGN, reference=paths.REALISM_RUNS, unit="sessions",
          kick_runs=("r3-main-none-real-a", "r3-main-none-real-b",
                     "r3-main-none-synthetic-english", "r3-main-ngram-mod-real-a",
                     "r3-main-ngram-mod-real-b", "r3-main-ngram-mod-synthetic-english"),
          kick_sessions=2),
)}
NAMES = (*STUDIES, ALL)


def chosen(name: str) -> list[Study]:
    """The studies ``--study NAME`` names (``all``: every one, in the table's order).

    >>> [s.name for s in chosen("all")] == list(STUDIES)
    True
    """
    return list(STUDIES.values()) if name == ALL else [STUDIES[name]]


def claims_of(ledger: Sequence[Claim], run_ids: Sequence[str]) -> list[Claim]:
    """The claims whose run patterns each match a run of the study (``run_ids``: its
    campaign's runs), in ledger order.

    >>> c = Claim(id="x", quantity="vars:a", expected=1.0, runs=("final-*", "control-none"))
    >>> [k.id for k in claims_of([c], ["final-none", "control-none"])], claims_of([c], ["w1"])
    (['x'], [])
    """
    return [c for c in ledger if c.runs and all(
        any(fnmatch.fnmatchcase(r, pat) for r in run_ids) for pat in c.runs)]
