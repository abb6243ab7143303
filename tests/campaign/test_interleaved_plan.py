"""The interleaved design of workload realism (issue 17): sides, the Williams order, the spec."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest

from artifact import spec as S
from artifact.campaign import synthetic as Y
from artifact.campaign.server import build_argv, slots
from artifact.campaign.workload import plan, williams_rows
from tests.campaign.test_synthetic import sessions
from tests.campaign.toytok import ToyTokenizer

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
    p = plan(sessions(), tok, Y.Knobs(), ctx_size=4096, cap=8, seed=3, sides=SIDES)
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
    again = plan(sessions(), tok, Y.Knobs(), ctx_size=4096, cap=8, seed=3, sides=SIDES)
    assert [s.key for s in again.sessions] == [s.key for s in p.sessions]  # seeded


def _campaign(tmp_path, workload: str) -> S.Campaign:  # type: ignore[no-untyped-def]
    f = tmp_path / "c.toml"
    f.write_text(f"""
[campaign]
name = "c"
[defaults]
target = "m"
family = "workload"
prompt_set = "realism"
[models.m]
builtin = "smollm2-135m-q4_1"
family = "smollm2-135m"
quant = "Q4_1"
[[run]]
id = "r"
drafter = "none"
workload = {workload}
""", encoding="utf-8")
    return S.load_campaign(f)


def test_the_interleaved_spec_gives_each_side_a_slot_and_turns_the_ram_cache_off(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = _campaign(tmp_path, '{ replays = 2, conditions = [{ condition = "english" }, '
                            '{ condition = "recurrent", recurrent = true }] }')
    (r,) = c.runs
    assert r.workload is not None and r.workload.interleaved
    assert [n for n, _ in r.workload.sides()] == ["real-a", "real-b", "synthetic-english",
                                                  "synthetic-recurrent"]
    assert slots(r) == 4
    from pathlib import Path

    from artifact.campaign.server import ServerFiles
    argv = build_argv(ServerFiles(binary=Path("s"), model=Path("m"), draft_model=None), r, 1)
    assert argv[argv.index("--cache-ram") + 1] == "0"
    assert argv[argv.index("-np") + 1] == "4"


def test_a_single_condition_keeps_its_spec_hash(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (r,) = _campaign(tmp_path, '{ condition = "english" }').runs
    assert r.workload is not None and not r.workload.interleaved
    assert "replays" not in r.as_dict()["workload"] and "more" not in r.as_dict()["workload"]


@pytest.mark.parametrize(("workload", "match"), [
    ('{ replays = 2 }', r"conditions: expected a non-empty list"),
    ('{ replays = 9, conditions = [{ condition = "e" }] }', r"replays: expected an integer"),
    ('{ conditions = [{ condition = "e" }, { condition = "e" }] }', r"distinct condition"),
    ('{ conditions = [{ condition = "E x" }] }', r"condition: expected a label"),
    ('{ replays = 2, style = "code", conditions = [{ condition = "e" }] }', r"unknown key"),
])
def test_bad_interleaved_specs_are_one_line(tmp_path, workload: str,  # type: ignore[no-untyped-def]
                                            match: str) -> None:
    with pytest.raises(S.SpecError, match=match):
        _campaign(tmp_path, workload)
