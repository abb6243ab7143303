"""Five-stream realism, hardened (issue 46): the inputs of the concurrency-5 stratum through the
realism rules (artifact/analysis/validate/realism.py), on copies of its committed runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from artifact import paths, records, warning_classes
from artifact.analysis import realism as R
from artifact.analysis.params import Bootstrap
from artifact.analysis.runs import AnalysisError

C5 = ("r3-c5-ngram-mod-real-a", "r3-c5-ngram-mod-real-b", "r3-c5-none-real-a",
      "r3-c5-none-real-b")
pytestmark = pytest.mark.skipif(not all((paths.REALISM_RUNS / r).is_dir() for r in C5),
                                reason="no committed five-stream realism runs")
FAST = Bootstrap(resamples=200, seed=7)
CAMPAIGN = paths.shown(paths.REALISM_CAMPAIGN)


def _copy(tmp_path: Path, *names: str) -> Path:
    root = tmp_path / "runs"
    for name in names:
        shutil.copytree(paths.REALISM_RUNS / name, root / name)
    return root


def _set_spec(run: Path, **values: Any) -> None:
    config = json.loads((run / records.CONFIG).read_text(encoding="utf-8"))
    config["spec"].update(values)
    (run / records.CONFIG).write_text(json.dumps(config), encoding="utf-8")


def _fatal(got: R.contract.Realism) -> list[str]:
    return [f"{warning_classes.classify(w)}: {w}" for w in warning_classes.fatal(got["warnings"])]


@pytest.mark.parametrize("value", [0, -5, "five", "5", 2.5, True, None])
def test_a_concurrency_that_is_not_a_count_leaves_the_run_out_in_one_line(
        tmp_path: Path, value: object) -> None:
    root = _copy(tmp_path, *C5)
    _set_spec(root / C5[0], concurrency=value)  # the stratum's first run: its protocol's source
    got = R.build_realism(root, bootstrap=FAST)  # no ZeroDivisionError, no ValueError
    (w,) = [w for w in _fatal(got) if C5[0] in w]
    assert w == (f"run-left-out: {C5[0]}/config.json: not a per-side realism run's config "
                 f"(spec.concurrency {value!r}: expected an integer >= 1 (streams per server)); "
                 "run skipped")
    (st,) = got["strata"]
    assert st["protocol"]["concurrency"] == 5 and C5[0] not in {s["run_id"] for s in st["servers"]}
    with pytest.raises(AnalysisError, match=r"spec\.concurrency") as err:
        R.load_run(root / C5[0])
    assert "\n" not in str(err.value)


def test_a_run_at_another_concurrency_than_its_stratum_is_left_out(tmp_path: Path) -> None:
    root = _copy(tmp_path, *C5)
    _set_spec(root / "r3-c5-none-real-b", concurrency=1)  # a count, but not the stratum's
    got = R.build_realism(root, bootstrap=FAST)
    (w,) = _fatal(got)
    assert w == ("run-left-out: run r3-c5-none-real-b: config.json: spec.concurrency 1: expected "
                 f"5, planned for r3-c5 in {CAMPAIGN} (a stratum is measured at one protocol); "
                 "run skipped")
    (st,) = got["strata"]
    assert [s["run_id"] for s in st["servers"]] == ["r3-c5-none-real-a", "r3-c5-ngram-mod-real-a",
                                                    "r3-c5-ngram-mod-real-b"]
    margins, _ = R.margins_of(paths.REALISM_CAMPAIGN)
    runs, _ = R.load_runs(root)
    # without the campaign's plan: the concurrency most of the stratum's runs share
    alone = R.analyse(runs, margins, bootstrap=FAST)
    assert [f for f in _fatal(alone) if "spec.concurrency 1: expected 5, what most" in f]
    _set_spec(root / "r3-c5-none-real-a", concurrency=1)  # two and two: none is the stratum's
    runs, _ = R.load_runs(root)
    with pytest.raises(AnalysisError, match=r"every per-side run left out .* spec\.concurrency"):
        R.analyse(runs, margins, bootstrap=FAST)


def test_without_a_real_b_server_the_floor_is_not_computable_and_says_so(tmp_path: Path) -> None:
    got = R.build_realism(_copy(tmp_path, *C5[:1], *C5[2:]), bootstrap=FAST)
    (st,) = got["strata"]
    assert {f["drafter"] for f in st["floors"]} == {"none"}  # ngram-mod's floor: gone
    said = [w for w in got["warnings"] if "floor" in w]
    assert said == [
        "realism: stratum r3-c5: drafter ngram-mod: floor not computable, written as empty: no "
        f"REAL-B server (run r3-c5-ngram-mod-real-b, planned in {CAMPAIGN}, is not among the "
        "runs analysed), so REAL-A has no twin to be compared with"]
    assert warning_classes.classify(said[0]) == "not-computable"


@pytest.mark.parametrize("field,value,expected", [
    ("slot", 99, "slot 99: expected 0 to 4 (below the run's concurrency 5)"),
    ("slot", 5, "slot 5: expected 0 to 4"),
    ("slot", -1, "slot -1: expected 0 to 4"),
    ("round_pos", 77, "round_pos 77: expected 0 to 12 (a place among the 13 servers of its "
                      "round)"),
    ("round_pos", 13, "round_pos 13: expected 0 to 12"),  # 13 servers planned, 4 analysed here
])
def test_a_slot_or_place_out_of_range_is_set_aside_naming_run_field_and_range(
        tmp_path: Path, field: str, value: int, expected: str) -> None:
    root = _copy(tmp_path, *C5)
    clean = R.build_realism(root, bootstrap=FAST)
    path = root / "r3-c5-none-real-b" / records.RESULTS
    rows = [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]
    busy = {(r["session_id"], r["turn"]) for run in C5 for r in
            map(json.loads, (root / run / records.RESULTS).read_text().splitlines())
            if r.get("contended") is not False}
    victim = next(r for r in rows if (r["session_id"], r["turn"]) not in busy)
    victim[field] = value
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    got = R.build_realism(root, bootstrap=FAST)
    (mine,) = [w for w in _fatal(got) if w.startswith("impossible-records")]
    assert mine.startswith(f"impossible-records: run r3-c5-none-real-b: results.jsonl: 1 "
                           "record(s) with impossible values excluded: "
                           f"real-b:{victim['session_id']}#{victim['turn']} ({expected}")
    p0, p1 = clean["strata"][0]["protocol"], got["strata"][0]["protocol"]
    assert p1["turns_per_side"] == p0["turns_per_side"] - 1  # set aside on every server
