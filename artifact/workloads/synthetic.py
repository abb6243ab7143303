"""Synthetic sessions source-locked to real ones: same token counts per message, other text.

For every real session (same id, read from the same id lock file), a synthetic twin has the same
number of turns and, per message, exactly as many tokens as the real message (counted with the
server's own tokenizer), so every turn asks for the same input and output token counts. Its text
is filler chosen by knobs (:class:`Knobs`, recorded in the run's config):

``style``
    ``english`` (prose of common words) or ``code`` (Python-like lines).
``chars_per_token``
    the characters-per-token target; ``None`` = the real sessions' measured ratio. A density in
    [0, 1] mixes plain units (long words or identifiers: many characters per token) with dense
    ones (short random fragments: few); it is calibrated by bisection on the server's tokenizer
    (:func:`calibrate`).
``prefix_tokens``, ``block``
    one shared system prefix for every synthetic session, a whole number of ``block``-token
    blocks, its cost subtracted from the first user message so that every turn's prompt keeps
    the real token count. A session whose first message is too short for it gets the largest
    whole-block cut of the same text that fits (still a shared prefix of all the others).
``recurrent``
    the filler is real text from the *other* sessions of the set (recurrent content), not made
    up: the probe that tells content structure from character density.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from artifact.errors import SynthError as SynthError  # re-exported (one tree)

STYLES = ("english", "code")
CUT_SEARCH = 12  # token edges tried either side of the target
PAD = " the"  # one token in the tokenizers we know; pads a cut that no edge gets exact


class Tokenizer(Protocol):
    """What the generator needs of a tokenizer (the server's, or a test double)."""

    def pieces(self, text: str) -> list[bytes]:
        """The tokens of ``text`` (no special tokens added) as the bytes each one stands for."""
        ...

    def count_prompt(self, messages: list[dict[str, str]]) -> int:
        """Tokens of the chat-templated prompt (generation prompt added)."""
        ...


@dataclass(frozen=True, kw_only=True)
class Knobs:
    style: str = "english"
    chars_per_token: float | None = None  # None: the real sessions' ratio
    prefix_tokens: int = 0  # shared system prefix, tokens (a multiple of block)
    block: int = 16  # block size the prefix is aligned to
    recurrent: bool = False


# ---- filler ----------------------------------------------------------------------------------

_WORDS_TEXT = (
    "the of and to in is that it for as with was on be by this are from at or have an they "
    "which one you had not but what all were when we there can been has more if will would who "
    "so out up into time some could them other than then now only its also after use two how "
    "our work first well way even new want because any these give day most us people about "
    "through back still should around between under never same another while last might great "
    "since against right three small large number always general house world public system "
    "between government company program question during without problem information school "
    "important possible different national development interest service however business "
    "country family example community including experience something community understand "
    "language research management environment available education product process support "
    "provide following question through important material position")
_WORDS = tuple(_WORDS_TEXT.split())
_IDENTS_TEXT = (
    "value result items count index total config request response buffer handler context "
    "message record session client server parser builder window layout update status option "
    "payload manager service factory channel element account address content default")
_IDENTS = tuple(_IDENTS_TEXT.split())
_CODE_LINES = (
    "def {0}_{1}({2}, {3}):", "    {0} = {1}({2})", "    if {0} > {1}:", "        return {0}",
    "    for {0} in {1}:", "        {0}.append({1})", "{0}_{1} = [{2}, {3}]", "# {0} {1} {2}",
    "    {0}.{1} = {2}", "class {0}{1}:", "    {0} = self.{1}_{2}", "print({0}, {1})",
)


def _dense(rng: random.Random) -> str:
    """A short random fragment: few characters per token."""
    n = rng.randint(2, 4)
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def filler_text(style: str, density: float, n_chars: int, rng: random.Random) -> str:
    """At least ``n_chars`` characters of filler; ``density`` is the share of dense units."""
    if style not in STYLES:
        raise SynthError(f"style: expected one of {', '.join(STYLES)}, got {style!r}")
    parts: list[str] = []
    size = 0
    if style == "english":
        words_in_sentence = 0
        while size < n_chars:
            w = _dense(rng) if rng.random() < density else rng.choice(_WORDS)
            if words_in_sentence == 0:
                w = w.capitalize()
            words_in_sentence += 1
            if words_in_sentence >= rng.randint(8, 14):
                w += "."
                words_in_sentence = 0
            parts.append(w)
            size += len(w) + 1
        return " ".join(parts)

    def unit() -> str:
        return _dense(rng) if rng.random() < density else rng.choice(_IDENTS)

    while size < n_chars:
        line = rng.choice(_CODE_LINES).format(unit(), unit(), unit(), unit())
        parts.append(line)
        size += len(line) + 1
    return "\n".join(parts)


def _decode(pieces: Sequence[bytes]) -> str:
    return b"".join(pieces).decode("utf-8", errors="ignore")


def exact_text(make: Callable[[int], str], n_tokens: int, tok: Tokenizer,
               chars_per_token: float = 4.0) -> str:
    """Text of exactly ``n_tokens`` tokens: a prefix of ``make(n_chars)`` cut at a token edge.

    ``make`` returns at least ``n_chars`` characters (always the same text for the same size
    request and its prefixes when asked for more). The cut is checked by tokenizing it again;
    cuts up to :data:`CUT_SEARCH` tokens either side are tried when a merge at the edge, or
    whitespace stripped from it, changes the count.
    """
    if n_tokens < 1:
        raise SynthError(f"token target: expected at least 1, got {n_tokens}")
    n_chars = int(n_tokens * chars_per_token * 1.5) + 16
    for _ in range(8):
        text = make(n_chars).lstrip()
        pieces = tok.pieces(text)
        if len(pieces) > n_tokens + CUT_SEARCH:
            break
        n_chars *= 2
    else:
        raise SynthError(f"token target {n_tokens}: the filler gives only {len(pieces)} tokens")
    # Cuts are stripped of edge whitespace, which would merge with the chat template's
    # newlines and change the prompt's token count.
    for step in range(2 * CUT_SEARCH + 1):
        cand = n_tokens + (step + 1) // 2 * (1 if step % 2 else -1)
        if not 1 <= cand <= len(pieces):
            continue
        cut = _decode(pieces[:cand]).strip()
        if len(tok.pieces(cut)) == n_tokens:
            return cut
    # No edge gives the count (e.g. stripped whitespace skips it): take the longest shorter
    # cut and pad it with one-token words.
    best = ""
    for cand in range(min(n_tokens, len(pieces)), 0, -1):
        best = _decode(pieces[:cand]).strip()
        if len(tok.pieces(best)) < n_tokens:
            break
    for _ in range(2 * CUT_SEARCH):
        got = len(tok.pieces(best))
        if got == n_tokens:
            return best
        if got > n_tokens:
            break
        best += PAD
    raise SynthError(f"token target {n_tokens}: no cut of the filler has exactly that count")


def chars_per_token(texts: Sequence[str], tok: Tokenizer) -> float:
    """Characters per token over ``texts`` (total characters over total tokens)."""
    n_tok = sum(len(tok.pieces(t)) for t in texts if t)
    return sum(len(t) for t in texts) / n_tok if n_tok else float("nan")


def calibrate(style: str, target: float, tok: Tokenizer, *, seed: int = 0,
              sample_chars: int = 4000, steps: int = 14) -> tuple[float, float]:
    """The density whose filler has ``target`` characters per token, and the ratio it reaches.

    Characters per token fall as the density rises; bisection on one fixed sample size. A
    target outside what the style can reach gives the nearest end (density 0 or 1): the caller
    reports the ratio reached.
    """

    def cpt(d: float) -> float:
        return chars_per_token([filler_text(style, d, sample_chars, random.Random(seed))], tok)

    lo, hi = 0.0, 1.0
    c_lo, c_hi = cpt(lo), cpt(hi)
    if target >= c_lo:
        return lo, c_lo
    if target <= c_hi:
        return hi, c_hi
    for _ in range(steps):
        mid = (lo + hi) / 2
        if cpt(mid) > target:
            lo = mid
        else:
            hi = mid
    d = (lo + hi) / 2
    return d, cpt(d)


def chunk_text(pool: Sequence[str], n_chars: int, rng: random.Random) -> str:
    """Real text from ``pool`` (other sessions' messages): consecutive messages from a random
    one on, joined by blank lines, until at least ``n_chars`` characters."""
    if not pool:
        raise SynthError("recurrent mode: no other session's text to draw from")
    i = rng.randrange(len(pool))
    parts: list[str] = []
    size = 0
    while size < n_chars:
        parts.append(pool[i % len(pool)])
        size += len(parts[-1]) + 2
        i += 1
    return "\n\n".join(parts)


def block_prefix_tokens(wanted: int, block: int, room: int) -> int:
    """The prefix length a session gets: whole blocks, at most ``wanted``, within ``room``.

    >>> block_prefix_tokens(64, 16, 1000), block_prefix_tokens(64, 16, 40), \
block_prefix_tokens(64, 16, 3)
    (64, 32, 0)
    """
    if wanted % block:
        raise SynthError(f"prefix_tokens: {wanted} is not a multiple of the block size {block}")
    return max(0, min(wanted, room) // block * block)
