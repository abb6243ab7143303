"""The n-gram lookup's price (cost model v3, issue 44 item 2): the extra decode time per token
of the prompts a drafter never drafted for, from a tiny synthetic run pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from artifact import paths, records
from artifact.analysis import lookup

TEMPLATE = paths.CORE_RUNS / "q4_1-edit-none"


def _row(prompt: str, rep: int, ms_per_token: float, drafted: int) -> dict[str, Any]:
    row = json.loads((TEMPLATE / records.RESULTS).read_text().splitlines()[0])
    row.update(prompt_id=prompt, repeat=rep, attempt=0, contended=False)
    row["timings"].update(predicted_n=101, predicted_ms=100 * ms_per_token, draft_n=drafted,
                          draft_n_accepted=0)
    row["alpha"] = 0.0 if drafted else None
    return row


def _run(root: Path, name: str, rows: list[dict[str, Any]]) -> Path:
    run = root / name
    run.mkdir(parents=True)
    (run / records.CONFIG).write_text(json.dumps({"spec": {"repeats": 2}}))
    (run / records.RESULTS).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


def test_the_price_is_the_extra_time_per_token_of_the_undrafted_prompts(tmp_path: Path) -> None:
    base = _run(tmp_path, "none", [_row(p, rep, 10.0, 0) for p in "abc" for rep in (0, 1)])
    run = _run(tmp_path, "ngram", [
        _row("a", 0, 11.0, 0), _row("a", 1, 11.5, 0),  # undrafted: +1.25 ms after averaging
        _row("b", 0, 12.0, 0), _row("b", 1, 12.0, 0),  # undrafted: +2 ms
        _row("c", 0, 5.0, 0), _row("c", 1, 5.0, 8)])   # drafted in one pass: not a lookup alone
    warnings: list[str] = []
    p = lookup.price([(run, base)], warnings)
    assert p is not None and not warnings
    assert p.extras == pytest.approx((1.25, 2.0))
    assert p.ms == pytest.approx(1.625) and p.n == 2
    assert p.lo is not None and p.hi is not None and p.lo < p.ms < p.hi


def test_no_undrafted_prompt_gives_no_price(tmp_path: Path) -> None:
    base = _run(tmp_path, "none", [_row("a", 0, 10.0, 0)])
    run = _run(tmp_path, "ngram", [_row("a", 0, 8.0, 4)])
    assert lookup.price([(run, base)], []) is None
