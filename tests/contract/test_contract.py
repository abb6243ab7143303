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
