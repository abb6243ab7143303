"""The interleaved design of workload realism (issue 17) in a campaign file: its sides, one
server slot per side, the RAM cache off, the spec hash of a single condition kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifact import spec as S
from artifact.campaign.server import ServerFiles, build_argv, slots


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
