"""The plan of a workload run: REAL and SYNTHETIC sessions, turn by turn, in a seeded order
(:func:`paired_order`, or :func:`williams_order` for the interleaved design).

:func:`plan_sessions` turns the resolved conversations of an id lock file into
:class:`PlannedSession` objects for every side, on a tokenizer (:class:`~artifact.workloads.
synthetic.Tokenizer`: the server's own, handed in by the campaign): per turn the templated
prompt's tokens, the characters sent and the output tokens asked for. The plan is written once
into the run directory (``sessions.jsonl``, :func:`session_to_json`) and read back on resume
(:func:`session_from_json`), so every side and every resume send exactly what was planned.

Output rule: a turn asks for as many tokens as its recorded (clipped) reply has, capped at the
run's ``n_predict``, reached exactly with ``ignore_eos``. Context rule: :func:`sessions.fit_turns`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from artifact.workloads.sessions import Conversation, fit_turns, messages_for_turn
from artifact.workloads.synthetic import (
    Knobs,
    SynthError,
    Tokenizer,
    calibrate,
    chars_per_token,
    chunk_text,
    exact_text,
    filler_text,
)

SIDES = ("real", "synthetic")
# The synthetic side's characters per token are within this relative distance of the target.
CPT_TOLERANCE = 0.05
CPT_STEPS = 4  # corrective calibration steps at most
MAX_VARIANTS = 8  # filler draws tried per message before giving up


@dataclass(frozen=True, kw_only=True)
class PlannedTurn:
    turn: int
    prompt_tokens: int  # the templated prompt, counted with the server's tokenizer
    prompt_chars: int  # characters of the message contents sent
    n_predict: int  # output tokens asked for (ignore_eos: exactly these)


@dataclass(frozen=True, kw_only=True)
class PlannedSession:
    session_id: str
    side: str  # "real" | "synthetic"
    order: int  # position in the run's seeded, interleaved order
    system: str | None  # a system message (the shared prefix), or None: the template's default
    prefix_tokens: int  # tokens of the shared prefix content (0 without one)
    users: list[str]
    replies: list[str]  # the recorded replies (REAL) or their same-length filler (SYNTHETIC)
    turns: list[PlannedTurn]

    @property
    def key(self) -> str:
        return f"{self.side}:{self.session_id}"

    def messages(self, turn: int) -> list[dict[str, str]]:
        return messages_for_turn(self.system, self.users, self.replies, turn)


@dataclass(frozen=True, kw_only=True)
class SessionPlan:
    sessions: list[PlannedSession]  # in the seeded, interleaved order
    problems: list[str]  # one line per session left out
    summary: dict[str, Any] = field(default_factory=dict)


def _content_chars(messages: list[dict[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages)


def _turns(tok: Tokenizer, system: str | None, users: list[str], replies: list[str],
           n_predict: list[int]) -> list[PlannedTurn]:
    out = []
    for t in range(len(users)):
        msgs = messages_for_turn(system, users, replies, t)
        out.append(PlannedTurn(turn=t, prompt_tokens=tok.count_prompt(msgs),
                               prompt_chars=_content_chars(msgs), n_predict=n_predict[t]))
    return out


def _real(conv: Conversation, tok: Tokenizer, ctx_size: int,
          cap: int) -> tuple[PlannedSession | None, str | None]:
    users = [t.user for t in conv.turns]
    replies = [t.reply for t in conv.turns]
    n_predict = [max(1, min(len(tok.pieces(r)), cap)) for r in replies]
    turns = _turns(tok, None, users, replies, n_predict)
    k = fit_turns([t.prompt_tokens for t in turns], n_predict, ctx_size)
    if k == 0:
        return None, (f"session {conv.id!r}: turn 0 needs {turns[0].prompt_tokens} prompt + "
                      f"{n_predict[0]} output tokens, more than the context of {ctx_size}; "
                      "left out")
    return PlannedSession(session_id=conv.id, side="real", order=-1, system=None,
                          prefix_tokens=0, users=users[:k], replies=replies[:k],
                          turns=turns[:k]), None


def plan_sessions(conversations: list[Conversation], tok: Tokenizer, knobs: Knobs, *,
                  ctx_size: int, cap: int, seed: int,
                  sides: list[tuple[str, Knobs | None]] | None = None) -> SessionPlan:
    """Every side of every conversation that fits, in a seeded interleaved order.

    ``sides`` (the interleaved design, :meth:`artifact.spec.WorkloadSpec.sides`): each side's
    name and its synthetic knobs (None: a REAL replay); sessions are then played side after side
    in a Williams order (:func:`williams_rows`). Without it: REAL and one SYNTHETIC side
    (``knobs``) in :func:`paired_order`.
    """
    problems: list[str] = []
    real: list[PlannedSession] = []
    for conv in conversations:
        s, problem = _real(conv, tok, ctx_size, cap)
        if problem:
            problems.append(problem)
        if s is not None:
            real.append(s)
    texts = [m for s in real for m in s.users + s.replies]
    real_cpt = chars_per_token(texts, tok)
    if sides is None:
        synth, part = _synthetic_side(real, real_cpt, tok, knobs, seed, "synthetic")
        ordered = [_with_order(s, i) for i, s in enumerate(paired_order(real, synth, seed))]
        all_sides = {"real": real, "synthetic": synth}
        summary = {"n_sessions": len(real),
                   "n_turns": {k: sum(len(s.turns) for s in v) for k, v in all_sides.items()},
                   "id_jaccard": _jaccard(real, synth),
                   "chars_per_token": {"real": real_cpt, "synthetic": part["chars_per_token"],
                                       "target": part["target"]},
                   "density": part["density"], "prefix_tokens": part["prefix_tokens"],
                   "prompt_token_mismatch_max": part["prompt_token_mismatch_max"],
                   "problems": problems}
        return SessionPlan(sessions=ordered, problems=problems, summary=summary)
    by_side: dict[str, list[PlannedSession]] = {}
    parts: dict[str, dict[str, Any]] = {}
    for name, k in sides:
        if k is None:
            by_side[name] = [replace(s, side=name) for s in real]
        else:
            by_side[name], parts[name] = _synthetic_side(real, real_cpt, tok, k, seed, name)
    ordered = [_with_order(s, i) for i, s in enumerate(williams_order(by_side, seed))]
    summary = {"n_sessions": len(real), "design": "interleaved",
               "sides": [name for name, _ in sides],
               "n_turns": {k: sum(len(s.turns) for s in v) for k, v in by_side.items()},
               "chars_per_token_real": real_cpt, "synthetic": parts, "problems": problems}
    return SessionPlan(sessions=ordered, problems=problems, summary=summary)


def _jaccard(a: list[PlannedSession], b: list[PlannedSession]) -> float:
    ids_a, ids_b = {s.session_id for s in a}, {s.session_id for s in b}
    return len(ids_a & ids_b) / len(ids_a | ids_b) if ids_a else float("nan")


def _synthetic_side(real: list[PlannedSession], real_cpt: float, tok: Tokenizer, knobs: Knobs,
                    seed: int, side: str) -> tuple[list[PlannedSession], dict[str, Any]]:
    """The synthetic twins of ``real`` under ``knobs`` (named ``side``), and what the plan
    records about them."""
    target = knobs.chars_per_token if knobs.chars_per_token is not None else real_cpt
    density: float | None = None
    if not knobs.recurrent:
        density, _ = calibrate(knobs.style, target, tok, seed=seed)
    prefix_text = None
    if knobs.prefix_tokens:
        prefix_src = random.Random(f"{seed}:prefix")
        body = filler_text(knobs.style, density or 0.0, knobs.prefix_tokens * 8, prefix_src)
        prefix_text = exact_text(lambda n: body, knobs.prefix_tokens, tok)
    synth = [_synthetic(s, real, tok, knobs, density, prefix_text, seed, side) for s in real]
    if density is not None:
        # Short messages tokenize a little differently from the calibration sample (starts of
        # text, cuts): corrective steps on the sessions' own text bring the ratio in; the
        # closest of them is kept.
        aim = target
        best = (abs(_cpt(synth, tok) / target - 1), density, synth)
        for _ in range(CPT_STEPS):
            if best[0] <= CPT_TOLERANCE / 2:
                break
            aim *= target / _cpt(synth, tok)
            density, _ = calibrate(knobs.style, aim, tok, seed=seed)
            synth = [_synthetic(s, real, tok, knobs, density, prefix_text, seed, side)
                     for s in real]
            best = min(best, (abs(_cpt(synth, tok) / target - 1), density, synth),
                       key=lambda b: b[0])
        _, density, synth = best
    mism = [abs(a.prompt_tokens - b.prompt_tokens)
            for r, y in zip(real, synth, strict=True) for a, b in zip(r.turns, y.turns,
                                                                      strict=True)]
    return synth, {
        "side": side,
        "chars_per_token": _cpt(synth, tok),
        "target": None if knobs.recurrent else target, "density": density,
        "prefix_tokens": sorted({s.prefix_tokens for s in synth}),
        "prompt_token_mismatch_max": max(mism, default=0)}


def _cpt(sessions: list[PlannedSession], tok: Tokenizer) -> float:
    return chars_per_token([m for s in sessions for m in s.users + s.replies], tok)


def paired_order(real: list[PlannedSession], synth: list[PlannedSession],
                 seed: int) -> list[PlannedSession]:
    """The seeded interleaved order: sessions shuffled, each one's REAL and SYNTHETIC sides
    adjacent (which goes first is a seeded coin), so that with two streams a session's two sides
    run at the same time and drift of the machine hits both alike."""
    rng = random.Random(f"{seed}:order")
    pairs = list(zip(real, synth, strict=True))
    rng.shuffle(pairs)
    out: list[PlannedSession] = []
    for r, y in pairs:
        out += [y, r] if rng.random() < 0.5 else [r, y]
    return out


def williams_rows(n: int) -> list[list[int]]:
    """A Williams design for ``n`` sides: ``n`` orders (``2 n`` when ``n`` is odd) in which
    every side takes every position equally often and follows every other side equally often
    (first-order carry-over balanced).

    >>> williams_rows(4)
    [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1]]
    >>> len(williams_rows(3))
    6
    """
    base = [0]
    lo, hi = 1, n - 1
    while len(base) < n:
        base.append(lo)
        lo += 1
        if len(base) < n:
            base.append(hi)
            hi -= 1
    rows = [[(r + b) % n for b in base] for r in range(n)]
    return rows if n % 2 == 0 else rows + [row[::-1] for row in rows]


def williams_order(by_side: dict[str, list[PlannedSession]],
                   seed: int) -> list[PlannedSession]:
    """Sessions in a seeded order, each played side after side: the ``i``-th session in the
    order of Williams row ``i mod rows`` (the rows themselves shuffled once, seeded)."""
    names = list(by_side)
    rng = random.Random(f"{seed}:williams")
    rows = williams_rows(len(names))
    rng.shuffle(rows)
    idx = list(range(len(next(iter(by_side.values())))))
    rng.shuffle(idx)
    out: list[PlannedSession] = []
    for i, j in enumerate(idx):
        out += [by_side[names[k]][j] for k in rows[i % len(rows)]]
    return out


def _with_order(s: PlannedSession, i: int) -> PlannedSession:
    return replace(s, order=i)


def _synthetic(s: PlannedSession, real: list[PlannedSession], tok: Tokenizer, knobs: Knobs,
               density: float | None, prefix_text: str | None, seed: int,
               side: str = "synthetic") -> PlannedSession:
    rng_seed = f"{seed}:{s.session_id}"
    pool = [m for o in real if o.session_id != s.session_id for m in o.users + o.replies]
    counter = iter(range(10**6))

    def text(n_tokens: int) -> str:
        k = next(counter)
        for variant in range(MAX_VARIANTS):  # another draw when no cut has the exact count
            sub = f"{rng_seed}:{k}:{variant}"
            if knobs.recurrent:
                def make(n: int, sub: str = sub) -> str:
                    return chunk_text(pool, n, random.Random(sub))
            else:
                def make(n: int, sub: str = sub) -> str:
                    return filler_text(knobs.style, density or 0.0, n, random.Random(sub))
            try:
                return exact_text(make, n_tokens, tok)
            except SynthError:
                if variant == MAX_VARIANTS - 1:
                    raise
        raise AssertionError("unreachable")

    users_tok = [len(tok.pieces(u)) for u in s.users]
    system = None
    prefix = 0
    if prefix_text is not None:
        # What a system message adds to the prompt beyond the template's default system turn
        # comes off the first user message, so every turn keeps the real prompt's token count.
        base = tok.count_prompt([{"role": "user", "content": "x"}])
        p = knobs.prefix_tokens
        while p > 0:
            cut = prefix_text if p == knobs.prefix_tokens else exact_text(
                lambda n: prefix_text, p, tok)
            extra = tok.count_prompt([{"role": "system", "content": cut},
                                      {"role": "user", "content": "x"}]) - base
            if users_tok[0] - extra >= 1:
                system, prefix = cut, p
                users_tok[0] -= extra
                break
            p -= knobs.block
    users = [text(n) for n in users_tok]
    replies = [text(len(tok.pieces(r))) for r in s.replies]
    turns = _turns(tok, system, users, replies, [t.n_predict for t in s.turns])
    return PlannedSession(session_id=s.session_id, side=side, order=-1, system=system,
                          prefix_tokens=prefix, users=users, replies=replies, turns=turns)


def session_to_json(s: PlannedSession) -> dict[str, Any]:
    return {"session_id": s.session_id, "side": s.side, "order": s.order, "system": s.system,
            "prefix_tokens": s.prefix_tokens, "users": s.users, "replies": s.replies,
            "turns": [t.__dict__ for t in s.turns]}


def session_from_json(row: dict[str, Any]) -> PlannedSession:
    try:
        return PlannedSession(
            session_id=str(row["session_id"]), side=str(row["side"]), order=int(row["order"]),
            system=row["system"], prefix_tokens=int(row["prefix_tokens"]),
            users=list(row["users"]), replies=list(row["replies"]),
            turns=[PlannedTurn(**t) for t in row["turns"]])
    except (KeyError, TypeError, ValueError) as err:
        raise SynthError(f"sessions.jsonl: not a planned session ({err})") from err
