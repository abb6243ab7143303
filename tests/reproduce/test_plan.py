"""What a reproduction selects, where it goes, how long it should take."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from artifact import records
from artifact.reproduce import plan
from artifact.reproduce.host import Hardware, hardware

IDS = ["final-none", "final-draft-self", "final-ngram-mod", "ksweep-a", "baseline-b"]


def test_selections() -> None:
    assert plan.select(IDS).label == "full"
    sub = plan.select(IDS, patterns=["ksweep-*", "final-none"])
    assert sub.runs == ("final-none", "ksweep-a") and sub.label == "subset"  # campaign order
    kick = plan.select(IDS, kick=True)
    assert kick.runs == plan.KICK_RUNS and kick.prompts_per_domain == 1 and kick.label == "kick"
    assert plan.select(IDS, prompts_per_domain=2).label == "subset"
    assert plan.select(IDS, patterns=["*"]).label == "full"


@pytest.mark.parametrize(("kw", "field"), [
    ({"patterns": ["nope"]}, "--runs"),
    ({"kick": True, "patterns": ["final-none"]}, "--kick"),
    ({"prompts_per_domain": 0}, "--prompts-per-domain"),
])
def test_bad_selections_are_one_line(kw: dict[str, object], field: str) -> None:
    with pytest.raises(plan.PlanError) as err:
        plan.select(IDS, **kw)  # type: ignore[arg-type]
    assert str(err.value).startswith(field) and "\n" not in str(err.value)
    with pytest.raises(plan.PlanError, match="--kick: the campaign has no run"):
        plan.select(["final-none"], kick=True)


def test_folders_never_mix_two_selections(tmp_path: Path) -> None:
    day = dt.date(2026, 11, 30)
    a = plan.select(IDS, patterns=["final-*"], prompts_per_domain=3)
    b = plan.select(IDS, patterns=["final-*"], prompts_per_domain=2)
    assert plan.folder_name("h-2c", day, a) != plan.folder_name("h-2c", day, b)
    assert plan.folder_name("h-2c", day, plan.select(IDS)) == "h-2c-20261130"
    folder = tmp_path / "r"
    assert not plan.resumable(folder, a, "c.toml")  # nothing there yet
    folder.mkdir()
    records.write_json(folder / plan.MANIFEST, {"selection": a.as_dict(), "campaign": "c.toml"})
    assert plan.resumable(folder, a, "c.toml")
    with pytest.raises(plan.PlanError, match="field 'selection'"):
        plan.resumable(folder, b, "c.toml")
    other = tmp_path / "other"
    other.mkdir()
    (other / "x").write_text("x")
    with pytest.raises(plan.PlanError, match="not a reproduction"):
        plan.resumable(other, a, "c.toml")


def test_eta_from_committed_durations_and_what_is_done() -> None:
    metrics = {"measure_s": 90.0, "model_load_s": [1.0, 1.0], "warmup_s": [2.0, 2.0],
               "n_expected": 30}
    assert plan.committed_seconds(metrics) == 96.0
    # one load and warm-up, a third of the prompts, twice as slow here
    assert plan.expected_seconds(metrics, 10, 2.0) == pytest.approx(2 * (3.0 + 30.0))
    assert plan.expected_seconds(metrics, None, 1.0) == 93.0
    expected = {"a": 100.0, "b": 100.0}
    assert plan.eta_seconds(expected, {}) == 200.0
    assert plan.eta_seconds(expected, {"a": 150.0}) == 150.0  # b scaled by how a went
    assert plan.eta_seconds(expected, {}, running="a", running_fraction=0.25) == 175.0


def test_the_hardware_fingerprint_ignores_what_is_not_hardware() -> None:
    env = {"cpu_model": "Intel(R) Xeon(R) Processor", "cpu_cores": 2, "gpu": None,
           "python": "3.11.7", "binary_sha256": "ab"}
    assert hardware(env) == hardware({**env, "python": "3.12", "binary_sha256": "cd"})
    assert hardware(env) != hardware({**env, "cpu_cores": 4})
    assert hardware({}) == Hardware(cpu_model="unknown", cpu_cores=None, gpu=None)


def test_the_progress_line_carries_the_whole_reproductions_eta() -> None:
    from artifact.campaign.progress import Progress
    from artifact.reproduce.execute import _overall

    suffix = _overall(2, 3, ("b",), {"a": 60.0, "b": 120.0, "c": 60.0}, {"a": 60.0})
    p = Progress("b", 4, enabled=False, suffix=suffix)
    assert p.line().endswith("| run 2/3, reproduction ETA 3:00")
    p.advance(2)  # half of b done: 60 s of b and 60 s of c left
    assert p.line().endswith("| run 2/3, reproduction ETA 2:00")


def test_an_interleaved_group_runs_and_is_timed_together() -> None:
    from artifact.reproduce.execute import _overall, _share_wall

    expected = {"a": 60.0, "b": 120.0, "c": 60.0}
    suffix = _overall(1, 3, ("a", "b"), expected, {})
    assert suffix(0.5).endswith("| run 1/3, reproduction ETA 2:30")  # half of a and b, all c
    entries: dict[str, dict[str, float]] = {"a": {"wall_s": 0.0}, "b": {"wall_s": 10.0}}
    _share_wall(entries, 90.0, expected)  # the group's wall, shared by expected time
    assert entries == {"a": {"wall_s": 30.0}, "b": {"wall_s": 70.0}}
