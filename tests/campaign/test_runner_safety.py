"""The runner keeps what was measured: supersession under its runs dir, completeness from the
records that can be read back, run ids that stay inside the runs folder."""

from __future__ import annotations

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
    tally = runner.Tally()
    m = runner._metrics(run, spec, {("a", 0), ("b", 0)}, tally)
    assert m.complete is False and m.n_results == 1
    records.append_jsonl(run / records.RESULTS, result("b"))
    assert runner._metrics(run, spec, {("a", 0), ("b", 0)}, tally).complete is True


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
