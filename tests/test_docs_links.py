"""The README is a landing page, and every relative link in it and in docs/ leads somewhere.

A link's file must exist (relative to the page that holds it) inside the repository: an
absolute path, a ``file:`` URL or a ``../`` that climbs out of the checkout leads nowhere on
GitHub or on another machine. A ``#anchor`` into a Markdown page must name one of its headings,
as GitHub spells them (lowercase, punctuation dropped, spaces to hyphens, a repeated heading
numbered ``-1``, ``-2``). Links are read in every form CommonMark and GitHub give them: inline
``[a](dest)`` and images, a destination in angle brackets (``[a](<a file.md>)``, spaces
allowed), with a title (``"t"``, ``'t'``, ``(t)``), percent-encoded, reference definitions, and
the ``href`` and ``src`` attributes of HTML. Links inside code (fenced blocks, inline code) are
text, not links; absolute URLs are not fetched.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from artifact import paths

ROOT = paths.ROOT
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
README_LIMIT = 12 * 1024  # bytes: what a newcomer reads in five minutes

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
# a destination: <in angle brackets, spaces allowed> or bare (no spaces; balanced parentheses)
_DEST = r"(?:<((?:[^<>\n\\]|\\.)*)>|((?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))+))"
_TITLE = r"(?:\s+(?:\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?"
_LINK = re.compile(r"\]\(\s*(?:" + _DEST + _TITLE + r")?\s*\)")
_REF = re.compile(r"^ {0,3}\[(?!\^)(?:[^\]\\]|\\.)+\]:[ \t]*\n?[ \t]*"  # not a footnote
                  + _DEST + _TITLE + r"[ \t]*$", re.M)
_ATTR = re.compile(r"<[a-zA-Z][^>]*?\s(?:href|src)\s*=\s*"
                   r"(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'=<>`]+))", re.I)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash escape of ASCII punctuation
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$", re.M)
_HTML_ID = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code spans (their links are text)."""
    return _CODE.sub("code", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading.

    >>> slug("The report, and how a claim is judged"), slug("`doit toolchain`")
    ('the-report-and-how-a-claim-is-judged', 'doit-toolchain')
    >>> slug("Building and checking the image: `bash scripts/image`")
    'building-and-checking-the-image-bash-scriptsimage'
    """
    text = re.sub(r"<[^>]+>", "", heading).replace("`", "").strip().lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a Markdown page offers: its headings' slugs (numbered when repeated) and
    explicit ``<a name=...>``/``<a id=...>``."""
    seen: dict[str, int] = {}
    out = set(_HTML_ID.findall(text))
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(text: str) -> list[str]:
    """The targets of the inline links, images, reference definitions and HTML ``href`` and
    ``src`` attributes of ``text``, as written (backslash escapes undone)."""
    body = prose(text)
    found = [*_LINK.findall(body), *_REF.findall(body), *_ATTR.findall(body)]
    return [_ESCAPE.sub(r"\1", next((g for g in groups if g), "")) for groups in found]


def _outside(target: str, where: str, page: Path, root: Path) -> str | None:
    """Why the link leads out of the repository ``root``, or None."""
    if target.lower().startswith("file:"):
        return "a file: URL (a path on one machine)"
    if where.startswith("/"):
        return "an absolute path (leads out of the repository)"
    dest = (page.parent / where).resolve()
    if dest != root and root not in dest.parents:
        return f"leads out of the repository ({dest})"
    return None


def broken_links(page: Path, text: str, root: Path = ROOT) -> list[str]:
    """``target: why`` for each relative link of ``page`` (whose text is ``text``) that leads
    nowhere: out of the repository ``root``, to a missing file, or to a ``#anchor`` that no
    heading of the Markdown page has."""
    bad = []
    for target in links(text):
        path, _, anchor = target.partition("#")
        where = unquote(path.partition("?")[0])
        out = _outside(target, where, page, root.resolve())
        if out is not None:
            bad.append(f"{target}: {out}")
            continue
        if not target or _SCHEME.match(target) or target.startswith("//"):
            continue
        dest = (page.parent / where).resolve() if where else page
        if not dest.exists():
            bad.append(f"{target}: no such file ({paths.shown(dest)})")
        elif (anchor and dest.suffix == ".md" and dest.is_file()
              and anchor not in anchors(dest.read_text(encoding="utf-8"))):
            bad.append(f"{target}: {paths.shown(dest)} has no heading #{anchor}")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: paths.shown(p))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page, page.read_text(encoding="utf-8")) == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "here.md").write_text("# Title\n\n## A section, with `code`\n")
    page = tmp_path / "page.md"
    text = "\n".join([
        "[fine](here.md) [fine too](here.md#a-section-with-code) [self](#own-heading)",
        "[web](https://example.org/missing.md) ![image](here.md)",
        "# Own heading",
        "[gone](missing.md) [bad anchor](here.md#no-such-heading) [bad self](#nowhere)",
        "[ref]: elsewhere/missing.txt",
        "`[in code](missing-in-code.md)`",
        "```",
        "[in a fence](missing-in-fence.md)",
        "```",
    ])
    page.write_text(text)
    bad = broken_links(page, text, root=tmp_path)
    assert [b.split(":")[0] for b in bad] == [
        "missing.md", "here.md#no-such-heading", "#nowhere", "elsewhere/missing.txt"]


