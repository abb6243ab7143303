from __future__ import annotations

import re
from typing import Annotated, Literal, TypedDict

import pytest

from artifact.contract import check, describe, schema_markdown
from artifact.errors import ArtifactError


class Inner(TypedDict):
    """An inner record."""

    status: Literal["ok", "bad"]
    x: Annotated[float | None, "a number"]


class Outer(TypedDict):
    """The root."""

    rows: dict[str, list[Inner]]
    n: int


def test_describe() -> None:
    assert describe(Outer) == "Outer"
    assert describe(dict[str, list[Inner]]) == "{str: [Inner]}"
    assert describe(Literal["ok", "bad"]) == '"ok" | "bad"'


@pytest.mark.parametrize(("value", "message"), [
    ({"rows": {}, "n": True}, "field 'n': expected int, got bool"),
    ({"rows": {"a": [{"status": "ok", "x": "1"}]}, "n": 1}, "field 'rows.a.0.x'"),
    ({"rows": {"a": [{"status": "ok"}]}, "n": 1}, "field 'rows.a.0.x': missing"),
    ({"rows": [], "n": 1}, "field 'rows': expected {str: [Inner]}, got list"),
    ([], "field '(top level)': expected Outer"),
])
def test_check_names_the_field(value: object, message: str) -> None:
    with pytest.raises(ArtifactError, match=re.escape(message)):
        check(Outer, value, source="f.json", error=ArtifactError)


def test_ints_are_numbers_and_null_fits_optional() -> None:
    check(Outer, {"rows": {"a": [{"status": "bad", "x": 3}, {"status": "ok", "x": None}]},
                  "n": 0}, source="f", error=ArtifactError)


def test_schema_markdown_lists_every_reachable_record() -> None:
    md = schema_markdown(Outer)
    assert md.index("### `Outer`") < md.index("### `Inner`")
    assert "| `x` | `float \\| null` | a number |" in md


def test_the_fast_pass_agrees_with_the_slow_one_on_every_mutated_field(
        corpus_summary: dict[str, object]) -> None:
    # check() accepts through _fits and names the field through _check: for the corpus's
    # summary and for each of many single-field corruptions of it, the two must agree.
    import copy
    import random

    from artifact.contract import _check, _fits
    from artifact.contract.summary import Summary

    def leaves(node: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        if isinstance(node, dict):
            return [p for k, v in node.items() for p in leaves(v, (*path, k))] + [path]
        if isinstance(node, list):
            return [p for i, v in enumerate(node) for p in leaves(v, (*path, i))] + [path]
        return [path]

    assert _fits(Summary, corpus_summary)
    paths = [p for p in leaves(corpus_summary) if p]
    rng = random.Random(7)
    wrong_values: list[object] = ["x", None, 1.5, 3, True, [], {}, {"extra": 1}]
    n_bad = 0
    data = copy.deepcopy(corpus_summary)
    for path in rng.sample(paths, min(100, len(paths))):
        node: object = data
        for k in path[:-1]:
            node = node[k]  # type: ignore[index]
        kept = node[path[-1]]  # type: ignore[index]
        for bad in rng.sample(wrong_values, 2):
            node[path[-1]] = bad  # type: ignore[index]
            try:
                _check(Summary, data, source="s", error=ArtifactError, where="")
                slow = True
            except ArtifactError:
                slow, n_bad = False, n_bad + 1
            assert _fits(Summary, data) is slow, (path, bad)
        node[path[-1]] = kept  # type: ignore[index]
    assert n_bad > 50  # the corruptions do reach the checks
