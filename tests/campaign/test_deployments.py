"""Per-side deployments (issue 28): every side of the realism design on its own server, the
servers of a stratum measured together in turn-major rounds. The pure parts without a server;
a tiny group end to end against the real llama-server (marked ``server``)."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from artifact import records
from artifact.campaign import interleave, quiet
from artifact.campaign.server import slots
from artifact.spec import SpecError, load_campaign
from artifact.workloads import Round, round_servers, rounds
from artifact.workloads.sessionplan import PlannedSession, PlannedTurn
from tests.workload_corpus import tiny_session_set

TOML = """
[campaign]
name = "r3-test"
[equivalence]
speedup = 0.05
acceptance = 0.05
[defaults]
target = "m"
family = "workload"
prompt_set = "tiny"
n_predict = 6
ctx_size = 1024
threads = 1
warmup = 1
timeout_s = 120
interleave = "g"
[models.m]
builtin = "smollm2-135m-q4_1"
family = "smollm2-135m"
quant = "Q4_1"
[[run]]
id = "t-none"
drafter = "none"
workload = { replays = 2, deploy = "per-side", conditions = [{ condition = "english" }] }
[[run]]
id = "t-ngram"
drafter = "ngram-mod"
k = 4
ngram_match = 4
workload = { replays = 2, deploy = "per-side", conditions = [{ condition = "english" }] }
"""


def _campaign(tmp_path: Path, toml: str = TOML) -> object:
    f = tmp_path / "c.toml"
    f.write_text(toml)
    return load_campaign(f)


def test_a_per_side_run_expands_into_one_run_per_side_each_playing_only_its_side(
        tmp_path: Path) -> None:
    camp = _campaign(tmp_path)
    ids = [r.run_id for r in camp.runs]  # type: ignore[attr-defined]
    assert ids == ["t-none-real-a", "t-none-real-b", "t-none-synthetic-english",
                   "t-ngram-real-a", "t-ngram-real-b", "t-ngram-synthetic-english"]
    for r in camp.runs:  # type: ignore[attr-defined]
        assert r.workload.play == r.run_id.split("-", 2)[2]
        assert [s for s, _ in r.workload.played()] == [r.workload.play]
        assert slots(r) == 1  # one stream, one side: one slot
        assert r.interleave == "g"
    hashes = {r.sha256 for r in camp.runs}  # type: ignore[attr-defined]
    assert len(hashes) == 6  # the side is part of what a run measures
    assert camp.equivalence == {"speedup": 0.05, "acceptance": 0.05}  # type: ignore[attr-defined]


def test_per_side_at_five_streams_gives_each_server_five_slots(tmp_path: Path) -> None:
    camp = _campaign(tmp_path, TOML.replace("threads = 1", "threads = 1\nconcurrency = 5"))
    assert {slots(r) for r in camp.runs} == {5}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("edit", "message"), [
    ('interleave = "g"\n', r"run\[0\]\.interleave: .*per-side.*interleave group"),
    ('deploy = "per-side"', r"workload\.deploy: expected one of shared, per-side, got 'apart'"),
    ("speedup = 0.05", r"equivalence\.speedup: expected a margin in \(0, 1\)"),
    ("acceptance = 0.05", r"equivalence\.tpot_ms: unknown key"),
])
def test_a_bad_per_side_campaign_gets_one_line(tmp_path: Path, edit: str, message: str) -> None:
    new = {'interleave = "g"\n': "", 'deploy = "per-side"': 'deploy = "apart"',
           "speedup = 0.05": "speedup = 5", "acceptance = 0.05": "tpot_ms = 0.05"}[edit]
    with pytest.raises(SpecError, match=message) as err:
        _campaign(tmp_path, TOML.replace(edit, new, 1))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 12])
def test_round_orders_are_balanced_over_places_and_successions(n: int) -> None:
    ids = [f"s{i:02d}" for i in range(n)]
    rows = len(ids) if n % 2 == 0 else 2 * n
    orders = [round_servers("g", 42, r, ids) for r in range(rows)]
    assert all(sorted(o) == ids for o in orders)
    places = Counter((o[p], p) for o in orders for p in range(n))
    assert set(places.values()) == {rows // n}  # every server in every place alike
    follows = Counter((a, b) for o in orders for a, b in itertools.pairwise(o))
    assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1
    # the next rows repeat the design: the order of a round does not depend on resuming
    assert round_servers("g", 42, rows + 1, ids) == orders[1]


def _session(sid: str, n_turns: int) -> PlannedSession:
    turns = [PlannedTurn(turn=t, prompt_chars=1, prompt_tokens=1, n_predict=1)
             for t in range(n_turns)]
    return PlannedSession(session_id=sid, side="real-a", order=0, system=None, prefix_tokens=0,
                          users=["u"] * n_turns, replies=["r"] * n_turns, turns=turns)


def test_rounds_go_turn_by_turn_over_chunks_of_concurrency_sessions() -> None:
    order = [_session("a", 2), _session("b", 3), _session("c", 1)]
    assert rounds(order, 1) == [Round(0, ("a",), 0), Round(1, ("a",), 1), Round(2, ("b",), 0),
                                Round(3, ("b",), 1), Round(4, ("b",), 2), Round(5, ("c",), 0)]
    assert rounds(order, 2) == [Round(0, ("a", "b"), 0), Round(1, ("a", "b"), 1),
                                Round(2, ("a", "b"), 2), Round(3, ("c",), 0)]
    assert rounds(order, 1, max_sessions=1) == rounds(order, 1)[:2]


def test_a_group_mixing_prompt_and_per_side_runs_is_refused(tmp_path: Path) -> None:
    toml = TOML + """
