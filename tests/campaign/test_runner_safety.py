"""The runner keeps what was measured: supersession under its runs dir, completeness from the
records that can be read back, run ids that stay inside the runs folder."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from artifact import records
from artifact.campaign import runner
from artifact.campaign.server import argv_template
from artifact.spec import RunSpec, load_campaign
from tests.test_records import result
from tests.test_spec import HEAD

TOML = HEAD + '[[run]]\nid = "r1"\ndrafter = "none"\n'


@pytest.fixture
def spec(tmp_path: Path) -> RunSpec:
    f = tmp_path / "c.toml"
    f.write_text(TOML)
    return load_campaign(f).runs[0]


def _config(spec: RunSpec, n: int) -> dict[str, object]:
    return {"spec_sha256": spec.sha256, "server_argv": argv_template(spec),
            "prompt_set": {"name": spec.prompt_set, "sha256": "x", "n": n}}


def test_superseded_data_stays_under_its_runs_dir(tmp_path: Path) -> None:
    runs = tmp_path / "elsewhere"
    run = runs / "r1"
    run.mkdir(parents=True)
    (run / records.RESULTS).write_text("{}\n")
    said: list[str] = []
    dest = runner._supersede(run, runs, said.append)
    assert dest.parent == runs / "_superseded" and (dest / records.RESULTS).exists()
    assert not run.exists() and said and "r1" in said[0]
    run.mkdir()  # a second supersession in the same second keeps both
    assert runner._supersede(run, runs, said.append) != dest


def test_complete_is_computed_from_readable_records(tmp_path: Path, spec: RunSpec) -> None:
    run = tmp_path / "r1"
    run.mkdir()
    records.append_jsonl(run / records.RESULTS, result("a"))
    with (run / records.RESULTS).open("ab") as f:
        f.write(b'{"prompt_id": "b", "torn')  # the record of "b" was never completed
    cond = runner.quiet.Conditions()
    m = runner._metrics(run, spec, {("a", 0), ("b", 0)}, cond)
    assert m.complete is False and m.n_results == 1
    records.append_jsonl(run / records.RESULTS, result("b"))
    assert runner._metrics(run, spec, {("a", 0), ("b", 0)}, cond).complete is True


def test_a_run_whose_metrics_say_complete_but_records_do_not_is_not_current(
        tmp_path: Path, spec: RunSpec) -> None:
    run = tmp_path / "r1"
    run.mkdir()
    records.write_json(run / records.CONFIG, _config(spec, 2))
    records.write_json(run / records.METRICS, {"complete": True})
    records.append_jsonl(run / records.RESULTS, result("a"))
    assert runner.run_is_current(spec, tmp_path) is False
    records.append_jsonl(run / records.RESULTS, result("b"))
    assert runner.run_is_current(spec, tmp_path) is True


def test_a_run_id_that_escapes_is_refused_before_anything_is_written(tmp_path: Path,
                                                                     spec: RunSpec) -> None:
    from dataclasses import replace

    bad = replace(spec, run_id="..")
    with pytest.raises(records.RecordError, match="run id"):
        runner.run_is_current(bad, tmp_path / "runs")
    assert list(tmp_path.iterdir()) == [tmp_path / "c.toml"]


def test_a_segment_cut_by_a_kill_is_counted_up_to_its_last_record(tmp_path: Path) -> None:
    from artifact.campaign import events

    run = tmp_path / "r1"
    run.mkdir()
    events.record(run, "invocation", done=0)
    events.record(run, "server_start", n=1, load_s=1.0, warmup_s=0.5)
    events.record(run, "measure_begin", n=1, mode="sequential")
    begin = json.loads((run / records.EVENTS).read_text().splitlines()[-1])["unix_s"]
    # killed: no segment_end; two records, the last ending 7 s after the segment began
    recs = [replace(result("a"), sent_unix_s=begin + 1, e2e_ms=2000.0),
            replace(result("b"), sent_unix_s=begin + 4, e2e_ms=3000.0)]
    events.record(run, "invocation", done=2)
    events.record(run, "server_start", n=2, load_s=1.0, warmup_s=0.5)
    events.record(run, "measure_begin", n=2, mode="sequential")
    events.record(run, "segment_end", n=2, measure_s=2.5, delta={"c": 1.0})
    t = events.totals(run, [*recs, replace(result("c"), server_start=2)])
    assert (t.invocations, t.server_starts, t.cut_segments) == (2, 2, 1)
    assert t.measure_s == pytest.approx(7.0 + 2.5, abs=0.01)
    assert t.model_load_s == [1.0, 1.0] and t.delta == {"c": 1.0}


def test_a_run_measured_before_the_ledger_carries_its_metrics_into_it(tmp_path: Path) -> None:
    from artifact.campaign import events

    run = tmp_path / "r1"
    run.mkdir()
    records.write_json(run / records.METRICS, {"server_starts": 1, "measure_s": 30.0,
                                               "model_load_s": [2.0], "warmup_s": [1.0],
                                               "metrics_delta": {"x": 3}})
    events.carry_legacy(run)
    events.carry_legacy(run)  # once only
    t = events.totals(run)
    assert (t.server_starts, t.measure_s, t.delta) == (1, 30.0, {"x": 3.0})
