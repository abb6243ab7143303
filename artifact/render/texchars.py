"""Characters beyond ASCII in the LaTeX sources, checked against what pdflatex is told.

pdflatex with ``inputenc`` (utf8) stops with "Unicode character ... not set up for use with
LaTeX" on any character no loaded file defines, and only where a LaTeX engine is installed
(the Docker image, the arXiv build). So the character set is declared in one place, the
``\\DeclareUnicodeCharacter`` lines of ``manuscript/defaults/latex.yaml``, and every LaTeX source
the build writes (``paper.tex`` and the tables it inputs) is checked against that set on every
machine, Typst builds included: a new character fails the build here, in one line, and not only
later in the image.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from artifact import paths
from artifact.errors import ManuscriptError

_DECLARE = re.compile(r"\\DeclareUnicodeCharacter\{([0-9A-Fa-f]{4,6})\}")
_INPUT = re.compile(r"\\input\{(tables/[A-Za-z0-9_.-]+?)(?:\.tex)?\}")


def declared(defaults: Path) -> frozenset[str]:
    """The characters that ``defaults`` (the LaTeX metadata file) declares for pdflatex.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "latex.yaml"
    ...     _ = p.write_text("header-includes: |\\n  \\\\DeclareUnicodeCharacter{00B1}{+-}\\n")
    ...     sorted(declared(p))
    ['±']
    """
    text = defaults.read_text(encoding="utf-8")
    return frozenset(chr(int(code, 16)) for code in _DECLARE.findall(text))


def undeclared(text: str, allowed: frozenset[str]) -> tuple[int, str] | None:
    """The first (line number, character) beyond ASCII that is not in ``allowed``, if any.

    >>> undeclared("a\\nb ± c", frozenset())
    (2, '±')
    >>> undeclared("a ± b", frozenset("±")) is None
    True
    """
    for lineno, line in enumerate(text.splitlines(), start=1):
        for ch in line:
            if ord(ch) > 127 and ch not in allowed:
                return lineno, ch
    return None


def inputs(tex: str, build: Path) -> list[Path]:
    """The table files a LaTeX source ``\\input``s, relative to ``build``.

    >>> [p.name for p in inputs("x \\\\input{tables/speedup.tex} y", Path("b"))]
    ['speedup.tex']
    """
    return [build / f"{name}.tex" for name in _INPUT.findall(tex)]


def check(sources: Iterable[tuple[Path, str]], defaults: Path) -> None:
    """Raise one line naming the file, line and character pdflatex would stop on."""
    allowed = declared(defaults)
    for path, text in sources:
        found = undeclared(text, allowed)
        if found is None:
            continue
        lineno, ch = found
        name = unicodedata.name(ch, "unnamed")
        raise ManuscriptError(
            f"{paths.shown(path)}:{lineno}: character {ch!r} (U+{ord(ch):04X} {name}) has no LaTeX "
            f"definition, and pdflatex stops on it: declare it in {paths.shown(defaults)} "
            f"(\\DeclareUnicodeCharacter{{{ord(ch):04X}}}{{...}}) or write it in ASCII")


def check_paper(tex: Path, build: Path, defaults: Path, *, shown_as: Path | None = None) -> None:
    """Check ``tex`` (``paper.tex`` as pandoc wrote it) and every table it inputs."""
    text = tex.read_text(encoding="utf-8")
    tables = [(p, p.read_text(encoding="utf-8")) for p in inputs(text, build) if p.is_file()]
    check([(shown_as or tex, text), *tables], defaults)
