"""Issue 45, item 2: hardware-bound claims judged as an interval against an interval, by
equivalence against the study's own noise, with three answers; hardware-independent ones
identical, or within their own interval where the protocol is not deterministic."""

from __future__ import annotations

import math

import pytest

from artifact.claims import Claim
from artifact.reproduce import compare, verdict
from artifact.reproduce.verdict import Interval

Z90 = 1.6448536269514722  # the normal quantile of a two-sided 90 % interval


def at90(centre: float, half: float) -> Interval:
    return Interval(lo=centre - half, hi=centre + half, level=0.90)


@pytest.mark.parametrize(("b", "half_b", "margin", "answer"), [
    (1.00, 0.02, 0.10, "reproduced"),    # 90 % of B - A well inside +-0.10
    (1.30, 0.02, 0.10, "differs"),       # 95 % of B - A wholly above +0.10
    (0.70, 0.02, 0.10, "differs"),       # ... or wholly below -0.10
    (1.10, 0.02, 0.10, "cannot tell"),   # straddles the margin
    (1.00, 0.50, 0.10, "cannot tell"),   # too wide to say anything
    (1.06, 0.01, 0.05, "cannot tell"),   # 95 % excludes 0 but not wholly beyond the margin
])
def test_the_three_answers_on_hand_made_intervals(b: float, half_b: float, margin: float,
                                                  answer: str) -> None:
    a = Interval(lo=0.98, hi=1.02)
    got = verdict.equivalence(1.0, a, b, Interval(lo=b - half_b, hi=b + half_b), margin=margin)
    assert got.answer == answer, got.why


def test_the_margin_edge_counts_as_inside_and_just_beyond_it_does_not() -> None:
    # each side's 90 % half-width h: the difference's is h * sqrt(2), so a margin of exactly
    # d + h * sqrt(2) puts the 90 % interval's end on the edge
    h, d = 0.01, 0.02
    edge = d + h * math.sqrt(2)
    a, b = at90(1.0, h), at90(1.0 + d, h)
    assert verdict.equivalence(1.0, a, 1.0 + d, b, margin=edge).answer == "reproduced"
    assert verdict.equivalence(1.0, a, 1.0 + d, b, margin=edge * 0.999).answer == "cannot tell"
    # "differs" is strict: a 95 % interval whose low end touches the margin is not beyond it
    far = verdict.equivalence(1.0, a, 1.5, at90(1.5, h), margin=0.1)
    assert far.answer == "differs" and far.ci95 is not None
    touching = verdict.equivalence(1.0, a, 1.5, at90(1.5, h), margin=far.ci95.lo)
    assert touching.answer == "cannot tell"


def test_a_point_on_one_side_cannot_tell() -> None:
    a = Interval(lo=0.9, hi=1.1)
    assert verdict.equivalence(1.0, a, 1.0, None, margin=0.1).answer == \
        "cannot tell (no interval)"
    assert verdict.equivalence(1.0, None, 5.0, a, margin=0.1).answer == \
        "cannot tell (no interval)"


def test_the_interval_is_found_beside_the_value_at_its_level() -> None:
    core = Claim(id="c", quantity="vars:cells.x.speedup.mean", expected=1.0)
    got = verdict.interval_of(core, {}, {"cells": {"x": {"speedup": {
        "mean": 1.0, "lo": 0.9, "hi": 1.1, "n": 30}}}})
    assert got == Interval(lo=0.9, hi=1.1, level=0.95)
    gap = Claim(id="g", quantity="vars:gap.value", expected=1.0)
    both = {"gap": {"value": 3.0, "ci90": [1.0, 5.0], "ci95": [0.5, 5.5]}}
    assert verdict.interval_of(gap, {}, both) == Interval(lo=0.5, hi=5.5, level=0.95)
    pooled = Claim(id="p", quantity="vars:by.pooled", expected=2.6)
    assert verdict.interval_of(pooled, {}, {"by": {"pooled": 2.6, "pooled_ci": {
        "low": 2.2, "high": 3.0}}}) == Interval(lo=2.2, hi=3.0)
    point = Claim(id="b", quantity="vars:best.speedup", expected=1.0)
    assert verdict.interval_of(point, {}, {"best": {"speedup": 0.95, "n": 30}}) is None


