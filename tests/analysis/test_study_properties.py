"""Generated malformed records for the acceptance-split and workload readers (hypothesis), as
tests/test_properties.py does for the core's: a counted exclusion or unreadable line, never a
traceback, never a changed number for the good records."""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifact import paths, records
from artifact.analysis import accsplit as A
from artifact.analysis import workload as W
from artifact.analysis.params import Bootstrap
from tests.workload_corpus import write_run

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
COUNT = re.compile(r": (\d+) (?:unreadable line|duplicate record|record\(s\) with impossible|"
                   r"record\(s\) that disagree)")
NO_DRAFT = "w2-b1-n128-none"
DRAFTED = "w2-b1-n128-ngram-mod"
BOOT = Bootstrap(resamples=30, seed=5)

junk_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
              st.floats(allow_nan=True, allow_infinity=True)),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=6)
hostile_number = st.sampled_from([math.nan, math.inf, -math.inf, -1.0, -1e-9])


def counted(warnings: list[str], run: str) -> int:
    """Lines and records of ``run`` that the warnings say were skipped or excluded."""
    return sum(int(m.group(1)) for w in warnings if w.startswith(f"run {run}: ")
               for m in [COUNT.search(w)] if m)


def numbers(data: Any) -> Any:
    return {k: v for k, v in json.loads(json.dumps(data)).items() if k != "warnings"}


def append_bad(path: Path, bad: list[tuple[str, Any]]) -> None:
    with path.open("ab") as f:
        for kind, x in bad:
            if kind == "row":
                f.write(json.dumps(x).encode() + b"\n")  # NaN written as NaN
            else:
                f.write(x + b"\n")


# --- acceptance split --------------------------------------------------------------------------

ACC: dict[str, Any] = {}


def _acc_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in
            (paths.RUNS / NO_DRAFT / records.RESULTS).read_text(encoding="utf-8").splitlines()]


def _acc_clean(root: Path) -> Any:
    if "clean" not in ACC:
        ACC["clean"] = numbers(A.build(root))
    return ACC["clean"]


@st.composite
def bad_result(draw: st.DrawFn) -> tuple[str, Any]:
    """A line that is never a good new record of the no-draft run."""
    kind = draw(st.sampled_from(["bytes", "type", "impossible", "duplicate"]))
    if kind == "bytes":  # a blank line is no line
        return "bytes", draw(st.binary(min_size=1, max_size=40).filter(
            lambda b: b.replace(b"\n", b"").strip())).replace(b"\n", b"")
    base = dict(draw(st.sampled_from(_acc_rows())))
    if kind == "duplicate":  # the same key, any numbers: the first copy is kept
        base["e2e_ms"] = draw(st.floats(0.0, 1e7))
        return "row", base
    base["prompt_id"] = "new/" + draw(st.text("abc", min_size=1, max_size=4))
    if kind == "impossible":
        which = draw(st.sampled_from(["event", "sent", "e2e", "delta", "timing"]))
        v = draw(hostile_number)
        if which == "event":
            events = list(base["event_ms"])
            events[draw(st.integers(0, len(events) - 1))] = v
            base["event_ms"] = events
        elif which == "sent":
            base["sent_unix_s"] = v
        elif which == "e2e":
            base["e2e_ms"] = v
        elif which == "delta":
            base["metrics_delta"] = {"spec_decode_num_drafts_total": v}
        else:
            base["timings"] = {**base["timings"], "predicted_n": -1}
        return "row", base
    field = draw(st.sampled_from(["timings", "event_ms", "event_text", "metrics_delta",
                                  "repeat", "e2e_ms", "sent_unix_s", "window", "seed"]))
    value = draw(junk_json.filter(lambda v: _never_valid(field, v)))
    base[field] = value
    return "row", base


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _never_valid(field: str, v: Any) -> bool:
    """Whether ``v`` is of a JSON type ``field`` never takes (so the row cannot be good)."""
    if field in ("e2e_ms", "sent_unix_s"):
        return not _is_number(v)
    if field in ("repeat", "seed"):
        return not (isinstance(v, int) and not isinstance(v, bool)) and not (
            field == "seed" and v is None)
    if field == "window":
        return v is not None and not isinstance(v, str)
    if field == "metrics_delta":
        return not (v is None or (isinstance(v, dict) and all(map(_is_number, v.values()))))
    if field == "event_ms":
        return not (isinstance(v, list) and all(map(_is_number, v)))
    if field == "event_text":
        return v is not None  # never one string per event of this record (3 at most)
    return True  # timings: junk never holds its six required fields



