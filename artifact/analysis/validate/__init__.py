"""One validation layer for the records of every study: the core's, the acceptance split's and
the workload's read by the same rules.

- **Unreadable** lines (undecodable bytes, broken JSON, a field missing or of the wrong JSON
  type, and the bounds of issue 46: nested deeper than the parser holds, text that is not
  Unicode, a count no int32 holds) are counted by the typed readers of :mod:`artifact.records`
  and warned about here.
- **Impossible** values (:func:`result_problem`, :func:`turn_problem`): non-finite or negative
  times and counts, a first token after the end, acceptance outside [0, 1], more accepted than
  drafted, event times out of order, non-finite or negative ``/metrics`` counter deltas, a turn
  with no prompt or no output token, more output than asked for: the record is excluded and
  counted.
- **Off-plan** turns (workload): a turn that the run's plan (``sessions.jsonl``) does not hold,
  or whose prompt tokens, characters or output budget disagree with it, is excluded and counted.
- **Off-lock** turns (realism): a turn of a session that the session set's id lock
  (``experiments/sessions/<set>.txt``) does not hold is excluded and counted, even when the
  run's own plan holds it.
- **Unknown contention** (realism): turns that recorded no contention window are kept and
  analysed as if quiet, and counted (:func:`unknown_contention`).
- **Step costs** (``experiments/runs-cost/<model>/steps.jsonl``, :func:`step_problem`,
  :func:`screen_steps`): a row whose step time is not finite, not above 0, above the longest a
  request may take, or above the round trip it was measured in, or whose width, repeat or counts
  are not counts, is refused, named by its line and field; repeated (n, rep) rows keep the
  first copy.
- **Duplicates**: the first readable copy of a key is kept, later ones excluded and counted
  (:func:`screen`).
- **Runs**: one run per run id (:func:`unique_runs`); a copy of a run folder (a backup) is
  skipped, the folder named after the run id kept.

Each exclusion is one warning line, worded for :mod:`artifact.warning_classes`, whose fatal
classes fail ``doit verify --strict``.

The rules shared by every study's records live here; each other input has a module of its own in
this package (the core study's records and predictions, memory runs, reproduction calibrations,
the realism strata), read by the same habits: one line naming the file, the field and what was
expected, or the bad record set aside and named in a warning.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from artifact import records
from artifact.records import Plan, Result, Timings, TurnResult

IMPOSSIBLE, OFF_PLAN, OFF_LOCK = "impossible", "plan", "lock"
Problem = tuple[str, str]  # (IMPOSSIBLE, OFF_PLAN or OFF_LOCK, why)

_COUNTS = ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "cache_n", "draft_n",
           "draft_n_accepted")


def _bad_number(v: float | None) -> bool:
    return v is not None and (not records.finite(v) or v < 0)


def _common(t: Timings, fields: dict[str, float | None], alpha: float | None,
            event_ms: list[float], e2e_ms: float) -> str | None:
    """The rules every completed request obeys, a prompt's or a turn's."""
    for name in _COUNTS:
        v = getattr(t, name)
        if _bad_number(v):
            return f"timings.{name} {v!r} negative or not finite"
    for name, v in fields.items():
        if _bad_number(v):
            return f"{name} {v!r} negative or not finite"
    ttft = fields.get("ttft_ms")
    if ttft is not None and ttft > e2e_ms:
        return f"ttft_ms {ttft!r} after the end of the request (e2e_ms {e2e_ms!r})"
    if alpha is not None:
        if not records.finite(alpha) or not 0.0 <= alpha <= 1.0:
            return f"alpha {alpha!r} outside [0, 1]"
        if not t.draft_n:
            return f"alpha {alpha!r} without drafted tokens"
    if t.draft_n is not None and t.draft_n_accepted is not None and t.draft_n_accepted > t.draft_n:
        return f"draft_n_accepted {t.draft_n_accepted} above draft_n {t.draft_n}"
    return records.event_problem(event_ms, e2e_ms)


def result_problem(r: Result) -> str | None:
    """Why a record's values cannot be a measurement (it is then excluded and counted), or None.

    >>> t = records.Timings(prompt_n=5, prompt_ms=1.0, predicted_n=9, predicted_ms=90.0,
    ...                     predicted_per_second=88.9, cache_n=0, draft_n=4,
    ...                     draft_n_accepted=2)
    >>> r = records.Result(prompt_id="p", domain="code", prompt_sha256="", repeat=0, attempt=1,
    ...     server_start=1, sent_unix_s=0.0, queue_ms=0.0, ttft_ms=5.0, e2e_ms=100.0,
    ...     event_ms=[5.0, 50.0], timings=t, stop_type="limit", alpha=0.5,
    ...     metrics_delta={"spec_decode_num_drafts_total": -1.0})
    >>> result_problem(r)
    'metrics_delta.spec_decode_num_drafts_total -1.0 negative or not finite'
    """
    return None if _plainly_possible(r) else _result_rules(r)


def _result_rules(r: Result) -> str | None:
    """:func:`result_problem`'s rules one by one: the first that the record breaks."""
    why = _common(r.timings, {"sent_unix_s": r.sent_unix_s, "queue_ms": r.queue_ms,
                              "ttft_ms": r.ttft_ms, "e2e_ms": r.e2e_ms},
                  r.alpha, r.event_ms, r.e2e_ms)
    if why is not None:
        return why
    for name, v in sorted((r.metrics_delta or {}).items()):
        if _bad_number(v):  # counters only grow: a delta below 0 is a reset, not a request
            return f"metrics_delta.{name} {v!r} negative or not finite"
    return None


