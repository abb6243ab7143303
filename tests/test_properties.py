"""Generated malformed specs and records (hypothesis): a one-line error or a counted exclusion,
never a traceback, never a changed number for the good records."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifact import records
from artifact.analysis import build_summary
from artifact.spec import SpecError, load_campaign
from tests.corpus import record, spec, write_run

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# --- specs -------------------------------------------------------------------------------------

HEAD = """[campaign]
name = "p"
[models.m]
builtin = "smollm2-135m-q4_1"
family = "smollm2-135m"
quant = "Q4_1"
"""
GOOD_RUN = {"id": "r1", "family": "final", "target": "m", "drafter": "ngram-mod",
            "prompt_set": "kick", "k": 4}
KEYS = sorted({*GOOD_RUN, "temperature", "top_k", "top_p", "seed", "n_predict", "concurrency",
               "repeats", "threads", "n_gpu_layers", "warmup", "timeout_s", "ctx_size",
               "p_min", "draft_model", "bogus"})

scalars = st.one_of(
    st.integers(min_value=-2**63, max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.booleans(),
    st.sampled_from(["..", ".", "_kick", "a/b", "none", "draft-simple", "kick", "m", "ksweep"]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3))


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string
    return "[" + ", ".join(_toml(x) for x in v) + "]"


@SETTINGS
@given(changes=st.dictionaries(st.sampled_from(KEYS), values, min_size=1, max_size=4),
       drop=st.sets(st.sampled_from(sorted(GOOD_RUN)), max_size=2))
def test_a_malformed_spec_is_one_line_naming_the_file(changes: dict[str, Any],
                                                      drop: set[str]) -> None:
    run = {k: v for k, v in {**GOOD_RUN, **changes}.items() if k not in drop}
    body = HEAD + "[[run]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in run.items())
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "c.toml"
        f.write_text(body, encoding="utf-8")
        try:
            camp = load_campaign(f)
        except SpecError as err:
            msg = str(err)
            assert "\n" not in msg and msg.startswith(str(f)), msg
            return
    (r,) = camp.runs  # accepted: then every value is sane
    assert records.run_dir(Path("runs"), r.run_id)
    for x in (r.temperature, r.top_p, r.timeout_s):
        assert math.isfinite(x) and x >= 0


# --- records -----------------------------------------------------------------------------------

DONE = {"complete": True, "measure_s": 1.0}
GOOD_BASE = [record(f"c{i}", "code", 50.0 + i) for i in range(5)]
GOOD_MOD = [record(f"c{i}", "code", 55.0 + 2 * i, alpha=0.5, draft=(2, 4)) for i in range(5)]

junk_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=6)
FIELDS = ["prompt_id", "repeat", "ttft_ms", "e2e_ms", "alpha", "event_ms", "timings",
          "timings.predicted_per_second", "timings.predicted_ms", "timings.draft_n",
          "timings.predicted_n"]


@st.composite
def bad_row(draw: st.DrawFn) -> tuple[str, Any]:
    """One malformed line: ``("bytes", b"...")`` or ``("row", dict)``, never a good new record."""
    kind = draw(st.sampled_from(["bytes", "torn", "type", "impossible", "duplicate"]))
    if kind in ("bytes", "torn"):
        raw = draw(st.binary(max_size=40))
        return kind, raw.replace(b"\n", b"")
    base = dict(draw(st.sampled_from(GOOD_MOD)))
    base["timings"] = dict(base["timings"])
    if kind == "duplicate":  # same key as a good record, any numbers: the first copy is kept
        base["timings"]["predicted_per_second"] = draw(st.floats(1.0, 1e4))
        return "row", base
    if kind == "impossible":
        which = draw(st.sampled_from(["alpha", "ttft", "accepted"]))
        base["prompt_id"] = "new-" + draw(st.text("abc", min_size=1, max_size=4))
        if which == "alpha":
            base["alpha"] = draw(st.floats(1.0001, 1e6) | st.floats(-1e6, -0.0001))
        elif which == "ttft":
            base["ttft_ms"] = draw(st.floats(-1e6, -0.0001))
        else:
            base["timings"]["draft_n_accepted"] = base["timings"]["draft_n"] + 1
        return "row", base
    field = draw(st.sampled_from(FIELDS))
    base["prompt_id"] = "new-" + draw(st.text("abc", min_size=1, max_size=4))
    value = draw(junk_json.filter(lambda v: _invalid_for(field, v)))
    if field.startswith("timings."):
        base["timings"][field.split(".", 1)[1]] = value
    elif field == "prompt_id" and isinstance(value, str):
        base.pop("prompt_id")
    else:
        base[field] = value
    return "row", base


def _invalid_for(field: str, v: Any) -> bool:
    """Whether ``v`` is of a JSON type the field never takes (so the row cannot be good)."""
    if isinstance(v, int | float) and not isinstance(v, bool) and field != "timings":
        return False  # a number: maybe valid for a numeric field
    if v is None and field in ("ttft_ms", "alpha", "timings.draft_n"):
        return False  # optional fields
    if isinstance(v, list) and field == "event_ms":
        return False
    if isinstance(v, dict) and field == "timings":
        return False
    return not (isinstance(v, str) and field == "prompt_id")


def _two_runs(root: Path) -> None:
    for name, drafter, rows in (("final-none", "none", GOOD_BASE),
                                ("final-mod", "ngram-mod", GOOD_MOD)):
        k = 4 if drafter != "none" else None
        write_run(root, spec(name, family="final", drafter=drafter, k=k), records=rows,
                  log=[], metrics=DONE, vram={"gpu_present": False, "reason": "cpu"})


def _numbers(s: dict[str, Any]) -> Any:
    return {"final": s["final"], "speedup": s["speedup"]}


CLEAN: dict[str, Any] = {}


def _clean() -> Any:
    if not CLEAN:
        with tempfile.TemporaryDirectory() as d:
            _two_runs(Path(d))
            CLEAN["numbers"] = _numbers(build_summary(Path(d)))
    return CLEAN["numbers"]


@SETTINGS
@given(bad=st.lists(bad_row(), min_size=1, max_size=6))
def test_malformed_records_are_counted_and_change_no_good_number(
        bad: list[tuple[str, Any]]) -> None:
    root = Path(tempfile.mkdtemp())
    try:
        _two_runs(root)
        results = root / "final-mod" / records.RESULTS
        for kind, x in bad:
            if kind == "row":
                records.append_jsonl(results, x)
            else:
                with results.open("ab") as f:
                    f.write(x + (b"\n" if kind == "bytes" else b""))
        s = build_summary(root)  # never a traceback
        assert _numbers(s) == _clean()
        run = s["runs"]["final-mod"]
        n_lines = sum(1 for line in results.read_bytes().split(b"\n") if line.strip())
        assert run["n_records"] + run["n_bad_lines"] == n_lines
        assert run["n_excluded"] + run["n_bad_lines"] == n_lines - len(GOOD_MOD)
    finally:
        shutil.rmtree(root)