@SETTINGS
@given(bad=st.lists(bad_result(), min_size=1, max_size=6))
def test_malformed_accsplit_records_are_counted_and_change_no_good_number(
        bad: list[tuple[str, Any]]) -> None:
    root = Path(tempfile.mkdtemp())
    try:
        for run in (DRAFTED, NO_DRAFT):
            shutil.copytree(paths.RUNS / run, root / run)
        clean = _acc_clean(root)
        append_bad(root / NO_DRAFT / records.RESULTS, bad)
        got = A.build(root)  # never a traceback
        assert numbers(got) == clean
        assert counted(got["warnings"], NO_DRAFT) == len(bad)
    finally:
        shutil.rmtree(root)


@SETTINGS
@given(which=st.sets(st.integers(0, 7), min_size=1, max_size=3),
       value=hostile_number,
       field=st.sampled_from(["delta", "event", "ttft_ms", "queue_ms", "draft_n"]))
def test_a_hostile_value_in_a_drafted_record_excludes_exactly_that_record(
        which: set[int], value: float, field: str) -> None:
    root = Path(tempfile.mkdtemp())
    try:
        for run in (DRAFTED, NO_DRAFT):
            shutil.copytree(paths.RUNS / run, root / run)
        clean = _acc_clean(root)
        path = root / DRAFTED / records.RESULTS
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for i in which:
            r = rows[i]
            if field == "delta":
                r["metrics_delta"] = {**r["metrics_delta"],
                                      "spec_decode_num_accepted_tokens_total": value}
            elif field == "event":
                r["event_ms"][i] = value
            elif field == "draft_n":
                r["timings"] = {**r["timings"], "draft_n": value}
            else:
                r[field] = value
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        got = A.build(root)
        assert got["protocol"]["n_requests"] == clean["protocol"]["n_requests"] - len(which)
        assert counted(got["warnings"], DRAFTED) == len(which)
    finally:
        shutil.rmtree(root)


# --- workload ----------------------------------------------------------------------------------

SESSIONS = {"s1": 3, "s2": 5, "s3": 6}
WL: dict[str, Any] = {}


def _wl_root() -> Path:
    root = Path(tempfile.mkdtemp())
    write_run(root, "wl-a", "english", "2026-01-01T00:01:00", 1.0, SESSIONS, style="english")
    write_run(root, "wl-b", "code", "2026-01-01T00:02:00", 1.3, SESSIONS)
    return root


def _wl_rows() -> list[dict[str, Any]]:
    if "rows" not in WL:
        root = _wl_root()
        WL["rows"] = [json.loads(line) for line in (root / "wl-a" / records.RESULTS)
                      .read_text(encoding="utf-8").splitlines()]
        WL["clean"] = numbers(W.build_workload(root, bootstrap=BOOT))
        shutil.rmtree(root)
    return list(WL["rows"])


