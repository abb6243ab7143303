"""The acceptance-split study's sections, on hand-made observations with hand-computed values."""

from __future__ import annotations

import math
from typing import Any

import pytest

from artifact.analysis import accsplit as A
from artifact.analysis.accsplit_obs import Segment
from tests.render.accsplit_fixture import DRAFT, obs


def test_prompt_budget_interval_over_windows_by_hand() -> None:
    o = [obs(window="w1", accepted=4, rounds=4), obs(window="w2", accepted=6, rounds=4),
         obs(window="w3", accepted=6, rounds=3)]  # 1, 1.5, 2 accepted per round
    (row,) = A.by_prompt_budget(o)
    iv = row["accepted_per_round"]
    assert (iv["n"], iv["mean"], iv["sd"]) == (3, 1.5, 0.5)
    half = 4.302653 * 0.5 / math.sqrt(3)  # t(0.975, 2 df)
    assert (iv["low"], iv["high"]) == (pytest.approx(1.5 - half, abs=1e-4),
                                       pytest.approx(1.5 + half, abs=1e-4))
    assert iv["kind"] == "measured" and iv["over"] == "windows" and iv["method"] == "t"
    assert row["pooled_accepted_per_round"]["value"] == pytest.approx(16 / 11)
    assert row["draft_depth"]["value"] == pytest.approx(48 / 11)
    assert [p["value"] for p in row["per_position"]] == pytest.approx([9 / 11, 6 / 11, 3 / 11, 0])
    assert row["windows"] == ["w1", "w2", "w3"] and row["dates"] == ["2026-11-30"]


def test_interval_is_cut_to_zero_where_accepted_per_round_lies() -> None:
    o = [obs(window="w1", accepted=1, rounds=4), obs(window="w2", accepted=2, rounds=4),
         obs(window="w3", accepted=3, rounds=3)]  # 0.25, 0.5, 1: the t-interval reaches -0.37
    (row,) = A.by_prompt_budget(o)
    iv = row["accepted_per_round"]
    assert iv["low"] == 0.0 and iv["high"] == pytest.approx(1.5320, abs=1e-4)


def test_interval_covering_all_of_zero_to_k_is_none() -> None:
    o = [obs(window="w1", accepted=4, rounds=4), obs(window="w2", accepted=8, rounds=4),
         obs(window="w3", accepted=9, rounds=3)]  # 1, 2, 3: t gives [-0.48, 4.48], k = 4
    (row,) = A.by_prompt_budget(o)
    iv = row["accepted_per_round"]
    assert iv["mean"] == 2.0 and iv["low"] is None and iv["high"] is None
    assert iv["ci_reason"] == "the 95% interval covers the whole range [0, 4]"


def test_one_run_gives_no_interval_never_a_zero_width_one() -> None:
    (row,) = A.by_prompt_budget([obs()])
    iv = row["accepted_per_round"]
    assert iv["n"] == 1 and iv["mean"] == 1.5 and iv["low"] is None and iv["high"] is None
    assert iv["ci_reason"] == "fewer than three independent windows"


def test_two_windows_give_no_interval() -> None:
    (row,) = A.by_prompt_budget([obs(window="w1", accepted=4, rounds=4),
                                 obs(window="w2", accepted=8, rounds=4)])
    iv = row["accepted_per_round"]
    assert iv["n"] == 2 and iv["sd"] == pytest.approx(math.sqrt(0.5)) and iv["low"] is None
    assert iv["ci_reason"] == "fewer than three independent windows"


def test_windows_paired_difference_over_prompts() -> None:
    o = [obs(prompt="chat/a", window="w1", accepted=4), obs(prompt="chat/b", window="w1",
                                                            accepted=8),
         obs(prompt="chat/a", window="w2", accepted=6), obs(prompt="chat/b", window="w2",
                                                            accepted=12)]
    w = A.by_window(o)
    (fam,) = w["families"]
    (d,) = fam["pairs"]
    assert (d["a"], d["b"]) == ("w1", "w2")
    assert d["diff"]["n"] == 2 and d["diff"]["mean"] == pytest.approx((0.5 + 1.0) / 2)
    assert d["diff"]["over"] == "prompts"
    assert fam["omnibus"]["statistic"] is None and "3 treatments" in fam["omnibus"]["reason"]
    pooled = {c["window"]: c["pooled_accepted_per_round"]["value"] for c in w["cells"]}
    assert pooled == {"w1": pytest.approx(12 / 8), "w2": pytest.approx(18 / 8)}
    dates = A.by_date(o)
    assert dates["one_date"] and dates["n_dates"] == 1


