"""summary.json end to end: hand-computed small studies, the corpus, bad inputs, determinism."""

from __future__ import annotations

import json
import math
import shutil

import pytest

import artifact.analysis as analysis
from artifact.analysis import build_summary, dumps, write_summary
from artifact.analysis.__main__ import main
from artifact.analysis.pooling import MixedHardwareError
from tests.corpus import accept_line, planted_breakeven, pos_line, record, spec, write_run

MEASURE = "[specdec-runner] measure begin (server start 1)"


def _run(root, sp, rows, *, errors=(), metrics=None, vram=None, log=True):
    """rows: (prompt_id, domain, tok/s, (accepted, generated) | None, mean_len, acc_per_pos)."""
    recs, lines = [], ["[specdec-runner] warmup begin (server start 1)",
                       accept_line(1, 9, 1.1), MEASURE]
    for i, (pid, dom, tps, counts, mean_len, vec) in enumerate(rows):
        rep = 0
        if isinstance(pid, tuple):
            pid, rep = pid
        if counts is None:
            recs.append(record(pid, dom, tps, repeat=rep, ttft_ms=10.0 * (i + 1),
                               predicted_n=1 if tps >= 1e5 else 128))
            continue
        a, g = counts
        recs.append(record(pid, dom, tps, repeat=rep, alpha=a / g, draft=(a, g),
                           ttft_ms=10.0 * (i + 1)))
        lines.append(accept_line(a, g, mean_len))
        if vec is not None:
            lines.append(pos_line(vec))
    return write_run(root, sp, records=recs, log=lines if log else None, errors=errors,
                     metrics=metrics if metrics is not None else {"complete": True,
                                                                 "measure_s": 12.5},
                     vram=vram if vram is not None else {"gpu_present": False, "reason": "cpu"})


@pytest.fixture
def small(tmp_path):
    """A no-draft and a drafted final run, a ksweep run and its baseline: numbers by hand."""
    _run(tmp_path, spec("final-base", family="final"), [
        ("code-1", "code", 50.0, None, None, None),
        ("code-2", "code", 40.0, None, None, None),
        ("chat-1", "chat", 30.0, None, None, None),
        ("chat-2", "chat", 1e6, None, None, None),  # spurious: excluded everywhere
    ], errors=[{"prompt_id": "chat-1", "repeat": 0}],
        vram={"gpu_present": True, "samples": [
            {"t_s": 0.0, "mem_used_mib": 100.0, "power_w": 50.0},
            {"t_s": 0.5, "mem_used_mib": 120.0, "power_w": 40.0}]})
    _run(tmp_path, spec("final-mod", family="final", drafter="ngram-mod", k=4), [
        ("code-1", "code", 75.0, (3, 4), 2.0, (0.6, 0.4)),
        ("code-2", "code", 60.0, (1, 4), 1.5, (0.5, 0.0)),
        ("chat-1", "chat", 30.0, (2, 4), 1.75, (0.5, 0.25)),
    ])
    xs, ys = [0.2, 0.4, 0.6, 0.8], [30.0, 40.0, 52.0, 58.0]
    _run(tmp_path, spec("ksweep-k4", family="ksweep", drafter="ngram-mod", k=4), [
        (f"code-{i}", "code", y, (round(x * 20), 20), 1.0 + 4 * x, (x, x * x))
        for i, (x, y) in enumerate(zip(xs, ys, strict=True))
    ])
    _run(tmp_path, spec("baseline-a", family="baseline"), [
        (f"code-{i}", "code", t, None, None, None) for i, t in enumerate([40.0, 40.0, 50.0, 50.0])
    ] + [("code-9", "code", 400.0, None, None, None)])  # not in the ksweep run: not used
    return tmp_path


def test_final_stats_by_hand(small):
    s = build_summary(small)
    base = s["final"]["final-base"]["overall"]
    assert base["n"] == 3
    assert base["tok_per_s"] == {"mean": 40.0, "median": 40.0, "p95": 49.0}
    assert base["alpha"] is None and base["tau_mean"] is None
    assert base["ttft_ms"]["mean"] == 20.0
    assert (base["peak_gpu_mem_mib"], base["peak_power_w"]) == (120.0, 50.0)
    assert base["duration_s"] == 12.5 and base["n_errors"] == 1
    assert s["final"]["final-base"]["by_domain"]["chat"]["n_errors"] == 1
    assert s["final"]["final-base"]["by_domain"]["code"]["n_errors"] == 0
    assert s["final"]["final-base"]["by_domain"]["code"]["duration_s"] is None
    assert s["runs"]["final-base"]["n_excluded"] == 1
    assert s["runs"]["final-base"]["n_records"] == 4

    mod = s["final"]["final-mod"]["overall"]
    # tok/s 75, 60, 30: mean 55, median 60, p95 = 60 + 0.9 * 15
    assert mod["tok_per_s"] == {"mean": 55.0, "median": 60.0, "p95": 73.5}
    assert mod["alpha"] == {"mean": 0.5, "median": 0.5}
    assert base["alpha_pooled"] is None and mod["alpha_pooled"] == 0.5  # (3 + 1 + 2) / 12
    assert mod["tau_mean"] == 1.75
    assert mod["peak_gpu_mem_mib"] is None  # no GPU: null, and no warning
    assert s["final"]["final-mod"]["by_domain"]["code"]["tok_per_s"]["mean"] == 67.5
    assert s["runs"]["final-mod"]["log_pairing"] == {
        "n_lines": 3, "n_records": 3, "max_abs_alpha_diff": 0.0, "ok": True}
    assert s["runs"]["final-mod"]["label"] == "ngram-mod k=4"