@st.composite
def bad_turn(draw: st.DrawFn) -> tuple[str, Any]:
    """A line that is never a good new turn of run wl-a."""
    kind = draw(st.sampled_from(["bytes", "type", "impossible", "plan", "duplicate"]))
    if kind == "bytes":  # a blank line is no line
        return "bytes", draw(st.binary(min_size=1, max_size=40).filter(
            lambda b: b.replace(b"\n", b"").strip())).replace(b"\n", b"")
    base = dict(draw(st.sampled_from(_wl_rows())))
    if kind == "duplicate":
        base["ttft_ms"] = draw(st.floats(0.0, 1e7))
        return "row", base
    if kind == "plan":  # a turn the plan lacks, or one whose counts disagree with it
        how = draw(st.sampled_from(["turn", "session", "tokens", "chars"]))
        if how == "turn":
            base["turn"] = draw(st.integers(SESSIONS["s3"], 10**6))
        elif how == "session":
            base["session_id"] = "x" + draw(st.text("abc", max_size=4))
        else:
            base["turn"] = base["turn"] + 100  # a new key, then disagreeing counts
            key = "prompt_tokens" if how == "tokens" else "prompt_chars"
            base[key] = base[key] + draw(st.integers(1, 50))
        return "row", base
    base["turn"] = base["turn"] + 100 + draw(st.integers(0, 50))  # a new key
    if kind == "impossible":
        field = draw(st.sampled_from(["ttft_ms", "tpot_ms", "e2e_ms", "queue_ms",
                                      "sent_unix_s", "zero", "alpha"]))
        if field == "zero":
            base[draw(st.sampled_from(["prompt_tokens", "output_tokens"]))] = 0
        elif field == "alpha":
            base["alpha"] = draw(st.floats(1.0001, 1e6) | hostile_number)
        else:
            base[field] = draw(hostile_number)
        return "row", base
    field = draw(st.sampled_from(["timings", "side", "turn", "session_id", "output_tokens",
                                  "event_ms"]))
    base[field] = draw(junk_json.filter(lambda v: _never_valid_turn(field, v)))
    return "row", base


def _never_valid_turn(field: str, v: Any) -> bool:
    if field in ("turn", "output_tokens"):
        return not isinstance(v, int) or isinstance(v, bool)
    if field == "session_id":
        return not isinstance(v, str)
    if field == "side":
        return v not in records.SIDES
    if field == "event_ms":
        return not (isinstance(v, list) and all(map(_is_number, v)))
    return not isinstance(v, dict)  # timings


@SETTINGS
@given(bad=st.lists(bad_turn(), min_size=1, max_size=6))
def test_malformed_turns_are_counted_and_change_no_good_number(
        bad: list[tuple[str, Any]]) -> None:
    _wl_rows()
    root = _wl_root()
    try:
        append_bad(root / "wl-a" / records.RESULTS, bad)
        got = W.build_workload(root, bootstrap=BOOT)  # never a traceback
        assert numbers(got) == WL["clean"]
        assert counted(got["warnings"], "wl-a") == len(bad)
    finally:
        shutil.rmtree(root)


@SETTINGS
@given(plan_bytes=st.binary(min_size=1, max_size=20), at=st.integers(0, 10**6))
def test_a_damaged_plan_leaves_the_run_out_never_a_traceback(plan_bytes: bytes, at: int
                                                             ) -> None:
    _wl_rows()
    root = _wl_root()
    try:
        plan = root / "wl-b" / records.SESSIONS
        data = plan.read_bytes()
        lines = data.splitlines(keepends=True)
        i = at % len(lines)
        lines.insert(i, plan_bytes.replace(b"\n", b"") + b"\n")
        plan.write_bytes(b"".join(lines))
        got = W.build_workload(root, bootstrap=BOOT)
        read = records.read_plan(root / "wl-b")
        assert read is not None
        if read.n_bad_lines:
            assert list(got["conditions"]) == ["english"]
            assert any(w.startswith("run wl-b: sessions.jsonl: ") and w.endswith("run skipped")
                       for w in got["warnings"])
        else:  # the inserted bytes were blank: the plan is the same
            assert numbers(got) == WL["clean"]
    finally:
        shutil.rmtree(root)