def test_reconciliation_bias_by_hand() -> None:
    # 9 tokens: first alone (the prefill's), then 4 steps of 2 tokens 100 ms apart -> 5 client
    # steps, 4 of them drafting rounds; the server says 4 accepted over 4 rounds = 1.0
    ev = [0.0, 100.0, 100.1, 200.0, 200.1, 300.0, 300.1, 400.0, 400.1]
    o = obs(event_ms=ev, tokens=9, accepted=4, rounds=4)
    rec = A.reconciliation([o])
    (row,) = rec["rows"]
    est = row["estimators"]
    # the first step is no round: (9 - 1) / (5 - 1) - 1 = 1.0, no bias (uncorrected: -0.2)
    assert est["tokens_per_step"]["bias"]["mean"] == pytest.approx(0.0)
    assert est["tokens_per_step"]["value"]["mean"] == pytest.approx(1.0)
    assert est["tokens_per_step"]["bias"]["over"] == "prompts"
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


def test_length_split_late_acceptance_from_pooled_counts_per_prompt() -> None:
    o = [obs(budget=128, window="w1", accepted=4, rounds=4, text="ab"),
         obs(budget=256, window="w1", accepted=12, rounds=8, text="abc"),
         obs(budget=128, window="w2", accepted=6, rounds=4, text="xy"),
         obs(budget=256, window="w2", accepted=10, rounds=8, text="zz"),
         obs(prompt="chat/b", budget=128, window="w1", accepted=4, rounds=4),
         obs(prompt="chat/b", budget=256, window="w1", accepted=9, rounds=5),
         # a window without the long budget does not enter the short figure
         obs(budget=128, window="w3", accepted=16, rounds=4)]
    (r,) = A.length_split(o)
    assert (r["short_budget"], r["long_budget"], r["windows"], r["k"]) == (128, 256,
                                                                            ["w1", "w2"], 4)
    assert r["short"]["mean"] == pytest.approx(14 / 12) and r["short"]["over"] == "prompts"
    assert r["short"]["method"] == "t-ratio"
    # all requests: (31 - 14) / (21 - 12); chat/a: (22 - 10) / (16 - 8) = 1.5;
    # chat/b: (9 - 4) / (5 - 4) = 5, cut to k = 4
    assert r["late"]["value"] == pytest.approx(17 / 9) and r["late"]["kind"] == "estimated"
    iv = r["late_by_prompt"]
    assert iv["n"] == 2 and iv["mean"] == pytest.approx((1.5 + 4.0) / 2)
    # one prompt's late value was cut to k; two prompts are too few for an interval
    assert r["n_prompts_cut"] == 1 and iv["low"] is None and not r["interval_cut"]
    assert iv["ci_reason"] == "fewer than three independent prompts"
    assert (r["short_is_prefix_of_long"], r["n_pairs"]) == (2, 3)  # chat/b: "" starts ""


def test_late_tokens_undefined_where_the_long_budget_adds_no_round() -> None:
    o = [obs(budget=128, accepted=4, rounds=4), obs(budget=256, accepted=5, rounds=4)]
    (r,) = A.length_split(o)
    assert r["late"]["value"] is None or math.isnan(r["late"]["value"])
    assert r["n_prompts_undefined"] == 1 and r["late_by_prompt"]["n"] == 0


