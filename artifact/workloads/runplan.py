"""A run's plan: what it sends, in order, with its text, budgets and ids.

:func:`plan` is the one way from a run's spec and its data to what the campaign sends::

    RunSpec ──► plan() ──► RunPlan
      prompt run     its prompt set (experiments/prompts/<set>.jsonl, drawn from the recipe
                     in experiments/prompt_sets.toml when not yet written)
                     ──► one Request per (repeat, prompt): the set's order, repeat after repeat
      workload run   its id lock (experiments/sessions/<set>.txt), the set's recipe, ShareGPT V3
                     ──► one PlannedSession per (side, session), turn by turn, in a seeded
                         order; tokens counted on a tokenizer the caller opens (the server's)

:func:`inputs` names what a run draws from (the set and its sha256, as ``config.json`` records
it) before anything is planned, and :func:`round_order` is the seeded order in which one prompt
goes to the runs of an interleave group. The campaign executes a plan; it never builds one.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from artifact.spec import RunSpec, WorkloadSpec
from artifact.workloads.prompts import Prompt, ensure_prompt_set, select_prompts
from artifact.workloads.sessionplan import PlannedSession, plan_sessions
from artifact.workloads.sessions import (
    SESSION_RECIPES,
    SessionError,
    dataset,
    load_recipes,
    lock_path,
    read_id_lock,
    resolve,
)
from artifact.workloads.synthetic import Knobs, Tokenizer

# Opens the tokenizer a workload plan counts tokens on (the caller's server), when one is needed.
OpenTokenizer = Callable[[], AbstractContextManager[Tokenizer]]


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """What a run draws from, as its ``config.json`` records it (``prompt_set``)."""

    name: str  # the prompt set, or the session set of a workload run
    sha256: str  # of the prompt-set file, or of the id lock file
    n: int  # prompts in the set, or sessions in the lock


@dataclass(frozen=True, kw_only=True)
class Request:
    """One request of a prompt run: a prompt of the set, sent once per repeat."""

    prompt: Prompt
    repeat: int
    n_predict: int  # output tokens asked for
    seed: int  # the request's sampling seed (:meth:`RunSpec.request_seed`)

    @property
    def key(self) -> tuple[str, int]:
        return (self.prompt.id, self.repeat)


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """Everything a run sends, in the order it is sent: a prompt run's requests, or a workload
    run's sessions (each side's turns, with their text and output budgets)."""

    inputs: Inputs
    requests: list[Request] = field(default_factory=list)
    sessions: list[PlannedSession] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)  # what planning found (workload.json)

    @property
    def keys(self) -> set[tuple[str, int]]:
        """The record keys the run is complete with: (prompt id, repeat) or (side:session,
        turn)."""
        if self.sessions:
            return {(s.key, t.turn) for s in self.sessions for t in s.turns}
        return {r.key for r in self.requests}

    @property
    def prompts(self) -> list[Prompt]:
        """The prompts sent, each once, in the set's order."""
        seen: dict[str, Prompt] = {}
        for r in self.requests:
            seen.setdefault(r.prompt.id, r.prompt)
        return list(seen.values())

    @property
    def session_ids(self) -> list[str]:
        """The sessions played, each once, in play order (the plan's seeded order, the same on
        every side and every per-side server of a group)."""
        first: dict[str, int] = {}
        for s in self.sessions:
            first[s.session_id] = min(first.get(s.session_id, s.order), s.order)
        return sorted(first, key=lambda sid: (first[sid], sid))

    def first_sessions(self, n: int | None) -> RunPlan:
        """The plan cut to its first ``n`` sessions in play order (``None``: the whole plan).

        A subset taken in play order is a prefix of what the whole run played: every server of
        the subset has the same history as the whole run's had at those sessions (its KV cache,
        an n-gram drafter's pool), so greedy decoding must give the same tokens and acceptance.

        >>> from artifact.workloads.sessionplan import PlannedSession
        >>> def s(sid, order): return PlannedSession(session_id=sid, side="real-a", order=order,
        ...     system=None, prefix_tokens=0, users=[], replies=[], turns=[])
        >>> p = RunPlan(inputs=Inputs(name="x", sha256="0", n=3),
        ...             sessions=[s("b", 0), s("c", 1), s("a", 2)])
        >>> p.first_sessions(2).session_ids, p.first_sessions(None) is p
        (['b', 'c'], True)
        """
        if n is None:
            return self
        keep = set(self.session_ids[:n])
        return replace(self, sessions=[s for s in self.sessions if s.session_id in keep])