def test_every_form_of_a_link_is_checked(tmp_path: Path) -> None:
    """Issue 46: links that climb out of the repository, absolute paths, CommonMark's angle
    brackets and titles, and HTML's href and src passed unchecked. Each broken form fails;
    each working one passes."""
    (tmp_path / "a file.md").write_text("# Title\n")
    (tmp_path / "here.md").write_text("# Title\n")
    (tmp_path / "fig.png").write_bytes(b"")
    page = tmp_path / "page.md"
    fine = [
        "[spaces](<a file.md>)", "[encoded](a%20file.md#title)", '[titled](here.md "A title")',
        "[single](here.md 'title')", "[paren](here.md (title))", "![img](<fig.png> \"t\")",
        '<a href="here.md#title">x</a>', "<img src='fig.png' alt=''>", "<a href=here.md>x</a>",
        "[ref]: <a file.md> \"title\"", "[^note]: a footnote, not a link",
    ]
    broken = {
        "[up](" + "../" * 24 + "etc/passwd)": "leads out of the repository",
        "[abs](/etc/passwd)": "an absolute path",
        "[file](file:///etc/passwd)": "a file: URL",
        "[spaces](<no such file.md>)": "no such file",
        '[titled](missing.md "A title")': "no such file",
        "[single](missing.md 'title')": "no such file",
        "[anchor](<a file.md#nowhere>)": "has no heading #nowhere",
        '<a href="missing.md">x</a>': "no such file",
        "<img alt='' src='missing.png'>": "no such file",
        '<a href="../../outside.md">x</a>': "leads out of the repository",
        "[ref2]: missing-ref.md 'title'": "no such file",
    }
    for line in fine:
        page.write_text(line)
        assert broken_links(page, line, root=tmp_path) == [], line
    for line, why in broken.items():
        page.write_text(line)
        bad = broken_links(page, line, root=tmp_path)
        assert len(bad) == 1 and why in bad[0], (line, bad)


def test_repeated_headings_are_numbered() -> None:
    assert anchors("# A\n## A\n```\n# Not a heading\n```\n") == {"a", "a-1"}


def test_the_readme_is_a_landing_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= README_LIMIT, (
        f"README.md is {len(text.encode())} bytes, over {README_LIMIT}: move detail to docs/")
    # the two commands come first, the build before the tests, before any other command
    build, test = text.index("`bash scripts/build`"), text.index("`bash scripts/test`")
    others = [m.start() for m in re.finditer(r"`(?:doit|python) ", text)]
    assert build < test < min(others)
    assert "CITATION.cff" in text
    assert "(docs/README.md)" in text


def test_the_docs_index_links_every_page() -> None:
    index = DOCS / "README.md"
    linked = {(DOCS / t.partition("#")[0]).resolve()
              for t in links(index.read_text(encoding="utf-8"))}
    missing = [p.name for p in PAGES if p.parent == DOCS and p != index and p not in linked]
    assert missing == [], f"docs/README.md does not link {missing}"
