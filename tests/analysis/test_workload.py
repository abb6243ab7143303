"""The workload analysis: turn bins, the session bootstrap, noise floor and the written file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from artifact import records
from artifact.analysis import workload as W
from artifact.analysis.params import Bootstrap
from artifact.analysis.runs import AnalysisError
from artifact.contract import workload as contract
from artifact.stats import cluster_weights, weighted_median
from tests.workload_corpus import corpus

BOOT = Bootstrap(resamples=400, seed=7)


def side(rows: list[tuple[str, int, float]], tpot: float = 50.0) -> W.SideTurns:
    """(session, turn, ttft) rows; E2E = TTFT + 15 TPOT."""
    n = len(rows)
    ttft = np.array([r[2] for r in rows])
    return W.SideTurns(
        session=[r[0] for r in rows], turn=np.array([r[1] for r in rows], dtype=np.int64),
        ttft_ms=ttft, tpot_ms=np.full(n, tpot), e2e_ms=ttft + 15 * tpot,
        prompt_tokens=np.array([100.0 + 50 * r[1] for r in rows]),
        prompt_chars=np.array([400.0 + 200 * r[1] for r in rows]),
        cached_tokens=np.array([0.0 if r[1] == 0 else 50.0 * r[1] for r in rows]),
        output_tokens=np.full(n, 16.0), draft_n=np.full(n, 8.0),
        draft_accepted=np.full(n, 2.0))


def test_bins_and_lower_median_by_hand() -> None:
    assert W.bin_index([0, 4, 5, 9, 10, 19, 20, 29, 30, 31]).tolist() == \
        [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    s = side([("a", 0, 100.0), ("a", 1, 300.0), ("b", 0, 200.0), ("b", 7, 900.0)])
    st = W.side_stats(s)
    assert st["n_turns"] == 4
    assert st["ttft_ms_p50"] == 200.0  # lower median of 100, 200, 300, 900
    assert st["prompt_tokens_mean"] == pytest.approx((100 + 150 + 100 + 450) / 4)
    assert st["chars_per_token"] == pytest.approx(4.0)
    assert st["acceptance"] == pytest.approx(0.25)
    early = s.take(W.bin_index(s.turn) == 0)
    assert early.session == ["a", "a", "b"] and W.side_stats(early)["ttft_ms_p50"] == 200.0


def test_weighted_median_matches_numpy_with_unit_weights() -> None:
    rng = np.random.default_rng(1)
    for n in (1, 2, 5, 30):
        x = rng.normal(size=n)
        assert weighted_median(x, np.ones((1, n)))[0] == \
            np.quantile(x, 0.5, method="inverted_cdf")
    w = cluster_weights(5, rng=rng, n_resamples=100)
    assert w.shape == (100, 5) and (w.sum(axis=1) == 5).all()


def test_session_bootstrap_by_hand() -> None:
    # every session's synthetic turns are 10% slower: the interval is exactly +10%
    real = side([(s, t, 100.0 * (i + 1) + t) for i, s in enumerate("abcd") for t in range(3)])
    synth = side([(s, t, 1.1 * (100.0 * (i + 1) + t)) for i, s in enumerate("abcd")
                  for t in range(3)])
    d = W.paired_diff(real, synth, "ttft_ms", rng=np.random.default_rng(0), bootstrap=BOOT)
    assert d["pct"] == pytest.approx(10.0)
    assert d["lo"] == pytest.approx(10.0) and d["hi"] == pytest.approx(10.0)
    # one session: a point, no interval
    one = W.paired_diff(real.take(np.array([s == "a" for s in real.session])),
                        synth.take(np.array([s == "a" for s in synth.session])), "ttft_ms",
                        rng=np.random.default_rng(0), bootstrap=BOOT)
    assert one["pct"] == pytest.approx(10.0) and math.isnan(one["lo"] or math.nan)


def test_sessions_not_turns_are_resampled() -> None:
    # session a is fast on the synthetic side, b slow: the interval spans both, because whole
    # sessions are drawn (a turn-level bootstrap would be far narrower)
    real = side([(s, t, 100.0) for s in "ab" for t in range(20)])
    synth = side([("a", t, 80.0) for t in range(20)] + [("b", t, 130.0) for t in range(20)])
    d = W.paired_diff(real, synth, "ttft_ms", rng=np.random.default_rng(0), bootstrap=BOOT)
    assert d["lo"] == pytest.approx(-20.0) and d["hi"] == pytest.approx(30.0)


def test_build_on_a_corpus_reads_back_through_the_contract(tmp_path: Path) -> None:
    root = corpus(tmp_path / "runs")
    out = tmp_path / "workload.json"
    first = W.write_workload(root, out)
    data = contract.read(out, error=AnalysisError)
    assert data == first
    assert data["order"] == ["english", "code", "code+prefix", "recurrent"]  # as measured
    code = data["conditions"]["code"]
    assert code["n_sessions"] == 5 and code["n_turns"] == 81
    assert code["bins"]["30+"]["n_sessions"] == 1
    assert code["bins"]["30+"]["diff"]["ttft_ms"]["lo"] is None  # one session: no interval
    agg = code["aggregate"]["diff"]["tpot_ms"]
    assert agg["pct"] == pytest.approx(30.0) and agg["lo"] == pytest.approx(30.0)
    assert data["conditions"]["english"]["aggregate"]["diff"]["tpot_ms"]["pct"] == 0.0
    assert len(data["noise_floor"]["pairs"]) == 6
    assert data["noise_floor"]["max_abs_pct"]["all"]["tpot_ms"] == 0.0
    rows = {r["condition"]: r for r in data["ablation"]}
    assert rows["code"]["beyond_floor"]["tpot_ms"] is True
    assert rows["english"]["beyond_floor"]["tpot_ms"] is False
    assert rows["code+prefix"]["knobs"] == "code filler at the real chars/token, shared " \
        "64-token prefix"
    W.write_workload(root, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == out.read_bytes()  # same bytes


def test_a_broken_run_is_left_out_with_one_line(tmp_path: Path) -> None:
    root = corpus(tmp_path / "runs")
    (root / "wl-broken").mkdir()
    (root / "wl-broken" / records.CONFIG).write_text('{"spec": {}}')
    data = W.build_workload(root)
    assert len(data["conditions"]) == 4
    assert any(w.startswith("wl-broken/config.json: not a workload run's config")
               for w in data["warnings"])


def test_off_schema_file_is_one_line(tmp_path: Path) -> None:
    root = corpus(tmp_path / "runs")
    data = json.loads(json.dumps(W.build_workload(root)))
    data["conditions"]["code"]["n_turns"] = "many"
    p = tmp_path / "w.json"
    p.write_text(json.dumps(data))
    with pytest.raises(AnalysisError, match=r"w.json: field 'conditions.code.n_turns': "
                                            r"expected int"):
        contract.read(p, error=AnalysisError)
