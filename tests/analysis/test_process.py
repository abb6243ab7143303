"""The realism study's process variance component (issue 44): the method-of-moments estimate
against a plain two-way analysis of variance, its session bootstrap, the processes' exact
agreement, and the replicated stratum's committed runs through the realism reader."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from artifact import paths, records, warning_classes
from artifact.analysis import process as P
from artifact.analysis import realism as R
from artifact.analysis.params import Bootstrap

FAST = Bootstrap(resamples=400, seed=11)


def _anova_sd(y: np.ndarray) -> float:
    """The component by the textbook: sums of squares in loops."""
    s, p = y.shape
    g = sum(y[i, j] for i in range(s) for j in range(p)) / (s * p)
    rows = [sum(y[i, j] for j in range(p)) / p for i in range(s)]
    cols = [sum(y[i, j] for i in range(s)) / s for j in range(p)]
    ss_p = s * sum((c - g) ** 2 for c in cols)
    ss_r = sum((y[i, j] - rows[i] - cols[j] + g) ** 2 for i in range(s) for j in range(p))
    ms_p, ms_r = ss_p / (p - 1), ss_r / ((s - 1) * (p - 1))
    return math.sqrt(max(0.0, (ms_p - ms_r) / s))


@pytest.mark.parametrize("seed", range(5))
def test_the_component_is_the_two_way_anova_estimate(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sessions = rng.normal(0, 0.3, size=(40, 1))
    procs = rng.normal(0, 0.05, size=(1, 3))
    y = sessions + procs + rng.normal(0, 0.02, size=(40, 3))
    assert P.component(y) == pytest.approx(_anova_sd(y), rel=1e-9, abs=1e-12)


def test_every_resample_is_the_estimate_of_its_resampled_sessions() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(0, 0.2, size=(12, 1)) + rng.normal(0, 0.1, size=(1, 3)) \
        + rng.normal(0, 0.05, size=(12, 3))
    draws = rng.integers(0, 12, size=(6, 12))
    w = np.stack([np.bincount(d, minlength=12) for d in draws]).astype(np.float64)
    got = P._components(y, w)
    for row, d in zip(got, draws, strict=True):
        assert math.sqrt(row) == pytest.approx(_anova_sd(y[d]), rel=1e-9, abs=1e-12)


def test_no_process_effect_reads_near_zero_and_a_large_one_is_found() -> None:
    rng = np.random.default_rng(5)
    base = rng.normal(0, 0.3, size=(40, 1)) + rng.normal(0, 0.01, size=(40, 3))
    quiet = P.estimate(np.log(np.exp(base)), drafter="none", side="real", quantity="e2e",
                       runs=["a", "b", "c"], bootstrap=FAST)
    loud = P.estimate(base + np.array([[0.0, 0.05, -0.05]]), drafter="none", side="real",
                      quantity="e2e", runs=["a", "b", "c"], bootstrap=FAST)
    assert quiet["sd_pct"]["value"] is not None and quiet["sd_pct"]["value"] < 0.5
    sd = loud["sd_pct"]
    assert sd["value"] is not None and sd["lo"] is not None and sd["hi"] is not None
    assert 4.0 < sd["value"] < 6.0 and sd["lo"] <= sd["value"] <= sd["hi"]
    assert loud["gap_sd_pct"] == pytest.approx(math.sqrt(2) * sd["value"])
    assert loud["spread_pct"] == pytest.approx(100 * (math.exp(0.1) - 1), rel=0.05)
    assert len(loud["process_pct"]) == 3


def test_too_few_sessions_is_null_not_a_crash() -> None:
    got = P.estimate(np.array([[0.1, 0.2, 0.3], [math.nan, 0.1, 0.2]]), drafter="none",
                     side="real", quantity="e2e", runs=["a", "b", "c"], bootstrap=FAST)
    assert got["n_sessions"] == 1 and got["sd_pct"]["value"] is None
    assert got["gap_sd_pct"] is None and got["process_pct"] == []


def _turn(session: str, turn: int, drafted: int, accepted: int) -> records.TurnResult:
    t = records.Timings(prompt_n=5, prompt_ms=1.0, predicted_n=9, predicted_ms=90.0,
                        predicted_per_second=88.9, cache_n=0, draft_n=drafted,
                        draft_n_accepted=accepted)
    return records.TurnResult(
        session_id=session, side="real-a", condition="", turn=turn, order=0, slot=0, attempt=0,
        server_start=0, sent_unix_s=0.0, queue_ms=0.0, prompt_chars=20, prompt_tokens=5,
        cached_tokens=0, output_tokens=9, n_predict=9, ttft_ms=5.0, tpot_ms=10.0, e2e_ms=100.0,
        event_ms=[], timings=t, stop_type="limit", alpha=None)


def test_processes_that_accepted_differently_are_not_equal() -> None:
    same = [_turn("s1", 0, 4, 3), _turn("s1", 1, 4, 4)]
    other = [_turn("s1", 0, 4, 3), _turn("s1", 1, 4, 2)]
    e = P.exact("ngram-mod", "real", [("a", same), ("b", same), ("c", same)])
    assert e["equal"] and e["n_turns"] == 2 and e["n_differ"] == 0
    e = P.exact("ngram-mod", "real", [("a", same), ("b", other), ("c", same)])
    assert not e["equal"] and e["n_differ"] == 1


def test_without_replicated_runs_the_component_is_null_and_says_so(tmp_path: Path) -> None:
    warnings: list[str] = []
    assert R.process_study(tmp_path / "none", paths.PROCESS_CAMPAIGN, warnings) is None
    (w,) = warnings
    assert warning_classes.classify(w) == "not-computable" and "no run under" in w


REPLICATED = sorted(p.name for p in paths.PROCESS_RUNS.glob("r4-proc-*")) \
    if paths.PROCESS_RUNS.is_dir() else []


@pytest.mark.skipif(len(REPLICATED) != 12, reason="the replicated stratum is not measured here")
def test_the_replicated_stratum_gives_every_component() -> None:
    warnings: list[str] = []
    got = R.process_study(paths.PROCESS_RUNS, paths.PROCESS_CAMPAIGN, warnings, bootstrap=FAST)
    assert got is not None and got["stratum"] == "r4-proc"
    kinds = {(c["drafter"], c["side"], c["quantity"]) for c in got["components"]}
    assert kinds == {(d, s, q) for d in ("none", "ngram-mod") for s in ("real", "synthetic")
                     for q in ("e2e", "tpot", "ttft")} | {
        ("ngram-mod", s, "speedup") for s in ("real", "synthetic")}
    assert all(c["n_processes"] == 3 and c["n_sessions"] >= 2 for c in got["components"])
    assert {(e["drafter"], e["side"]) for e in got["exact"]} == {("ngram-mod", "real"),
                                                                 ("ngram-mod", "synthetic")}
    assert got["protocol"]["n_servers"] == 12


@pytest.mark.skipif(len(REPLICATED) != 12, reason="the replicated stratum is not measured here")
def test_a_process_that_accepted_differently_is_named(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    shutil.copytree(paths.PROCESS_RUNS, root)
    path = root / "r4-proc-ngram-mod-real-c" / records.RESULTS
    lines = path.read_text(encoding="utf-8").splitlines()
    import json

    for i, line in enumerate(lines):
        row = json.loads(line)
        t = row.get("timings") or {}
        if t.get("draft_n_accepted"):
            t["draft_n_accepted"] -= 1
            lines[i] = json.dumps(row)
            break
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    warnings: list[str] = []
    got = R.process_study(root, paths.PROCESS_CAMPAIGN, warnings, bootstrap=FAST)
    assert got is not None
    (e,) = [e for e in got["exact"] if e["side"] == "real"]
    assert not e["equal"] and e["n_differ"] == 1
    assert any("the real processes accepted differently on 1 of" in w for w in warnings)
