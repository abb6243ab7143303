"""The core study's verdicts by intervals (issue 44, item 1): signs right, wrong or undecided
from the measured interval, one Holm family over the whole study, interval scores against a
reference, the pilot that would have sufficed, other model families and the post-hoc hook."""

from __future__ import annotations

import json
import math
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from artifact import paths, records
from artifact.analysis import core as C
from artifact.analysis import core_verdicts as V
from artifact.contract import core as contract
from artifact.errors import AnalysisError


@pytest.fixture(scope="module")
def doc() -> contract.Core:
    return C.build(paths.CORE_RUNS, paths.CORE_PREDICTIONS)


@pytest.mark.parametrize(("lo", "hi", "sign", "want"), [
    (1.01, 1.2, "pays", "right"), (1.01, 1.2, "loses", "wrong"),
    (0.8, 0.99, "loses", "right"), (0.8, 0.99, "pays", "wrong"),
    (0.906, 1.059, "loses", "undecided"),  # q4_1-edit ngram-mod: a 'right' point, undecided
    (1.0, 1.2, "pays", "undecided"),  # an end at 1 does not exclude it
    (None, None, "pays", "undecided"),
])
def test_a_sign_is_judged_by_the_interval(lo: float | None, hi: float | None, sign: str,
                                          want: str) -> None:
    assert V.sign_verdict(lo, hi, sign) == want


def test_one_holm_family_over_every_group_is_stricter_than_one_per_group() -> None:
    raw = {"g1": {"a vs b": 0.01, "a vs c": 0.04}, "g2": {"a vs b": 0.02, "a vs c": 0.3}}
    # per group: g1's 0.01 x 2 = 0.02 separates; over the four tests: 0.01 x 4 = 0.04, then
    # 0.02 x 3 = 0.06, 0.04 x 2 = 0.08, 0.3 x 1 (monotone: 0.3)
    assert V.study_holm(raw) == {"g1": {"a vs b": 0.04, "a vs c": 0.08},
                                 "g2": {"a vs b": 0.06, "a vs c": 0.3}}


@pytest.mark.parametrize(("lo", "hi", "x", "want"), [
    (0.9, 1.1, 1.0, 0.2),  # inside: the width
    (0.9, 1.1, 0.85, 0.2 + 40 * 0.05),  # below: the width and 40 times the miss
    (0.9, 1.1, 1.2, 0.2 + 40 * 0.1),
])
def test_the_interval_score_is_width_plus_forty_times_the_miss(lo: float, hi: float, x: float,
                                                               want: float) -> None:
    assert V.interval_score(lo, hi, x) == pytest.approx(want)


def test_the_mean_scores_say_which_forecast_is_better() -> None:
    got = V.mean_scores([("ngram-mod", 0.4, 0.1), ("ngram-simple", 0.6, 0.3),
                         ("draft-q2k", 0.2, 20.0)])
    assert got["n-gram"] == {"better": "reference", "n": 2, "prediction": 0.5,
                             "reference": 0.2}
    assert got["draft model"]["better"] == "prediction"
    assert got["all"]["n"] == 3


def test_the_pilot_that_would_have_sufficed() -> None:
    # half 0.4 at 3 prompts: t(2) = 4.303, s = 0.2, s^2/30 = 0.001333, var_boot = 0.00731;
    # at 4 prompts: t(3) sqrt(0.00731 x 3/4 + 0.001333) = 3.182 x 0.0826 = 0.263 < 0.3
    got = V.pilot_needed(1.3, 0.9, 1.7, [1.1, 1.3, 1.5], 3, 30)
    assert got["n_pilot"] == 4 and got["why"] is None
    assert got["var_boot"] == pytest.approx((0.4 / 4.302653) ** 2 - 0.04 / 30, abs=1e-6)
    # s = 0.25: 1.96 x 0.25 / sqrt(30) = 0.089 reaches past the distance 0.05 to 1
    never = V.pilot_needed(1.05, 0.7, 1.4, [0.8, 1.05, 1.3], 3, 30)
    assert never["n_pilot"] is None and "infinite pilot" in never["why"]


