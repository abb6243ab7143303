"""Code and prose segments of a streamed answer, located in the streamed text.

The pinned model writes no separate reasoning, so an answer's segments are code (inside fenced
code blocks) and prose (outside). The events' texts are joined and fences found in the whole
text, so a fence split across events (```` `` ```` then ```` ` ````) is still one fence:

- a fence is a run of three or more backticks; outside a block it opens one, inside a block a
  run at least as long closes it; the fence characters belong to the code segment;
- an unclosed block runs to the end of the answer;
- an event belongs to the segment that holds its first character (an event of empty text
  belongs to the segment of the position it arrives at).

An answer without fences is all prose; nothing is guessed beyond the text.

>>> locate(["Here:\\n", "``", "`py", "thon\\nx = 1\\n", "```", "\\nDone."])
('prose', 'code', 'code', 'code', 'code', 'prose')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

FENCE = re.compile(r"`{3,}")
CODE = "code"
PROSE = "prose"


def code_spans(text: str) -> list[tuple[int, int]]:
    """Half-open ``[start, end)`` character spans of fenced code blocks (fences included).

    >>> code_spans("a ```x``` b ```` y")
    [(2, 9), (12, 18)]
    >>> code_spans("no fences at all")
    []
    """
    spans: list[tuple[int, int]] = []
    open_at: int | None = None
    open_len = 0
    for m in FENCE.finditer(text):
        if open_at is None:
            open_at, open_len = m.start(), len(m.group())
        elif len(m.group()) >= open_len:
            spans.append((open_at, m.end()))
            open_at = None
    if open_at is not None:
        spans.append((open_at, len(text)))
    return spans


def locate(event_text: Sequence[str]) -> tuple[str, ...]:
    """The segment (``"code"`` or ``"prose"``) of every event, from the events' texts."""
    text = "".join(event_text)
    spans = code_spans(text)
    out: list[str] = []
    pos = 0
    j = 0
    for piece in event_text:
        while j < len(spans) and spans[j][1] <= pos:
            j += 1
        inside = j < len(spans) and spans[j][0] <= pos < spans[j][1]
        out.append(CODE if inside else PROSE)
        pos += len(piece)
    return tuple(out)
