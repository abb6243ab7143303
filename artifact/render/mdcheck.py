"""Checks on the paper's generated Markdown: what a template's whitespace control can break.

Jinja's ``trim_blocks``/``lstrip_blocks`` eat the newline after a block tag and the spaces
before one, so a block that ends a sentence can glue it to the next (``figures.Windows``,
``202(the others``) or pull a heading onto the paragraph above it, where pandoc reads it as
text (``...own text. # References {.unnumbered}`` in the PDF). Each finding is one line naming
the file, the line and what was found; :func:`check` raises on any.

Code (fenced blocks, inline code spans), math (``$...$``) and link targets are not prose and
are left out of the checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from artifact.errors import ManuscriptError

_FENCE = re.compile(r"^(```|~~~)")
_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_MATH = re.compile(r"\$[^$\n]+\$")
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
_HEADING = re.compile(r"^#{1,6}\s+\S")
# a heading marker after a sentence's end on the same line
_INLINE_HEADING = re.compile(r"[.!?:)]\s+#{1,6}\s+[A-Z]")
# pandoc attribute text ({.class}, {#id}) anywhere but at the end of a heading line or right
# after a span, link, image or code
_ATTR = re.compile(r"(?<![\])`}])\{[.#][A-Za-z][^}]*\}")
# a span's attributes escaped into text (a template printed ``[x]{#id .class}`` through the
# Markdown escaper): pandoc then shows them as written
_ESCAPED_ATTR = re.compile(r"\\\]\\\{\\?[.#][A-Za-z]")
# a sentence end glued to the next sentence, or a word glued to an opening parenthesis
_GLUED = (re.compile(r"[a-z0-9%)\]]\.[A-Z][a-z]{2,}"),
          re.compile(r"[0-9]\((?:[a-z]{3,}\b)"),
          re.compile(r"[a-z]{2,}\((?:the|an|as|at|in|on|of|for|with|and|or|which|see)\b"))
# a run-in paragraph heading ("**Memory.** Time is ...") that a block tag joined to the
# paragraph above: at the start of a line right after a line of prose, or after a sentence
_RUN_IN = re.compile(r"^\*\*[A-Z][^*]{0,60}[.?]\*\*\s")
_RUN_IN_INLINE = re.compile(r"[.!?)]\s+\*\*[A-Z][^*]{0,60}[.?]\*\*\s")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|cf|et al|vs|Fig|Eq|Sec|No)\.[A-Z]")


@dataclass(frozen=True)
class Finding:
    line: int
    what: str
    text: str  # the defect with up to 30 characters either side

    def show(self, name: str) -> str:
        return f"{name}:{self.line}: {self.what}: {self.text.strip()!r}"


def _near(line: str, m: re.Match[str] | None) -> str:
    if m is None:
        return line[:80]
    return line[max(0, m.start() - 30):m.end() + 30]


def prose(line: str) -> str:
    """A line without its inline code, math and link targets.

    >>> prose("see `a.B` and $x.Y$ in [here](docs.Foo) now")
    'see code and math in [here] now'
    """
    return _LINK_TARGET.sub("]", _MATH.sub("math", _CODE.sub("code", line)))


def findings(text: str) -> list[Finding]:
    """Every defect of one generated Markdown text.

    >>> [f.what for f in findings("Text ends here.\\n# References {.unnumbered}\\n")]
    ['heading without a blank line before it']
    >>> [f.what for f in findings("own text. # References {.unnumbered}\\n")]
    ['heading inside a line']
    >>> [f.what for f in findings("no timing figures.Windows w4 and 202(the others\\n")]
    ['sentence end glued to the next word', 'word glued to a parenthesis']
    >>> findings("# Title {.unnumbered}\\n\\nSee `x.Y`, $a.B$, e.g.The, c(n) = a + b.\\n")
    []
    >>> findings(": A caption, max(a/b) {#tbl:x}\\n\\n::: {#fig:y .figure}\\n")
    []
    >>> [f.what for f in findings("no order is claimed.\\n**Memory.** Time is\\n")]
    ['paragraph heading joined to the paragraph above']
    >>> [f.what for f in findings("is claimed. **Memory.** Time is\\n")]
    ['paragraph heading inside a paragraph']
    >>> findings("A paragraph.\\n\\n**Memory.** Time is **not** free.\\n")
    []
    """
    out: list[Finding] = []
    fenced = False
    prev = ""
    for no, raw in enumerate(text.splitlines(), start=1):
        if _FENCE.match(raw):
            fenced = not fenced
            prev = raw
            continue
        if fenced:
            prev = raw
            continue
        line = prose(raw)
        is_heading = bool(_HEADING.match(raw))
        if raw.startswith(":::"):  # a div's fence: {#id .class} is its attribute
            prev = raw
            continue
        if is_heading and prev.strip() and no > 1:
            out.append(Finding(no, "heading without a blank line before it", raw[:80]))
        if m := _INLINE_HEADING.search(line):
            out.append(Finding(no, "heading inside a line", _near(line, m)))
        if _RUN_IN.match(raw) and prev.strip() and not prev.lstrip().startswith(("-", "*", "|")):
            out.append(Finding(no, "paragraph heading joined to the paragraph above", raw[:80]))
        if m := _RUN_IN_INLINE.search(line):
            out.append(Finding(no, "paragraph heading inside a paragraph", _near(line, m)))
        # a heading's, caption's or image's own attributes end its line
        body = re.sub(r"\s*\{[.#][^}]*\}\s*$", "", line)
        if m := (_ATTR.search(body) or _ESCAPED_ATTR.search(raw)):
            out.append(Finding(no, "attribute text in prose",
                               _near(body if _ATTR.search(body) else raw, m)))
        unabbreviated = _ABBREV.sub("", body)
        if m := _GLUED[0].search(unabbreviated):
            out.append(Finding(no, "sentence end glued to the next word", _near(unabbreviated, m)))
        if m := (_GLUED[1].search(body) or _GLUED[2].search(body)):
            out.append(Finding(no, "word glued to a parenthesis", _near(body, m)))
        prev = raw
    return out


def check(path: Path, text: str) -> None:
    """Raise :class:`ManuscriptError` listing every defect of ``text`` (written to ``path``)."""
    found = findings(text)
    if found:
        name = path.name
        raise ManuscriptError(f"{name}: {len(found)} defects of the generated Markdown:\n"
                              + "\n".join(f.show(name) for f in found))
