"""Step grouping (client side) and the code/prose segment locator."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from artifact.analysis import segments as seg
from artifact.analysis import steps

DATA = Path(__file__).resolve().parent.parent / "data" / "accsplit_events.json"


def test_recorded_bursts_group_into_the_servers_steps() -> None:
    """Real event times: bursts of sub-millisecond gaps, then a step gap of a forward pass.

    Every token after the first comes from a verification step; the server's counters say how
    many: answer tokens - accepted (the first token, from prefill, is a step of its own).
    """
    recs = json.loads(DATA.read_text())["records"]
    assert recs
    for r in recs:
        ev = r["event_ms"][: r["predicted_n"]]
        gaps = [b - a for a, b in itertools.pairwise(ev)]
        s = steps.group_steps(ev)
        assert s.tokens == r["predicted_n"]
        assert s.steps == r["predicted_n"] - r["accepted"], r["prompt_id"]
        if r["accepted"]:
            assert min(gaps) < 1.0 < steps.FLOOR_MS  # bursts are really sub-millisecond
            assert s.steps - 1 == r["rounds"]  # every step after the first verified a draft
        assert s.threshold_ms < min(g for g in gaps if g >= s.threshold_ms)


def test_hiccup_inside_a_burst_is_not_a_step_when_steps_are_slow() -> None:
    ev = [0.0, 400.0, 400.1, 404.5, 404.6, 800.0, 1200.0, 1200.2]
    s = steps.group_steps(ev)  # the 4.4 ms hiccup is far below a quarter of a 400 ms step
    assert s.steps == 4 and s.starts == (0, 1, 5, 6)
    assert s.step_gap_p50_ms == pytest.approx(400.0)


def test_no_draft_every_token_is_a_step_and_estimators_read_zero() -> None:
    ev = [float(25 * i) for i in range(11)]
    s = steps.group_steps(ev)
    e = steps.estimates(s)
    assert s.steps == 11 and s.tokens_per_step == 1.0
    assert e.tokens_per_step == 0.0
    assert e.tps_x_gap_p50 == pytest.approx(0.0) and e.tps_x_gap_mean == pytest.approx(0.0)


def test_estimators_by_hand() -> None:
    # steps of 3, 1, 3 tokens after the first: 8 tokens, 4 steps, 3 step gaps of 100 ms
    ev = [0.0, 100.0, 100.2, 100.4, 200.0, 300.0, 300.1, 300.2]
    s = steps.group_steps(ev)
    assert (s.steps, s.step_gap_p50_ms, s.step_gap_mean_ms) == (4, pytest.approx(100.0),
                                                                 pytest.approx(99.8667, rel=1e-4))
    e = steps.estimates(s)
    # the first step (the prefill's token) is no drafting round: (8 - 1) / (4 - 1) - 1
    assert e.tokens_per_step == pytest.approx(7 / 3 - 1)
    assert e.tps_x_gap_p50 == pytest.approx(7 / 300.2 * 100.0 - 1)
    assert e.tps_x_gap_mean == pytest.approx(7 / 300.2 * (299.6 / 3) - 1)


def test_empty_and_single_token_requests_are_nan_not_zero() -> None:
    assert steps.group_steps([]).steps == 0
    one = steps.group_steps([5.0])
    assert one.steps == 1 and math.isnan(one.decode_tok_per_s)
    assert math.isnan(one.step_gap_p50_ms)


@pytest.mark.parametrize(
    ("events", "want"),
    [
        (["Just ", "prose", "."], ("prose", "prose", "prose")),  # no fences
        (["```", "python\n", "x = 1\n", "```", "\nok"],
         ("code", "code", "code", "code", "prose")),
        (["Text\n", "```py\n", "a\n", "b\n"], ("prose", "code", "code", "code")),  # unclosed
        (["Here:\n", "``", "`py", "thon\nx\n", "``", "`\n", "end"],  # fences split over events
         ("prose", "code", "code", "code", "code", "code", "prose")),
        (["a", "", "```", "", "b", "```", ""],  # empty events: where they arrive
         ("prose", "code", "code", "code", "code", "code", "prose")),
        (["use `x` here"], ("prose",)),  # inline code is prose
    ],
)
def test_segment_locator(events: list[str], want: tuple[str, ...]) -> None:
    assert seg.locate(events) == want


def test_longer_fence_inside_closes_only_with_as_many_backticks() -> None:
    text = "````\n```\ninner\n```\n````\nafter"
    assert seg.code_spans(text) == [(0, text.index("\nafter"))]
