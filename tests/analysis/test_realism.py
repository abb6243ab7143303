"""Workload realism, take three: the committed per-side runs, read raw and through the analysis,
and the analysis perturbed."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from artifact import files, imports, paths, records, warning_classes
from artifact.analysis import realism as R
from artifact.analysis.params import Bootstrap
from artifact.analysis.runs import AnalysisError

RUNS = sorted(p for p in paths.REALISM_RUNS.glob("r3-*") if p.is_dir())
pytestmark = pytest.mark.skipif(not RUNS, reason="no take-three realism runs")
FAST = Bootstrap(resamples=400, seed=7)


def _spec(run: Path) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((run / records.CONFIG).read_text())["spec"]
    return spec


def _raw(run: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in (run / records.RESULTS).read_text().splitlines() if ln]


def test_realism_json_is_what_the_committed_runs_give(tmp_path: Path) -> None:
    out = R.write_realism(paths.REALISM_RUNS, tmp_path / "realism.json")
    got = (tmp_path / "realism.json").read_text(encoding="utf-8")
    again = R.build_realism(paths.REALISM_RUNS, process_root=paths.PROCESS_RUNS)
    assert got == files.dumps_json(again)  # the same bytes again
    assert out["strata"][0]["key"] == "r3-main"
    assert out["strata"][0]["protocol"]["n_sessions"] == 40
    if paths.REALISM.exists():  # after a build: the build's file is this one
        assert got == paths.REALISM.read_text(encoding="utf-8")


def test_the_analysis_does_not_import_the_campaign() -> None:
    assert not any("campaign" in p.parts for p in imports.closure("artifact.analysis.realism"))


def test_real_a_and_real_b_accepted_the_same_tokens_on_every_turn_of_every_server() -> None:
    """Read raw: per stratum and drafter at one stream, the two servers that played the same
    real sessions with identical histories drafted and accepted the same numbers of tokens on
    every turn. (At several streams what a server drafts depends on how it batches requests
    that arrive together, so there they may differ: acceptance has a floor.)"""
    by: dict[tuple[str, str], dict[str, dict[tuple[str, int], tuple[int, int]]]] = {}
    for run in RUNS:
        s = _spec(run)
        if s["concurrency"] != 1:
            continue
        counts = {(r["session_id"], r["turn"]): (r["timings"].get("draft_n") or 0,
                                                  r["timings"].get("draft_n_accepted") or 0)
                  for r in _raw(run)}
        by.setdefault((s["interleave"], s["drafter"]), {})[s["workload"]["play"]] = counts
    drafted = 0
    for (group, drafter), sides in by.items():
        a, b = sides["real-a"], sides["real-b"]
        assert a.keys() == b.keys(), (group, drafter)
        assert a == b, (group, drafter, [k for k in a if a[k] != b[k]][:5])
        drafted += sum(n for n, _ in a.values()) if drafter != "none" else 0
    assert drafted > 0


def test_no_side_is_played_on_a_server_that_has_seen_another_sides_text() -> None:
    """Each run is its own server (its own log, its own starts) and every turn it planned and
    sent belongs to its one side."""
    for run in RUNS:
        play = _spec(run)["workload"]["play"]
        planned = {json.loads(ln)["side"] for ln in
                   (run / records.SESSIONS).read_text().splitlines() if ln}
        sent = {r["side"] for r in _raw(run)}
        assert planned == sent == {play}, run.name
        assert (run / records.SERVER_LOG).stat().st_size > 0
    by_group = defaultdict(list)
    for run in RUNS:
        s = _spec(run)
        by_group[(s["interleave"], s["drafter"])].append(s["workload"]["play"])
    for key, sides in by_group.items():
        assert len(sides) == len(set(sides)), key  # one server per side


@pytest.fixture(scope="module")
def study() -> R.contract.Realism:
    return R.build_realism(paths.REALISM_RUNS, bootstrap=FAST)


def test_every_server_of_a_stratum_reads_the_same_turns_and_the_rounds_are_balanced(
        study: R.contract.Realism) -> None:
    for st in study["strata"]:
        p = st["protocol"]
        assert {s["n_turns"] for s in st["servers"]} == {p["turns_per_side"]}
        for s in st["servers"]:
            assert len(s["places"]) == p["n_servers"]
            # a Williams design: places count turns, a round sends `concurrency` of them
            assert max(s["places"]) - min(s["places"]) <= 2 * p["concurrency"], s["run_id"]
        if p["concurrency"] == 1:  # one request in flight: the same history, the same drafts
            assert all(e["equal"] for e in st["exact"])
        else:  # batching follows arrival timing: the drafts may differ, so acceptance has a floor
            assert {f"{e['drafter']}/acceptance" for e in st["exact"]} <= {
                f"{f['drafter']}/{f['quantity']}" for f in st["floors"]}


def test_verdicts_follow_the_declared_margins_and_holm(study: R.contract.Realism) -> None:
    margins = study["parameters"]["margins"]
    n = 0
    for st in study["strata"]:
        for g in st["gaps"]:
            n += 1
            alpha = study["parameters"]["alpha"]
            so = g["sessions_only"]  # take three's rule: the 90 % interval, uncorrected
            lo, hi = so["ci90"]
            assert g["margin"] == pytest.approx(100 * margins[g["quantity"]])
            inside = lo is not None and hi is not None and -g["margin"] < lo and hi < g["margin"]
            if inside:
                assert so["verdict"] == "equivalent"
            elif so["p_holm"] is not None and so["p_holm"] < alpha:
                assert so["verdict"] == "differs"
            else:
                assert so["verdict"] == "cannot tell"
            # with the process spread: the equivalence Holm-corrected too
            if g["p_tost_holm"] is not None and g["p_tost_holm"] < alpha:
                assert g["verdict"] == "equivalent"
            elif g["p_holm"] is not None and g["p_holm"] < alpha:
                assert g["verdict"] == "differs"
            else:
                assert g["verdict"] == "cannot tell"
            if g["p_tost"] is not None:
                assert g["p_tost_holm"] is not None and g["p_tost_holm"] >= g["p_tost"] - 1e-12
            if g["p"] is not None:
                assert g["p_holm"] is not None and g["p_holm"] >= g["p"] - 1e-12
            if g["value"] is not None and g["ci95"][0] is not None:
                assert g["ci95"][0] <= g["ci90"][0] <= g["ci90"][1] <= g["ci95"][1]
        assert all(f["p_holm"] is None for f in st["floors"])
    assert n == study["verdicts"]["n_gaps"] == sum(
        study["verdicts"][k] for k in ("equivalent", "differs", "cannot_tell"))
    assert n == sum(study["verdicts"]["sessions_only"].values())


def _copy(tmp_path: Path, *names: str) -> Path:
    root = tmp_path / "runs"
    for name in names:
        shutil.copytree(paths.REALISM_RUNS / name, root / name)
    return root


def _rewrite(path: Path, change: Any) -> None:
    """Each JSON line of ``path`` through ``change`` (which edits it in place)."""
    rows = [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        change(r)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _fatal(got: R.contract.Realism) -> list[str]:
    return [f"{warning_classes.classify(w)}: {w}" for w in warning_classes.fatal(got["warnings"])]


FOUR = ("r3-main-none-real-a", "r3-main-none-real-b", "r3-main-ngram-mod-real-a",
        "r3-main-ngram-mod-real-b")


def test_a_contended_turn_is_dropped_from_every_server(tmp_path: Path) -> None:
    root = _copy(tmp_path, *FOUR)
    clean = R.build_realism(root, bootstrap=FAST)
    busy_anywhere = {(r["session_id"], r["turn"]) for run in FOUR for r in _raw(root / run)
                     if r.get("contended") is not False}
    victim = next(r for r in _raw(root / FOUR[2])
                  if (r["session_id"], r["turn"]) not in busy_anywhere)

    def busy(r: dict[str, Any]) -> None:
        if (r["session_id"], r["turn"]) == (victim["session_id"], victim["turn"]):
            r["contended"] = True

    _rewrite(root / FOUR[2] / records.RESULTS, busy)
    got = R.build_realism(root, bootstrap=FAST)
    p0, p1 = clean["strata"][0]["protocol"], got["strata"][0]["protocol"]
    assert p1["turns_per_side"] == p0["turns_per_side"] - 1
    assert p1["n_turns_dropped"] == p0["n_turns_dropped"] + 1
    assert {s["n_turns"] for s in got["strata"][0]["servers"]} == {p1["turns_per_side"]}
    assert _fatal(got) == _fatal(clean)


def test_a_turn_missing_on_one_server_is_fatal_and_dropped_everywhere(tmp_path: Path) -> None:
    root = _copy(tmp_path, *FOUR)
    lines = (root / FOUR[1] / records.RESULTS).read_text().splitlines()
    (root / FOUR[1] / records.RESULTS).write_text("\n".join(lines[1:]) + "\n")
    got = R.build_realism(root, bootstrap=FAST)
    (w,) = _fatal(got)
    assert w.startswith("one-sided: realism: stratum r3-main: 1 turn(s) measured on one side")


def test_margins_come_from_the_campaign_file(tmp_path: Path) -> None:
    text = paths.REALISM_CAMPAIGN.read_text(encoding="utf-8")
    wide = tmp_path / "wide.toml"
    wide.write_text(text.replace("speedup = 0.05", "speedup = 0.9"), encoding="utf-8")
    root = _copy(tmp_path, *FOUR)
    got = R.build_realism(root, campaign_file=wide, bootstrap=FAST)
    sp = [g for g in got["strata"][0]["gaps"] if g["quantity"] == "speedup"]
    assert sp == []  # four servers: no synthetic side, no synthetic gap
    floors = [f for f in got["strata"][0]["floors"] if f["quantity"] == "speedup"]
    assert floors and all(f["margin"] == pytest.approx(90) for f in floors)
    assert got["parameters"]["margins"]["speedup"] == 0.9
    none = tmp_path / "none.toml"
    none.write_text(text.replace("acceptance = 0.05\n", ""), encoding="utf-8")
    with pytest.raises(AnalysisError, match=r"\[equivalence\]: no margin for acceptance") as e:
        R.build_realism(root, campaign_file=none, bootstrap=FAST)
    assert "\n" not in str(e.value)


def test_the_groups_not_measured_are_pending(tmp_path: Path) -> None:
    got = R.build_realism(_copy(tmp_path, *FOUR), bootstrap=FAST)
    assert got["pending"] == ["r3-code", "r3-c5"]


def test_take_two_shows_the_echo_that_take_three_removes(study: R.contract.Realism) -> None:
    """Issue 28's recomputation of take two: on its shared ngram-mod server of the main stratum
    the replay that ran second accepted 0.835, the first 0.595; the draft model, without a
    pool, about the same both times."""
    echo = {e["run_id"]: e for e in study["echo"]}
    main = echo["take-two-realism-ngram-mod"]
    assert round(main["first"], 3) == 0.595 and round(main["second"], 3) == 0.835
    draft = echo["take-two-realism-draft-q2k"]
    assert abs(draft["second"] - draft["first"]) < 0.01


def test_each_stratum_names_the_fingerprints_its_runs_recorded(study: R.contract.Realism
                                                                ) -> None:
    for s in study["strata"]:
        raw = {json.dumps(json.loads((run / records.CONFIG).read_text())["environment"]["host"],
                          sort_keys=True)
               for run in RUNS if _spec(run)["interleave"] == s["key"]}
        assert {json.dumps(h, sort_keys=True) for h in s["protocol"]["hosts"]} == raw
        assert len(s["protocol"]["hosts"]) == len(raw) >= 1


def test_without_take_two_runs_the_echo_is_empty_and_says_so(tmp_path: Path) -> None:
    got = R.build_realism(_copy(tmp_path, *FOUR), bootstrap=FAST)
    assert got["echo"] == []
    said = [w for w in got["warnings"] if "echo" in w]
    assert len(said) == 1 and warning_classes.classify(said[0]) == "not-computable"
    assert "_superseded" in said[0]


def test_a_run_of_take_two_is_not_a_per_side_run() -> None:
    old = paths.REALISM_RUNS / "_superseded" / "take-two-realism-none"
    with pytest.raises(AnalysisError, match=r"config.json: not a per-side realism run's config"):
        R.load_run(old)


def test_the_committed_runs_raise_no_fatal_warning(study: R.contract.Realism) -> None:
    assert _fatal(study) == []


def test_turns_of_a_session_not_in_the_lock_are_excluded_and_fatal(tmp_path: Path) -> None:
    root = _copy(tmp_path, *FOUR)
    victim = _raw(root / FOUR[0])[0]
    sid = victim["session_id"]
    for run in FOUR:  # renamed everywhere: plan and records agree, only the lock says no
        for name in (records.RESULTS, records.SESSIONS):
            _rewrite(root / run / name, lambda r: r.update(session_id="XX-not-locked")
                     if r["session_id"] == sid else None)
    got = R.build_realism(root, bootstrap=FAST)
    fatal = _fatal(got)
    assert len(fatal) == 4 and all(f.startswith("off-lock: run r3-main-") for f in fatal)
    assert "XX-not-locked" in fatal[0] and "\n" not in fatal[0]
    assert got["strata"][0]["protocol"]["n_sessions"] == 39


def test_a_run_whose_lock_cannot_be_read_is_left_out(tmp_path: Path) -> None:
    root = _copy(tmp_path, *FOUR[:2])
    locks = tmp_path / "sessions"
    locks.mkdir()
    with pytest.raises(AnalysisError, match="no per-side realism run to analyse"):
        R.build_realism(root, bootstrap=FAST, locks=locks)
    runs, warnings = R.load_runs(root, locks=locks)
    assert runs == [] and len(warnings) == 2
    assert all(warning_classes.classify(w) == "run-left-out" and "realism.txt" in w
               for w in warnings)


def test_turns_without_contention_fields_are_a_fatal_warning(tmp_path: Path) -> None:
    root = _copy(tmp_path, *FOUR)
    n = 0

    def strip(r: dict[str, Any]) -> None:
        nonlocal n
        if r["turn"] == 5 and r["contended"] is False:
            r.pop("contention")
            r.pop("contended")
            n += 1

    _rewrite(root / FOUR[1] / records.RESULTS, strip)
    got = R.build_realism(root, bootstrap=FAST)
    (w,) = _fatal(got)
    assert w.startswith(f"unknown-contention: run {FOUR[1]}: {n} of ")
