"""numbers.html's resolver (artifact/render/numbers.py) on an empty key: JSON allows one, and
its pointer (``/by_domain//x``) leads into it, not past it."""

from __future__ import annotations

from artifact.render import numbers

RUNS = ["experiments/runs/final-a", "experiments/runs/final-b", "experiments/runs/final-c"]


def test_an_empty_key_is_a_step_into_its_value() -> None:
    res = numbers.Resolver(
        {}, {"summary.json": {"by_domain": {"": {"run_id": "final-a", "x": 1.0},
                                            "x": {"run_id": "final-b"}},
                              "": {"run": "final-c", "y": 2}}},
        {"summary.json": RUNS}, [])
    f = res.field("summary.json#/by_domain//x")
    assert f.runs == ("experiments/runs/final-a",) and not f.all_runs
    top = res.field("summary.json#/")
    assert top.runs == ("experiments/runs/final-c",) and not top.all_runs
    whole = res.field("summary.json#")  # the file itself: every run
    assert whole.all_runs and whole.runs == tuple(RUNS)
