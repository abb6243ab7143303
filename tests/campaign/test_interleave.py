"""Interleaved runs (issue 16): a group measured prompt-major over live servers, against the
real llama-server (marked ``server``), and the pure parts without one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from artifact import records
from artifact.campaign import interleave, quiet
from artifact.spec import SpecError, load_campaign
from artifact.workloads import round_order

GROUP_TOML = """
[campaign]
name = "group"
[defaults]
target = "m"
prompt_set = "kick"
family = "final"
n_predict = 16
warmup = 1
timeout_s = 60
interleave = "g"
[models.m]
builtin = "smollm2-135m-q4_1"
family = "smollm2-135m"
quant = "Q4_1"
[[run]]
id = "g-none"
drafter = "none"
[[run]]
id = "g-control"
family = "control"
drafter = "none"
[[run]]
id = "g-ngram"
drafter = "ngram-mod"
k = 4
"""


def test_a_group_whose_runs_send_different_prompts_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(GROUP_TOML.replace('id = "g-ngram"', 'id = "g-ngram"\nseed = 7'))
    camp = load_campaign(f)
    with pytest.raises(SpecError, match="differ in seed"):
        interleave.run_group(camp, list(camp.runs), runs_root=tmp_path / "runs")


def test_interleave_needs_one_stream(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(GROUP_TOML.replace('k = 4', 'k = 4\nconcurrency = 2'))
    with pytest.raises(SpecError, match=r"run\[2\]\.interleave: .*concurrency = 1"):
        load_campaign(f)


def _measure(tmp_path: Path, toml: str) -> tuple[Any, Path, dict[str, Any]]:
    """Measure the group of ``toml`` in ``tmp_path/runs``; no re-measuring here: one record
    per request, whatever else the machine does."""
    f = tmp_path / "c.toml"
    f.write_text(toml)
    camp = load_campaign(f)
    runs = tmp_path / "runs"
    ms = interleave.run_group(camp, list(camp.runs), runs_root=runs, show_progress=False,
                              cond=quiet.Conditions.from_env(remeasure_contended=0))
    return camp, runs, ms


@pytest.mark.server
def test_a_group_is_measured_prompt_major_with_contention_and_a_ledger(
        real_toolchain: tuple[str, str], tmp_path: Path) -> None:
    camp, runs, ms = _measure(tmp_path, GROUP_TOML)
    assert all(m.complete and m.n_results == 3 and m.server_starts == 1 for m in ms.values())
    recs = {rid: records.read_results(runs / rid)[0] for rid in ms}
    # prompt-major: in time order, each prompt's three requests come before the next prompt's
    timeline = sorted((r.sent_unix_s, r.prompt_id, rid, r.round_pos)
                      for rid, rs in recs.items() for r in rs)
    for i in range(0, 9, 3):
        block = timeline[i:i + 3]
        assert len({p for _, p, _, _ in block}) == 1
        want = round_order("g", 42, 0, block[0][1], list(ms))
        assert [rid for _, _, rid, _ in block] == want
        assert [pos for _, _, _, pos in block] == [0, 1, 2]
    for rid, rs in recs.items():
        for r in rs:  # every request says how busy the machine was
            assert r.contention is not None and r.contention["foreign_cores"] >= 0
            assert isinstance(r.contended, bool)
        kinds = [json.loads(line)["event"]
                 for line in (runs / rid / records.EVENTS).read_text().splitlines()]
        assert kinds == ["gate", "invocation", "server_start", "measure_begin", "segment_end"]
        m = ms[rid]
        assert m.contention is not None and m.contention["n"] == 3
        assert m.measure_s == pytest.approx(sum(r.e2e_ms for r in rs) / 1000, abs=0.01)
    # a second call finds every run complete and measures nothing
    again = interleave.run_group(camp, list(camp.runs), runs_root=runs, show_progress=False)
    assert {rid: m.n_results for rid, m in again.items()} == {rid: 3 for rid in ms}
    assert all(len(records.read_results(runs / rid)[0]) == 3 for rid in ms)


@pytest.mark.server
def test_every_pass_starts_on_fresh_servers_so_a_pool_never_sees_an_earlier_pass(
        real_toolchain: tuple[str, str], tmp_path: Path) -> None:
    """Two greedy passes of ngram-mod: restarted between passes, the second pass drafts and
    accepts exactly what the first did (without the restart its pool would hold pass one)."""
    _, runs, ms = _measure(tmp_path, GROUP_TOML.replace('k = 4\n', 'k = 4\nignore_eos = true\n')
                           .replace('interleave = "g"', 'interleave = "g"\nrepeats = 2')
                           .replace('n_predict = 16', 'n_predict = 48'))
    assert all(m.complete and m.n_results == 6 and m.server_starts == 2 for m in ms.values())
    for rid in ms:
        rows = [json.loads(line) for line in (runs / rid / records.EVENTS).read_text().splitlines()]
        assert [(r["n"], r["repeat"]) for r in rows if r["event"] == "pass_begin"] == [(1, 0),
                                                                                        (2, 1)]
        by = {(r.prompt_id, r.repeat): r for r in records.read_results(runs / rid)[0]}
        for (pid, rep), r in by.items():
            assert r.server_start == rep + 1
            if rep == 1:
                first = by[(pid, 0)]
                assert "".join(r.event_text or []) == "".join(first.event_text or [])
                assert (r.timings.draft_n, r.timings.draft_n_accepted) == (
                    first.timings.draft_n, first.timings.draft_n_accepted)