[[run]]
id = "t-prompts"
family = "final"
prompt_set = "kick"
drafter = "none"
"""
    camp = _campaign(tmp_path, toml)
    with pytest.raises(SpecError, match="all prompt runs or all per-side workload runs"):
        interleave.run_group(camp, list(camp.runs), runs_root=tmp_path / "runs")  # type: ignore


@pytest.mark.server
def test_a_per_side_group_end_to_end(real_toolchain: tuple[str, str], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_session_set(tmp_path, monkeypatch, "[sets.tiny]\nseed = 3\nclip_chars = 160\n"
                     "max_turns = 3\nstrata = [[3, 9, 2]]\n")
    camp = _campaign(tmp_path)
    runs = tmp_path / "runs"
    specs = list(camp.runs)  # type: ignore[attr-defined]
    ms = interleave.run_group(camp, specs, runs_root=runs, show_progress=False,  # type: ignore
                              cond=quiet.Conditions.from_env(remeasure_contended=0))
    assert all(m.complete for m in ms.values())
    by_run = {s.run_id: records.read_turns(runs / s.run_id)[0] for s in specs}
    for s in specs:  # each server played its side only, every planned turn once
        turns = by_run[s.run_id]
        assert {t.side for t in turns} == {s.workload.play}
        plan = records.read_plan(runs / s.run_id)
        assert plan is not None and {k.split(":")[0] for k, _ in plan.turns} == \
            {s.workload.play}
        assert sorted(t.key for t in turns) == sorted(plan.turns)
        assert all(t.round_pos is not None for t in turns)
    # every round visited the six servers one after another, in its round order
    sent = sorted((t.sent_unix_s, t.round_pos, t.session_id, t.turn, rid)
                  for rid, ts in by_run.items() for t in ts)
    for _, group in itertools.groupby(sent, key=lambda x: (x[2], x[3])):
        got = list(group)
        assert [g[1] for g in got] == list(range(len(got))) == list(range(6))
    # REAL-A and REAL-B: the same history on servers of their own, so the same work exactly
    for drafter in ("t-none", "t-ngram"):
        a = {(*t.key[1:], t.session_id): t for t in by_run[f"{drafter}-real-a"]}
        b = {(*t.key[1:], t.session_id): t for t in by_run[f"{drafter}-real-b"]}
        assert a.keys() == b.keys()
        for k in a:
            ta, tb = a[k], b[k]
            assert (ta.timings.draft_n, ta.timings.draft_n_accepted, ta.cached_tokens) == \
                (tb.timings.draft_n, tb.timings.draft_n_accepted, tb.cached_tokens)
    assert sum(t.timings.draft_n or 0 for t in by_run["t-ngram-real-a"]) > 0
    # a rerun finds every run complete and measures nothing more
    again = interleave.run_group(camp, specs, runs_root=runs, show_progress=False)  # type: ignore
    assert all(m.complete for m in again.values())
    assert {rid: len(records.read_turns(runs / rid)[0]) for rid in by_run} == \
        {rid: len(v) for rid, v in by_run.items()}