def _interval(xs: list[float]) -> tuple[float, float]:
    m, se = statistics.fmean(xs), statistics.stdev(xs) / math.sqrt(len(xs))
    half = float(stats.t.ppf(0.975, len(xs) - 1)) * se
    return m - half, m + half


def test_the_committed_tallies_agree_with_a_recomputation(doc: contract.Core) -> None:
    """Each verdict recomputed from the cell's per-prompt speedups and the predictions file,
    each interval score from the prediction and the control's interval, tallied by family."""
    pred = {(c["target"], c["task"], c["drafter"]): c
            for c in json.loads(paths.CORE_PREDICTIONS.read_text())["cells"]}
    want: dict[str, dict[str, int]] = {f: {"right": 0, "wrong": 0, "undecided": 0}
                                       for f in ("n-gram", "draft model", "all")}
    scores: dict[str, list[tuple[float, float]]] = {"n-gram": [], "draft model": []}
    for g in doc["groups"]:
        clo, chi = _interval(list(g["cells"]["control"]["per_prompt"].values()))
        for d, cell in g["cells"].items():
            if d == "control":
                continue
            p = pred[(g["target"], g["task"], d)]
            x = statistics.fmean(cell["per_prompt"].values())
            lo, hi = _interval(list(cell["per_prompt"].values()))
            side = "pays" if lo > 1 else "loses" if hi < 1 else None
            v = "undecided" if side is None else "right" if side == p["sign"] else "wrong"
            fam = "draft model" if d == "draft-q2k" else "n-gram"
            assert cell["sign_verdict"] == v, (g["target"], g["task"], d)
            want[fam][v] += 1
            want["all"][v] += 1

            def score(a: float, b: float, x: float = x) -> float:
                return (b - a) + 40 * max(a - x, 0) + 40 * max(x - b, 0)
            scores[fam].append((score(p["lo"], p["hi"]), score(clo, chi)))
            assert cell["interval_score"]["prediction"] == pytest.approx(
                score(p["lo"], p["hi"]), abs=2e-3)
    assert doc["sign_verdicts"] == want
    for fam, xs in scores.items():
        got = doc["interval_scores"][fam]
        assert got["prediction"] == pytest.approx(statistics.fmean(a for a, _ in xs), abs=2e-3)
        assert got["reference"] == pytest.approx(statistics.fmean(b for _, b in xs), abs=2e-3)
    # the point-sign count is kept beside, with its old meaning
    assert doc["signs_right"] == sum(
        1 for g in doc["groups"] for d, c in g["cells"].items() if d != "control"
        and (statistics.fmean(c["per_prompt"].values()) > 1) == (pred[(g["target"], g["task"],
                                                                      d)]["predicted"] > 1))


def test_the_committed_rankings_are_holm_over_the_whole_study(doc: contract.Core) -> None:
    """Raw p recomputed from the per-prompt speedups; Holm over all of them at once, by hand;
    only pairs below 0.05 after it are ranked."""
    raw = {}
    for g in doc["groups"]:
        cells = g["cells"]
        for pair in g["p_raw"]:
            a, b = pair.split(" vs ")
            common = sorted(cells[a]["per_prompt"].keys() & cells[b]["per_prompt"].keys())
            p = float(stats.ttest_rel([cells[a]["per_prompt"][k] for k in common],
                                      [cells[b]["per_prompt"][k] for k in common]).pvalue)
            assert g["p_raw"][pair] == pytest.approx(p, abs=1e-6)
            raw[(g["target"], g["task"], pair)] = p
    assert len(raw) == doc["holm_tests"] == 36
    order = sorted(raw, key=raw.__getitem__)
    adj, running = {}, 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, (len(order) - i) * raw[k]))
        adj[k] = running
    for g in doc["groups"]:
        sep = set()
        for pair, p in g["p_holm"].items():
            assert p == pytest.approx(adj[(g["target"], g["task"], pair)], abs=1e-5)
            if adj[(g["target"], g["task"], pair)] < 0.05:
                a, b = pair.split(" vs ")
                ma = statistics.fmean(g["cells"][a]["per_prompt"].values())
                mb = statistics.fmean(g["cells"][b]["per_prompt"].values())
                sep.add(f"{a} > {b}" if ma > mb else f"{b} > {a}")
        assert set(g["separated"]) == sep


