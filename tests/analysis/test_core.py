"""The core study's cells (issue 29): speedups over prompts with passes averaged first, Holm
over a group's pairs, acceptance defined once, and passes that must agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifact.analysis import core as C
from artifact.analysis.core import Obs


def _obs(prompt: str, rep: int, ms: float, drafted: int = 0, accepted: int = 0,
         rounds: int = 0, text: str = "t") -> Obs:
    return Obs(prompt, rep, ms, drafted, accepted, rounds, text)


def test_passes_are_averaged_within_a_prompt_before_the_interval_over_prompts() -> None:
    base = C.per_prompt_ms([_obs("a", 0, 20.0), _obs("a", 1, 22.0), _obs("b", 0, 10.0)])
    assert base == {"a": 21.0, "b": 10.0}
    cell = C._cell([_obs("a", 0, 10.0), _obs("a", 1, 11.0), _obs("a", 2, 10.5),
                    _obs("b", 0, 10.0)], base)
    assert cell["per_prompt"] == {"a": 2.0, "b": 1.0}
    s = cell["speedup"]
    assert (s["mean"], s["n"]) == (1.5, 2)  # two prompts, not four requests
    assert s["lo"] < 1.5 < s["hi"]


def test_acceptance_is_accepted_over_drafted_and_tau_counts_the_rounds() -> None:
    base = {"a": 20.0}
    cell = C._cell([_obs("a", 0, 10.0, drafted=64, accepted=48, rounds=4),
                    _obs("a", 1, 10.0, drafted=16, accepted=12, rounds=1)], base)
    assert cell["acceptance"] == pytest.approx(60 / 80)
    assert cell["tokens_per_round"] == pytest.approx((60 + 5) / 5)
    assert cell["undrafted"] is None and cell["drafted_prompts"] == 1


def test_undrafted_prompts_are_their_own_reading() -> None:
    base = {"a": 20.0, "b": 20.0, "c": 20.0}
    cell = C._cell([_obs("a", 0, 10.0, 8, 8, 1), _obs("b", 0, 21.0), _obs("c", 0, 22.0)], base)
    assert cell["undrafted"]["n"] == 2
    assert cell["undrafted"]["mean"] == pytest.approx((20 / 21 + 20 / 22) / 2, abs=1e-4)


def test_holm_is_monotone_and_capped() -> None:
    adj = C.holm({"x": 0.001, "y": 0.5, "z": 0.02})
    assert adj == {"x": 0.003, "y": 0.5, "z": 0.04}
    assert C.holm({"x": 0.6, "y": 0.7}) == {"x": 1.0, "y": 1.0}


def test_passes_that_differ_are_counted() -> None:
    assert C.passes_disagree([_obs("a", 0, 1.0, text="x"), _obs("a", 1, 1.0, text="x")]) == 0
    assert C.passes_disagree([_obs("a", 0, 1.0, text="x"), _obs("a", 1, 1.0, text="y")]) == 1


def test_one_prompt_has_no_interval() -> None:
    assert C.interval([1.2]) == {"mean": 1.2, "lo": None, "hi": None, "n": 1}


def test_the_committed_groups_have_every_prompt_in_three_passes_that_agree() -> None:
    """Greedy decoding on servers restarted before each pass: every pass of every committed run
    gives the same text, ngram-mod's included (its pool never sees an earlier pass)."""
    from artifact import paths

    doc = C.build(paths.CORE_RUNS)
    assert len(doc["groups"]) == 6, "every (target, task) group is committed"
    assert doc["warnings"] == [] and doc["signs_judged"] == 24
    for g in doc["groups"]:
        assert g["none_passes_disagree"] == 0
        for d, cell in g["cells"].items():
            assert cell["repeats"] == [0, 1, 2], (g["target"], g["task"], d)
            assert cell["speedup"]["n"] == 30
            assert cell["passes_disagree"] == 0, (g["target"], g["task"], d)