def _plainly_possible(r: Result) -> bool:
    """True only when the record breaks none of :func:`_result_rules`, checked at C speed where
    it can be (the common case, once per record); False also when in doubt: the rules one by
    one then decide and name what the record breaks."""
    t = r.timings
    # ``or 0``: a null count or time is no problem (NaN is true, so it stays NaN)
    values = (t.prompt_n, t.prompt_ms, t.predicted_n, t.predicted_ms, t.cache_n,
              t.draft_n or 0, t.draft_n_accepted or 0, r.sent_unix_s, r.queue_ms,
              r.ttft_ms or 0, r.e2e_ms)
    try:  # a sum of values not below 0 is finite only when every one is
        if not (min(values) >= 0 and math.isfinite(sum(values))):
            return False
    except (TypeError, ArithmeticError):  # not numbers, or an integer too large for a float
        return False
    alpha, ttft = r.alpha, r.ttft_ms
    drafted, accepted = t.draft_n, t.draft_n_accepted
    return ((ttft is None or ttft <= r.e2e_ms)
            and (alpha is None or (0.0 <= alpha <= 1.0 and bool(drafted)))
            and (drafted is None or accepted is None or accepted <= drafted)
            and not r.metrics_delta
            and (not r.event_ms or records.event_problem(r.event_ms, r.e2e_ms) is None))


def turn_problem(t: TurnResult, plan: Plan, *,
                 locked: Collection[str] | None = None) -> Problem | None:
    """Why a workload turn cannot be a measurement of its plan, or None; with ``locked`` (the
    session ids of the set's id lock), also a turn of a session the lock does not hold.

    >>> tm = records.Timings(prompt_n=5, prompt_ms=1.0, predicted_n=4, predicted_ms=9.0,
    ...                      predicted_per_second=400.0, cache_n=0)
    >>> turn = records.TurnResult(session_id="s", side="real", condition="c", turn=0, order=0,
    ...     slot=0, attempt=1, server_start=1, sent_unix_s=0.0, queue_ms=0.0, prompt_chars=20,
    ...     prompt_tokens=5, cached_tokens=0, output_tokens=4, n_predict=4, ttft_ms=2.0,
    ...     tpot_ms=1.0, e2e_ms=5.0, event_ms=[], timings=tm, stop_type="limit", alpha=None)
    >>> plan = records.Plan({("real:s", 0): records.PlanTurn(prompt_tokens=6, prompt_chars=20,
    ...                                                       n_predict=4)}, 0)
    >>> turn_problem(turn, plan)
    ('plan', 'prompt_tokens 5, the plan says 6')
    >>> turn_problem(turn, records.Plan({}, 0))
    ('plan', 'not in the plan')
    >>> turn_problem(turn, plan, locked={"other"})
    ('lock', 'session s not in the session lock')
    """
    why = _common(t.timings, {"sent_unix_s": t.sent_unix_s, "queue_ms": t.queue_ms,
                              "ttft_ms": t.ttft_ms, "tpot_ms": t.tpot_ms, "e2e_ms": t.e2e_ms},
                  t.alpha, t.event_ms, t.e2e_ms)
    if why is None:
        why = _turn_counts(t)
    if why is not None:
        return IMPOSSIBLE, why
    if locked is not None and t.session_id not in locked:
        return OFF_LOCK, f"session {t.session_id} not in the session lock"
    planned = plan.turns.get(t.key)
    if planned is None:
        return OFF_PLAN, "not in the plan"
    for name in ("prompt_tokens", "prompt_chars", "n_predict"):
        got, want = getattr(t, name), getattr(planned, name)
        if got != want:
            return OFF_PLAN, f"{name} {got}, the plan says {want}"
    return None


