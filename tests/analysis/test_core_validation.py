"""The core study's records read by the shared rules (issue 46): a repeated (prompt, pass), a
pass outside the campaign's, a missing pass, impossible decode times, a run whose every request
is contended and a pass with other text, each on one committed group copied and edited."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from artifact import paths, records, warning_classes
from artifact.analysis import core as C
from artifact.contract import core as contract
from artifact.errors import AnalysisError
from artifact.render import core as render_core

GROUP = "q4_1-edit"
RUN = f"{GROUP}-ngram-mod"


def one_group(root: Path) -> Path:
    for run in sorted(paths.CORE_RUNS.glob(f"{GROUP}-*")):
        (root / run.name).mkdir(parents=True)
        for name in (records.CONFIG, records.RESULTS):
            shutil.copy(run / name, root / run.name / name)
    return root


def rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / records.RESULTS).read_text().splitlines()]


def write_rows(run: Path, rs: list[dict[str, Any]]) -> None:
    (run / records.RESULTS).write_text("".join(json.dumps(r) + "\n" for r in rs))  # NaN as NaN


def cell(doc: contract.Core, drafter: str = "ngram-mod") -> Any:
    (g,) = doc["groups"]
    return g["cells"][drafter]


def about(doc: contract.Core, run: str = RUN) -> list[str]:
    """The warnings naming ``run``, each with its class."""
    return [f"{warning_classes.classify(w)}: {w}" for w in doc["warnings"] if f"run {run}:" in w]


@pytest.fixture
def group(tmp_path: Path) -> Path:
    return one_group(tmp_path / "runs")


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> contract.Core:
    return C.build(one_group(tmp_path_factory.mktemp("clean") / "runs"))


def test_the_clean_group_names_no_record(clean: contract.Core) -> None:
    assert [w for w in clean["warnings"] if GROUP in w and "run skipped" not in w] == []
    assert clean["prompts_same_text"] == clean["prompts_read"] == 6 * 30


def test_a_pass_recorded_twice_keeps_its_first_copy_and_is_named(group: Path,
                                                                 clean: contract.Core) -> None:
    rs = rows(group / RUN)
    dup = json.loads(json.dumps(rs[0]))
    dup["timings"]["predicted_ms"] /= 3  # three times faster: would move the prompt's speedup
    write_rows(group / RUN, [*rs, dup])
    doc = C.build(group)
    assert cell(doc)["per_prompt"] == cell(clean)["per_prompt"]
    assert cell(doc)["speedup"] == cell(clean)["speedup"]
    assert about(doc) == [f"duplicate-records: run {RUN}: results.jsonl: 1 duplicate record(s) "
                          f"excluded, first copy kept: {rs[0]['prompt_id']}#{rs[0]['repeat']}"]


@pytest.mark.parametrize("repeat", [3, -1, 2**31 - 1])
def test_a_pass_outside_the_campaign_is_excluded_and_named(group: Path, clean: contract.Core,
                                                           repeat: int) -> None:
    rs = rows(group / RUN)
    odd = json.loads(json.dumps(rs[0]))
    odd["repeat"] = repeat
    odd["timings"]["predicted_ms"] /= 3
    write_rows(group / RUN, [*rs, odd])
    doc = C.build(group)
    assert cell(doc)["repeats"] == [0, 1, 2]
    assert cell(doc)["per_prompt"] == cell(clean)["per_prompt"]
    (w,) = about(doc)
    assert w == (f"impossible-records: run {RUN}: results.jsonl: 1 record(s) with impossible "
                 f"values excluded: {rs[0]['prompt_id']}#{repeat} (pass {repeat} outside the "
                 "campaign's passes 0-2)")


def test_a_pass_beyond_an_int32_is_an_unreadable_line_skipped(group: Path,
                                                              clean: contract.Core) -> None:
    rs = rows(group / RUN)
    odd = json.loads(json.dumps(rs[0]))
    odd["repeat"] = 10**19
    odd["timings"]["predicted_ms"] /= 3
    write_rows(group / RUN, [*rs, odd])
    doc = C.build(group)  # neither taken (repeats [0, 1, 2, 10**19]) nor the whole study refused
    assert cell(doc)["repeats"] == [0, 1, 2]
    assert cell(doc)["per_prompt"] == cell(clean)["per_prompt"]
    assert about(doc) == [f"unreadable-lines: run {RUN}: results.jsonl: 1 unreadable line(s) "
                          "skipped"]


def test_a_missing_pass_is_named_and_the_prompt_averaged_over_the_rest(
        group: Path, clean: contract.Core) -> None:
    rs = rows(group / RUN)
    gone = next(r for r in rs if r["repeat"] == 1)
    p = gone["prompt_id"]
    write_rows(group / RUN, [r for r in rs if r is not gone])
    doc = C.build(group)
    assert about(doc) == [f"missing-passes: run {RUN}: results.jsonl: 1 pass(es) of the "
                          f"campaign's 3 with no record, each prompt's mean taken over the "
                          f"passes it has: {p}#1"]
    base = C.per_prompt_ms(C.read_run(group / f"{GROUP}-none", [])[0])
    kept = [r["timings"]["predicted_ms"] / (r["timings"]["predicted_n"] - 1) for r in rs
            if r["prompt_id"] == p and r is not gone and not r["contended"]]
    assert len(kept) == 2
    assert cell(doc)["per_prompt"][p] == round(base[p] / (sum(kept) / 2), 4)
    assert cell(doc)["speedup"]["n"] == cell(clean)["speedup"]["n"]


@pytest.mark.parametrize("value", [-5.0, math.nan, math.inf, 0.0])
def test_an_impossible_decode_time_is_excluded_and_named(group: Path, value: float) -> None:
    rs = rows(group / RUN)
    rs[0]["timings"]["predicted_ms"] = value
    write_rows(group / RUN, rs)
    doc = C.build(group)  # never a traceback (NaN crashed the interval)
    assert cell(doc)["n_requests"] == 89
    (w,) = about(doc)
    assert w.startswith(f"impossible-records: run {RUN}: results.jsonl: 1 record(s) with "
                        f"impossible values excluded: {rs[0]['prompt_id']}#{rs[0]['repeat']} "
                        "(timings.predicted_ms ")


def _all_contended(run: Path) -> None:
    rs = rows(run)
    for r in rs:
        r["contended"] = True
    write_rows(run, rs)


def test_a_drafter_run_whose_every_request_is_contended_is_not_computable(
        group: Path, clean: contract.Core, tmp_path: Path) -> None:
    _all_contended(group / RUN)
    out = tmp_path / "core.json"
    doc = C.write(group, out)  # was a traceback (the mean of no prompt)
    assert cell(doc) is None
    assert doc["left_out_contended"][RUN] == 90
    (w,) = [w for w in doc["warnings"] if "not computable" in w]
    assert w == (f"group {GROUP}: cell ngram-mod: not computable, written as null: no quiet "
                 "request (every request contended or excluded)")
    assert warning_classes.classify(w) == "not-computable"
    assert contract.read(out, error=AnalysisError) == doc
    assert doc["signs_judged"] == clean["signs_judged"] - 1
    assert cell(doc, "ngram-simple") == cell(clean, "ngram-simple")
    v = render_core.variables(doc)  # the paper's variables skip the cell
    assert f"{RUN}" not in v["cells"] and f"{GROUP}-ngram-simple" in v["cells"]
    assert any("not computable" in line for line in C.lines(doc))


def test_a_no_draft_run_whose_every_request_is_contended_leaves_no_cell(group: Path) -> None:
    _all_contended(group / f"{GROUP}-none")
    doc = C.build(group)
    (g,) = doc["groups"]
    assert set(g["cells"]) == {"control", *C.DRAFTERS}
    assert all(c is None for c in g["cells"].values())
    assert g["p_raw"] == g["p_holm"] == {} and doc["signs_judged"] == 0  # schema 4: holm split
    assert sum("no quiet request of the no-draft run" in w for w in doc["warnings"]) == 5


def test_a_pass_with_other_text_is_named_and_counted(group: Path, clean: contract.Core) -> None:
    rs = rows(group / RUN)
    odd = next(r for r in rs if r["repeat"] == 2 and not r["contended"])
    odd["event_text"][-1] += " (other)"
    write_rows(group / RUN, rs)
    doc = C.build(group)
    p = odd["prompt_id"]
    assert about(doc) == [f"passes-differ: run {RUN}: 1 prompt(s) whose passes gave different "
                          "text (greedy decoding on fresh servers repeats itself), kept: "
                          f"{p}#2 (differs from {p}#0)"]
    assert cell(doc)["passes_disagree"] == 1
    assert (doc["prompts_same_text"], doc["prompts_read"]) == (179, 180)
    assert cell(doc)["speedup"] == cell(clean)["speedup"]  # kept


def test_a_run_without_its_passes_is_one_line(group: Path) -> None:
    config = group / RUN / records.CONFIG
    doc = json.loads(config.read_text())
    del doc["spec"]["repeats"]
    config.write_text(json.dumps(doc))
    with pytest.raises(AnalysisError, match=rf"{RUN}/config.json: spec.repeats: expected an "
                                            r"integer >= 1 \(the campaign's passes\), got None"):
        C.build(group)
