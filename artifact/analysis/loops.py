"""Repetition loops (issue 44, item 3): how much of an output repeats itself, how much copies
its prompt, and the rule that sets a looping output apart.

A loop is not drafting paying: a model that repeats one sentence until the budget runs out
hands an n-gram drafter its whole output to copy. So each output is measured before its speedup
is read.

**Tokens.** The server streams one event per token when nothing is drafted, so a no-draft
run's ``event_text`` is the output split into token pieces (an empty piece, the closing event,
carries no token and is dropped). Greedy decoding gives every drafter the same text, so the
no-draft run's pieces stand for every run of the prompt; the first quiet pass is used.

**Self-repetition** is the share of an output's tokens that continue a context of ``N = 4``
pieces exactly as that context continued earlier in the same output: token ``i`` counts when
the ``N + 1`` pieces ending at ``i`` occurred before, ending at some ``j < i`` (the
continuation a 4-token lookup, ngram-simple's ``ngram_match = 4`` in these campaigns, would
have drafted from the output itself). The first ``N`` tokens have no context and never count;
every token is in the denominator.

**Copy share** is the share of tokens whose ``N + 1`` pieces ending at them, joined, occur as a
string in the prompt's text. Prompt tokens are not recorded, so the prompt is matched as text
at the output's own piece granularity (a run of pieces that the prompt holds verbatim); a
piece split differently inside the prompt still matches, so this is an upper bound of a
token-level copy share.

**The rule**: an output loops when its self-repetition is at least :data:`LOOP_SHARE`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact.analysis.validate import core as screen_core

N = 4  # pieces of context, as ngram-simple's lookup (ngram_match = 4) in these campaigns

LOOP_SHARE = 0.5
"""Self-repetition at or above which an output is set apart as looping.

Half the output being a continuation of the output itself is far beyond what ordinary text
does: an answer that repeats one sentence until the budget drives the share toward 1 (every
token after the first cycle counts), while an answer that copies its prompt (a code edit)
copies from the prompt, which this share does not see. The SmolLM2 core runs' no-draft
outputs sit well below it (per target and task a median of 0.03-0.12, an upper quartile of
0.07-0.26), and 0-3 of each run's 30 outputs reach it: the few that do repeat a line. Fixed and
committed with the Gemma predictions, before any Gemma study run, so no output is sorted
after its speedup is known."""


@dataclass(frozen=True)
class Shares:
    """One output's measures: tokens, self-repetition and copy share (None without a prompt)."""

    tokens: int
    self_repetition: float
    copy_share: float | None

    @property
    def loops(self) -> bool:
        """Whether the output is set apart as looping (:data:`LOOP_SHARE`)."""
        return self.self_repetition >= LOOP_SHARE


def tokens_of(pieces: Iterable[str]) -> list[str]:
    """An output's token pieces: the streamed events less the empty ones (a closing event).

    >>> tokens_of(["a", "b", ""])
    ['a', 'b']
    """
    return [p for p in pieces if p]


def self_repetition(pieces: Sequence[str], n: int = N) -> float:
    """Share of ``pieces`` that continue an earlier occurrence of their ``n`` preceding pieces
    the same way (0.0 for an empty output).

    >>> # one sentence of 3 pieces, five times: every token after the first 3 + 2 repeats
    >>> round(self_repetition(["I", " am", "."] * 5, n=2), 4)  # 10 of 15
    0.6667
    >>> self_repetition(list("abcdefgh"), n=2)
    0.0
    >>> self_repetition(list("aaaaaa"), n=4)  # 'aaaaa' ends at 4, again at 5
    0.1667
    """
    seen: set[tuple[str, ...]] = set()
    hits = 0
    for i in range(n, len(pieces)):
        gram = tuple(pieces[i - n:i + 1])
        if gram in seen:
            hits += 1
        seen.add(gram)
    return round(hits / len(pieces), 4) if pieces else 0.0


def copy_share(pieces: Sequence[str], prompt: str, n: int = N) -> float:
    """Share of ``pieces`` whose ``n + 1`` pieces ending at them, joined, are in ``prompt``.

    >>> copy_share(["def", " f", "(", "x", "):", " return", " x"], "def f(x): pass", n=2)
    0.4286
    """
    hits = sum(1 for i in range(n, len(pieces)) if "".join(pieces[i - n:i + 1]) in prompt)
    return round(hits / len(pieces), 4) if pieces else 0.0


def measure(pieces: Sequence[str], prompt: str | None) -> Shares:
    """Both shares of one output (its streamed pieces) against its prompt's text, if known.

    >>> s = measure(["x", "y"] * 10, None)
    >>> (s.tokens, s.self_repetition, s.copy_share, s.loops)
    (20, 0.7, None, True)
    """
    toks = tokens_of(pieces)
    return Shares(len(toks), self_repetition(toks),
                  None if prompt is None else copy_share(toks, prompt))


def run_shares(run: Path, prompts: Mapping[str, str] | None,
               warnings: list[str]) -> dict[str, Shares]:
    """Each prompt's shares in a no-draft run (its first quiet pass, records screened by
    :mod:`artifact.analysis.validate.core`, set-aside ones named in ``warnings``); a prompt
    whose text is not in ``prompts`` gets no copy share."""
    rows, _ = screen_core.read(run, warnings)
    first: dict[str, Any] = {}
    for r in sorted(rows, key=lambda r: r.repeat):
        first.setdefault(r.prompt_id, r)
    out = {}
    for p, r in sorted(first.items()):
        text = None if prompts is None else prompts.get(p)
        out[p] = measure(r.event_text or [], text)
    return out


def summary(shares: Mapping[str, Shares]) -> dict[str, Any]:
    """The distribution of both shares over outputs, and how many loop under the rule.

    >>> s = {"a": Shares(10, 0.9, 0.0), "b": Shares(10, 0.1, 0.5), "c": Shares(10, 0.2, None)}
    >>> summary(s)["looping"], summary(s)["self_repetition"]["median"]
    (1, 0.2)
    """
    def dist(xs: list[float]) -> dict[str, Any] | None:
        if not xs:
            return None
        q = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else [xs[0]] * 3
        return {"min": round(min(xs), 4), "q1": round(q[0], 4), "median": round(q[1], 4),
                "q3": round(q[2], 4), "max": round(max(xs), 4),
                "mean": round(statistics.fmean(xs), 4)}

    reps = [s.self_repetition for s in shares.values()]
    copies = [s.copy_share for s in shares.values() if s.copy_share is not None]
    return {"outputs": len(shares), "looping": sum(1 for s in shares.values() if s.loops),
            "loop_share": LOOP_SHARE, "n": N, "self_repetition": dist(reps),
            "copy_share": dist(copies)}
