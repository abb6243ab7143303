"""The PDF's layout check: every word inside the page's text area, no word printed over another.

A table too long for its page runs past the bottom margin (Typst figures do not break by
themselves), a wide one past the right margin, a URL that cannot break past the page's edge; a
column too narrow for an interval that may not break prints two numbers on top of each other.
None of these stops an engine, so the build looks at the result: ``pdftotext -bbox`` (poppler)
gives the box of every word on every page, and :func:`check` fails on any word outside the text
area (the page less its margins, :data:`MARGIN_PT` on every side for both engines, see
``manuscript/defaults/``) or any two words whose boxes overlap. The page number in the bottom
margin is the one word allowed there.

Where ``pdftotext`` is not installed the build says so in one line and goes on: the check needs
poppler-utils (in the Docker image and CI), the PDF does not.

>>> p = Page(1, 612.0, 792.0, (Word(1, 72.0, 80.0, 90.0, 90.0, "in"),
...                              Word(1, 500.0, 700.0, 560.0, 710.0, "out"),
...                              Word(1, 304.0, 741.0, 308.0, 751.0, "1")))
>>> [w.text for w in outside(p)]
['out']
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from artifact.errors import ManuscriptError

MARGIN_PT = 72.0  # 1 in on every side: typst.yaml's margin, latex.yaml's geometry
# How far a word's box may pass the text area's edge: glyph boxes overhang a justified line's
# end by up to 2 pt, and a last line's descenders hang below the bottom edge.
TOLERANCE_PT = 3.0
DESCENT = 0.35  # of a word's height: the part below the baseline allowed past the bottom edge
SHOWN = 8  # problems listed in the error; the rest are counted

_NS = "{http://www.w3.org/1999/xhtml}"


@dataclass(frozen=True)
class Word:
    """One word's box in PDF points, from the page's top left corner."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str

    def where(self) -> str:
        return f"page {self.page} at ({self.x0:.0f}, {self.y0:.0f}) pt"


@dataclass(frozen=True)
class Page:
    number: int
    width: float
    height: float
    words: tuple[Word, ...]


def available() -> bool:
    """Whether ``pdftotext`` (poppler-utils) is on PATH."""
    return shutil.which("pdftotext") is not None


def parse_bbox(xhtml: str, *, source: str = "pdftotext -bbox") -> list[Page]:
    """The pages and word boxes of ``pdftotext -bbox`` output.

    >>> pages = parse_bbox('<html xmlns="http://www.w3.org/1999/xhtml"><body><doc>'
    ...     '<page width="612" height="792"><word xMin="72" yMin="70.5" xMax="99" yMax="80">'
    ...     'A&amp;B</word></page></doc></body></html>')
    >>> pages[0].width, pages[0].words[0].text, pages[0].words[0].y0
    (612.0, 'A&B', 70.5)
    """
    import xml.etree.ElementTree as ET  # here: doit loads this module on every call

    try:
        root = ET.fromstring(xhtml)
    except ET.ParseError as err:
        raise ManuscriptError(f"{source}: unreadable output ({err})") from err
    pages: list[Page] = []
    for n, page in enumerate(root.iter(f"{_NS}page"), start=1):
        words = tuple(
            Word(n, float(w.get("xMin", 0)), float(w.get("yMin", 0)), float(w.get("xMax", 0)),
                 float(w.get("yMax", 0)), w.text or "")
            for w in page.iter(f"{_NS}word"))
        pages.append(Page(n, float(page.get("width", 0)), float(page.get("height", 0)), words))
    return pages


def read_pages(pdf: Path) -> list[Page]:
    """Every page's word boxes, by ``pdftotext -bbox``."""
    proc = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        said = proc.stderr.strip().splitlines() or ["(no message)"]
        raise ManuscriptError(f"{pdf}: pdftotext -bbox failed: {said[0]}")
    return parse_bbox(proc.stdout, source=f"{pdf}: pdftotext -bbox")


def _page_number(w: Word, page: Page, margin: float) -> bool:
    """The page number: digits alone, centred, below the text area."""
    centre = (w.x0 + w.x1) / 2
    return (w.text.isdigit() and w.y0 >= page.height - margin
            and abs(centre - page.width / 2) <= 20.0)


