"""The core study's control offset (issue 44, item 1): pooled over prompts, the sign test over
groups, and whether the interleave's order or a request's place causes it."""

from __future__ import annotations

import json
import statistics

import pytest
from scipy import stats

from artifact import paths
from artifact.analysis import core as C
from artifact.analysis import core_control as K
from artifact.analysis.core_control import Pair


def test_the_offset_is_pooled_over_prompts_not_groups() -> None:
    # prompt a measured by two groups (1.02, 1.04: 1.03), b by one (1.0): two units
    got = K.pooled({"g1": {"a": 1.02, "b": 1.0}, "g2": {"a": 1.04}})
    assert got["n"] == 2 and got["mean"] == pytest.approx(1.015)
    half = 12.706205 * statistics.stdev([1.03, 1.0]) / 2 ** 0.5  # t(0.975, 1)
    assert (got["lo"], got["hi"]) == pytest.approx((1.015 - half, 1.015 + half), abs=1e-4)


def test_six_groups_of_six_above_one_is_p_one_in_thirty_two() -> None:
    assert K.sign_test([1.015, 1.0083, 1.0025, 1.0136, 1.008, 1.0104]) == {
        "above": 6, "n": 6, "p": 0.0312}  # 2 x (1/2)^6
    assert K.sign_test([1.01, 0.99])["p"] == 1.0


def test_the_order_test_compares_control_first_with_control_after() -> None:
    pairs = [Pair("g", "a", r, c, n) for r, c, n in
             [(1.0, 0, 1), (1.02, 0, 3), (1.01, 2, 0), (1.03, 5, 1)]]
    got = K.order_test(pairs)
    assert got["control_first"] == {"mean": 1.01, "n": 2}
    assert got["control_after"] == {"mean": 1.02, "n": 2}
    # Welch: t = -0.01 / sqrt(0.0002/2 + 0.0002/2) = -0.7071 on 2 degrees of freedom
    assert got["p"] == pytest.approx(2 * stats.t.sf(0.70711, 2), abs=1e-4)


def test_the_place_test_finds_a_slope_that_is_there() -> None:
    pairs = [Pair("g", str(i), 1 + 0.01 * (c - n) + e, c, n) for i, (c, n, e) in
             enumerate([(0, 1, 0.001), (2, 0, -0.001), (1, 3, 0.0), (5, 0, 0.001),
                        (0, 4, -0.001)])]
    got = K.place_test(pairs)
    assert got["slope"] == pytest.approx(0.01, abs=5e-4) and got["p"] < 0.001


def test_the_committed_order_test_agrees_with_a_recomputation_from_the_raw_records() -> None:
    """From results.jsonl directly: the first quiet record of each (prompt, pass) of the no-draft
    run and the control, their time per token, control first against after."""
    doc = C.build(paths.CORE_RUNS)
    first, after, xs, ys = [], [], [], []
    for g in doc["groups"]:
        runs = {}
        for d in ("none", "control"):
            kept: dict[tuple[str, int], dict] = {}
            path = paths.CORE_RUNS / f"{g['target']}-{g['task']}-{d}" / "results.jsonl"
            for line in path.read_text().splitlines():
                r = json.loads(line)
                if not r["contended"] and r["timings"]["predicted_n"] >= 2:
                    kept.setdefault((r["prompt_id"], r["repeat"]), r)
            runs[d] = kept
        for key, c in runs["control"].items():
            n = runs["none"].get(key)
            if n is None:
                continue
            ms = [r["timings"]["predicted_ms"] / (r["timings"]["predicted_n"] - 1)
                  for r in (n, c)]
            ratio = ms[0] / ms[1]
            (first if c["round_pos"] < n["round_pos"] else after).append(ratio)
            xs.append(c["round_pos"] - n["round_pos"])
            ys.append(ratio)
    order, place = doc["control"]["order"], doc["control"]["place"]
    assert (order["control_first"]["n"], order["control_after"]["n"]) == (len(first), len(after))
    assert order["p"] == pytest.approx(
        stats.ttest_ind(first, after, equal_var=False).pvalue, abs=1e-4)
    assert place["p"] == pytest.approx(stats.linregress(xs, ys).pvalue, abs=1e-4)
    means = doc["control"]["group_means"]
    assert len(means) == 6 and doc["control"]["sign_test"]["above"] == sum(
        1 for m in means.values() if m > 1)
