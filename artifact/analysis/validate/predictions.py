"""The core study's predictions file (``experiments/core-predictions.json``): a configuration
input, refused whole when any field is wrong.

The file is written once by :mod:`artifact.analysis.prediction`, before the campaign is measured,
and committed; the core analysis sets each measured cell beside it. Every rule below is one
line naming the file, the field and what was expected (:class:`AnalysisError`):

- ``cells``: a list; each cell names a known ``target``, ``task`` and ``drafter`` of the study
  (an unknown name would leave its cell unjudged), and each (target, task, drafter) once;
- ``predicted``, ``lo``, ``hi``: finite numbers with ``lo <= predicted <= hi``;
- ``sign``: ``"pays"`` when ``predicted`` is above 1, ``"loses"`` otherwise (the sign the
  paper judges is the predicted value's own);
- ``costs``: by known target, each of ``c1_ms``, ``b_ms`` and ``draft_round_ms`` a finite time
  above 0 and ``a_ms`` one at least 0 (the paper prints them as step costs);
- ``made_utc``: a UTC time such as ``2026-12-03T07:40:25Z``.

Whether the predictions were made before the runs started is a question of the runs as well:
:func:`made_after` words the fatal warning the core analysis writes when they were not.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from artifact import paths
from artifact.contract import core as contract
from artifact.errors import AnalysisError

Key = tuple[str, str, str]  # (target, task, drafter)
COSTS = ("c1_ms", "a_ms", "b_ms", "draft_round_ms")
_AT_LEAST_ZERO = ("a_ms",)  # the round's intercept may be 0; every other cost is above 0


def read(file: Path, *, targets: Sequence[str] = contract.TARGETS,
         ) -> tuple[dict[Key, dict[str, Any]], contract.Predictions | None]:
    """The committed predictions by cell, and where they come from (None: no file).
    ``targets``: the model family's (SmolLM2's by default; Gemma 3's for its own file).

    >>> read(Path("/nonexistent/core-predictions.json"))
    ({}, None)
    """
    if not file.is_file():
        return {}, None
    shown = paths.shown(file)
    try:
        raw = file.read_bytes()
        doc = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise AnalysisError(f"{shown}: not readable as JSON ({err})") from err
    if not isinstance(doc, dict):
        raise AnalysisError(f"{shown}: expected a JSON object of predictions")
    cells = _cells(shown, doc.get("cells"), targets)
    costs = _costs(shown, doc.get("costs"), targets)
    made = _made(shown, doc.get("made_utc"))
    return cells, {"file": paths.shown(file, outside="name"),
                   "sha256": hashlib.sha256(raw).hexdigest(), "made_utc": made, "costs": costs}


def check(doc: dict[str, Any], source: str, *,
          targets: Sequence[str] = contract.TARGETS) -> None:
    """Refuse predictions (as :mod:`artifact.analysis.prediction` is about to write them) that
    the core analysis would refuse to read; ``targets``: the family's (as :func:`read`)."""
    _cells(source, doc.get("cells"), targets)
    _costs(source, doc.get("costs"), targets)
    _made(source, doc.get("made_utc"))


def _made(shown: str, made: Any) -> str:
    if not isinstance(made, str) or utc(made) is None:
        raise AnalysisError(f"{shown}: made_utc: expected a UTC time such as "
                            f"2026-12-03T07:40:25Z (when they were made), got {made!r}")
    return made


def _cells(shown: str, cells: Any,
           targets: Sequence[str] = contract.TARGETS) -> dict[Key, dict[str, Any]]:
    if not isinstance(cells, list):
        raise AnalysisError(f"{shown}: cells: expected a list of predicted cells")
    out: dict[Key, dict[str, Any]] = {}
    first: dict[Key, int] = {}
    known = {"target": tuple(targets), "task": contract.TASKS, "drafter": contract.DRAFTERS}
    for i, c in enumerate(cells):
        where = f"cells[{i}]"
        if not isinstance(c, dict):
            raise AnalysisError(f"{shown}: {where}: expected an object")
        for k in ("target", "task", "drafter", "sign"):
            if not isinstance(c.get(k), str):
                raise AnalysisError(f"{shown}: {where}.{k}: expected a string")
        for k, names in known.items():
            if c[k] not in names:
                raise AnalysisError(f"{shown}: {where}.{k}: expected one of "
                                    f"{', '.join(names)}, got {c[k]!r}")
        if c["sign"] not in ("pays", "loses"):
            raise AnalysisError(f"{shown}: {where}.sign: expected 'pays' or 'loses'")
        p, lo, hi = (finite(shown, f"{where}.{k}", c.get(k)) for k in ("predicted", "lo", "hi"))
        if lo > hi:
            raise AnalysisError(f"{shown}: {where}.lo: expected at most hi {hi!r}, got {lo!r}")
        if not lo <= p <= hi:
            raise AnalysisError(f"{shown}: {where}.predicted: expected inside its interval "
                                f"[{lo!r}, {hi!r}], got {p!r}")
        if c["sign"] != ("pays" if p > 1 else "loses"):
            raise AnalysisError(f"{shown}: {where}.sign: expected "
                                f"{'pays' if p > 1 else 'loses'!r} (predicted {p!r} is "
                                f"{'above' if p > 1 else 'not above'} 1), got {c['sign']!r}")
        _pilot(shown, where, c)
        key = (c["target"], c["task"], c["drafter"])
        if key in first:
            raise AnalysisError(f"{shown}: {where}: expected each (target, task, drafter) once; "
                                f"{'-'.join(key)} already predicted by cells[{first[key]}]")
        first[key] = i
        out[key] = c
    return out