def outside(page: Page, margin: float = MARGIN_PT, tol: float = TOLERANCE_PT) -> list[Word]:
    """The words of ``page`` that lie outside its text area (the page number excepted)."""
    left, right = margin - tol, page.width - margin + tol
    top, bottom = margin - tol, page.height - margin + tol
    out = []
    for w in page.words:
        below = w.y1 - DESCENT * (w.y1 - w.y0) > bottom
        if (w.x0 < left or w.x1 > right or w.y0 < top or below) \
                and not _page_number(w, page, margin):
            out.append(w)
    return out


def overlapping(page: Page, min_overlap: float = 1.0) -> list[tuple[Word, Word]]:
    """Pairs of words printed over each other: boxes that overlap by more than ``min_overlap``
    points across and by more than half the lower word's height.

    The words sorted by their left edge, each is compared with the words that start before its
    right edge (less ``min_overlap``), in blocks of rows with numpy: the pairs, in the order, of
    comparing them one by one (issue 32: 0.34 s a paper that way, 16,000 words).

    >>> a, b = Word(1, 100, 100, 130, 110, "4984"), Word(1, 126, 100, 150, 110, "-21")
    >>> [(x.text, y.text) for x, y in overlapping(Page(1, 612, 792, (a, b)))]
    [('4984', '-21')]
    """
    import numpy as np  # here: doit loads this module on every call

    words = sorted((w for w in page.words if w.text.strip()), key=lambda w: w.x0)
    n = len(words)
    x0, x1, y0, y1 = (np.array([getattr(w, k) for w in words], dtype=np.float64)
                      for k in ("x0", "x1", "y0", "y1"))
    height = y1 - y0
    # the first word, in that order, that starts at or past a word's right edge less the
    # overlap: no word from there on can overlap it by more across
    end = np.searchsorted(x0, x1 - min_overlap, side="left")
    pairs: list[tuple[Word, Word]] = []
    for r0 in range(0, n, _BLOCK):
        r1 = min(n, r0 + _BLOCK)
        c1 = int(end[r0:r1].max(initial=0))
        if c1 <= r0 + 1:
            continue
        r, c = slice(r0, r1), slice(r0 + 1, c1)
        rows, cols = np.arange(r0, r1)[:, None], np.arange(r0 + 1, c1)[None, :]
        across = np.minimum(x1[r, None], x1[None, c]) - np.maximum(x0[r, None], x0[None, c])
        down = np.minimum(y1[r, None], y1[None, c]) - np.maximum(y0[r, None], y0[None, c])
        ok = ((cols > rows) & (cols < end[r, None]) & (across > min_overlap)
              & (down > 0.5 * np.minimum(height[r, None], height[None, c])))
        pairs += [(words[r0 + i], words[r0 + 1 + j]) for i, j in zip(*np.nonzero(ok), strict=True)]
    return pairs


_BLOCK = 256  # rows of one comparison block


def problems(pages: Sequence[Page], margin: float = MARGIN_PT) -> list[str]:
    """One line per word outside the text area or per pair of words on top of each other."""
    lines: list[str] = []
    for page in pages:
        for w in outside(page, margin):
            lines.append(f"{w.where()}: {w.text!r} lies outside the text area "
                         f"({_side(w, page, margin)})")
        for a, b in overlapping(page):
            lines.append(f"{a.where()}: {a.text!r} and {b.text!r} are printed over each other")
    return lines


def _side(w: Word, page: Page, margin: float) -> str:
    sides = [name for name, past in (
        ("left margin", margin - w.x0), ("right margin", w.x1 - (page.width - margin)),
        ("top margin", margin - w.y0), ("bottom margin", w.y1 - (page.height - margin)))
        if past > 0]
    return ", ".join(sides) or "margin"


def check(pdf: Path, *, margin: float = MARGIN_PT, shown_as: Path | None = None) -> int:
    """Fail with the places (the first :data:`SHOWN`, then a count) where text leaves the text
    area or overlaps other text; returns the number of pages checked."""
    pages = read_pages(pdf)
    found = problems(pages, margin)
    if found:
        more = f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
        raise ManuscriptError(f"{shown_as or pdf}: layout: {'; '.join(found[:SHOWN])}{more}")
    return len(pages)