def _copy_group(src: str, dst_root: Path, dst: str) -> None:
    for run in sorted(paths.CORE_RUNS.glob(f"{src}-*")):
        to = dst_root / run.name.replace(src, dst, 1)
        to.mkdir(parents=True)
        for name in (records.CONFIG, records.RESULTS):
            shutil.copy(run / name, to / name)


def test_a_second_family_is_written_under_families_once_measured(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _copy_group("q4_1-edit", runs, "q4_1-edit")
    gemma = C.Family(name="gemma3-270m", targets=contract.GEMMA_TARGETS,
                     runs=tmp_path / "runs-gemma", predictions=tmp_path / "gemma.json")
    absent = C.build(runs, paths.CORE_PREDICTIONS, others=(gemma,))
    assert absent["families"] == {} and not any("gemma" in w for w in absent["warnings"])
    _copy_group("q4_1-edit", gemma.runs, "q4_k_m-edit")
    doc = C.build(runs, paths.CORE_PREDICTIONS, others=(gemma,))
    sub = doc["families"]["gemma3-270m"]
    assert [(g["target"], g["task"]) for g in sub["groups"]] == [("q4_k_m", "edit")]
    top = doc["groups"][0]["cells"]["ngram-mod"]
    other = sub["groups"][0]["cells"]["ngram-mod"]
    assert set(other) == set(top) and other["speedup"] == top["speedup"]
    assert other["predicted"] is None  # no predictions file: not judged, and said so
    ours = [w for w in doc["warnings"] if w.startswith("gemma3-270m: ")]
    assert any("no predictions file" in w for w in ours)
    assert any("group q8_0-study" in w for w in ours)  # its other groups, not measured


def test_posthoc_predictions_are_stored_beside_the_committed_ones(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _copy_group("q4_1-edit", runs, "q4_1-edit")
    post: dict[tuple[str, str, str], dict[str, Any] | None] = {
        ("q4_1", "edit", "ngram-mod"): {"predicted": 0.97, "label": "post hoc"}}
    cells = C.build(runs, paths.CORE_PREDICTIONS, posthoc=post)["groups"][0]["cells"]
    assert cells["ngram-mod"]["posthoc"] == {"predicted": 0.97, "label": "post hoc"}
    committed = next(c for c in json.loads(paths.CORE_PREDICTIONS.read_text())["cells"]
                     if (c["target"], c["task"], c["drafter"]) == ("q4_1", "edit", "ngram-mod"))
    assert cells["ngram-mod"]["predicted"]["predicted"] == committed["predicted"]  # kept
    assert cells["ngram-simple"]["posthoc"] is None and cells["control"]["posthoc"] is None


@pytest.mark.parametrize(("edit", "where"), [
    ({"n_pilot_prompts": 0}, r"cells\[0\]\.n_pilot_prompts: expected an integer >= 1"),
    ({"per_prompt": {"a": 1.0}}, r"cells\[0\]\.per_prompt: expected n_pilot_prompts = 5"),
    ({"per_prompt": {"a": "x"}}, r"cells\[0\]\.per_prompt\.a: expected a finite number"),
])
def test_a_bad_pilot_in_the_predictions_is_one_line(tmp_path: Path, edit: dict[str, Any],
                                                    where: str) -> None:
    doc = json.loads(paths.CORE_PREDICTIONS.read_text())
    doc["cells"][0].update(edit)
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(AnalysisError, match=where):
        C.build(paths.CORE_RUNS, bad)
