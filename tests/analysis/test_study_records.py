"""The acceptance-split and workload studies read their records by the core's rules (issue 19):
every defect class of the hostile-input round, one test each, on runs sliced from the committed
ones (acceptance split) or written as the runner writes them (workload)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from artifact import paths, records, warning_classes
from artifact.analysis import accsplit as A
from artifact.analysis import workload as W
from artifact.analysis.accsplit_obs import M_ACCEPTED, M_ROUNDS
from artifact.analysis.params import Bootstrap
from artifact.analysis.task import say_warnings
from tests.workload_corpus import plan_row, write_run

DRAFTED = "w2-b1-n128-ngram-mod"
NO_DRAFT = "w2-b1-n128-none"
BOOT = Bootstrap(resamples=50, seed=3)


# --- acceptance split --------------------------------------------------------------------------


def accsplit_runs(root: Path) -> Path:
    """Two committed runs of the study (8 records each), copied."""
    for run in (DRAFTED, NO_DRAFT):
        shutil.copytree(paths.RUNS / run, root / run)
    return root


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, rs: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rs), encoding="utf-8")  # NaN as NaN


def without_warnings(data: Any) -> Any:
    return {k: v for k, v in json.loads(json.dumps(data)).items() if k != "warnings"}


def edit_first(run: Path, change: Any) -> dict[str, Any]:
    rs = rows(run / records.RESULTS)
    change(rs[0])
    write_rows(run / records.RESULTS, rs)
    return rs[0]


def fatal_lines(warnings: list[str]) -> list[str]:
    return [f"{warning_classes.classify(w)}: {w}" for w in warning_classes.fatal(warnings)]


@pytest.mark.parametrize("what,change", [
    ("nan counter", lambda r: r["metrics_delta"].__setitem__(M_ACCEPTED, math.nan)),
    ("negative counter", lambda r: r["metrics_delta"].__setitem__(M_ROUNDS, -3.0)),
    ("infinite counter", lambda r: r["metrics_delta"].__setitem__(M_ROUNDS, math.inf)),
    ("nan event time", lambda r: r["event_ms"].__setitem__(2, math.nan)),
    ("events out of order", lambda r: r["event_ms"].__setitem__(1, r["event_ms"][3] + 1.0)),
    ("event after the end", lambda r: r["event_ms"].__setitem__(-1, r["e2e_ms"] + 1.0)),
    ("nan sent time", lambda r: r.__setitem__("sent_unix_s", math.nan)),
])
def test_an_impossible_accsplit_record_is_excluded_and_named(tmp_path: Path, what: str,
                                                             change: Any) -> None:
    root = accsplit_runs(tmp_path)
    clean = A.build(root)
    first = edit_first(root / DRAFTED, change)
    got = A.build(root)  # never a traceback (a NaN counter crashed int())
    assert got["protocol"]["n_requests"] == clean["protocol"]["n_requests"] - 1
    (w,) = warning_classes.fatal(got["warnings"])
    assert w.startswith(f"run {DRAFTED}: results.jsonl: 1 record(s) with impossible values "
                        f"excluded: {first['prompt_id']}#{first['repeat']} (")
    assert "\n" not in w


def test_a_mistyped_counter_or_event_is_an_unreadable_line(tmp_path: Path) -> None:
    root = accsplit_runs(tmp_path)
    rs = rows(root / DRAFTED / records.RESULTS)
    rs[0]["metrics_delta"][M_ACCEPTED] = "12"
    rs[1]["event_ms"][0] = None
    rs[2]["event_text"] = rs[2]["event_text"][:-1]
    write_rows(root / DRAFTED / records.RESULTS, rs)
    got = A.build(root)
    assert f"run {DRAFTED}: results.jsonl: 3 unreadable line(s) skipped" in got["warnings"]


def test_a_backup_copy_of_a_run_folder_is_not_a_second_run(tmp_path: Path) -> None:
    root = accsplit_runs(tmp_path)
    clean = A.build(root)
    for copy in (f"{DRAFTED}.bak", f"backup-{DRAFTED}"):  # after and before the original
        shutil.copytree(root / DRAFTED, root / copy)
    got = A.build(root)
    assert without_warnings(got) == without_warnings(clean)
    skipped = sorted(w for w in got["warnings"] if w.endswith("; run skipped"))
    assert skipped == [f"run backup-{DRAFTED}: run_id '{DRAFTED}' already used by {DRAFTED}; "
                       "run skipped",
                       f"run {DRAFTED}.bak: run_id '{DRAFTED}' already used by {DRAFTED}; "
                       "run skipped"]
    assert {warning_classes.classify(w) for w in skipped} == {"run-left-out"}


def test_a_duplicate_accsplit_record_is_kept_once_and_fatal(tmp_path: Path) -> None:
    root = accsplit_runs(tmp_path)
    clean = A.build(root)
    results = root / NO_DRAFT / records.RESULTS
    lines = results.read_bytes().splitlines(keepends=True)
    results.write_bytes(b"".join(lines) + lines[0])
    got = A.build(root)
    assert without_warnings(got) == without_warnings(clean)
    assert [warning_classes.classify(w) for w in warning_classes.fatal(got["warnings"])] == \
        ["duplicate-records"]


def test_a_config_whose_spec_is_not_an_object_is_not_a_crash(tmp_path: Path) -> None:
    root = accsplit_runs(tmp_path)
    (root / "odd").mkdir()
    (root / "odd" / records.CONFIG).write_text('{"spec": ["accsplit"]}', encoding="utf-8")
    assert A.build(root)["protocol"]["n_runs"] == 2


def test_every_analysis_task_prints_its_warnings_grouped(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    say_warnings("accsplit", ["run a: results.jsonl: 1 duplicate record(s) excluded, first "
                              "copy kept: p#0", "run a: results.jsonl: 2 unreadable line(s) "
                              "skipped"])
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "[accsplit] 2 warning(s):"
    assert err[1].startswith("[accsplit]   duplicate-records (1, fatal under --strict)")
    assert any("unreadable-lines (1)" in line for line in err)
    from artifact.analysis.task import _write_accsplit, _write_workload

    root = accsplit_runs(tmp_path / "runs")
    lines = (root / NO_DRAFT / records.RESULTS).read_bytes().splitlines(keepends=True)
    (root / NO_DRAFT / records.RESULTS).write_bytes(b"".join(lines) + lines[0])
    _write_accsplit(root, tmp_path / "accsplit.json")
    assert "[accsplit]   duplicate-records (1, fatal under --strict)" in capsys.readouterr().err
    wl = workload_runs(tmp_path / "wl")
    with (wl / "wl-a" / records.RESULTS).open("ab") as f:
        f.write(b"\xff\xfe\n")
    _write_workload(wl, tmp_path / "workload.json")
    assert "[workload]   unreadable-lines (1)" in capsys.readouterr().err


# --- workload ----------------------------------------------------------------------------------

SESSIONS = {"s1": 3, "s2": 6, "s3": 7}


def workload_runs(root: Path) -> Path:
    write_run(root, "wl-a", "english", "2026-01-01T00:01:00", 1.0, SESSIONS, style="english")
    write_run(root, "wl-b", "code", "2026-01-01T00:02:00", 1.3, SESSIONS)
    return root


def build(root: Path) -> Any:
    return W.build_workload(root, bootstrap=BOOT)


def turn(session: str = "s1", side: str = "real", t: int = 0, **change: Any) -> dict[str, Any]:
    """A turn record as the corpus writes it (turn t of the plan), with ``change``."""
    out: dict[str, Any] = {
        "session_id": session, "side": side, "condition": "english", "turn": t, "order": 0,
        "slot": 0, "attempt": 1, "server_start": 1, "sent_unix_s": 0.0, "queue_ms": 0.0,
        "prompt_chars": 400 * (t + 1), "prompt_tokens": 100 * (t + 1), "cached_tokens": 0,
        "output_tokens": 16, "n_predict": 16, "ttft_ms": 5000.0, "tpot_ms": 900.0,
        "e2e_ms": 20000.0, "event_ms": [1.0], "stop_type": "length", "alpha": 0.5,
        "timings": {"prompt_n": 10, "prompt_ms": 1.0, "predicted_n": 16, "predicted_ms": 1.0,
                    "predicted_per_second": 1.0, "cache_n": 0, "draft_n": 8,
                    "draft_n_accepted": 4}}
    out.update(change)
    return out


def append(run: Path, *rs: dict[str, Any]) -> None:
    for r in rs:
        records.append_jsonl(run / records.RESULTS, r)


def test_turns_missing_from_the_plan_or_disagreeing_with_it_are_excluded(tmp_path: Path
                                                                         ) -> None:
    root = workload_runs(tmp_path)
    clean = build(root)
    append(root / "wl-a", turn("s1", "real", 7), turn("s1", "synthetic", 7),  # not planned
           turn("s9", "real"), turn("s9", "synthetic"),  # a session the plan lacks
           turn("s2", "real", 1, prompt_tokens=999),  # disagrees (and repeats turn 1)
           )
    rs = rows(root / "wl-b" / records.RESULTS)
    rs[0]["prompt_chars"] += 1
    rs[1]["n_predict"] = 32
    write_rows(root / "wl-b" / records.RESULTS, rs)
    got = build(root)
    assert got["conditions"]["english"] == clean["conditions"]["english"]
    fatal = fatal_lines(got["warnings"])
    assert any(w.startswith("off-plan: run wl-a: results.jsonl: 4 record(s) that disagree with "
                            "the plan (sessions.jsonl) excluded: real:s1#7 (not in the plan)")
               for w in fatal), fatal
    assert any(w.startswith("duplicate-records: run wl-a: results.jsonl: 1 duplicate") for w in
               fatal)
    assert any("run wl-b: results.jsonl: 2 record(s) that disagree with the plan" in w
               and "prompt_chars 401, the plan says 400" in w and "n_predict 32, the plan says 16"
               in w for w in fatal), fatal
    code = got["conditions"]["code"]
    # s1's turn 0 excluded on both sides: one REAL turn fewer, every session still paired
    assert code["n_turns"] == clean["conditions"]["code"]["n_turns"] - 1
    assert code["n_sessions"] == clean["conditions"]["code"]["n_sessions"]


def test_zero_token_and_impossible_turns_are_excluded(tmp_path: Path) -> None:
    root = workload_runs(tmp_path)
    rs = rows(root / "wl-a" / records.RESULTS)
    bad = {0: {"output_tokens": 0}, 2: {"prompt_tokens": 0}, 4: {"ttft_ms": math.nan},
           6: {"tpot_ms": -1.0}, 8: {"output_tokens": 17}, 10: {"cached_tokens": 10**6},
           12: {"e2e_ms": math.inf}, 14: {"alpha": 1.5}}
    for i, change in bad.items():
        rs[i].update(change)
    write_rows(root / "wl-a" / records.RESULTS, rs)
    got = build(root)
    (w,) = [w for w in got["warnings"] if "impossible values" in w]
    assert w.startswith(f"run wl-a: results.jsonl: {len(bad)} record(s) with impossible values")
    assert "0 output tokens: a turn sends and receives at least one" in w
    assert got["conditions"]["english"]["n_turns"] == sum(SESSIONS.values()) - len(
        [i for i in bad if rs[i]["side"] == "real"])


def test_a_session_on_one_side_only_is_not_compared_as_paired(tmp_path: Path) -> None:
    root = workload_runs(tmp_path)
    clean = build(root)
    run = root / "wl-b"
    rs = [r for r in rows(run / records.RESULTS)
          if not (r["session_id"] == "s3" and r["side"] == "synthetic")]
    write_rows(run / records.RESULTS, rs)
    got = build(root)
    code = got["conditions"]["code"]
    assert code["n_sessions"] == clean["conditions"]["code"]["n_sessions"] - 1
    assert code["n_turns"] == clean["conditions"]["code"]["n_turns"] - SESSIONS["s3"]
    assert fatal_lines(got["warnings"]) == [
        "one-sided: run wl-b: 1 session(s) measured on one side only (real:s3), left out of "
        "the comparison"]


def test_a_repeated_turn_counts_once(tmp_path: Path) -> None:
    root = workload_runs(tmp_path)
    clean = build(root)
    first = rows(root / "wl-a" / records.RESULTS)[0]
    append(root / "wl-a", {**first, "ttft_ms": 1e6}, {**first, "ttft_ms": 1e6})
    got = build(root)
    assert without_warnings(got) == without_warnings(clean)
    assert [warning_classes.classify(w) for w in warning_classes.fatal(got["warnings"])] == \
        ["duplicate-records"]


@pytest.mark.parametrize("line", [b'{"session_id": "s1", \xff\n', b'{"torn": \n', b"[1, 2]\n",
                                  json.dumps(turn(timings=None)).encode() + b"\n",
                                  json.dumps(turn(side="both")).encode() + b"\n",
                                  json.dumps(turn(turn="1")).encode() + b"\n",
                                  json.dumps(turn(event_ms=["x"])).encode() + b"\n"])
def test_an_unreadable_turn_line_is_warned_never_a_traceback(tmp_path: Path, line: bytes
                                                             ) -> None:
    root = workload_runs(tmp_path)
    clean = build(root)
    with (root / "wl-a" / records.RESULTS).open("ab") as f:
        f.write(line)
    got = build(root)
    assert without_warnings(got) == without_warnings(clean)
    assert got["warnings"] == ["run wl-a: results.jsonl: 1 unreadable line(s) skipped"]


@pytest.mark.parametrize("damage", ["byte", "missing", "repeat"])
def test_a_damaged_or_missing_plan_leaves_the_run_out_in_one_line(tmp_path: Path,
                                                                  damage: str) -> None:
    root = workload_runs(tmp_path)
    plan = root / "wl-b" / records.SESSIONS
    if damage == "byte":
        data = bytearray(plan.read_bytes())
        data[10] = 0xFF
        plan.write_bytes(bytes(data))
    elif damage == "missing":
        plan.unlink()
    else:
        records.append_jsonl(plan, plan_row("s1", "real", 2))  # s1's turns planned twice
    got = build(root)
    assert list(got["conditions"]) == ["english"]
    (w,) = fatal_lines(got["warnings"])
    assert w.startswith("run-left-out: run wl-b: sessions.jsonl: ") and w.endswith(
        "; run skipped")


def test_a_copy_of_a_workload_run_or_a_second_run_of_a_condition_is_left_out(tmp_path: Path
                                                                              ) -> None:
    root = workload_runs(tmp_path)
    clean = build(root)
    shutil.copytree(root / "wl-b", root / "a-copy-of-wl-b")
    records.write_json(root / "a-copy-of-wl-b" / records.CONFIG, {
        **records.read_json(root / "wl-b" / records.CONFIG), "run_id": "wl-b"})
    write_run(root, "wl-c", "code", "2026-01-01T00:03:00", 2.0, SESSIONS)
    got = build(root)
    assert without_warnings(got) == without_warnings(clean)
    assert sorted(fatal_lines(got["warnings"])) == [
        "run-left-out: run a-copy-of-wl-b: run_id 'wl-b' already used by wl-b; run skipped",
        "run-left-out: run wl-c: condition 'code' already used by wl-b; run skipped"]


@pytest.mark.parametrize("config", [
    {"environment": "now"},
    {"spec": {"workload": {"condition": "c", "style": "code", "prefix_tokens": "3",
                           "recurrent": False, "chars_per_token": None, "block": 16}}},
    {"spec": {"workload": {"condition": "c", "style": "code", "prefix_tokens": 0,
                           "recurrent": "false", "chars_per_token": None, "block": 16}}},
    {"spec": {"workload": "code"}},
])
def test_a_mistyped_workload_config_is_one_line(tmp_path: Path, config: dict[str, Any]) -> None:
    root = workload_runs(tmp_path)
    cfg = records.read_json(root / "wl-b" / records.CONFIG)
    if "spec" in config:
        config = {"spec": {**cfg["spec"], **config["spec"]}}
    records.write_json(root / "wl-b" / records.CONFIG, {**cfg, **config})
    got = build(root)  # never a traceback
    if "environment" in config:  # no start time: the run is still read
        assert set(got["conditions"]) == {"english", "code"}
        return
    (w,) = got["warnings"]
    assert w.startswith("wl-b/config.json: not a workload run's config (") and "\n" not in w


def test_a_plan_with_a_bad_byte_is_never_a_finished_run(tmp_path: Path) -> None:
    from artifact.campaign import runner
    from artifact.spec import load_campaign

    camp = tmp_path / "wl.toml"
    camp.write_text((paths.CAMPAIGNS / "workload.toml").read_text(encoding="utf-8"),
                    encoding="utf-8")
    spec = load_campaign(camp).runs[0]
    run = tmp_path / "runs" / spec.run_id
    run.mkdir(parents=True)
    records.write_json(run / records.CONFIG, {
        "spec_sha256": spec.sha256, "server_argv": runner.argv_template(spec),
        "prompt_set": {"name": spec.prompt_set, "sha256": "x", "n": 2}})
    records.write_json(run / records.METRICS, {"complete": True})
    for sid in ("a", "b"):
        records.append_jsonl(run / records.SESSIONS, plan_row(sid, "real", 2))
    for sid in ("a", "b"):
        for t in range(2):
            records.append_jsonl(run / records.RESULTS, turn(sid, "real", t))
    assert runner.run_is_current(spec, tmp_path / "runs") is True
    data = bytearray((run / records.SESSIONS).read_bytes())
    data[data.rindex(b'"b"') + 1] = 0xFF  # one bad byte in session b's line
    (run / records.SESSIONS).write_bytes(bytes(data))
    assert runner.run_is_current(spec, tmp_path / "runs") is False  # b's turns: not "done"
    with pytest.raises(records.RecordError, match=r"sessions.jsonl: 1 unreadable line\(s\): "
                                                  r"the run's plan is damaged"):
        runner._plan(None, spec, run, lambda _: None, None, None)  # type: ignore[arg-type]
