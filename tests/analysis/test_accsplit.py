"""The acceptance-split study's sections, on hand-made observations with hand-computed values."""

from __future__ import annotations

import math
from typing import Any

import pytest

from artifact.analysis import accsplit as A
from artifact.analysis.accsplit_obs import Segment
from tests.render.accsplit_fixture import DRAFT, obs


def test_prompt_budget_interval_over_runs_by_hand() -> None:
    o = [obs(window="w1", accepted=4, rounds=4), obs(window="w2", accepted=8, rounds=4),
         obs(window="w3", accepted=9, rounds=3)]  # 1, 2, 3 accepted per round
    (row,) = A.by_prompt_budget(o)
    iv = row["accepted_per_round"]
    assert (iv["n"], iv["mean"], iv["sd"]) == (3, 2.0, 1.0)
    assert (iv["low"], iv["high"]) == (pytest.approx(-0.4841, abs=1e-4), pytest.approx(4.4841,
                                                                                 abs=1e-4))
    assert iv["kind"] == "measured" and iv["over"] == "runs"
    assert row["pooled_accepted_per_round"]["value"] == pytest.approx(21 / 11)
    assert row["draft_depth"]["value"] == pytest.approx(48 / 11)
    assert [p["value"] for p in row["per_position"]] == pytest.approx([9 / 11, 6 / 11, 3 / 11, 0])
    assert row["windows"] == ["w1", "w2", "w3"] and row["dates"] == ["2026-11-30"]


def test_one_run_gives_no_interval_never_a_zero_width_one() -> None:
    (row,) = A.by_prompt_budget([obs()])
    iv = row["accepted_per_round"]
    assert iv["n"] == 1 and iv["mean"] == 1.5 and iv["low"] is None and iv["high"] is None
    assert iv["ci_reason"] == "fewer than two independent runs"


def test_windows_paired_difference_over_prompts() -> None:
    o = [obs(prompt="chat/a", window="w1", accepted=4), obs(prompt="chat/b", window="w1",
                                                            accepted=8),
         obs(prompt="chat/a", window="w2", accepted=6), obs(prompt="chat/b", window="w2",
                                                            accepted=12)]
    w = A.by_window(o)
    (d,) = w["diff_from_first"]
    assert d["window"] == "w2" and d["vs"] == "w1"
    assert d["diff"]["n"] == 2 and d["diff"]["mean"] == pytest.approx((0.5 + 1.0) / 2)
    pooled = {c["window"]: c["pooled_accepted_per_round"]["value"] for c in w["cells"]}
    assert pooled == {"w1": pytest.approx(12 / 8), "w2": pytest.approx(18 / 8)}
    dates = A.by_date(o)
    assert dates["one_date"] and dates["n_dates"] == 1


def test_reconciliation_bias_by_hand() -> None:
    # 9 tokens: first alone, then 4 steps of 2 tokens 100 ms apart -> 5 client steps, 1 accepted
    # per verification step seen by the client; the server says 4 accepted over 4 rounds = 1.0
    ev = [0.0, 100.0, 100.1, 200.0, 200.1, 300.0, 300.1, 400.0, 400.1]
    o = obs(event_ms=ev, tokens=9, accepted=4, rounds=4)
    rec = A.reconciliation([o])
    (row,) = rec["rows"]
    est = row["estimators"]
    assert est["tokens_per_step"]["bias"]["mean"] == pytest.approx(9 / 5 - 1 - 1.0)
    assert est["tps_x_gap_p50"]["value"]["mean"] == pytest.approx(8 / 400.1 * 99.9 - 1)
    assert est["tps_x_gap_p50"]["bias"]["n"] == 1 and est["tps_x_gap_p50"]["bias"]["low"] is None
    assert row["steps_minus_server_steps"]["mean"] == 0.0  # 5 client steps = 9 - 4 server steps
    nd = A.reconciliation([obs(config="no draft", event_ms=[0.0, 25.0, 50.0], tokens=3)])
    assert nd["rows"][0]["estimators"]["tokens_per_step"]["bias"]["mean"] == 0.0


