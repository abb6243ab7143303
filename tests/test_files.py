from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from artifact import files
from artifact.errors import ArtifactError


class Bad(ArtifactError):
    pass


def test_write_json_is_canonical_atomic_and_makes_the_folder(tmp_path: Path) -> None:
    out = files.write_json(tmp_path / "a" / "x.json", {"b": 1.5, "a": "é"}, ensure_ascii=False)
    assert out.read_text(encoding="utf-8") == '{\n  "a": "é",\n  "b": 1.5\n}\n'
    assert [p.name for p in out.parent.iterdir()] == ["x.json"]  # no temporary left


def test_write_text_replaces_and_cleans_up_on_failure(tmp_path: Path) -> None:
    target = files.write_text(tmp_path / "t.txt", "old")
    with pytest.raises(ValueError):
        files.write_json(target, {"x": math.nan})  # refused before anything is written
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"]


def test_non_finite_floats_become_null_and_are_reported() -> None:
    bad: list[str] = []
    plain = files.to_plain({"r": (1.0000004, math.inf), "s": -0.0}, "top", bad)
    assert plain == {"r": [1.0, None], "s": 0.0} and bad == ["top.r.1"]
    assert json.loads(files.dumps_json(plain)) == plain


@pytest.mark.parametrize(("content", "expected"), [
    (None, "file not found"),
    (b"a = [", "not valid TOML"),
    (b"a = '\xff'", "not UTF-8 text"),
    ("dir", "is a folder"),
])
def test_load_toml_errors_are_one_line_naming_the_file(
    tmp_path: Path, content: bytes | str | None, expected: str
) -> None:
    path = tmp_path / "c.toml"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(Bad) as err:
        files.load_toml(path, Bad, where="c.toml")
    msg = str(err.value)
    assert msg.startswith("c.toml: ") and expected in msg and "\n" not in msg


def test_load_toml_reads() -> None:
    assert files.load_toml(Path(__file__).parents[1] / "pyproject.toml", Bad)["project"]


@pytest.mark.parametrize(("content", "expected"), [
    (None, "file not found"),
    (b"{", "not JSON (line 1"),
    (b"\xff", "not UTF-8 text"),
    (b"[1]", "expected a JSON object, got list"),
])
def test_read_json_errors_are_one_line_naming_the_file(
    tmp_path: Path, content: bytes | None, expected: str
) -> None:
    path = tmp_path / "m.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(Bad) as err:
        files.read_json(path, Bad, where="m.json")
    msg = str(err.value)
    assert msg.startswith("m.json: ") and expected in msg and "\n" not in msg
    assert files.read_json(files.write_json(path, {"a": 1}), Bad) == {"a": 1}


def test_the_fast_pass_of_to_plain_gives_what_the_full_pass_gives() -> None:
    # to_plain converts trees of built-in types without building field paths, and falls back
    # to the full pass for anything else (a dataclass, a numpy float, a non-finite float whose
    # path is wanted): each tree here must come out the same both ways, nan paths included.
    import dataclasses
    import random

    import numpy as np

    @dataclasses.dataclass
    class D:
        x: float
        y: list[float]

    rng = random.Random(3)

    def tree(depth: int) -> object:
        pick = rng.random()
        if depth == 0 or pick < 0.3:
            return rng.choice([1.23456789, -0.0, 7, "s", True, None, float("nan"),
                               float("inf"), np.float64(2.5), 1e-300, 3.0])
        if pick < 0.55:
            return {rng.choice(["a", "b", 3]): tree(depth - 1) for _ in range(3)}
        if pick < 0.8:
            return [tree(depth - 1) for _ in range(3)]
        if pick < 0.9:
            return tuple(tree(depth - 1) for _ in range(2))
        return D(x=rng.random(), y=[rng.random(), float("nan")])

    for _ in range(300):
        t = tree(4)
        fast: list[str] = []
        slow: list[str] = []
        assert files.to_plain(t, "r", fast) == files._to_plain(t, "r", slow)
        assert fast == slow
        assert repr(files.to_plain(t)) == repr(files._to_plain(t, "", None))
