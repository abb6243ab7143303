"""The seeded order in which one prompt goes to the runs of an interleave group (issue 16)."""

from __future__ import annotations

from artifact.workloads import round_order


def test_round_order_is_seeded_and_varies_between_prompts() -> None:
    ids = ["a", "b", "c", "d"]
    orders = {tuple(round_order("g", 42, 0, f"p{i}", ids)) for i in range(20)}
    assert len(orders) > 5  # not one fixed order: neither run is always first
    assert round_order("g", 42, 0, "p1", ids) == round_order(
        "g", 42, 0, "p1", list(reversed(ids)))
    assert all(sorted(o) == ids for o in orders)
