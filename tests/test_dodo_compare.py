"""`doit compare A B --strict`: options work before and after the two run sets."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from artifact.reproduce import command


def _act() -> Callable[..., bool]:
    import dodo

    act: Callable[..., bool] = dodo.task_compare()["actions"][0]
    return act


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []

    def main(argv: Sequence[str] | None = None) -> int:
        calls.append(list(argv or []))
        return 0

    monkeypatch.setattr(command, "main", main)
    return calls


@pytest.mark.parametrize(("words", "strict", "out", "argv"), [
    (["A", "B", "--strict"], False, "", ["compare", "A", "B", "--strict"]),
    (["A", "B"], True, "", ["compare", "A", "B", "--strict"]),
    (["A", "--strict", "B", "--out=r"], False, "", ["compare", "A", "B", "--strict", "--out=r"]),
    (["A", "B", "--out=r"], False, "x", ["compare", "A", "B", "--out=r"]),
    (["A", "B"], False, "x", ["compare", "A", "B", "--out=x"]),
])
def test_options_after_the_run_sets(seen: list[list[str]], words: list[str], strict: bool,
                                    out: str, argv: list[str]) -> None:
    assert _act()(words, strict, out) is True
    assert seen == [argv]


@pytest.mark.parametrize(("words", "said"), [
    (["A"], "give two run sets"),
    (["A", "B", "C", "--strict"], "give two run sets"),
    (["A", "B", "--stirct"], "unknown option --stirct"),
])
def test_wrong_words_are_one_line(seen: list[list[str]], capsys: Any, words: list[str],
                                  said: str) -> None:
    assert _act()(words, False, "") is False
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and seen == []
