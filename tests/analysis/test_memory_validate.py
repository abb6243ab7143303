"""The memory runs' rules (artifact/analysis/validate/memory.py) as the analysis applies them
(artifact/analysis/memory.py): a run that breaks one is set aside with one warning naming the
run, the file and the field, and the numbers rest on the runs kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from artifact.analysis import memory
from artifact.warning_classes import classify

MACHINE = {"cpu_model": "Intel Xeon", "cpu_cores": 2, "host": {"mem_total_mib": 24105}}


def _run(root: Path, folder: str, quant: str, drafter: str, *, hwm: float | int,
         rss: float | None = None, run_id: str | None = None, spec: Any = None,
         environment: Any = MACHINE) -> Path:
    run = root / folder
    run.mkdir(parents=True)
    if spec is None:
        spec = {"target_quant": quant, "drafter": drafter, "k": None,
                "draft_quant": "Q2_K" if drafter == "draft-simple" else None}
    config = {"run_id": run_id or folder, "spec": spec, "environment": environment}
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    rss = hwm if rss is None else rss
    mem = {"measured": True, "n_samples": 40, "peak_rss_mib": rss, "peak_anon_mib": 60.0,
           "peak_file_mib": rss - 60, "peak_hwm_mib": hwm}
    (run / "memory.json").write_text(json.dumps(mem), encoding="utf-8")
    return run


def _target(root: Path, quant: str = "Q4_1") -> None:
    """A target's three runs, each as measured."""
    q = quant.lower()
    _run(root, f"memory-{q}-none", quant, "none", hwm=200.0)
    _run(root, f"memory-{q}-ngram-mod", quant, "ngram-mod", hwm=210.0)
    _run(root, f"memory-{q}-draft-q2k", quant, "draft-simple", hwm=300.0)


def _only_warning(got: dict[str, Any]) -> str:
    assert len(got["warnings"]) == 1, got["warnings"]
    w: str = got["warnings"][0]
    assert w.endswith("; run skipped") and classify(w) == "run-left-out"  # fatal under --strict
    return w


@pytest.mark.parametrize(("peak", "environment", "said"), [
    (1e300, MACHINE, "at most the machine's memory (environment.host.mem_total_mib 24105), "
                     "got 1e+300"),
    (30000.0, MACHINE, "at most the machine's memory (environment.host.mem_total_mib 24105)"),
    (1e300, None, "at most 67108864, a ceiling of 64 TiB (the run recorded no machine memory)"),
    (10**400, {"host": {"mem_total_mib": 1e300}}, "a ceiling of 64 TiB"),
])
def test_a_peak_above_the_machines_memory_sets_the_run_aside(
        tmp_path: Path, peak: float, environment: Any, said: str) -> None:
    _target(tmp_path)
    _run(tmp_path, "memory-f16-none", "F16", "none", hwm=peak, environment=environment)
    got = memory.analyse(tmp_path)
    w = _only_warning(got)
    assert w.startswith("run memory-f16-none: memory.json: field 'peak_rss_mib': expected a "
                        "finite number of MiB, at least 0 and ") and said in w
    assert "F16" not in {r["target"] for r in got["rows"]}


def test_a_high_water_mark_below_the_sampled_rss_sets_the_run_aside(tmp_path: Path) -> None:
    _run(tmp_path, "memory-q4_1-none", "Q4_1", "none", hwm=400.0)
    _run(tmp_path, "memory-q4_1-draft-q2k", "Q4_1", "draft-simple", hwm=220.5, rss=480.0)
    got = memory.analyse(tmp_path)
    assert _only_warning(got) == (
        "run memory-q4_1-draft-q2k: memory.json: field 'peak_hwm_mib': expected at least "
        "peak_rss_mib 480.0 (the kernel's peak of the resident set the samples read), got "
        "220.5; run skipped")
    assert got["added"] == {}  # not "a draft adds -179.5 MiB"
    assert [r["run"] for r in got["rows"]] == ["memory-q4_1-none"]


def test_a_part_above_the_resident_set_sets_the_run_aside(tmp_path: Path) -> None:
    run = _run(tmp_path, "memory-q4_1-none", "Q4_1", "none", hwm=400.0)
    mem = json.loads((run / "memory.json").read_text(encoding="utf-8"))
    mem["peak_anon_mib"] = 401.0
    (run / "memory.json").write_text(json.dumps(mem), encoding="utf-8")
    w = _only_warning(memory.analyse(tmp_path))
    assert "field 'peak_anon_mib': expected at most peak_rss_mib 400.0" in w


def test_two_folders_of_one_configuration_keep_one_and_name_both(tmp_path: Path) -> None:
    _target(tmp_path)
    # a copy of a run folder (the same run id), and a second run of one configuration
    _run(tmp_path, "memory-q4_1-none.bak", "Q4_1", "none", hwm=250.0, run_id="memory-q4_1-none")
    _run(tmp_path, "memory-q4_1-none-rerun", "Q4_1", "none", hwm=260.0)
    got = memory.analyse(tmp_path)
    assert got["warnings"] == [
        "run memory-q4_1-none-rerun: configuration 'Q4_1 none' already used by "
        "memory-q4_1-none; run skipped",
        "run memory-q4_1-none.bak: run_id 'memory-q4_1-none' already used by "
        "memory-q4_1-none; run skipped"]
    nones = [r for r in got["rows"] if r["drafter"] == "none"]
    assert [(r["run"], r["hwm_mib"]) for r in nones] == [("memory-q4_1-none", 200.0)]
    assert got["added"] == {"Q4_1": {"draft-simple": 100.0, "ngram-mod": 10.0}}


@pytest.mark.parametrize(("spec", "said"), [
    (["Q4_1", "none"], "field 'spec': expected an object (the run's resolved spec), got "
                       "['Q4_1', 'none']"),
    ("Q4_1", "field 'spec': expected an object (the run's resolved spec), got 'Q4_1'"),
    ({"drafter": "none"}, "field 'spec.target_quant': expected a non-empty string, got None"),
    ({"target_quant": "Q4_1", "drafter": ["none"]},
     "field 'spec.drafter': expected a non-empty string, got ['none']"),
    ({"target_quant": "Q4_1", "drafter": "none", "k": "4"},
     "field 'spec.k': expected null or an integer >= 1, got '4'"),
])
def test_a_config_that_names_no_configuration_is_one_warning(
        tmp_path: Path, spec: Any, said: str) -> None:
    _run(tmp_path, "memory-q4_1-none", "Q4_1", "none", hwm=200.0)
    _run(tmp_path, "memory-f16-none", "F16", "none", hwm=400.0, spec=spec)
    got = memory.analyse(tmp_path)
    assert _only_warning(got) == f"run memory-f16-none: config.json: {said}; run skipped"
    assert [r["run"] for r in got["rows"]] == ["memory-q4_1-none"]


def test_every_run_set_aside_still_writes_its_warnings(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for quant in ("Q4_1", "Q8_0", "F16"):
        _target(runs, quant)
    for mem in runs.glob("*/memory.json"):
        mem.write_text('{"measured": true, "n_samples": 0}', encoding="utf-8")
    out = tmp_path / "memory.json"
    memory.write(runs, out)
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["rows"] == [] and written["added"] == {}
    assert len(written["warnings"]) == 9
    assert all(w.endswith("field 'n_samples': expected a positive integer, got 0; run skipped")
               for w in written["warnings"])
