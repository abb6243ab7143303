"""Workload realism, take two: the analysis of the committed runs, recomputed and perturbed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from artifact import files, imports, paths, records, warning_classes
from artifact.analysis import realism as R
from artifact.analysis.params import Bootstrap
from artifact.analysis.runs import AnalysisError

pytestmark = pytest.mark.skipif(not paths.REALISM_RUNS.is_dir(), reason="no realism runs")
FAST = Bootstrap(resamples=400, seed=7)


def test_realism_json_is_what_the_committed_runs_give(tmp_path: Path) -> None:
    out = R.write_realism(paths.REALISM_RUNS, tmp_path / "realism.json")
    got = (tmp_path / "realism.json").read_text(encoding="utf-8")
    assert got == files.dumps_json(R.build_realism(paths.REALISM_RUNS))  # the same bytes again
    assert out["protocol"]["n_sessions"] == 40 and len(out["servers"]) == 3
    assert [(st["protocol"]["concurrency"], st["protocol"]["session_set"], len(st["servers"]))
            for st in out["strata"]] == [(1, "realism-code", 2), (5, "realism", 2)]
    if paths.REALISM.exists():  # after a build: the build's file is this one
        assert got == paths.REALISM.read_text(encoding="utf-8")


def test_the_analysis_does_not_import_the_campaign() -> None:
    assert not any("campaign" in p.parts for p in imports.closure("artifact.analysis.realism"))


@pytest.fixture(scope="module")
def study() -> R.contract.Realism:
    return R.build_realism(paths.REALISM_RUNS, bootstrap=FAST)


def test_every_interval_holds_its_point_and_the_floor_is_a_size(
        study: R.contract.Realism) -> None:
    n = 0
    for c in study["comparisons"]:
        for by_group in c["metrics"].values():
            for g in by_group.values():
                s, y = g["signed"], g["symmetric"]
                if s["value"] is None:
                    continue
                assert y["value"] is not None and y["value"] >= abs(s["value"]) - 1e-9
                if s["lo"] is not None and s["hi"] is not None:
                    assert s["lo"] <= s["value"] <= s["hi"]
                    n += 1
    assert n > 50


def test_sides_are_paired_and_no_side_reuses_another_sides_cache(
        study: R.contract.Realism) -> None:
    p = study["protocol"]
    assert p["n_sessions"] >= 40 and p["sides"][:2] == ["real-a", "real-b"]
    for s in study["servers"]:
        for side, b in s["sides"].items():
            assert b["all"]["n_sessions"] == p["n_sessions"], (s["run_id"], side)
        first = s["cache_turn0_max"]  # the template's opening only, on every side
        assert first["real-a"] == first["real-b"] and max(first.values()) <= 32, first
        assert s["real_cache_equal"] is not None and s["real_cache_equal"] >= 0.95


def test_a_session_missing_on_one_side_is_left_out_with_one_line(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    shutil.copytree(paths.REALISM_RUNS, root)
    run = root / "realism-none"  # a run of the main stratum
    lines = (run / records.RESULTS).read_text(encoding="utf-8").splitlines()
    victim = json.loads(lines[0])
    keep = [ln for ln in lines if not (json.loads(ln)["session_id"] == victim["session_id"]
                                       and json.loads(ln)["side"] == victim["side"])]
    (run / records.RESULTS).write_text("\n".join(keep) + "\n", encoding="utf-8")
    got = R.build_realism(root, bootstrap=FAST)
    assert got["protocol"]["n_sessions"] == R.build_realism(
        paths.REALISM_RUNS, bootstrap=FAST)["protocol"]["n_sessions"] - 1
    assert any("measured on one side only" in w and victim["session_id"] in w
               for w in got["warnings"])


def test_a_run_of_the_first_design_is_not_a_realism_run() -> None:
    first = sorted(p for p in paths.WORKLOAD_RUNS.iterdir() if p.is_dir())[0]
    with pytest.raises(AnalysisError, match=r"config.json: not a realism run's config"):
        R.load_run(first)


def test_the_bootstrap_is_deterministic_and_its_mc_error_small(
        study: R.contract.Realism) -> None:
    assert study == R.build_realism(paths.REALISM_RUNS, bootstrap=FAST)
    d = R.Draws(40, Bootstrap(resamples=8000, seed=1))
    draws = np.random.default_rng(0).normal(0.0, 10.0, size=8000)
    assert d.mc_error(draws) < 0.5  # endpoints of a 10-point-wide spread: well below 0.5


def test_bins_cut_the_turns() -> None:
    assert R.bin_index([0, 1, 2, 3, 4, 5]).tolist() == [0, 0, 1, 1, 2, 2]


def _restratified(root: Path, run: str, new_id: str, **spec: object) -> None:
    """A copy of a committed run under ``new_id`` whose recorded spec says ``spec``."""
    shutil.copytree(paths.REALISM_RUNS / run, root / new_id)
    cfg = records.read_json(root / new_id / records.CONFIG)
    cfg["spec"].update(spec, run_id=new_id)
    (root / new_id / records.CONFIG).write_text(json.dumps(cfg), encoding="utf-8")


MAIN_RUNS = ("realism-none", "realism-ngram-mod", "realism-draft-q2k")


def test_strata_are_analysed_apart_and_the_main_one_is_one_stream(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    for run in MAIN_RUNS:
        shutil.copytree(paths.REALISM_RUNS / run, root / run)
    for run in MAIN_RUNS:  # a concurrency-5 stratum with more servers than the main one
        _restratified(root, run, f"c5-{run}", concurrency=5)
    _restratified(root, "realism-ngram-mod", "c5-extra", concurrency=5)
    _restratified(root, "realism-code-ngram-mod", "code-ngram")  # its own set's sessions
    got = R.build_realism(root, bootstrap=FAST)
    main = R.build_realism(paths.REALISM_RUNS, bootstrap=FAST) if all(
        (paths.REALISM_RUNS / r).is_dir() for r in MAIN_RUNS) else None
    assert [s["run_id"] for s in got["servers"]] == list(MAIN_RUNS)
    assert [(s["protocol"]["concurrency"], s["protocol"]["session_set"])
            for s in got["strata"]] == [(1, "realism-code"), (5, "realism")]
    code, c5 = got["strata"]
    assert c5["servers"][0]["run_id"] == "c5-realism-none"  # no draft first
    assert len(c5["servers"]) == 4 and len(c5["headline"]) == 3 * 2
    # the same turns give the same numbers in their own stratum as in the main one
    h_main = {(h["server"], h["condition"]): h for h in got["headline"]}
    for h in c5["headline"]:
        if h["server"] != "c5-extra":
            assert h == {**h_main[(h["server"].removeprefix("c5-"), h["condition"])],
                         "server": h["server"]}
    assert code["headline"] == []  # no no-draft server in that stratum: no speedups
    assert any("stratum realism-code at concurrency 1: no no-draft run" in w
               for w in got["warnings"])
    if main is not None:
        assert {k: v for k, v in got.items() if k not in ("strata", "warnings")} == \
            {k: v for k, v in main.items() if k not in ("strata", "warnings")}


def test_a_stratum_whose_runs_differ_in_sides_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    _restratified(root, "realism-none", "a", concurrency=2)
    shutil.copytree(paths.REALISM_RUNS / "realism-ngram-mod", root / "b")
    cfg = records.read_json(root / "b" / records.CONFIG)
    cfg["spec"]["concurrency"] = 2
    (root / "b" / records.CONFIG).write_text(json.dumps(cfg), encoding="utf-8")
    plan = records.read_json(root / "b" / records.WORKLOAD)
    plan["sides"] = list(reversed(plan["sides"]))
    (root / "b" / records.WORKLOAD).write_text(json.dumps(plan), encoding="utf-8")
    with pytest.raises(AnalysisError, match=r"^realism: run b has the sides \["):
        R.build_realism(root, bootstrap=FAST)


def test_the_concurrency_stratum_reuses_the_shared_prompt_and_no_other_sides_cache(
        study: R.contract.Realism) -> None:
    [c5] = [st for st in study["strata"] if st["protocol"]["concurrency"] == 5]
    assert c5["protocol"]["n_sessions"] == 40
    assert c5["protocol"]["prefix_tokens_max"]["synthetic-prefix"] == 64
    for s in c5["servers"]:
        mean, top = s["cache_turn0_mean"], s["cache_turn0_max"]
        # a prefix side's first turn finds the previous session's system prompt in its slot
        assert top["synthetic-prefix"] > 64 and mean["synthetic-prefix"] > mean["real-a"] + 3
        # every other side's first turn reuses the template's opening only
        assert max(v for k, v in top.items() if k != "synthetic-prefix") <= 32, top
        assert s["contention"] is not None and s["contention"]["n_contended"] == 0


# --- the records' rules: the session lock and the contention window (hardening) ---------------


def _copy(tmp_path: Path, *runs: str) -> Path:
    root = tmp_path / "runs"
    for run in runs:
        shutil.copytree(paths.REALISM_RUNS / run, root / run)
    return root


def _rewrite(path: Path, change: Any) -> None:
    """Each JSON line of ``path`` through ``change`` (which edits it in place)."""
    rows = [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        change(r)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _fatal(got: R.contract.Realism) -> list[str]:
    return [f"{warning_classes.classify(w)}: {w}" for w in warning_classes.fatal(got["warnings"])]


PAIR = ("realism-none", "realism-ngram-mod")


def test_the_committed_runs_raise_no_fatal_warning(study: R.contract.Realism) -> None:
    assert _fatal(study) == []


def test_turns_of_a_session_not_in_the_lock_are_excluded_and_fatal(tmp_path: Path) -> None:
    """The plan and the records both hold a session the lock does not: an id swapped in
    (before: its turns were analysed as if locked, without a word)."""
    root = _copy(tmp_path, *PAIR)
    clean = R.build_realism(root, bootstrap=FAST)
    victim = json.loads((root / PAIR[0] / records.RESULTS).read_text().splitlines()[0])
    sid = victim["session_id"]
    for run in PAIR:  # renamed everywhere: plan and records agree, only the lock says no
        for name in (records.RESULTS, records.SESSIONS):
            _rewrite(root / run / name, lambda r: r.update(session_id="XX-not-locked")
                     if r["session_id"] == sid else None)
    got = R.build_realism(root, bootstrap=FAST)
    assert got["protocol"]["n_sessions"] == clean["protocol"]["n_sessions"] - 1
    fatal = _fatal(got)
    assert len(fatal) == 2 and all(f.startswith("off-lock: run realism-") for f in fatal)
    assert "record(s) of a session not in the session lock excluded: " in fatal[0]
    assert "XX-not-locked" in fatal[0] and "\n" not in fatal[0]


def test_a_session_dropped_from_the_lock_is_fatal(tmp_path: Path) -> None:
    root = _copy(tmp_path, *PAIR)
    locks = tmp_path / "sessions"
    shutil.copytree(paths.SESSION_LOCKS, locks)
    lines = (locks / "realism.txt").read_text(encoding="utf-8").splitlines()
    dropped = next(ln for ln in lines if ln and not ln.startswith("#"))
    (locks / "realism.txt").write_text("\n".join(ln for ln in lines if ln != dropped) + "\n",
                                       encoding="utf-8")
    got = R.build_realism(root, bootstrap=FAST, locks=locks)
    assert got["protocol"]["n_sessions"] == 39
    classes = sorted(f.split(":")[0] for f in _fatal(got))
    assert classes == ["off-lock"] * 4  # per run: the lock changed, and its turns excluded
    assert any(f"{dropped}#0" in w and "not in the session lock" in w for w in got["warnings"])
    assert any("measured under another session lock" in w for w in got["warnings"])


def test_a_run_whose_lock_cannot_be_read_is_left_out(tmp_path: Path) -> None:
    root = _copy(tmp_path, *PAIR)
    locks = tmp_path / "sessions"
    locks.mkdir()
    with pytest.raises(AnalysisError, match="no realism run to analyse"):
        R.build_realism(root, bootstrap=FAST, locks=locks)
    runs, warnings = R.load_runs(root, locks=locks)
    assert runs == [] and len(warnings) == 2
    assert all(warning_classes.classify(w) == "run-left-out" and "realism.txt" in w
               for w in warnings)


@pytest.mark.parametrize("strip", [
    lambda r: (r.pop("contention"), r.pop("contended")),  # measured before the fields existed
    lambda r: r.update(contention={"unavailable": "no /proc on this OS"}, contended=None),
])
def test_turns_without_contention_fields_are_a_fatal_warning(tmp_path: Path, strip: Any) -> None:
    root = _copy(tmp_path, *PAIR)
    clean = R.build_realism(root, bootstrap=FAST)
    n = 0

    def change(r: dict[str, Any]) -> None:
        nonlocal n
        if r["side"] == "real-b" and r["turn"] == 5 and r["contended"] is False:
            strip(r)
            n += 1

    _rewrite(root / PAIR[1] / records.RESULTS, change)
    got = R.build_realism(root, bootstrap=FAST)
    (w,) = _fatal(got)
    assert w.startswith(f"unknown-contention: run {PAIR[1]}: {n} of ")
    assert "turn(s) with no contention fields" in w and "analysed as if quiet" in w
    # analysed as before (as if quiet): only the contention summary loses the turns
    for a, b in zip(got["servers"], clean["servers"], strict=True):
        assert a["sides"] == b["sides"]
    assert got["comparisons"] == clean["comparisons"]