def _turn_counts(t: TurnResult) -> str | None:
    for name in ("prompt_chars", "cached_tokens", "n_predict"):
        if getattr(t, name) < 0:
            return f"{name} {getattr(t, name)} negative"
    if t.prompt_tokens < 1 or t.output_tokens < 1:
        return f"{t.prompt_tokens} prompt and {t.output_tokens} output tokens: a turn sends " \
               "and receives at least one"
    if t.cached_tokens > t.prompt_tokens:
        return f"cached_tokens {t.cached_tokens} above prompt_tokens {t.prompt_tokens}"
    if t.output_tokens > t.n_predict:
        return f"output_tokens {t.output_tokens} above n_predict {t.n_predict}"
    return None


R = TypeVar("R")


def screen(recs: Sequence[R], *, key: Callable[[R], Hashable], label: Callable[[R], str],
           problem: Callable[[R], Problem | None], where: str, warnings: list[str],
           excluded: Sequence[bool] | None = None,
           set_aside: Sequence[bool] | None = None) -> list[bool]:
    """Per record: excluded. ``excluded`` marks records already excluded (still checked, not
    named), ``set_aside`` records left out without a word (a contended attempt measured again).
    Of the rest, a repeated key keeps its first copy; an impossible or off-plan record is
    excluded. Each kind is one warning line naming ``where`` and the records.

    >>> ws: list[str] = []
    >>> screen([1, 2, 2, -3], key=abs, label=str, where="r",
    ...        problem=lambda x: ("impossible", "below 0") if x < 0 else None, warnings=ws)
    [False, False, True, True]
    >>> for w in ws: print(w)
    run r: results.jsonl: 1 duplicate record(s) excluded, first copy kept: 2
    run r: results.jsonl: 1 record(s) with impossible values excluded: -3 (below 0)
    """
    out = list(excluded) if excluded is not None else [False] * len(recs)
    aside = list(set_aside) if set_aside is not None else [False] * len(recs)
    seen: set[Hashable] = set()
    dups: list[str] = []
    named: dict[str, list[str]] = {IMPOSSIBLE: [], OFF_PLAN: [], OFF_LOCK: []}
    for i, r in enumerate(recs):
        if aside[i]:
            out[i] = True
            continue
        k = key(r)
        if k in seen:
            dups.append(label(r))
            out[i] = True
            continue
        seen.add(k)
        got = problem(r)
        if got is not None:
            named[got[0]].append(label(r) if got[0] == OFF_LOCK else f"{label(r)} ({got[1]})")
            out[i] = True
    head = f"run {where}: {records.RESULTS}:"
    if dups:
        warnings.append(f"{head} {len(dups)} duplicate record(s) excluded, first copy kept: "
                        f"{listed(dups)}")
    if named[IMPOSSIBLE]:
        warnings.append(f"{head} {len(named[IMPOSSIBLE])} record(s) with impossible values "
                        f"excluded: {listed(named[IMPOSSIBLE])}")
    if named[OFF_PLAN]:
        warnings.append(f"{head} {len(named[OFF_PLAN])} record(s) that disagree with the plan "
                        f"({records.SESSIONS}) excluded: {listed(named[OFF_PLAN])}")
    if named[OFF_LOCK]:
        warnings.append(f"{head} {len(named[OFF_LOCK])} record(s) of a session not in the "
                        f"session lock excluded: {listed(named[OFF_LOCK])}")
    return out


def listed(items: Sequence[str], most: int = 5) -> str:
    """The first ``most`` items, and how many more.

    >>> listed(["a", "b", "c"], most=2)
    'a, b, and 1 more'
    """
    shown = ", ".join(items[:most])
    return shown + (f", and {len(items) - most} more" if len(items) > most else "")


