"""The realism study's per-side runs (``experiments/runs-realism/``), read by one rule set.

A per-side run is one server of an interleave group (a **stratum**: one session set at one
concurrency, every server measured together, round by round). Its inputs are checked here:

- **Config** (:func:`config_problem`): the run names its side (``spec.workload.play``), its
  interleave group (``spec.interleave``) and the protocol its stratum reports: ``concurrency``,
  ``n_predict``, ``ctx_size`` and ``threads`` integers >= 1, ``temperature`` a finite number
  >= 0. A config that breaks one is one line naming the run, the field and what was expected,
  and the run is left out (fatal).
- **One protocol per stratum** (:func:`one_protocol`): the runs of one group share
  :data:`PROTOCOL`. A run whose value differs from the one the campaign file plans for its
  group (:func:`planned`; without a plan, from the value most of the group's runs share) is
  left out, named with the field and what was expected; when no value is planned and none is
  shared by most, every run of the group is left out.
- **Slot and place** (:func:`turn_problem`, :func:`in_range`): a turn ran on a slot below its
  run's concurrency (a round sends its chunk's sessions on slots 0 to concurrency - 1) and took
  a place in its round below the number of servers its group plans (not negative, where no
  campaign file plans the group: the runs analysed may be a part of it); a turn outside is
  excluded as impossible, named by run, field and the range expected.

Each finding is one warning line, worded for :mod:`artifact.warning_classes`.

>>> config_problem({"spec": {"workload": {"play": "real-a"}, "interleave": "g",
...                          "prompt_set": "realism", "concurrency": 0, "n_predict": 48,
...                          "ctx_size": 4096, "threads": 1, "temperature": 0.0}})
'spec.concurrency 0: expected an integer >= 1 (streams per server)'
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from artifact import records
from artifact.analysis.validate import IMPOSSIBLE, Problem, screen
from artifact.records import TurnResult
from artifact.spec import Campaign

# What every run of a stratum shares: the stratum's protocol (realism.json's ``protocol``).
PROTOCOL = ("concurrency", "prompt_set", "n_predict", "ctx_size", "threads", "temperature")
_COUNTS = {"concurrency": "streams per server", "n_predict": "the output cap per turn",
           "ctx_size": "tokens per slot", "threads": "server threads"}


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def config_problem(config: Any) -> str | None:
    """Why a ``config.json`` is not a per-side realism run's (the field, its value and what was
    expected), or None.

    >>> config_problem({"spec": {"workload": {}, "interleave": "g"}})
    'spec.workload.play: expected a per-side run (take three)'
    """
    spec = config.get("spec") if isinstance(config, dict) else None
    if not isinstance(spec, dict):
        return "spec: expected the run's spec (an object)"
    w = spec.get("workload")
    if not isinstance(w, dict) or not isinstance(w.get("play"), str):
        return "spec.workload.play: expected a per-side run (take three)"
    if not isinstance(spec.get("interleave"), str):
        return "spec.interleave: expected the run's interleave group"
    if not isinstance(spec.get("prompt_set"), str):
        return f"spec.prompt_set {spec.get('prompt_set')!r}: expected the session set's name"
    for name, what in _COUNTS.items():
        v = spec.get(name)
        if not _count(v):
            return f"spec.{name} {v!r}: expected an integer >= 1 ({what})"
    t = spec.get("temperature")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        return f"spec.temperature {t!r}: expected a finite number >= 0"
    return None


@dataclass(frozen=True)
class Planned:
    """What the campaign file plans for one interleave group."""

    where: str  # the campaign file, as shown
    protocol: dict[str, Any]  # PROTOCOL field -> the value every run of the group has
    runs: dict[tuple[str, str], str]  # (drafter, side) -> run id

    @property
    def servers(self) -> int:
        """Servers of the group: the places of a round."""
        return len(self.runs)


def planned(camp: Campaign, where: str) -> dict[str, Planned]:
    """Per interleave group of ``camp``: its protocol (the fields its runs agree on) and its
    per-side runs."""
    out: dict[str, Planned] = {}
    groups: dict[str, list[Any]] = {}
    for r in camp.runs:
        if r.interleave and r.workload is not None and r.workload.play is not None:
            groups.setdefault(r.interleave, []).append(r)
    for key, rs in groups.items():
        values = {name: {getattr(r, name) for r in rs} for name in PROTOCOL}
        out[key] = Planned(where=where,
                           protocol={n: next(iter(v)) for n, v in values.items() if len(v) == 1},
                           runs={(str(r.drafter), str(r.workload.play)): r.run_id for r in rs})
    return out


R = TypeVar("R")


def one_protocol(key: str, runs: Sequence[R], *, run_id: Callable[[R], str],
                 spec: Callable[[R], Mapping[str, Any]], plan: Planned | None,
                 warnings: list[str]) -> list[R]:
    """The runs of stratum ``key`` whose protocol is the stratum's (see the module); each run
    left out is one warning line naming it, the field and what was expected.

    >>> ws: list[str] = []
    >>> runs = [("a", {"concurrency": 5}), ("b", {"concurrency": 5}), ("c", {"concurrency": 1})]
    >>> [r[0] for r in one_protocol("g", runs, run_id=lambda r: r[0], spec=lambda r: r[1],
    ...                             plan=None, warnings=ws)]
    ['a', 'b']
    >>> print(ws[0].replace(", ", ",\\n"))
    run c: config.json: spec.concurrency 1: expected 5,
    what most runs of stratum g have (a stratum is measured at one protocol); run skipped
    """
    out = list(runs)
    for name in PROTOCOL:
        if not out:
            break
        got = {run_id(r): spec(r).get(name) for r in out}
        if plan is not None and name in plan.protocol:
            want = plan.protocol[name]
            source = f"planned for {key} in {plan.where}"
        else:
            common = Counter(repr(v) for v in got.values()).most_common()
            if len(common) > 1 and common[0][1] == common[1][1]:
                seen = ", ".join(sorted(v for v, _ in common))
                warnings.extend(f"run {rid}: {records.CONFIG}: spec.{name} {v!r}: expected one "
                                f"value per stratum, the runs of {key} have {seen} equally often; "
                                "run skipped" for rid, v in got.items())
                return []
            want = next(v for v in got.values() if repr(v) == common[0][0])
            source = f"what most runs of stratum {key} have"
        kept = []
        for r in out:
            v = got[run_id(r)]
            if (type(v) is type(want) and v == want) or _same_number(v, want):
                kept.append(r)
            else:
                warnings.append(f"run {run_id(r)}: {records.CONFIG}: spec.{name} {v!r}: expected "
                                f"{want!r}, {source} (a stratum is measured at one protocol); "
                                "run skipped")
        out = kept
    return out


def _same_number(a: Any, b: Any) -> bool:
    """Two numbers of the same value, ints and floats alike (a temperature of 0 and 0.0)."""
    def num(x: Any) -> bool:
        return isinstance(x, int | float) and not isinstance(x, bool)
    return num(a) and num(b) and a == b


def turn_problem(t: TurnResult, *, slots: int, places: int | None) -> Problem | None:
    """Why a turn's slot or place in its round is impossible in its run, or None; ``places``:
    the servers its group plans (None: not known, a place is then only not negative).

    >>> tm = records.Timings(prompt_n=5, prompt_ms=1.0, predicted_n=4, predicted_ms=9.0,
    ...                      predicted_per_second=400.0, cache_n=0)
    >>> turn = records.TurnResult(session_id="s", side="real-a", condition="c", turn=0, order=0,
    ...     slot=99, attempt=1, server_start=1, sent_unix_s=0.0, queue_ms=0.0, prompt_chars=20,
    ...     prompt_tokens=5, cached_tokens=0, output_tokens=4, n_predict=4, ttft_ms=2.0,
    ...     tpot_ms=1.0, e2e_ms=5.0, event_ms=[], timings=tm, stop_type="limit", alpha=None,
    ...     round_pos=77)
    >>> turn_problem(turn, slots=5, places=13)
    ('impossible', "slot 99: expected 0 to 4 (below the run's concurrency 5)")
    >>> turn_problem(turn, slots=100, places=13)
    ('impossible', 'round_pos 77: expected 0 to 12 (a place among the 13 servers of its round)')
    """
    if not 0 <= t.slot < slots:
        return IMPOSSIBLE, (f"slot {t.slot}: expected 0 to {slots - 1} (below the run's "
                            f"concurrency {slots})")
    if t.round_pos is None:
        return None
    if places is None and t.round_pos < 0:
        return IMPOSSIBLE, f"round_pos {t.round_pos}: expected a place in its round, >= 0"
    if places is not None and not 0 <= t.round_pos < places:
        return IMPOSSIBLE, (f"round_pos {t.round_pos}: expected 0 to {places - 1} (a place "
                            f"among the {places} servers of its round)")
    return None


def in_range(turns: Sequence[TurnResult], *, slots: int, places: int | None, where: str,
             warnings: list[str]) -> list[TurnResult]:
    """The ``turns`` of run ``where`` whose slot and place are possible (:func:`turn_problem`);
    the rest excluded, named in one warning line."""
    out = screen(turns, key=lambda t: t.key, label=lambda t: f"{t.key[0]}#{t.turn}",
                 problem=lambda t: turn_problem(t, slots=slots, places=places), where=where,
                 warnings=warnings)
    return [t for t, x in zip(turns, out, strict=True) if not x]
