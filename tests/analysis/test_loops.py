"""Repetition loops (issue 44, item 3): self-repetition and copy share of one output, on
hand-made piece lists, and the rule that sets a looping output apart."""

from __future__ import annotations

import pytest

from artifact.analysis import loops


def test_a_sentence_repeated_until_the_budget_is_a_loop() -> None:
    sentence = ["The", " cat", " sat", " on", " the", " mat", "."]
    s = loops.measure(sentence * 6 + [""], None)  # the closing event carries no token
    assert s.tokens == 42
    # the first cycle and the first N pieces of the second are new; the rest repeats
    assert s.self_repetition == pytest.approx((42 - 7 - loops.N) / 42, abs=1e-4)
    assert s.loops and s.copy_share is None


def test_an_answer_that_copies_its_prompt_copies_without_repeating_itself() -> None:
    prompt = "def add(a, b):\n    return a + b\n"
    pieces = ["def", " add", "(", "a", ",", " b", "):", "\n", "   ", " return", " a", " +",
              " b", "\n"]
    s = loops.measure(pieces, prompt)
    assert s.self_repetition == 0.0 and not s.loops
    assert s.copy_share == pytest.approx((len(pieces) - loops.N) / len(pieces), abs=1e-4)


def test_the_rule_is_the_committed_share_inclusive() -> None:
    assert loops.Shares(10, loops.LOOP_SHARE, None).loops
    assert not loops.Shares(10, loops.LOOP_SHARE - 0.01, None).loops
    assert loops.measure([], "x") == loops.Shares(0, 0.0, 0.0)


def test_a_context_seen_before_with_another_continuation_does_not_count() -> None:
    # "a b c d" is followed by "x", then by "y": the second continuation is new
    assert loops.self_repetition(list("abcdxabcdy")) == 0.0
    assert loops.self_repetition(list("abcdxabcdx")) == pytest.approx(0.1)