def test_speedup_by_hand(small):
    sp = build_summary(small)["speedup"]
    assert set(sp) == {"final-mod"}
    assert sp["final-mod"]["baseline_run"] == "final-base"
    # ratios 75/50, 60/40, 30/30
    assert sp["final-mod"]["overall"] == {
        "n_matched": 3, "mean_ratio": 1.33333,  # 4/3 to 6 significant digits
        "median_ratio": 1.5, "ratio_of_means": 1.375}
    assert sp["final-mod"]["by_domain"]["code"] == {
        "n_matched": 2, "mean_ratio": 1.5, "median_ratio": 1.5, "ratio_of_means": 1.5}


def test_breakeven_by_hand(small):
    s = build_summary(small)
    be = s["breakeven"]["ksweep-k4"]
    assert be["baseline_run"] == "baseline-a"
    assert be["baseline_tok_per_s"] == 45.0 and be["n_matched"] == 4
    assert (be["k"], be["ctx_size"], be["drafter"]) == (4, 4096, "ngram-mod")
    f = be["pooled"]
    # Sxx 0.2, Sxy 9.6: beta 48, a 21; alpha_be (45 - 21) / 48 = 0.5
    assert (f["status"], f["n"], f["a"], f["beta"], f["alpha_be"]) == ("ok", 4, 21.0, 48.0, 0.5)
    assert f["r2"] == pytest.approx(1 - 7.2 / 468, abs=1e-6)
    # var = (5.4 - 9 + 4.5) / 48^2; half width t(0.975, 2) * se
    half = 4.302652730 * math.sqrt(0.9) / 48
    assert f["alpha_be_delta_low"] == pytest.approx(0.5 - half, rel=1e-5)
    assert f["alpha_be_delta_high"] == pytest.approx(0.5 + half, rel=1e-5)
    # Fieller: where (45 - a - beta x)^2 = t^2 var(a + beta x), var = 5.4 - 18 x + 18 x^2
    for x in (f["alpha_be_ci_low"], f["alpha_be_ci_high"]):
        assert (24 - 48 * x) ** 2 == pytest.approx(
            4.302652730 ** 2 * (5.4 - 18 * x + 18 * x * x), rel=1e-5)
    assert f["alpha_be_ci_low"] < 0.5 < f["alpha_be_ci_high"]
    assert be["by_domain"]["code"] == f
    pos = s["positions"]["ksweep-k4"]["all"]
    assert [p["position"] for p in pos] == [1, 2]
    assert pos[0]["mean"] == 0.5 and pos[0]["n"] == 4
    assert pos[1]["mean"] == pytest.approx((0.04 + 0.16 + 0.36 + 0.64) / 4)
    assert pos[0]["ci_low"] <= 0.5 <= pos[0]["ci_high"]
    assert s["warnings"] == []


def test_baseline_missing_names_the_differing_field(small):
    _run(small, spec("ksweep-ctx", family="ksweep", drafter="ngram-mod", k=4, ctx_size=8192),
         [(f"code-{i}", "code", 40.0 + i, (i + 1, 8), 1.5, None) for i in range(4)])
    s = build_summary(small)
    f = s["breakeven"]["ksweep-ctx"]["pooled"]
    assert f["status"] == "no_baseline" and f["alpha_be"] is None
    (w,) = [w for w in s["warnings"] if w.startswith("run ksweep-ctx: breakeven")]
    assert "nearest baseline-a differs in ctx_size 4096 vs 8192" in w


def test_two_matching_baselines_is_an_error(small):
    shutil.copytree(small / "baseline-a", small / "baseline-b")
    cfg = json.loads((small / "baseline-b" / "config.json").read_text())
    cfg["run_id"] = "baseline-b"
    (small / "baseline-b" / "config.json").write_text(json.dumps(cfg))
    s = build_summary(small)
    be = s["breakeven"]["ksweep-k4"]
    assert be["baseline_run"] is None and be["pooled"]["status"] == "ambiguous_baseline"
    assert be["pooled"]["a"] is None
    assert any("two matching baselines (baseline-a and baseline-b)" in w for w in s["warnings"])