def test_segment_split_validates_on_single_segment_answers() -> None:
    code = Segment(tokens=6, steps=2, ms=200.0)
    prose = Segment(tokens=4, steps=4, ms=400.0)
    both = obs(code=code, prose=prose, accepted=4, rounds=5, event_ms=[0.0] * 10, tokens=10)
    single = obs(prompt="chat/b", event_ms=[0.0, 100.0, 100.1, 200.0], tokens=4, accepted=1,
                 rounds=2)  # 3 client steps, 2 after the first: 3/2 - 1 = 0.5, the server's 0.5
    (row,) = A.segment_split([both, single])
    assert row["n_both_segments"] == 1 and row["n_single_segment"] == 1
    assert row["validation_bias"]["mean"] == pytest.approx(0.0)
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
    kw = {"short": 128, "long": 256}
    o: list[Any] = []
    for w, (a, bs, bl) in {"w1": (1.0, 2.0, 2.5), "w2": (1.5, 2.5, 3.5)}.items():
        o += [obs(prompt="chat/a", budget=128, window=w, accepted=int(a * 4), rounds=4),
              obs(prompt="grounded/b", budget=128, window=w, accepted=int(bs * 4), rounds=4),
              obs(prompt="grounded/b", budget=256, window=w, accepted=int(bl * 4), rounds=4)]
    s = A.shift(o, config=DRAFT, a="chat/a", b="grounded/b", **kw)
    assert s["prompt_step"]["mean"] == pytest.approx(1.0) and s["prompt_step"]["n"] == 2
    assert s["prompt_step"]["over"] == "windows" and s["windows"] == ["w1", "w2"]
    assert s["length_step"]["mean"] == pytest.approx((0.5 + 1.0) / 2)
    assert s["total"]["mean"] == pytest.approx(s["prompt_step"]["mean"] + s["length_step"]["mean"])
    assert s["length_step"]["sd"] == pytest.approx(math.sqrt(0.125))
    with pytest.raises(A.MissingCellError) as err:
        A.shift(o, config=DRAFT, a="chat/a", b="math/zz", **kw)
    assert "\n" not in str(err.value) and "math/zz" in str(err.value)
    assert "128 tokens" in str(err.value)


def test_windows_as_a_family_friedman_and_holm_by_hand() -> None:
    # three prompts rank the three windows alike: w1 < w2 < w3 (chi2 = 6, p = exp(-3))
    o = [obs(prompt=p, window=w, accepted=a + i, rounds=4)
         for i, p in enumerate(("chat/a", "chat/b", "chat/c"))
         for w, a in (("w1", 4), ("w2", 6), ("w3", 10))]
    (fam,) = A.window_families(o)
    om = fam["omnibus"]
    assert (om["n_blocks"], om["n_treatments"], om["df"]) == (3, 3, 2)
    assert om["statistic"] == pytest.approx(6.0) and om["p"] == pytest.approx(math.exp(-3.0))
    assert om["kendall_w"] == pytest.approx(1.0)
    pairs = {(p["a"], p["b"]): p for p in fam["pairs"]}
    assert set(pairs) == {("w1", "w2"), ("w1", "w3"), ("w2", "w3")}  # every pair, not vs w1
    # each difference is the same for every prompt: sd 0, no p; Holm over the finite ones
    assert all(p["p"] is None and p["p_holm"] is None and not p["differs"]
               for p in pairs.values())
    assert pairs[("w1", "w3")]["diff"]["mean"] == pytest.approx(1.5)
    # a prompt missing in one window is no block, but counts in the pairs it has
    (fam2,) = A.window_families([*o, obs(prompt="chat/d", window="w1", accepted=8)])
    assert fam2["prompts"] == ["chat/a", "chat/b", "chat/c"]


def test_holm_pairs_with_noise() -> None:
    o = []
    for i, p in enumerate(("chat/a", "chat/b", "chat/c", "chat/d")):
        for j, (w, a) in enumerate((("w1", 4), ("w2", 5), ("w3", 12))):
            o.append(obs(prompt=p, window=w, accepted=a + (i * (j + 1)) % 3, rounds=4))
    (fam,) = A.window_families(o)
    ps = [p["p"] for p in fam["pairs"]]
    holm = sorted(zip(ps, [p["p_holm"] for p in fam["pairs"]], strict=True))
    assert holm[0][1] == pytest.approx(min(1.0, 3 * holm[0][0]))
    assert all(p is not None for p, _ in holm)
    assert all(q >= p for p, q in holm) and fam["n_differ"] == sum(
        p["differs"] for p in fam["pairs"])
    assert any(p["differs"] for p in fam["pairs"])  # w3 is far above the others


