"""Verdicts by scope, on hand-made claim sets (no runs, no server)."""

from __future__ import annotations

import pytest

from artifact.claims import Claim
from artifact.reproduce import compare


def numeric(scope: str, *, rel: float | None = 0.1, abs_: float | None = None,
            runs: tuple[str, ...] = ("r1",)) -> Claim:
    return Claim(id=f"{scope}-x", quantity="vars:x", expected=10.0, rel=rel, abs=abs_,
                 reason="r", scope=scope, runs=runs,
                 noise="vars:noise" if scope == "hardware-bound" else "")


def side(x: float | None, half: float = 0.5, noise: float = 1.0) -> dict[str, object]:
    """The computed variables of one side: ``x`` with its 95 % interval beside it (``x_ci``)
    and the study's noise (a half-width of 1, the hardware-bound claims' margin)."""
    if x is None:
        return {"x": None, "noise": noise}
    return {"x": x, "x_ci": [x - half, x + half], "noise": noise}


def qualitative(holds: tuple[tuple[str, float | str], ...]) -> Claim:
    return Claim(id="q", quantity="summary:s.*.r", expected=None, scope="qualitative",
                 statement="every r is below 1", reason="r", holds=holds, runs=("r1",))


def verdict(c: Claim, a: float | None, b: float | None, *, same: bool,
            not_run: tuple[str, ...] = ()) -> str:
    return compare.judge(c, {}, side(a), {}, side(b), same_hardware=same,
                         not_run=not_run).verdict


# (scope, same hardware, B's value with A = 10 and rel 0.1; hardware-bound: both sides +-0.5 at
# 95 %, margin +-1) -> verdict
CASES = [
    ("hardware-independent", False, 10.5, "reproduced"),
    ("hardware-independent", False, 12.0, "failed"),
    ("hardware-independent", True, 12.0, "failed"),
    ("hardware-bound", False, 10.2, "reproduced"),
    ("hardware-bound", False, 10.9, "cannot tell"),
    ("hardware-bound", True, 10.9, "cannot tell"),
    ("hardware-bound", False, 25.0, "differs with hardware"),
    ("hardware-bound", False, 2.0, "differs with hardware"),
    ("hardware-bound", True, 25.0, "failed"),
    ("noise", False, 14.0, "noise differs"),
    ("noise", True, 14.0, "failed"),
    ("noise", True, 9.5, "reproduced"),
]


@pytest.mark.parametrize(("scope", "same", "b", "expected"), CASES)
def test_a_numeric_claim_is_judged_by_its_scope(scope: str, same: bool, b: float,
                                                 expected: str) -> None:
    assert verdict(numeric(scope), 10.0, b, same=same) == expected


def test_the_tolerance_is_taken_around_the_reference_value() -> None:
    # the ledger says 10 +- 10%, but A (cut to the reproduction's prompts) has 20: B is judged
    # against A, so 21.5 is within 10% of 20 although far from the ledger's 10
    j = compare.judge(numeric("hardware-independent"), {}, {"x": 20.0}, {}, {"x": 21.5},
                      same_hardware=True)
    assert j.verdict == "reproduced" and j.band == pytest.approx((18.0, 22.0))
    c = numeric("hardware-independent", rel=None, abs_=0.5)
    assert compare.judge(c, {}, {"x": 3.0}, {}, {"x": 3.6}, same_hardware=False).verdict == \
        "failed"
    assert compare.limit(numeric("noise", rel=None), 5.0) == 0.0  # no tolerance: exact


def test_a_string_claim_is_compared_exactly() -> None:
    c = Claim(id="best", quantity="vars:x", expected="ngram-mod", scope="hardware-bound")
    same = compare.judge(c, {}, {"x": "ngram-mod"}, {}, {"x": "ngram-mod"}, same_hardware=False)
    other = compare.judge(c, {}, {"x": "ngram-mod"}, {}, {"x": "ngram-cache"},
                          same_hardware=False)
    assert (same.verdict, other.verdict) == ("reproduced", "failed")


def test_missing_values_and_missing_runs() -> None:
    c = numeric("hardware-bound")
    assert verdict(c, 10.0, None, same=False) == "missing"
    assert verdict(c, None, 10.0, same=False) == "missing"
    assert verdict(c, None, None, same=False, not_run=("r1",)) == "not run"
    assert compare.missing_runs(numeric("noise", runs=("final-*", "base")),
                                ["final-a", "final-b", "base", "other"],
                                ["final-a", "base"]) == ("final-b",)


def test_a_qualitative_claim_must_hold_on_any_hardware() -> None:
    c = qualitative((("lt", 1.0),))
    a = {"s": {"r1": {"r": 0.5}, "r2": {"r": 0.7}}}
    fine = {"s": {"r1": {"r": 0.6}, "r2": {"r": 0.9}}}
    broken = {"s": {"r1": {"r": 0.6}, "r2": {"r": 1.1}}}
    for same in (True, False):
        assert compare.judge(c, a, {}, fine, {}, same_hardware=same).verdict == "holds"
        j = compare.judge(c, a, {}, broken, {}, same_hardware=same)
        assert j.verdict == "violated" and j.failing and "1.1 breaks < 1" in j.why
    assert compare.judge(c, a, {}, {"s": {}}, {}, same_hardware=False).verdict == "missing"
    between = qualitative((("lt", "summary:cap"),))
    assert compare.judge(between, {**a, "cap": 1.0}, {}, {**fine, "cap": 0.8}, {},
                         same_hardware=False).verdict == "violated"  # 0.9 is not below 0.8


def test_strict_fails_on_exactly_the_failures() -> None:
    ledger = [numeric("hardware-bound"), numeric("hardware-independent"), numeric("noise"),
              qualitative((("lt", 1.0),))]
    a_vars = side(10.0)
    b_vars = side(30.0)
    summary = {"s": {"r1": {"r": 0.5}}}
    other = compare.judge_all(ledger, summary, a_vars, summary, b_vars, same_hardware=False,
                              runs_a=["r1"], runs_b=["r1"])
    assert [j.verdict for j in other] == ["differs with hardware", "failed", "noise differs",
                                          "holds"]
    assert [j.claim.id for j in compare.strict_failures(other)] == ["hardware-independent-x"]
    same = compare.judge_all(ledger, summary, a_vars, summary, b_vars, same_hardware=True,
                             runs_a=["r1"], runs_b=["r1"])
    assert [j.verdict for j in compare.strict_failures(same)] == ["failed"] * 3
    subset = compare.judge_all(ledger, summary, a_vars, summary, b_vars, same_hardware=True,
                               runs_a=["r1", "r2"], runs_b=["r2"])
    assert {j.verdict for j in subset} == {"not run"} and not compare.strict_failures(subset)
    counts = compare.counts(other)
    assert set(counts) == set(compare.VERDICTS) and sum(counts.values()) == len(ledger)


def test_an_upper_only_noise_claim_is_reproduced_by_a_quieter_rerun() -> None:
    c = Claim(id="floor", quantity="vars:x", expected=54.0, abs=15.0, upper_only=True,
              reason="r", scope="noise", runs=("r1",))
    assert verdict(c, 54.0, 3.0, same=True) == "reproduced"
    assert verdict(c, 54.0, 70.0, same=True) == "failed"
    assert verdict(c, 54.0, 70.0, same=False) == "noise differs"