def unique_runs(runs: Sequence[R], *, run_id: Callable[[R], str], folder: Callable[[R], Path],
                warnings: list[str], what: str = "run_id") -> list[R]:
    """One run per id, sorted by (id, folder): a copy of a run folder (a backup, ``cp -r``)
    is skipped with a warning, and the folder named after the id is the one kept.

    >>> ws: list[str] = []
    >>> runs = [("a", Path("a.bak")), ("a", Path("a")), ("b", Path("b"))]
    >>> unique_runs(runs, run_id=lambda r: r[0], folder=lambda r: r[1], warnings=ws)
    [('a', PosixPath('a')), ('b', PosixPath('b'))]
    >>> ws
    ["run a.bak: run_id 'a' already used by a; run skipped"]
    """
    ordered = sorted(runs, key=lambda r: (run_id(r), folder(r).name != run_id(r),
                                          folder(r).name))
    seen: dict[str, str] = {}
    out: list[R] = []
    for r in ordered:
        rid = run_id(r)
        if rid in seen:
            warnings.append(f"run {folder(r).name}: {what} {rid!r} already used by "
                            f"{seen[rid]}; run skipped")
            continue
        seen[rid] = folder(r).name
        out.append(r)
    return sorted(out, key=lambda r: (run_id(r), folder(r).name))


def one_sided(sessions: dict[str, set[str]], where: str, warnings: list[str]) -> set[str]:
    """Sessions measured on one side only (``sessions``: side -> its session ids): left out
    of a comparison paired by session, with a warning naming them.

    >>> ws: list[str] = []
    >>> sorted(one_sided({"real": {"a", "b"}, "synthetic": {"a"}}, "w", ws))
    ['b']
    >>> ws
    ['run w: 1 session(s) measured on one side only (real:b), left out of the comparison']
    """
    both = set.intersection(*sessions.values()) if sessions else set()
    odd = sorted((side, s) for side, ss in sessions.items() for s in ss - both)
    if odd:
        names = [f"{side}:{s}" for side, s in odd]
        warnings.append(f"run {where}: {len(odd)} session(s) measured on one side only "
                        f"({listed(names)}), left out of the comparison")
    return {s for _, s in odd}


def unknown_contention(turns: Sequence[TurnResult], where: str, warnings: list[str]) -> int:
    """How many ``turns`` recorded no contention window (``contention`` or ``contended``
    missing, or ``contention`` unavailable on the machine): they are analysed as if quiet,
    with one warning naming the run and the turns.

    >>> tm = records.Timings(prompt_n=5, prompt_ms=1.0, predicted_n=4, predicted_ms=9.0,
    ...                      predicted_per_second=400.0, cache_n=0)
    >>> turn = records.TurnResult(session_id="s", side="real-a", condition="c", turn=0, order=0,
    ...     slot=0, attempt=1, server_start=1, sent_unix_s=0.0, queue_ms=0.0, prompt_chars=20,
    ...     prompt_tokens=5, cached_tokens=0, output_tokens=4, n_predict=4, ttft_ms=2.0,
    ...     tpot_ms=1.0, e2e_ms=5.0, event_ms=[], timings=tm, stop_type="limit", alpha=None)
    >>> ws: list[str] = []
    >>> unknown_contention([turn], "r", ws)
    1
    >>> print(ws[0].replace(", ", ",\\n"))
    run r: 1 of 1 turn(s) with no contention fields (no contention window recorded,
    or none available),
    analysed as if quiet: real-a:s#0
    """
    unknown = [f"{t.key[0]}#{t.turn}" for t in turns
               if not isinstance(t.contention, dict) or "unavailable" in t.contention
               or t.contended is None]
    if unknown:
        warnings.append(f"run {where}: {len(unknown)} of {len(turns)} turn(s) with no "
                        "contention fields (no contention window recorded, or none "
                        f"available), analysed as if quiet: {listed(unknown)}")
    return len(unknown)


# ---- step costs (experiments/runs-cost/<model>/steps.jsonl) ----------------------------------

# The longest one request of a step-cost measurement may take: its client's timeout
# (mirrors artifact.campaign.stepcost.Plan.timeout_s, in ms; a test checks the two agree).
STEP_MS_MAX = 120_000.0
_ROUNDING_MS = 0.001  # both times are stored to the microsecond


def _count(v: Any, least: int) -> bool:
    """A count at least ``least`` that an int32 holds, as every reader's (records.is_count)."""
    return records.is_count(v) and v >= least


def _ms(v: Any) -> TypeGuard[float]:
    return isinstance(v, int | float) and not isinstance(v, bool) and records.finite(v)