def test_acceptance_figures_differ_by_weighting_by_hand() -> None:
    o = [obs(prompt="chat/a", window="w1", accepted=2, rounds=1),
         obs(prompt="chat/a", window="w2", accepted=10, rounds=10),
         obs(prompt="chat/b", window="w1", accepted=3, rounds=1),
         obs(prompt="chat/b", window="w2", accepted=0, rounds=0)]  # no round: no ratio
    fig = A.acceptance_figures(o)
    assert fig["headline"] == "pooled" and set(fig["definitions"]) == {
        "pooled", "mean_of_windows", "mean_of_prompts", "mean_of_requests"}
    (r,) = fig["rows"]
    assert r["pooled"]["mean"] == pytest.approx(15 / 12) and r["pooled"]["method"] == "t-ratio"
    assert r["mean_of_windows"]["mean"] == pytest.approx((5 / 2 + 10 / 10) / 2)
    assert r["mean_of_prompts"]["mean"] == pytest.approx((12 / 11 + 3 / 1) / 2)
    assert r["mean_of_requests"]["mean"] == pytest.approx(((2 + 1) / 2 + 3) / 2)
    assert (r["n_requests"], r["n_prompts"], r["n_windows"]) == (4, 2, 2)
    assert r["mean_of_windows"]["over"] == "windows" and r["pooled"]["over"] == "prompts"


def test_timing_statistics_leave_out_loaded_windows_and_contended_requests() -> None:
    ev = [0.0, 100.0, 100.1, 200.0, 200.1]  # 1 accepted per round after the first step
    o = [obs(prompt="chat/a", event_ms=ev, tokens=5, accepted=2, rounds=2),
         obs(prompt="chat/b", event_ms=[0.0, 100.0, 200.0, 300.0, 400.0], tokens=5,
             accepted=2, rounds=2, contended=True),
         obs(prompt="chat/c", window="w2", event_ms=[0.0, 100.0, 200.0, 300.0, 400.0],
             tokens=5, accepted=2, rounds=2, quiet_window=False)]
    (row,) = A.reconciliation(o)["rows"]
    assert (row["n_requests"], row["n_not_quiet"], row["windows"]) == (1, 2, ["w1"])
    assert row["estimators"]["tokens_per_step"]["bias"]["mean"] == pytest.approx(0.0)
    (pb,) = [r for r in A.by_prompt_budget(o) if r["prompt_id"] == "chat/b"]
    assert pb["ms_per_step"]["n"] == 0 and pb["accepted_per_round"]["n"] == 1  # counts kept


def test_batch_contrast_within_window_with_and_without_control() -> None:
    o = []
    for p in ("chat/a", "chat/b"):
        o += [obs(prompt=p, window="w6", accepted=6, rounds=4, predicted_ms=1000.0),
              obs(prompt=p, window="w6", batch=2, accepted=4, rounds=4, predicted_ms=2000.0),
              obs(prompt=p, window="w6", config="no draft", tokens=128, predicted_ms=4000.0),
              obs(prompt=p, window="w6", batch=2, config="no draft", tokens=128,
                  predicted_ms=4000.0),
              obs(prompt=p, window="w2", accepted=6, rounds=4),
              obs(prompt=p, window="w2", batch=2, accepted=5, rounds=4)]
    got = {r["window"]: r for r in A.batch_contrasts(o)}
    w6, w2 = got["w6"], got["w2"]
    assert w6["acceptance_diff"]["mean"] == pytest.approx(-0.5)
    assert w6["acceptance_diff"]["over"] == "prompts" and w6["has_control"]
    assert w6["speedup"] is not None and w6["speedup"]["mean"] == pytest.approx(2.0)
    assert w6["speedup_b1"] is not None and w6["speedup_b1"]["mean"] == pytest.approx(4.0)
    assert not w2["has_control"] and w2["speedup"] is None and "no no-draft control" in w2["note"]
    rows = A.batch_split([x for x in o if x.window == "w6"])
    assert all(r["quiet"] for r in rows)