def _pilot(shown: str, where: str, c: dict[str, Any]) -> None:
    """The pilot a cell's interval came from, when given (the core analysis sizes the pilot that
    would have sufficed from it): ``n_pilot_prompts`` an integer >= 1 and ``per_prompt`` an
    object of finite per-prompt predictions, as many as the pilot's prompts."""
    n, per = c.get("n_pilot_prompts"), c.get("per_prompt")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise AnalysisError(f"{shown}: {where}.n_pilot_prompts: expected an integer >= 1 (the "
                            f"pilot's prompts), got {n!r}")
    if per is None:
        return
    if not isinstance(per, dict):
        raise AnalysisError(f"{shown}: {where}.per_prompt: expected an object of per-prompt "
                            "predictions by prompt id")
    for k, v in per.items():
        finite(shown, f"{where}.per_prompt.{k}", v)
    if n is not None and len(per) != n:
        raise AnalysisError(f"{shown}: {where}.per_prompt: expected n_pilot_prompts = {n} "
                            f"prompts, got {len(per)}")


def _costs(shown: str, given: Any,
           targets: Sequence[str] = contract.TARGETS) -> dict[str, contract.Cost]:
    if not isinstance(given, dict):
        raise AnalysisError(f"{shown}: costs: expected an object of step costs by target")
    out: dict[str, contract.Cost] = {}
    for target, cost in given.items():
        if target not in targets:
            raise AnalysisError(f"{shown}: costs.{target}: expected a target of the study "
                                f"({', '.join(targets)})")
        vals = {}
        for k in COSTS:
            where = f"costs.{target}.{k}"
            v = finite(shown, where, cost.get(k) if isinstance(cost, dict) else None)
            least = k in _AT_LEAST_ZERO
            if v < 0 or (v == 0 and not least):
                raise AnalysisError(f"{shown}: {where}: expected a step time in ms "
                                    f"{'at least' if least else 'above'} 0, got {v!r}")
            vals[k] = v
        out[target] = {"c1_ms": vals["c1_ms"], "a_ms": vals["a_ms"], "b_ms": vals["b_ms"],
                       "draft_round_ms": vals["draft_round_ms"]}
    return out


def finite(shown: str, where: str, v: Any) -> float:
    """``v`` as a float, or one line naming the file and the field.

    >>> finite("p.json", "cells[0].lo", 1)
    1.0
    >>> finite("p.json", "cells[0].lo", float("nan"))
    Traceback (most recent call last):
    ...
    artifact.errors.AnalysisError: p.json: cells[0].lo: expected a finite number
    """
    if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
        raise AnalysisError(f"{shown}: {where}: expected a finite number")
    return float(v)


def utc(text: Any) -> datetime.datetime | None:
    """An ISO time with its zone (``Z`` or ``+00:00``) as an aware time, or None.

    >>> utc("2026-12-03T07:40:25Z") == utc("2026-12-03T07:40:25+00:00")
    True
    >>> utc("2026-12-03T07:40:25"), utc("yesterday"), utc(3)
    (None, None, None)
    """
    if not isinstance(text, str):
        return None
    try:
        t = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return t if t.tzinfo is not None else None


def made_after(meta: contract.Predictions, starts: Iterable[tuple[str, str]]) -> str | None:
    """The fatal warning when the predictions were made after a run of the study started
    (``starts``: run id and its ``config.json`` ``environment.start_time``), or None. A start
    time that is not a time with its zone is not compared.

    >>> meta = {"file": "p.json", "sha256": "", "made_utc": "2026-12-03T08:00:00Z", "costs": {}}
    >>> made_after(meta, [("b", "2026-12-03T09:00:00+00:00")]) is None
    True
    >>> print(made_after(meta, [("b", "2026-12-03T09:00:00+00:00"),
    ...                         ("a", "2026-12-03T07:41:41+00:00"), ("c", "?")]))
    p.json: made_utc 2026-12-03T08:00:00Z: predictions made after the runs started (run a \
started 2026-12-03T07:41:41+00:00): not committed before the study was measured
    """
    made = utc(meta["made_utc"])
    timed = sorted((t, run, text) for run, text in starts if (t := utc(text)) is not None)
    if made is None or not timed or made <= timed[0][0]:
        return None
    _, run, text = timed[0]
    return (f"{meta['file']}: made_utc {meta['made_utc']}: predictions made after the runs "
            f"started (run {run} started {text}): not committed before the study was measured")


NEW_PROMPTS = 30  # the campaign's prompts per cell, when a predictions file does not say


def new_prompts(file: Path) -> int:
    """The new prompts per cell a predictions file's intervals are for (its ``new_prompts``;
    :data:`NEW_PROMPTS` when it does not say), or one line naming the file and the field."""
    shown = paths.shown(file)
    try:
        doc = json.loads(file.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise AnalysisError(f"{shown}: not readable as JSON ({err})") from err
    n = doc.get("new_prompts") if isinstance(doc, dict) else None
    if n is None:
        return NEW_PROMPTS
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise AnalysisError(f"{shown}: new_prompts: expected an integer >= 1 (the campaign's "
                            f"prompts per cell), got {n!r}")
    return n