def step_problem(row: Mapping[str, Any]) -> str | None:
    """Why a row of ``steps.jsonl`` cannot be one measured forward pass (the row is then
    refused), or None: the field, its value and what was expected.

    >>> step_problem({"n": 3, "rep": 0, "prompt_ms": 12.5, "client_ms": 14.0, "problem": None})
    >>> step_problem({"n": 3, "rep": 0, "prompt_ms": float("nan"), "problem": None})
    'prompt_ms nan: expected a time in ms, finite, above 0 and at most 120000'
    >>> step_problem({"n": 3, "rep": 0, "prompt_ms": 20.0, "client_ms": 14.0,
    ...               "problem": None}).split(" (")[0]
    'prompt_ms 20.0: expected at most client_ms 14.0'
    >>> step_problem({"n": 0, "rep": 0, "prompt_ms": 1.0})
    'n 0: expected an integer >= 1 (tokens in one forward pass)'
    >>> step_problem({"n": 2, "rep": 0, "prompt_ms": None, "problem": "no timings.prompt_ms"})
    """
    n, rep, pms, flag = row.get("n"), row.get("rep"), row.get("prompt_ms"), row.get("problem")
    if not _count(n, 1):
        return f"n {n!r}: expected an integer >= 1 (tokens in one forward pass)"
    if not _count(rep, 0):
        return f"rep {rep!r}: expected an integer >= 0"
    if flag is not None and not (isinstance(flag, str) and flag):
        return f"problem {flag!r}: expected null or the reason the row is flagged"
    for name in ("prompt_n", "cache_n", "server_start"):
        v = row.get(name)
        if v is not None and not _count(v, 0):
            return f"{name} {v!r}: expected null or an integer >= 0"
    if flag is None and row.get("prompt_n") not in (None, n):
        return f"prompt_n {row.get('prompt_n')!r}: expected n {n} in a row with no problem"
    cms = row.get("client_ms")
    if cms is not None and not (_ms(cms) and cms >= 0):
        return f"client_ms {cms!r}: expected null or a finite time in ms >= 0"
    if pms is None and flag is not None:  # flagged for having no time: left out by the fit
        return None
    if not (_ms(pms) and 0 < pms <= STEP_MS_MAX):
        return (f"prompt_ms {pms!r}: expected a time in ms, finite, above 0 and at most "
                f"{STEP_MS_MAX:g}")
    if cms is not None and pms > cms + _ROUNDING_MS:
        return (f"prompt_ms {pms!r}: expected at most client_ms {cms!r} (the server cannot "
                "take longer than the round trip)")
    c, busy = row.get("contention"), row.get("contended")
    if c is not None and not isinstance(c, dict):
        return f"contention {c!r}: expected null or an object"
    if busy is not None and not isinstance(busy, bool):
        return f"contended {busy!r}: expected null, true or false"
    return None


def screen_steps(lines: Sequence[tuple[int, dict[str, Any] | None]], where: str,
                 warnings: list[str]) -> list[dict[str, Any]]:
    """The rows of ``steps.jsonl`` that can be measurements (``lines``: line number and the
    decoded row, None for a line that is not a JSON object). Unreadable lines, refused rows and
    repeated (n, rep) rows (the first copy kept) are one warning line each, naming ``where``
    and the lines.

    >>> ws: list[str] = []
    >>> ok = {"n": 1, "rep": 0, "prompt_ms": 9.0, "problem": None}
    >>> bad = {"n": 2, "rep": 0, "prompt_ms": -1e300, "problem": None}
    >>> len(screen_steps([(1, ok), (2, None), (3, bad), (4, dict(ok))], "m/steps.jsonl", ws))
    1
    >>> for w in ws: print(w.split(": expected")[0])
    m/steps.jsonl: 1 unreadable line(s) skipped: line 2
    m/steps.jsonl: 1 duplicate record(s) excluded, first copy kept: line 4 (n 1, rep 0)
    m/steps.jsonl: 1 row(s) with impossible values refused: line 3 (prompt_ms -1e+300
    """
    kept: list[dict[str, Any]] = []
    seen: set[tuple[int, int]] = set()
    unreadable: list[str] = []
    dups: list[str] = []
    refused: list[str] = []
    for line, row in lines:
        if row is None:
            unreadable.append(f"line {line}")
            continue
        why = step_problem(row)
        if why is not None:
            refused.append(f"line {line} ({why})")
            continue
        key = (int(row["n"]), int(row["rep"]))
        if key in seen:
            dups.append(f"line {line} (n {key[0]}, rep {key[1]})")
            continue
        seen.add(key)
        kept.append(row)
    if unreadable:
        warnings.append(f"{where}: {len(unreadable)} unreadable line(s) skipped: "
                        f"{listed(unreadable)}")
    if dups:
        warnings.append(f"{where}: {len(dups)} duplicate record(s) excluded, first copy kept: "
                        f"{listed(dups)}")
    if refused:
        warnings.append(f"{where}: {len(refused)} row(s) with impossible values refused: "
                        f"{listed(refused)}")
    return kept