def inputs(spec: RunSpec, *, model: Path | None = None,
           prompt_ids: frozenset[str] | None = None) -> Inputs:
    """The set a run draws from: its prompt set (drawn with ``model``'s chat template when not
    yet written; ``prompt_ids`` must name prompts of it), or its session set's id lock."""
    if spec.workload is None:
        prompts, sha = ensure_prompt_set(spec.prompt_set, model)
        select_prompts(prompts, prompt_ids)
        return Inputs(name=spec.prompt_set, sha256=sha, n=len(prompts))
    entries, sha = read_id_lock(lock_path(spec.prompt_set))
    return Inputs(name=spec.prompt_set, sha256=sha, n=len(entries))


def plan(spec: RunSpec, *, model: Path | None = None, prompt_ids: frozenset[str] | None = None,
         tokenizer: OpenTokenizer | None = None) -> RunPlan:
    """The run's plan.

    A prompt run sends every prompt of its set (or those of ``prompt_ids``, in the set's order)
    once per repeat; ``model`` gives the chat template when the set is not yet written. A
    workload run plays every fitting session of its id lock on every side, on the tokenizer
    that ``tokenizer`` opens (only after the recipe and the sessions are read); without one it
    is a :class:`SessionError` saying so.
    """
    if spec.workload is None:
        prompts, sha = ensure_prompt_set(spec.prompt_set, model)
        chosen = select_prompts(prompts, prompt_ids)
        requests = [Request(prompt=p, repeat=rep, n_predict=spec.n_predict,
                            seed=spec.request_seed(rep))
                    for rep in range(spec.repeats) for p in chosen]
        return RunPlan(inputs=Inputs(name=spec.prompt_set, sha256=sha, n=len(prompts)),
                       requests=requests)
    if tokenizer is None:
        raise SessionError(f"run {spec.run_id}: a workload run's turns are planned on the "
                           "server's tokenizer (its token counts): none was given")
    recipes = load_recipes()
    if spec.prompt_set not in recipes:
        raise SessionError(f"{SESSION_RECIPES.name}: sets.{spec.prompt_set}: no such session set")
    lock = lock_path(spec.prompt_set)
    entries, sha = read_id_lock(lock)
    convs, problems = resolve(lock, recipes[spec.prompt_set], dataset())
    w = spec.workload
    sides = ([(name, None if c is None else _knobs(c)) for name, c in w.played()]
             if w.interleaved else None)
    with tokenizer() as tok:
        p = plan_sessions(convs, tok, _knobs(w), ctx_size=spec.ctx_size, cap=spec.n_predict,
                          seed=spec.seed, sides=sides)
    p.summary["problems"] = problems + p.problems
    return RunPlan(inputs=Inputs(name=spec.prompt_set, sha256=sha, n=len(entries)),
                   sessions=p.sessions, summary=p.summary)


def _knobs(w: WorkloadSpec) -> Knobs:
    return Knobs(style=w.style, chars_per_token=w.chars_per_token,
                 prefix_tokens=w.prefix_tokens, block=w.block, recurrent=w.recurrent)


def round_order(label: str, seed: int, repeat: int, prompt_id: str,
                run_ids: Sequence[str]) -> list[str]:
    """The seeded order in which one prompt goes to the runs of an interleave group.

    >>> round_order("final", 42, 0, "code-1", ["a", "b", "c"]) == round_order(
    ...     "final", 42, 0, "code-1", ["c", "b", "a"])
    True
    """
    key = hashlib.sha256(f"{label}|{seed}|{repeat}|{prompt_id}".encode()).hexdigest()
    order = sorted(run_ids)
    random.Random(int(key[:16], 16)).shuffle(order)
    return order