def test_sources_cross_check_counts_disagreements() -> None:
    o = obs()
    bad = obs(prompt="chat/b")
    object.__setattr__(bad, "accepted_log", bad.accepted + 1)  # a log line that disagrees
    rows = {(r["quantity"], r["sources"]): r for r in A.cross_check([o, bad])}
    assert rows[("accepted", "metrics vs log")]["n_disagree"] == 1
    assert rows[("accepted", "metrics vs log")]["max_abs_diff"]["value"] == 1.0
    assert rows[("accepted", "metrics vs reply")]["n_disagree"] == 0


def test_length_split_late_acceptance_over_group_means() -> None:
    o = [obs(budget=128, window="w1", accepted=4, rounds=4, text="ab"),
         obs(budget=256, window="w1", accepted=12, rounds=8, text="abc"),
         obs(budget=128, window="w2", accepted=6, rounds=4, text="xy"),
         obs(budget=256, window="w2", accepted=10, rounds=8, text="zz")]
    rows = {r["prompt_id"]: r for r in A.length_split(o)}
    r = rows["all prompts"]
    assert r["short"]["value"] == pytest.approx(5 / 4) and r["short"]["kind"] == "measured"
    assert r["late"]["value"] == pytest.approx((11 - 5) / (8 - 4))
    assert r["late"]["kind"] == "estimated"
    assert r["late_per_run"]["n"] == 2 and r["late_per_run"]["mean"] == pytest.approx((2 + 1) / 2)
    assert (r["short_is_prefix_of_long"], r["n_pairs"]) == (1, 2)


def test_segment_split_validates_on_single_segment_answers() -> None:
    code = Segment(tokens=6, steps=2, ms=200.0)
    prose = Segment(tokens=4, steps=4, ms=400.0)
    both = obs(code=code, prose=prose, accepted=4, rounds=5, event_ms=[0.0] * 10, tokens=10)
    single = obs(prompt="chat/b", event_ms=[0.0, 100.0, 100.1, 200.0], tokens=4, accepted=1,
                 rounds=2)  # 3 client steps: 4/3 - 1 = 1/3 against the server's 0.5
    (row,) = A.segment_split([both, single])
    assert row["n_both_segments"] == 1 and row["n_single_segment"] == 1
    assert row["validation_bias"]["mean"] == pytest.approx(1 / 3 - 0.5)
    seg = row["segments"]
    assert seg["code"]["accepted_per_step"]["value"] == pytest.approx(6 / 2 - 1)
    assert seg["code"]["tok_per_s"]["value"] == pytest.approx(30.0)
    assert seg["code"]["accepted_per_step"]["kind"] == "estimated"


def test_batch_split_only_inside_a_window_with_several_batches() -> None:
    o = [obs(window="w1"), obs(window="w2", batch=1, accepted=4),
         obs(window="w2", batch=2, accepted=2)]
    rows = A.batch_split(o)
    assert {(r["window"], r["batch"]) for r in rows} == {("w2", 1), ("w2", 2)}
    b2 = next(r for r in rows if r["batch"] == 2)
    assert b2["pooled_accepted_per_round"]["value"] == pytest.approx(0.5)


def test_shift_decomposition_by_hand_and_missing_cell_is_one_line() -> None:
    o: list[Any] = []
    for w, (a, bs, bl) in {"w1": (1.0, 2.0, 2.5), "w2": (1.5, 2.5, 3.5)}.items():
        o += [obs(prompt="chat/a", budget=128, window=w, accepted=int(a * 4), rounds=4),
              obs(prompt="grounded/b", budget=128, window=w, accepted=int(bs * 4), rounds=4),
              obs(prompt="grounded/b", budget=256, window=w, accepted=int(bl * 4), rounds=4)]
    s = A.shift(o, config=DRAFT, a="chat/a", b="grounded/b")
    assert s["prompt_step"]["mean"] == pytest.approx(1.0) and s["prompt_step"]["n"] == 2
    assert s["length_step"]["mean"] == pytest.approx((0.5 + 1.0) / 2)
    assert s["total"]["mean"] == pytest.approx(s["prompt_step"]["mean"] + s["length_step"]["mean"])
    assert s["length_step"]["sd"] == pytest.approx(math.sqrt(0.125))
    with pytest.raises(A.MissingCellError) as err:
        A.shift(o, config=DRAFT, a="chat/a", b="math/zz")
    assert "\n" not in str(err.value) and "math/zz" in str(err.value)
    assert "128 tokens" in str(err.value)