def test_too_few_points(small):
    _run(small, spec("ksweep-2", family="ksweep", drafter="ngram-mod", k=2),
         [("code-0", "code", 40.0, (1, 2), 1.5, None), ("code-1", "code", 41.0, (2, 2), 2.0, None)])
    f = build_summary(small)["breakeven"]["ksweep-2"]["pooled"]
    assert (f["status"], f["n"], f["beta"]) == ("too_few_points", 2, None)


def test_nan_is_null_with_a_warning(small):
    # a drafted final run where nothing was ever drafted: alpha cannot be computed
    _run(small, spec("final-nodraft", family="final", drafter="ngram-simple", k=4),
         [("code-1", "code", 50.0, None, None, None)])
    s = build_summary(small)
    assert s["final"]["final-nodraft"]["overall"]["alpha"] == {"mean": None, "median": None}
    assert s["final"]["final-nodraft"]["overall"]["alpha_pooled"] is None  # nothing drafted
    (w,) = [w for w in s["warnings"] if w.startswith("final.final-nodraft")]
    assert "overall.alpha.mean" in w and "written as null" in w


def test_log_shorter_than_records_skips_positions_only(small):
    log = small / "ksweep-k4" / "server.log"
    lines = log.read_text().splitlines()
    cut = max(i for i, ln in enumerate(lines) if "draft acceptance" in ln)
    log.write_text("\n".join(lines[:cut]) + "\n")
    s = build_summary(small)
    assert s["runs"]["ksweep-k4"]["log_pairing"]["ok"] is False
    assert "ksweep-k4" not in s["positions"]
    assert s["breakeven"]["ksweep-k4"]["pooled"]["status"] == "ok"  # needs no log
    assert any(w.startswith("run ksweep-k4: server.log has 3 measured draft-acceptance line(s) "
                            "for 4 record(s)") for w in s["warnings"])


def test_speedup_invariant_to_record_order(small):
    before = build_summary(small)["speedup"]
    for rid in ("final-mod", "final-base"):
        p = small / rid / "results.jsonl"
        p.write_text("".join(reversed(p.read_text().splitlines(keepends=True))))
    assert build_summary(small)["speedup"] == before


# --- the corpus of the seed study's shape --------------------------------------------------------


def test_corpus_shape(corpus_summary):
    fams = [r["family"] for r in corpus_summary["runs"].values()]
    assert (fams.count("final"), fams.count("curves"), fams.count("ksweep"),
            fams.count("baseline")) == (26, 20, 21, 2)
    assert len(corpus_summary["final"]) == 26
    assert len(corpus_summary["speedup"]) == 20
    assert len(corpus_summary["positions"]) == 41
    assert len(corpus_summary["breakeven"]) == 21
    # the corpus plants server restarts; those of a drafter with state are warned about
    resets = [w for w in corpus_summary["warnings"] if "keeps state across requests" in w]
    assert resets and all("ngram-mod" in w or "ngram-cache" in w for w in resets)
    assert [w for w in corpus_summary["warnings"] if w not in resets] == []
    assert corpus_summary["schema_version"] == analysis.SCHEMA_VERSION
    assert all(r["log_pairing"]["ok"] for r in corpus_summary["runs"].values())


def test_corpus_breakeven_recovers_the_planted_value(corpus_summary):
    for rid, be in corpus_summary["breakeven"].items():
        f = be["pooled"]
        assert f["status"] == "ok", rid
        assert f["alpha_be_ci_low"] < f["alpha_be"] < f["alpha_be_ci_high"]
        if be["k"] >= 4:  # small k extrapolates far from the data: too noisy at this scale
            assert f["alpha_be"] == pytest.approx(planted_breakeven(be["drafter"]), abs=0.05), rid


def test_corpus_speedups_follow_the_drafters(corpus_summary):
    sp = corpus_summary["speedup"]
    mod = sp["final-smollm2-135m-Q4_1-ngram-mod"]["by_domain"]
    assert mod["code"]["mean_ratio"] > mod["chat"]["mean_ratio"] > 1.0
    simple = sp["final-smollm2-135m-Q4_1-ngram-simple"]["overall"]
    assert sp["final-smollm2-135m-Q4_1-ngram-mod"]["overall"]["mean_ratio"] > simple["mean_ratio"]


