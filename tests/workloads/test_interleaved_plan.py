"""The interleaved design of workload realism (issue 17): sides and the Williams order."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest

from artifact.workloads import synthetic as Y
from artifact.workloads.sessionplan import plan_sessions, williams_rows
from tests.workloads.test_synthetic import sessions
from tests.workloads.toytok import ToyTokenizer

SIDES: list[tuple[str, Y.Knobs | None]] = [
    ("real-a", None), ("real-b", None),
    ("synthetic-english", Y.Knobs(style="english")),
    ("synthetic-recurrent", Y.Knobs(recurrent=True))]


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_williams_rows_balance_position_and_carry_over(n: int) -> None:
    rows = williams_rows(n)
    assert all(sorted(r) == list(range(n)) for r in rows)
    for pos in range(n):  # every side in every position equally often
        assert len(set(Counter(r[pos] for r in rows).values())) == 1
    follows = Counter(p for r in rows for p in pairwise(r))  # and after every other side
    assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1


def test_plan_plays_every_side_of_a_session_back_to_back_with_real_replays_identical() -> None:
    tok = ToyTokenizer()
    p = plan_sessions(sessions(), tok, Y.Knobs(), ctx_size=4096, cap=8, seed=3, sides=SIDES)
    assert sorted(s.order for s in p.sessions) == list(range(12))
    ids = [s.session_id for s in p.sessions]
    assert all(len(set(ids[i:i + 4])) == 1 for i in range(0, 12, 4))  # a session's sides
    by = {(s.side, s.session_id): s for s in p.sessions}
    for sid in {"s0", "s1", "s2"}:
        a, b = by[("real-a", sid)], by[("real-b", sid)]
        assert (a.users, a.replies, a.turns) == (b.users, b.replies, b.turns)
        for name in ("synthetic-english", "synthetic-recurrent"):
            y = by[(name, sid)]
            assert [t.prompt_tokens for t in y.turns] == [t.prompt_tokens for t in a.turns]
            assert y.users != a.users
    assert p.summary["sides"] == [n for n, _ in SIDES]
    assert set(p.summary["synthetic"]) == {"synthetic-english", "synthetic-recurrent"}
    again = plan_sessions(sessions(), tok, Y.Knobs(), ctx_size=4096, cap=8, seed=3,
                          sides=SIDES)
    assert [s.key for s in again.sessions] == [s.key for s in p.sessions]  # seeded