def hw_bound(noise: str = "vars:noise") -> Claim:
    return Claim(id="speed", quantity="vars:s.mean", expected=1.0, rel=0.08, reason="r",
                 scope="hardware-bound", noise=noise, runs=("r",))


def cell(mean: float, half: float = 0.02) -> dict[str, object]:
    return {"s": {"mean": mean, "lo": mean - half, "hi": mean + half}, "noise": {
        "lo": 0.95, "hi": 1.05}}


def test_a_hardware_bound_claim_says_its_speed_ratio_and_margin() -> None:
    j = compare.judge(hw_bound(), {}, cell(1.0), {}, cell(1.01), same_hardware=False,
                      speed_ratio=1.37)
    assert j.verdict == "reproduced" and "x1.37" in j.why
    assert j.equivalence is not None and j.equivalence.margin == pytest.approx(0.05)
    assert j.band == pytest.approx((0.95, 1.05))  # A +- the margin it was judged by
    far = compare.judge(hw_bound(), {}, cell(1.0), {}, cell(1.3), same_hardware=False,
                        speed_ratio=None)
    assert far.verdict == "differs with hardware" and "no calibrated speed ratio" in far.why
    assert compare.judge(hw_bound(), {}, cell(1.0), {}, cell(1.3),
                         same_hardware=True).verdict == "failed"
    lost = compare.judge(hw_bound(noise="vars:nowhere"), {}, cell(1.0), {}, cell(1.01),
                         same_hardware=False)
    assert lost.verdict == "cannot tell" and "no margin" in lost.why
    point = compare.judge(hw_bound(), {}, cell(1.0), {}, {"s": {"mean": 1.05}},
                          same_hardware=True)
    assert point.verdict == "cannot tell (no interval)" and not point.failing
    assert "within rel 0.08" in point.why  # the points said beside it
    # points beyond the ledger's band differ even without intervals (on the same hardware: fail)
    far = compare.judge(hw_bound(), {}, cell(1.0), {}, {"s": {"mean": 1.3}},
                        same_hardware=True)
    assert far.verdict == "failed" and far.failing and "beyond rel 0.08" in far.why
    other = compare.judge(hw_bound(), {}, cell(1.0), {}, {"s": {"mean": 1.3}},
                          same_hardware=False)
    assert other.verdict == "differs with hardware" and not other.failing


def exact(tol: float | None = None) -> Claim:
    return Claim(id="alpha", quantity="vars:a", expected=0.99, abs=tol, reason="r",
                 scope="hardware-independent", noise="exact",
                 wider_because="floating point" if tol else "", runs=("r",))


def test_an_exact_quantity_must_be_identical() -> None:
    same = compare.judge(exact(), {}, {"a": 0.994939}, {}, {"a": 0.994939},
                         same_hardware=False)
    assert (same.verdict, same.why) == ("reproduced", "identical")
    assert compare.judge(exact(), {}, {"a": 0.994939}, {}, {"a": 0.994940},
                         same_hardware=False).verdict == "failed"
    # the ledger's reasoned tolerance (wider_because) is the only leeway
    near = compare.judge(exact(0.02), {}, {"a": 0.99}, {}, {"a": 0.985}, same_hardware=False)
    assert near.verdict == "reproduced" and near.why.startswith("not identical")
    assert compare.judge(exact(0.02), {}, {"a": 0.99}, {}, {"a": 0.9},
                         same_hardware=False).verdict == "failed"


def test_a_non_deterministic_quantity_must_lie_within_its_own_interval() -> None:
    five = Claim(id="acc5", quantity="vars:acc.value", expected=0.5, abs=0.01, reason="r",
                 scope="hardware-independent", noise="vars:acc", wider_because="w",
                 runs=("r",))
    a = {"acc": {"value": 0.50, "lo": 0.44, "hi": 0.56}}
    inside = compare.judge(five, {}, a, {}, {"acc": {"value": 0.55}}, same_hardware=False)
    assert inside.verdict == "reproduced" and "its own interval" in inside.why
    assert compare.judge(five, {}, a, {}, {"acc": {"value": 0.57}},
                         same_hardware=False).verdict == "failed"
