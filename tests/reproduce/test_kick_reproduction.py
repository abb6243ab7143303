"""End to end: the kick-sized reproduction, with the real llama-server, into its own folder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from artifact import hostinfo, paths, records
from artifact.reproduce import command, plan
from artifact.reproduce.host import this_machine
from artifact.spec import load_campaign

pytestmark = pytest.mark.server


def tree_digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_kick_reproduction_leaves_the_committed_runs_alone_and_compares_them(
        real_toolchain: tuple[str, str], tmp_path: Path) -> None:
    before = tree_digest(paths.RUNS)
    ids = [r.run_id for r in load_campaign(paths.STUDY).runs]
    selection = plan.select(ids, kick=True)
    lines: list[str] = []
    folder = command.run_and_compare(selection=selection, root=tmp_path, show_progress=False,
                                     say=lines.append)
    assert tree_digest(paths.RUNS) == before, "the committed runs changed"
    assert folder.parent == tmp_path and folder.name.startswith(this_machine().slug)
    assert folder.name.endswith("-kick")

    manifest = records.read_json(folder / plan.MANIFEST)
    assert manifest["complete"] and manifest["selection"] == selection.as_dict()
    assert manifest["calibration"]["scale"] > 0 and len(manifest["load"]) >= 2
    for rid in plan.KICK_RUNS:
        config = records.read_json(folder / plan.RUNS / rid / records.CONFIG)
        assert len(config["prompt_ids"]) == 3  # one per domain
        recs, _ = records.read_results(folder / plan.RUNS / rid)
        # each prompt measured; a request measured while the machine was busy is measured
        # again (the campaign's remeasure), so a prompt can have two records
        assert sorted({r.prompt_id for r in recs}) == config["prompt_ids"]

    doc = json.loads((folder / command.REPORT / "comparison.json").read_text())
    assert doc["a"]["root"] == "experiments/runs" and doc["same_hardware"] in (True, False)
    assert sorted(r["run"] for r in doc["runs"]) == sorted(plan.KICK_RUNS)
    for row in doc["runs"]:
        assert row["a"]["n"] == row["b"]["n"] == 3
        # greedy decoding, same build and model: the same tokens as the committed runs
        assert row["same_outputs"] == [3, 3], row["run"]
    verdicts = {c["id"]: c["verdict"] for c in doc["claims"]}
    drafted, _ = records.read_results(folder / plan.RUNS / "final-draft-self")
    if all(r.contended for r in drafted) or all(
            r.contended for r in records.read_results(folder / plan.RUNS / "final-none")[0]):
        # A machine so busy that every request was contended (the tests may run beside other
        # work): no timing statistic, so no speedup, and the draft-model claims, read through
        # the runs ranked by speedup, cannot be recomputed: said as missing, never as wrong.
        assert {verdicts[c] for c in ("draft-self-speedup", "draft-self-alpha",
                                      "self-draft-accepts-nearly-all")} <= {"missing"}
    else:
        assert verdicts["draft-self-alpha"] == "reproduced"
        assert verdicts["self-draft-accepts-nearly-all"] == "holds"
    assert verdicts["records"] == "not run"
    # Issue 34: the new runs record the extended fingerprint; the committed ones did not, so
    # this machine is never "the same hardware" as theirs, and a rate that moves differs with
    # hardware, the calibrated speed ratio named beside it
    env = records.read_json(folder / plan.RUNS / "final-none" / records.CONFIG)["environment"]
    assert set(env["host"]) == set(hostinfo.FIELDS)
    assert doc["hardware"]["verdict"] in ("unknown", "different") and not doc["same_hardware"]
    tps = next(c for c in doc["claims"] if c["id"] == "baseline-tok-s")
    assert tps["verdict"] != "failed"
    if tps["verdict"] == "differs with hardware":
        assert "calibrated speed ratio" in tps["why"]
    assert (folder / command.REPORT / "comparison.html").exists()
    assert any(line.startswith("report ") for line in lines)

    # a second call resumes: nothing is measured again
    sizes = {rid: (folder / plan.RUNS / rid / records.RESULTS).stat().st_size
             for rid in plan.KICK_RUNS}
    again = command.run_and_compare(selection=selection, root=tmp_path, show_progress=False,
                                    say=lambda _: None)
    assert again == folder
    assert sizes == {rid: (folder / plan.RUNS / rid / records.RESULTS).stat().st_size
                     for rid in plan.KICK_RUNS}
