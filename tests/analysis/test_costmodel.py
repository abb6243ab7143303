"""The cost model: step-cost fit, the predicted speedup on hand-computed numbers, and
costmodel.json built from run directories and step files written here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from artifact import paths, warning_classes
from artifact.analysis import costmodel as cm
from artifact.analysis import task, validate
from tests import corpus

MODEL = "smollm2-135m-q4_1"  # the corpus's target (and draft) model key


def test_prediction_matches_a_hand_computed_run() -> None:
    # c(n) = 6 + 4n ms: c(1) = 10. N = 200 tokens, D = 30 rounds, G = 90 drafted, A = 60 accepted.
    # undrafted 200 - 60 - 30 = 110 steps at 10 = 1100; rounds 30*6 + 4*(90 + 30) = 660;
    # T0 = 2000. n-gram: T = 1760 -> 1.13636...; a draft costing 5 ms per step: + 450 -> 2210.
    t = cm.StepFit(a_ms=6.0, b_ms=4.0, r2=1.0, n_points=5)
    d = cm.StepFit(a_ms=3.0, b_ms=2.0, r2=1.0, n_points=5)
    assert cm.predict(n=200, d=30, g=90, a=60, target=t, draft=None) == pytest.approx(2000 / 1760)
    assert cm.predict(n=200, d=30, g=90, a=60, target=t, draft=d) == pytest.approx(2000 / 2210)


def test_a_draft_as_costly_as_its_target_loses_even_at_full_acceptance() -> None:
    # every drafted token accepted, k = 3: each round makes 4 tokens for 3 draft steps plus one
    # 4-token verification; with a = 9.8, b = 7.9 (this machine's order) that costs more than 4
    # undrafted steps
    t = cm.StepFit(a_ms=9.8, b_ms=7.9, r2=1.0, n_points=17)
    s = cm.predict(n=400, d=100, g=300, a=300, target=t, draft=t)
    assert s < 1.0
    # the same rounds with a free drafter win, because a is large against b
    assert cm.predict(n=400, d=100, g=300, a=300, target=t, draft=None) > 1.0
    # and nothing drafted predicts exactly 1
    assert cm.predict(n=400, d=0, g=0, a=0, target=t, draft=t) == pytest.approx(1.0)


def test_fit_recovers_a_known_line_through_noisy_medians() -> None:
    rows = []
    for n in range(1, 18):
        for rep in range(15):  # symmetric noise around the line, and a few wild outliers
            noise = (-0.3, 0.3)[rep % 2] if rep < 14 else 40.0  # 7 below, 7 above, 1 wild
            rows.append({"n": n, "rep": rep, "prompt_ms": 9.5 + 7.75 * n + noise,
                         "problem": None})
    rows.append({"n": 1, "rep": 99, "prompt_ms": 1e4, "problem": "prompt_n 201 != n 1"})
    mc = cm.model_cost("m", rows)
    assert [p["n"] for p in mc.per_n] == list(range(1, 18))
    assert all(p["count"] == 15 for p in mc.per_n)
    # the median of 7 x -0.3, 7 x +0.3 and one outlier is the line + 0.3: the outlier moves it
    # by one rank only
    assert mc.fit is not None
    assert mc.fit.a_ms == pytest.approx(9.8, abs=1e-6)
    assert mc.fit.b_ms == pytest.approx(7.75, abs=1e-6)
    assert mc.fit.r2 > 0.999 and mc.fit.n_points == 17
    assert mc.n_flagged == 1 and mc.n_rows == 15 * 17 + 1
    assert mc.foreign_cores_mean is None  # no row carries contention: unknown, not 0


def test_contention_is_counted_not_invented() -> None:
    rows = [{"n": 1, "prompt_ms": 10.0, "problem": None, "contended": True,
             "contention": {"foreign_cores": 0.5}},
            {"n": 2, "prompt_ms": 12.0, "problem": None, "contended": False,
             "contention": {"foreign_cores": 0.0}},
            {"n": 3, "prompt_ms": 14.0, "problem": None,
             "contention": {"unavailable": "no /proc on this OS"}}]
    mc = cm.model_cost("m", rows)
    assert mc.n_contended == 1 and mc.foreign_cores_mean == pytest.approx(0.25)


def test_task_mirrors_the_analysis_constants() -> None:
    assert task.COST_STEPS == cm.STEPS
    assert task.COST_FAMILIES == cm.STUDY_FAMILIES


def _steps(root: Path, model: str, a: float, b: float, max_n: int = 5) -> None:
    d = root / model
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"model": model, "schema": 1}))
    (d / "steps.jsonl").write_text("".join(
        json.dumps({"n": n, "rep": 0, "prompt_ms": a + b * n, "problem": None}) + "\n"
        for n in range(1, max_n + 1)))


def _run(root: Path, run_id: str, drafter: str, *, n_tokens: int, counters: dict[str, float],
         family: str = "final", k: int | None = None) -> None:
    sp = corpus.spec(run_id, family=family, drafter=drafter, k=k)
    metrics = {"complete": True, "metrics_delta": {f"spec_decode_num_{k_}_total": v
                                                   for k_, v in counters.items()}}
    recs = [corpus.record(f"code/p{i}", "code", 50.0, predicted_n=n_tokens // 2)
            for i in range(2)]
    corpus.write_run(root, sp, records=recs, metrics=metrics, log=[])


def test_costmodel_json_from_runs_and_steps(tmp_path: Path) -> None:
    steps, runs = tmp_path / "runs-cost", tmp_path / "runs"
    _steps(steps, "smollm2-135m-q4_1", 6.0, 4.0)  # the corpus's target and draft model key
    _run(runs, "final-none", "none", n_tokens=200, counters={})
    _run(runs, "final-ngram-mod", "ngram-mod", n_tokens=200,
         counters={"drafts": 30, "draft_tokens": 90, "accepted_tokens": 60})
    _run(runs, "final-draft-simple", "draft-simple", n_tokens=200,
         counters={"drafts": 30, "draft_tokens": 90, "accepted_tokens": 60})
    _run(runs, "ksweep-ngram-mod-k8", "ngram-mod", n_tokens=200, family="ksweep", k=8,
         counters={"drafts": 10, "draft_tokens": 80, "accepted_tokens": 20})
    _run(runs, "final-ngram-simple", "ngram-simple", n_tokens=200, counters={})
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"speedup": {"final-ngram-mod": {"overall": {
        "mean_ratio": 1.05, "ratio_of_means": 1.04, "median_ratio": 1.0, "n_matched": 2}}}}))
    out = tmp_path / "costmodel.json"
    data = cm.write(steps, runs, summary, out)
    assert json.loads(out.read_text()) == data
    assert out.read_text() == cm.files.dumps_json(data)  # canonical bytes: sorted, rounded
    assert data["schema"] == cm.SCHEMA_VERSION
    m = data["models"]["smollm2-135m-q4_1"]
    assert (m["a_ms"], m["b_ms"], m["c1_ms"], m["r2"]) == (6.0, 4.0, 10.0, 1.0)
    r = data["runs"]
    assert set(r) == {"final-ngram-mod", "final-draft-simple", "ksweep-ngram-mod-k8",
                      "final-ngram-simple"}  # the no-draft run is a baseline, not a row
    mod = r["final-ngram-mod"]
    assert (mod["N"], mod["D"], mod["G"], mod["A"]) == (200, 30.0, 90.0, 60.0)
    assert mod["predicted_speedup"] == pytest.approx(2000 / 1760, rel=1e-5)
    assert (mod["measured_speedup"], mod["measured_ratio_of_means"]) == (1.05, 1.04)
    assert mod["acceptance"] == pytest.approx(2 / 3, rel=1e-5) and mod["mean_draft"] == 3.0
    assert mod["extrapolated"] is False  # rounds of 4 tokens, measured up to 5
    # the draft model is the target's own key in the corpus: one c(1) = 10 ms per drafted token
    assert r["final-draft-simple"]["predicted_speedup"] == pytest.approx(2000 / 2660, rel=1e-5)
    assert r["final-draft-simple"]["measured_speedup"] is None
    assert r["ksweep-ngram-mod-k8"]["extrapolated"] is True  # rounds of 9 tokens
    assert r["ksweep-ngram-mod-k8"]["k"] == 8
    assert r["final-ngram-simple"]["predicted_speedup"] is None
    assert "no speculative-decoding counters" in r["final-ngram-simple"]["reason"]


def test_a_model_without_step_costs_is_a_reason_not_a_number(tmp_path: Path) -> None:
    steps, runs = tmp_path / "runs-cost", tmp_path / "runs"
    _steps(steps, "other-model", 6.0, 4.0)
    _run(runs, "final-ngram-mod", "ngram-mod", n_tokens=200,
         counters={"drafts": 30, "draft_tokens": 90, "accepted_tokens": 60})
    data = cm.write(steps, runs, tmp_path / "no-summary.json", tmp_path / "c.json")
    e = data["runs"]["final-ngram-mod"]
    assert e["predicted_speedup"] is None and "smollm2-135m-q4_1" in e["reason"]


# --- the inputs' rules (hardening): one folder per model, impossible rows refused, a fit only
# --- where a line can be drawn; each finding a line of costmodel.json's warnings


def _write_rows(d: Path, rows: list[dict[str, object]], model: str | None = None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps({"model": model or d.name, "schema": 1}))
    (d / "steps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))  # NaN as NaN
    return d / "steps.jsonl"


def _clean(a: float = 6.0, b: float = 4.0, max_n: int = 5) -> list[dict[str, object]]:
    return [{"n": n, "rep": 0, "prompt_ms": a + b * n, "client_ms": a + b * n + 1.0,
             "prompt_n": n, "cache_n": 200, "problem": None} for n in range(1, max_n + 1)]


def _build(steps: Path, tmp_path: Path) -> dict[str, object]:
    runs = tmp_path / "runs"
    _run(runs, "final-ngram-mod", "ngram-mod", n_tokens=200,
         counters={"drafts": 30, "draft_tokens": 90, "accepted_tokens": 60})
    return cm.write(steps, runs, tmp_path / "no-summary.json", tmp_path / "costmodel.json")


def _fatal(data: dict[str, object]) -> list[str]:
    ws = data["warnings"]
    assert isinstance(ws, list)
    return [f"{warning_classes.classify(w)}: {w}" for w in warning_classes.fatal(ws)]


def test_the_committed_step_costs_raise_no_warning() -> None:
    if not paths.COST_RUNS.is_dir():
        pytest.skip("no committed step costs")
    costs, warnings = cm.read_costs(paths.COST_RUNS)
    assert warnings == [] and costs and all(c.fit is not None for c in costs.values())


def test_two_folders_of_one_model_are_a_fatal_line_naming_both(tmp_path: Path) -> None:
    steps = tmp_path / "runs-cost"
    _write_rows(steps / MODEL, _clean(6.0, 4.0))
    _write_rows(steps / "a-copy", _clean(60.0, 40.0), model=MODEL)  # sorts first: it won before
    data = _build(steps, tmp_path)
    (w,) = _fatal(data)
    assert w == f"run-left-out: run a-copy: model {MODEL!r} already used by {MODEL}; run skipped"
    m = data["models"][MODEL]  # type: ignore[index]
    assert (m["a_ms"], m["b_ms"]) == (6.0, 4.0)  # the folder named after the model is kept


@pytest.mark.parametrize("field,value,expected", [
    ("prompt_ms", math.nan, "prompt_ms nan: expected a time in ms, finite, above 0"),
    ("prompt_ms", math.inf, "prompt_ms inf: expected a time in ms"),
    ("prompt_ms", -1e300, "prompt_ms -1e+300: expected a time in ms"),
    ("prompt_ms", 1e300, "prompt_ms 1e+300: expected a time in ms"),  # longer than a request
    ("prompt_ms", "", "prompt_ms '': expected a time in ms"),
    ("prompt_ms", None, "prompt_ms None: expected a time in ms"),  # a clean row has its time
    ("prompt_ms", 0.0, "prompt_ms 0.0: expected a time in ms"),
    ("prompt_ms", 30.0, "prompt_ms 30.0: expected at most client_ms"),  # above the round trip
    ("n", 0, "n 0: expected an integer >= 1"),
    ("n", "3", "n '3': expected an integer >= 1"),
    ("n", True, "n True: expected an integer >= 1"),
    ("rep", -1, "rep -1: expected an integer >= 0"),
    ("prompt_n", 7, "prompt_n 7: expected n 3 in a row with no problem"),
    ("client_ms", math.nan, "client_ms nan: expected null or a finite time"),
])
def test_an_impossible_step_row_is_refused_naming_file_line_and_field(
        tmp_path: Path, field: str, value: object, expected: str) -> None:
    steps = tmp_path / "runs-cost"
    rows = _clean()
    clean = cm.model_cost(MODEL, rows)
    bad = {**rows[2], field: value}  # n = 3, on line 4
    _write_rows(steps / MODEL, [*rows[:3], bad, *rows[3:]])
    data = _build(steps, tmp_path)
    (w,) = _fatal(data)
    assert w.startswith(f"impossible-records: {MODEL}/steps.jsonl: 1 row(s) with impossible "
                        f"values refused: line 4 ({expected}")
    m = data["models"][MODEL]  # type: ignore[index]
    assert clean.fit is not None and (m["a_ms"], m["b_ms"]) == (clean.fit.a_ms, clean.fit.b_ms)
    assert m["n_rows"] == 5


def test_a_repeated_step_row_keeps_its_first_copy(tmp_path: Path) -> None:
    steps = tmp_path / "runs-cost"
    rows = _clean()
    _write_rows(steps / MODEL, [*rows, {**rows[0], "prompt_ms": 5.0, "client_ms": 6.0}])
    (w,) = _fatal(_build(steps, tmp_path))
    assert w == (f"duplicate-records: {MODEL}/steps.jsonl: 1 duplicate record(s) excluded, first "
                 "copy kept: line 6 (n 1, rep 0)")


@pytest.mark.parametrize("rows", [_clean(max_n=1), [], [{**r, "rep": rep} for r in _clean(
    max_n=1) for rep in range(3)]], ids=["one row", "empty", "one width"])
def test_fewer_than_two_widths_is_no_fit_and_a_warning(tmp_path: Path,
                                                       rows: list[dict[str, object]]) -> None:
    steps = tmp_path / "runs-cost"
    _write_rows(steps / MODEL, rows)
    data = _build(steps, tmp_path)  # never a crash, never a silent NaN
    ws = data["warnings"]
    assert isinstance(ws, list) and len(ws) == 1
    w = ws[0]
    assert warning_classes.classify(w) == "not-computable"
    assert w.startswith(f"costmodel: model {MODEL}: step cost not computable, written as null: "
                        f"{1 if rows else 0} distinct width")
    m = data["models"][MODEL]  # type: ignore[index]
    assert m["a_ms"] is m["b_ms"] is m["c1_ms"] is m["r2"] is None
    e = data["runs"]["final-ngram-mod"]  # type: ignore[index]
    assert e["predicted_speedup"] is None and "cannot be fitted" in e["reason"]


def test_an_unreadable_step_line_is_counted_not_fatal(tmp_path: Path) -> None:
    steps = tmp_path / "runs-cost"
    path = _write_rows(steps / MODEL, _clean())
    with path.open("ab") as f:
        f.write(b'{"n": 6, "rep": \xff\n')
    data = _build(steps, tmp_path)
    assert data["warnings"] == [f"{MODEL}/steps.jsonl: 1 unreadable line(s) skipped: line 6"]
    assert _fatal(data) == []


def test_the_longest_step_is_the_measurement_s_request_timeout() -> None:
    from artifact.campaign import stepcost

    assert stepcost.Plan().timeout_s * 1000.0 == validate.STEP_MS_MAX
