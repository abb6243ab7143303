"""The core study's predictions (issue 29): the cost fit recovers known costs, the per-request
prediction follows from them, and the committed predictions are what the committed
calibration runs give."""

from __future__ import annotations

import json
import random

import pytest

from artifact import paths
from artifact.analysis import prediction as P
from artifact.analysis.prediction import Cost, Req


def _rounds(c1: float, a: float, b: float, rng: random.Random) -> list[Req]:
    """Synthetic-acceptance requests of 128 tokens at k = 1..64, timed by the true costs."""
    out = []
    for k in (1, 2, 4, 8, 16, 32, 64):
        d = max(1, 120 // (k + 1))
        g = d * k
        plain = 127 - g - d
        ms = plain * c1 + d * a + b * (g + d)
        out.append(Req(f"p{k}", 128, ms * (1 + rng.uniform(-1e-3, 1e-3)), g, g, d))
    return out


def test_the_fit_recovers_the_costs_it_was_made_from() -> None:
    rng = random.Random(0)
    none = [Req("p", 128, 127 * 19.0, 0, 0, 0)]
    rounds = _rounds(19.0, 9.0, 10.0, rng)
    draft = [Req("p", 128, 7 * 19.0 + 30 * (9.0 + 10.0 * 4) + 30 * 33.0, 90, 90, 30)]
    c = P.fit_cost(none, rounds, draft)
    assert (c.c1, c.a, c.b, c.q) == pytest.approx((19.0, 9.0, 10.0, 33.0), rel=5e-3)


def test_a_prediction_pays_only_when_accepted_tokens_outweigh_the_verified_width() -> None:
    cost = Cost(c1=20.0, a=10.0, b=10.0, q=40.0)
    # 4 rounds of 16 drafted tokens, 15 accepted each: 60 of 127 tokens for 4 wide rounds
    copy = Req("edit", 128, 0.0, 64, 60, 4)
    # the same rounds, 1 accepted each: the width is paid, little is saved
    miss = Req("chat", 128, 0.0, 64, 4, 4)
    assert P.speedup(copy, cost, model_draft=False) > 1 > P.speedup(miss, cost, model_draft=False)
    # a draft model's round cost is added only to draft-model runs
    dm = Req("code", 128, 0.0, 90, 60, 30)
    assert P.speedup(dm, cost, model_draft=True) < P.speedup(dm, cost, model_draft=False)
    # nothing drafted: the prediction is exactly 1
    assert P.speedup(Req("x", 128, 0.0, 0, 0, 0), cost, model_draft=False) == 1.0


def test_a_cell_interval_holds_its_point_and_is_for_new_prompts() -> None:
    rng = random.Random(1)
    none = [Req(f"n{i}", 128, 127 * (19.0 + rng.uniform(-0.5, 0.5)), 0, 0, 0) for i in range(6)]
    rounds = _rounds(19.0, 9.0, 10.0, rng)
    draft = [Req("d", 128, 7 * 19.0 + 30 * 49.0 + 30 * 33.0, 90, 90, 30)]
    cost = P.fit_cost(none, rounds, draft)
    pilot = [Req(f"e{i}", 128, 0.0, 64, 40 + 4 * i, 4) for i in range(6)]
    cell = P.predict_cell(pilot, (none, rounds, draft), cost, model_draft=False,
                          rng=random.Random(2))
    assert cell["lo"] < cell["predicted"] < cell["hi"]
    per = list(cell["per_prompt"].values())
    assert min(per) < cell["predicted"] < max(per)
    assert cell["sign"] == ("pays" if cell["predicted"] > 1 else "loses")
    assert cell["pilot_alpha"] == pytest.approx(sum(40 + 4 * i for i in range(6)) / 384, abs=1e-4)


def test_the_committed_predictions_are_what_the_committed_calibration_runs_give() -> None:
    want = json.loads((paths.EXPERIMENTS / "core-predictions.json").read_text())
    got = P.build(paths.CORE_RUNS)
    for doc in (want, got):
        del doc["made_utc"]
    assert got == want