def _floats(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _floats(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _floats(v)
    elif isinstance(obj, float):
        yield obj


def test_rounding_and_no_nan(corpus_summary):
    text = dumps(corpus_summary)
    assert "NaN" not in text and "Infinity" not in text
    for x in _floats(corpus_summary):
        assert float(f"{x:.6g}") == x


def test_byte_identical_for_equal_inputs(corpus_root, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_summary(corpus_root, a)
    copy = tmp_path / "copy"
    shutil.copytree(corpus_root, copy)
    write_summary(copy, b)
    assert a.read_bytes() == b.read_bytes()
    assert list(json.loads(a.read_text())) == sorted(json.loads(a.read_text()))


# --- bad inputs -----------------------------------------------------------------------------------


def test_bad_inputs_each_warn_and_the_rest_is_analysed(bad_root):
    root, expected = bad_root
    s = build_summary(root)
    for run_id, what in expected.items():
        assert any(w.startswith(f"run {run_id}") and what in w for w in s["warnings"]), run_id
    assert "bad-unknown-drafter" not in s["runs"]
    # bad-empty is in (no records: warned); bad-only-errors is incomplete: left out, warned
    assert "bad-only-errors" not in s["runs"]
    assert len([r for r in s["runs"].values() if r["family"] == "final"]) == 26 + 1
    assert len(s["breakeven"]) == 21 and len(s["positions"]) == 41  # bad-short-log skipped
    assert s["runs"]["bad-short-log"]["log_pairing"]["ok"] is False


# --- entry points -----------------------------------------------------------------------------


def test_cli_writes_the_summary(small, tmp_path, capsys):
    out = tmp_path / "out" / "summary.json"
    assert main(["--runs", str(small), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["schema_version"] == 2
    assert "wrote" in capsys.readouterr().out
    assert main(["--runs", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "runs directory not found" in capsys.readouterr().err


def test_task_analysis_dict():
    from artifact import paths
    from artifact.analysis.task import task_analysis

    t = task_analysis()
    assert t["targets"] == [str(paths.SUMMARY)]
    assert any(d.endswith("stats.py") for d in t["file_dep"])
    assert t["actions"] and t["uptodate"]
    assert task_analysis.__doc__


def test_public_api():
    assert sorted(analysis.__all__) == sorted(
        ["SCHEMA_VERSION", "AnalysisError", "ConfigError", "Run", "RunDescription",
         "build_summary", "dumps", "load_runs", "write_summary"])
    for name in analysis.__all__:
        assert hasattr(analysis, name)


def test_environment_merges_model_hashes(small):
    cfg_path = small / "final-mod" / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["environment"]["model_sha256"] = {"other-model": "ef" * 32}
    cfg_path.write_text(json.dumps(cfg))
    s = build_summary(small)
    assert set(s["environment"]["model_sha256"]) == {"smollm2-135m-q4_1", "other-model"}
    assert not [w for w in s["warnings"] if w.startswith("environment")]
    cfg["environment"]["model_sha256"] = {"smollm2-135m-q4_1": "00" * 32}
    cfg["environment"]["cpu_model"] = "Other CPU"
    cfg_path.write_text(json.dumps(cfg))
    with pytest.raises(MixedHardwareError, match="cpu_model: 'Synthetic CPU' vs 'Other CPU'"):
        build_summary(small)  # runs on different hardware are not pooled ...
    for path in small.glob("*/config.json"):  # ... unless their campaign says so
        c = json.loads(path.read_text())
        path.write_text(json.dumps({**c, "pool_mixed_hardware": True}))
    ws = [w for w in build_summary(small)["warnings"] if w.startswith("environment")]
    assert ws == [
        "environment: cpu_model differs between runs final-base and final-mod",
        "environment: model_sha256[smollm2-135m-q4_1] differs between runs final-base and "
        "final-mod",
    ]


def test_position_medians_are_numpys_to_the_bit():
    # position_table takes every column's median from one sort of the matrix, not from
    # np.median column by column: the same numbers, bit for bit, on columns with ties, nan
    # padding, signed zeros and values near the float limits.
    import random

    import numpy as np

    from artifact.analysis.positions import _column_medians

    rng = random.Random(6)
    values = [0.0, -0.0, 0.1, 0.2, 0.3, 1 / 3, 0.7, 1.0, 1e-300, 1.7e308, float("inf"),
              -float("inf"), -1e-300]
    for _ in range(4000):
        rows, cols = rng.randrange(1, 9), rng.randrange(1, 5)
        m = np.array([[rng.choice([*values, rng.random(), float("nan")]) for _ in range(cols)]
                      for _ in range(rows)])
        want = []
        for j in range(cols):
            col = m[:, j][~np.isnan(m[:, j])]
            with np.errstate(all="ignore"):  # inf + -inf, 1.7e308 * 2: numpy's own warnings
                want.append(float(np.median(col)) if col.size else math.nan)
        assert repr(_column_medians(m)) == repr(want), m