def _result(window: str, contention: dict[str, Any] | None, contended: bool | None) -> Any:
    from artifact import records
    return records.Result(
        prompt_id="chat/a", domain="chat", prompt_sha256="", repeat=0, attempt=1,
        server_start=1, sent_unix_s=0.0, queue_ms=0.0, ttft_ms=1.0, e2e_ms=2.0, event_ms=[],
        timings=records.Timings(prompt_n=1, prompt_ms=1.0, predicted_n=2, predicted_ms=1.0,
                                predicted_per_second=2.0, cache_n=0),
        stop_type="limit", alpha=None, window=window, contention=contention,
        contended=contended)


def _run_on(cpu: str, *included: Any) -> Any:
    from types import SimpleNamespace
    return SimpleNamespace(included=list(included), desc=SimpleNamespace(
        environment={"cpu_model": cpu, "cpu_cores": 2, "binary_sha256": "ab" * 32}))


def test_window_load_from_record_declaration_or_nothing() -> None:
    runs = [_run_on("X", _result("w6", {"foreign_cores": 0.01}, False),
                    _result("w6", {"foreign_cores": 0.9}, True)),
            _run_on("X", _result("w1", None, None)),
            _run_on("X", _result("w4", None, None)),
            _run_on("X", _result("w9", None, None))]
    load = A.window_load(runs)
    assert load["w6"]["source"] == "record" and load["w6"]["quiet"]
    assert load["w6"]["n_contended"] == 1
    assert load["w6"]["foreign_cores_median"] == pytest.approx(0.455)
    assert load["w6"]["foreign_cores_max"] == pytest.approx(0.9)
    assert load["w1"]["foreign_cores_median"] is None  # no record: null, never zero
    assert not any(x["other_machine"] for x in load.values())
    assert load["w1"] == {**load["w1"], "source": "declared", "quiet": False}
    assert load["w4"]["quiet"] and load["w4"]["source"] == "declared"
    assert not load["w9"]["quiet"] and load["w9"]["source"] == "none"


def test_timing_windows_pool_one_machine() -> None:
    """Quiet windows on two machines: the machine with more quiet windows keeps its timings;
    the other's are marked not quiet, other_machine, with the reason."""
    runs = [_run_on("Intel", _result("w4", None, None)),
            _run_on("Intel", _result("w5", None, None)),
            *(_run_on("AMD", _result(w, {"foreign_cores": 0.01}, False))
              for w in ("w6", "w7", "w8")),
            _run_on("AMD", _result("w1", None, None))]  # loaded: stays not quiet, not moved
    load = A.window_load(runs)
    assert [w for w, x in sorted(load.items()) if x["quiet"]] == ["w6", "w7", "w8"]
    assert load["w4"]["other_machine"] and "measured on Intel (2 cores)" in load["w4"]["reason"]
    assert not load["w1"]["other_machine"] and not load["w1"]["quiet"]
    assert A.window_machines(runs)["w6"] == "AMD (2 cores)"
    # one machine's windows are never moved, however many there are
    one = A.window_load([_run_on("Intel", _result("w4", None, None)),
                         _run_on("Intel", _result("w6", {"foreign_cores": 0.0}, False))])
    assert one["w4"]["quiet"] and one["w6"]["quiet"]


def test_restarted_ngram_run_is_set_aside_with_a_warning(tmp_path: Any) -> None:
    import shutil

    from artifact import paths
    for rid in ("w1-b1-n128-ngram-mod", "w1-b1-n128-draft-q2k"):
        shutil.copytree(paths.RUNS / rid, tmp_path / rid)
    loaded = A.load(tmp_path)
    assert [s["run_id"] for s in loaded.set_aside] == ["w1-b1-n128-ngram-mod"]
    assert {o.config for o in loaded.obs} == {DRAFT}  # nothing of the restarted run
    assert any("set aside" in w and "w1-b1-n128-ngram-mod" in w for w in loaded.warnings)
    assert not loaded.load["w1"]["quiet"]  # w1 was measured under load (declared)
