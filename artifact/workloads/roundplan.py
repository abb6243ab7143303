"""The rounds of a group of per-side deployments (issue 28): which turn goes to which server,
in what order. Planned here, below the campaign, which only sends them
(:mod:`artifact.campaign.deployments`)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from artifact.workloads.sessionplan import PlannedSession, williams_rows


def round_servers(label: str, seed: int, round_no: int, run_ids: Sequence[str]) -> list[str]:
    """The order in which round ``round_no`` visits the group's servers: row ``round_no mod n``
    of a Williams design over the ``n`` run ids (sorted), the rows shuffled once by ``label``
    and ``seed``.

    >>> ids = ["a", "b", "c", "d"]
    >>> rows = [round_servers("g", 1, r, ids) for r in range(4)]
    >>> sorted(tuple(sorted(r[p] for r in rows)) for p in range(4))  # every place: each once
    [('a', 'b', 'c', 'd'), ('a', 'b', 'c', 'd'), ('a', 'b', 'c', 'd'), ('a', 'b', 'c', 'd')]
    >>> round_servers("g", 1, 2, ids) == round_servers("g", 1, 2, ["d", "c", "b", "a"])
    True
    """
    names = sorted(run_ids)
    rows = williams_rows(len(names))
    key = hashlib.sha256(f"{label}|{seed}|rows".encode()).hexdigest()
    random.Random(int(key[:16], 16)).shuffle(rows)
    return [names[i] for i in rows[round_no % len(rows)]]


@dataclass(frozen=True)
class Round:
    """One round: a chunk of sessions (by id) and the turn sent to each server."""

    number: int
    sessions: tuple[str, ...]
    turn: int


def rounds(order: Sequence[PlannedSession], concurrency: int,
           max_sessions: int | None = None) -> list[Round]:
    """The group's rounds over the whole plan (numbered the same on every resume), or over its
    first ``max_sessions`` sessions (a calibration)."""
    kept = list(order)[:max_sessions] if max_sessions is not None else list(order)
    out: list[Round] = []
    for i in range(0, len(kept), concurrency):
        chunk = kept[i:i + concurrency]
        for turn in range(max(len(s.turns) for s in chunk)):
            out.append(Round(len(out), tuple(s.session_id for s in chunk), turn))
    return out
