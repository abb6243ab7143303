"""Issue 45, item 3: `--budget 60m` chooses the runs that test the most claims in the time."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifact.claims import Claim
from artifact.errors import PlanError
from artifact.reproduce import budget, command, host, studies
from artifact.reproduce.budget import Need


def need(claim: str, *runs: str) -> Need:
    return Need(claim=claim, runs=frozenset(runs))


NEEDS = [need("a", "x"), need("b", "x", "y"), need("c", "z"), need("d", "z"),
         need("e", "z", "w")]
COST = {"x": 10.0, "y": 30.0, "z": 20.0, "w": 5.0}


@pytest.mark.parametrize("budget_s", [5.0, 10.0, 19.0, 25.0, 35.0, 40.0, 65.0, 1000.0])
def test_it_never_exceeds_the_budget(budget_s: float) -> None:
    got = budget.choose(NEEDS, COST, budget_s)
    assert got.seconds <= budget_s and sum(COST[r] for r in got.runs) == got.seconds
    assert set(got.tested) == {n.claim for n in NEEDS if n.runs <= got.runs}


def test_it_prefers_runs_serving_more_claims() -> None:
    # z (20 s) serves c and d, x (10 s) only a: at 25 s z is worth more per second
    # (0.1 claims/s each, but z completes two), and with w it serves three claims for 25 s
    assert sorted(budget.choose(NEEDS, COST, 25.0).tested) == ["c", "d", "e"]
    assert budget.choose(NEEDS, COST, 1000.0).runs == frozenset(COST)


def test_a_run_without_a_committed_time_is_never_chosen() -> None:
    assert budget.choose([need("a", "x", "unknown")], {"x": 1.0}, 100.0).tested == ()


def offer(name: str = "first") -> budget.StudyRuns:
    """A synthetic study: three runs, 10 prompts each in two domains, 100 s each."""
    ledger = [Claim(id="speed", quantity="vars:s", expected=1.0, runs=("r-none", "r-fast")),
              Claim(id="all", quantity="vars:n", expected=1.0, runs=("r-*",))]
    metrics = {"measure_s": 100.0, "model_load_s": [0.0], "warmup_s": [0.0], "n_expected": 20}
    runs = ("r-none", "r-fast", "r-slow")
    return budget.StudyRuns(study=studies.STUDIES[name], runs=runs,
                            claims=tuple(studies.claims_of(ledger, runs)),
                            committed={r: metrics for r in runs},
                            domains={r: {"code": 10, "chat": 10} for r in runs})


def test_the_plan_cuts_prompts_to_test_more_claims_and_keeps_them_when_it_can() -> None:
    roomy = budget.make([offer()], 400.0)
    assert roomy.prompts_per_domain is None and set(roomy.tested) == {"speed", "all"}
    tight = budget.make([offer()], 100.0)  # 3 runs x 2 domains x 3 of 10 prompts: 90 s
    assert set(tight.tested) == {"speed", "all"} and tight.prompts_per_domain == 3
    assert tight.total_s <= 100.0
    assert tight.selections["first"].prompts_per_domain == 3


def test_an_impossible_budget_is_one_line() -> None:
    with pytest.raises(PlanError, match=r"^--budget 0:10: too short to test any claim: the "
                       r"cheapest, speed, needs 2 run\(s\) of about 0:40") as err:
        budget.make([offer()], 10.0)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("bad", ["60", "1h30x", "m", "", "0m", "-5m", "1.5h"])
def test_a_bad_budget_names_the_flag_and_the_form(bad: str) -> None:
    with pytest.raises(PlanError, match=r"^--budget: expected .*45m, 1h, 90s"):
        budget.parse(bad)


@pytest.mark.usefixtures("prompts_without_a_model")
@pytest.mark.parametrize("study", ["all", "core", "first"])
def test_the_budget_dry_run_plans_the_committed_campaigns(
        study: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # no server, no calibration on this machine: the committed runs' time, said so
    monkeypatch.setattr(host, "this_machine", lambda: host.Hardware(
        cpu_model="Test CPU", cpu_cores=2, gpu=None))
    monkeypatch.setattr(budget.paths, "REPRODUCTIONS", tmp_path)
    measured: list[object] = []
    monkeypatch.setattr(command, "run_and_compare", lambda **kw: measured.append(kw))
    assert command.main(["run", "--study", study, "--budget", "60m", "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "error" not in err and not measured
    lines = err.splitlines()
    assert "no calibration on this machine" in lines[0]
    head = next(x for x in lines if "claims tested in" in x)
    eta = head.split("~", 1)[1].split(" ", 1)[0]
    minutes, seconds = (int(x) for x in eta.split(":")[-2:])
    assert eta.count(":") == 1 and minutes * 60 + seconds <= 3600, head
    assert any("serves" in x for x in lines)


def test_budget_with_a_run_subset_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert command.main(["run", "--budget", "1h", "--runs", "final-*", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --runs: --budget chooses") and "\n" not in err