def test_the_machines_are_what_the_runs_fingerprints_name(tmp_path: Path) -> None:
    import json
    import shutil

    from artifact import paths

    doc = C.build(paths.CORE_RUNS)
    named = set()
    for config in paths.CORE_RUNS.glob("*/config.json"):
        if config.parent.name.split("-")[0] in C.TARGETS:
            env = json.loads(config.read_text())["environment"]
            named.add(f"{env['cpu_model']} ({env['cpu_cores']} cores)")
    assert doc["machines"] == sorted(named) and len(doc["dates"]) >= 1
    # a run without a fingerprint names an unknown machine rather than failing
    run = tmp_path / "r"
    shutil.copytree(paths.CORE_RUNS / "q4_1-edit-none", run)
    (run / "config.json").write_text('{"spec": {}}')
    dates: set[str] = set()
    assert C.machine_of(run, dates) == "unknown machine" and dates == set()


@pytest.mark.parametrize(("body", "where"), [
    ("{not json", "not readable as JSON"),
    ('{"cells": 3}', "cells: expected a list"),
    ('{"cells": [{"target": 1}]}', r"cells\[0\]\.target: expected a string"),
    ('{"cells": [{"target": "q4_1", "task": "edit", "drafter": "ngram-mod", "sign": "pays",'
     ' "predicted": NaN, "lo": 0, "hi": 1}]}', r"cells\[0\]\.predicted: expected a finite"),
])
def test_a_bad_predictions_file_is_one_line(tmp_path: Path, body: str, where: str) -> None:
    from artifact import paths
    from artifact.errors import AnalysisError

    bad = tmp_path / "p.json"
    bad.write_text(body)
    with pytest.raises(AnalysisError, match=where):
        C.build(paths.CORE_RUNS, bad)


def test_a_folder_without_core_groups_is_one_line(tmp_path: Path) -> None:
    assert C.main(["--runs", str(tmp_path)]) == 2


def test_the_doit_task_lists_the_groups_of_the_contract() -> None:
    from artifact.analysis import task
    from artifact.contract import core as contract

    assert tuple(f"{t}-{k}" for t in contract.TARGETS
                                     for k in contract.TASKS) == task.CORE_GROUPS


def _one_group(tmp_path: Path) -> Path:
    import shutil

    from artifact import paths

    for run in sorted(paths.CORE_RUNS.glob("q4_1-edit-*")):
        (tmp_path / run.name).mkdir(parents=True)
        for name in ("config.json", "results.jsonl"):
            shutil.copy(run / name, tmp_path / run.name / name)
    return tmp_path


def test_a_group_not_measured_is_a_fatal_warning_and_the_file_fits_its_contract(
        tmp_path: Path) -> None:
    from artifact import paths, warning_classes
    from artifact.contract import core as contract
    from artifact.errors import AnalysisError

    runs = _one_group(tmp_path / "runs")
    out = tmp_path / "core.json"
    doc = C.write(runs, out, paths.CORE_PREDICTIONS)
    assert [(g["target"], g["task"]) for g in doc["groups"]] == [("q4_1", "edit")]
    assert len(doc["warnings"]) == 5
    assert all(warning_classes.CLASSES[warning_classes.classify(w)].fatal
               for w in doc["warnings"])
    assert contract.read(out, error=AnalysisError) == doc
    cells = doc["groups"][0]["cells"]
    assert cells["control"]["predicted"] is None and cells["control"]["sign_right"] is None
    assert doc["signs_judged"] == 4 and doc["predictions"] is not None


def test_without_predictions_nothing_is_judged_and_it_says_so(tmp_path: Path) -> None:
    doc = C.build(_one_group(tmp_path / "runs"), tmp_path / "none.json")
    assert doc["signs_judged"] == 0 and doc["predictions"] is None
    assert any("no predictions file" in w for w in doc["warnings"])
