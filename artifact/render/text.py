"""Escaping and number formatting shared by tables, manuscript and report.

Every value a template prints passes through the environment's ``finalize``: plain strings are
escaped for the target format, so a label taken from data can neither break nor inject markup.
Markup a filter builds on purpose is wrapped in :class:`Raw` and printed as is.

A missing value (``None``, NaN, infinity) prints as an em dash, never as 0 or ``nan``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import jinja2
from jinja2 import filters as jfilters

from artifact.render import provenance as prov

DASH = "\u2014"
NBSP = "\u00a0"  # inside an interval: "-21 [-53, 26]" never breaks across lines

_TEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", DASH: "---",
    "\u2013": "--", "\u2212": "-", "\u00d7": r"$\times$", "\u00b1": r"$\pm$", NBSP: "~",
}
_TEX_RE = re.compile("|".join(re.escape(c) for c in _TEX))
_MD_RE = re.compile(r"([\\`*_{}\[\]<>#|$~^&@!])")


class Raw(str):
    """Markup built on purpose by a filter: printed without escaping."""

    __slots__ = ()


def tex_escape(s: str) -> str:
    r"""Escape text for LaTeX.

    >>> tex_escape("a_b&c%")
    'a\\_b\\&c\\%'
    >>> tex_escape("\\input{x}")
    '\\textbackslash{}input\\{x\\}'
    """
    return _TEX_RE.sub(lambda m: _TEX[m.group(0)], s)


def md_escape(s: str) -> str:
    r"""Escape text for pandoc Markdown (inline, inside a pipe-table cell).

    >>> md_escape("a|b*c")
    'a\\|b\\*c'
    """
    return _MD_RE.sub(r"\\\1", s).replace("\n", " ")


def is_missing(x: Any) -> bool:
    """True for ``None`` and non-finite floats.

    >>> [is_missing(v) for v in (None, float("nan"), 0.0, 1)]
    [True, True, False, False]
    """
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def num(x: Any, digits: int = 2) -> str:
    """A number with fixed decimals, or an em dash when missing; a value that rounds to zero
    prints without a sign (never ``-0.00``).

    >>> num(1.23456), num(None), num(0.0, 1), num(float("nan")), num(-0.004), num(-0.4, 0)
    ('1.23', '—', '0.0', '—', '0.00', '0')
    """
    if is_missing(x):
        return DASH
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    text = f"{float(x):.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def bracket(lo: Any, hi: Any, digits: int = 2) -> str:
    """``[lo, hi]`` with a no-break space after the comma.

    >>> bracket(-53, 26.0, 0) == "[-53," + NBSP + "26]"
    True
    """
    return f"[{num(lo, digits)},{NBSP}{num(hi, digits)}]"


def interval(x: Any, lo: Any, hi: Any, digits: int = 2, unit: str = "") -> str:
    """``x [lo, hi]`` (``unit`` after ``x``), joined by no-break spaces: the one place every
    table, caption and sentence gets its intervals from, so none breaks across lines. An em
    dash when ``x`` is missing.

    >>> interval(0.5, 0.4, 0.61).replace(NBSP, "~")
    '0.50~[0.40,~0.61]'
    >>> interval(-21.2, -53, 26, 0, "%").replace(NBSP, " ")
    '-21% [-53, 26]'
    """
    if is_missing(x):
        return DASH
    return f"{num(x, digits)}{unit}{NBSP}{bracket(lo, hi, digits)}"


def ci(iv: Mapping[str, Any] | None, digits: int = 2) -> str:
    """``mean [low, high]``, the mean alone when there is no interval, a dash when no value.

    >>> ci({"n": 2, "mean": 1.5, "sd": 0.1, "low": 1.2, "high": 1.8, "ci_reason": None,
    ...     "kind": "measured", "over": "runs"}).replace(NBSP, " ")
    '1.50 [1.20, 1.80]'
    >>> ci({"n": 1, "mean": 1.5, "sd": None, "low": None, "high": None,
    ...     "ci_reason": "fewer than two independent runs", "kind": "measured", "over": "runs"})
    '1.50'
    """
    if iv is None or is_missing(iv["mean"]):
        return DASH
    if iv["low"] is None or iv["high"] is None:
        return num(iv["mean"], digits)
    return interval(iv["mean"], iv["low"], iv["high"], digits)


_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def spelled(n: Any, capital: bool = True) -> str:
    """A count that opens a sentence, in words (a sentence never starts with a numeral): up to
    99 spelled out, 0 as "No" (a determiner: "No records were excluded"); larger counts stay
    numerals.

    >>> spelled(0), spelled(2), spelled(21, capital=False), spelled(140)
    ('No', 'Two', 'twenty-one', '140')
    """
    k = int(n)
    if k == 0:
        word = "no"
    elif 0 < k < 20:
        word = _ONES[k]
    elif 20 <= k < 100:
        word = _TENS[k // 10] + (f"-{_ONES[k % 10]}" if k % 10 else "")
    else:
        return str(k)
    return word[:1].upper() + word[1:] if capital else word


def of_total(k: Any, n: Any, capital: bool = True) -> str:
    """"k of n" opening a sentence, in words: "None of the 7", "Both", "All 5", "Two of the 7".

    >>> of_total(0, 7), of_total(2, 2), of_total(5, 5), of_total(2, 7, capital=False)
    ('None of the 7', 'Both', 'All 5', 'two of the 7')
    """
    k, n = int(k), int(n)
    if k == 0:
        text = f"none of the {n}"
    elif k == n == 2:
        text = "both"
    elif k == n and n > 1:
        text = f"all {n}"
    else:
        text = f"{spelled(k, capital=False)} of the {n}"
    return text[:1].upper() + text[1:] if capital else text


def prose_list(items: Any, conj: str = "and") -> str:
    """Items as a sentence says them: "a", "a and b", "a, b and c" (with semicolons when an
    item holds a comma). Labels that differ only in their last word share the rest once:
    "ngram-mod k=2, k=4 and k=8".

    >>> prose_list(["draft model Q2_K k=2", "draft model Q2_K k=4"])
    'draft model Q2_K k=2 and k=4'
    >>> prose_list(["ngram-mod k=2", "ngram-cache", "x, y"])
    'ngram-mod k=2; ngram-cache and x, y'
    >>> prose_list(["a"]), prose_list([])
    ('a', '')
    """
    xs = [str(x) for x in items]
    heads = {x.rsplit(" ", 1)[0] for x in xs}
    if len(xs) > 1 and len(heads) == 1 and all(" " in x for x in xs):
        xs = [xs[0]] + [x.rsplit(" ", 1)[1] for x in xs[1:]]
    return _joined(xs, xs, conj)


def _joined(plain: list[str], shown: list[str], conj: str) -> str:
    """``shown`` joined as a sentence lists items; the separator decided on ``plain``."""
    if len(shown) <= 1:
        return "".join(shown)
    sep = "; " if any("," in x for x in plain) else ", "
    return f"{sep.join(shown[:-1])} {conj} {shown[-1]}"


def code(s: Any) -> Raw:
    """Inline code in pandoc Markdown, for a name taken from data: no escaping inside, and a
    fence longer than any run of backticks in the text.

    >>> code("smollm2-135m-q2_k"), code("a`b")
    ('`smollm2-135m-q2_k`', '`` a`b ``')
    """
    text = str(s).replace("\n", " ")
    runs = [len(m) for m in re.findall("`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if runs else ""
    return Raw(f"{fence}{pad}{text}{pad}{fence}")


# --- provenance: numbers printed as links to where they come from (paper.html only) -----------

def _title(text: str) -> str:
    """Text for a Markdown link title in double quotes (a pipe escaped: a table cell holds it)."""
    return text.replace("\\", "/").replace('"', "'").replace("|", "\\|")


def provenance_link(text: str, sources: prov.Sources, *, claim: str | None = None,
                    anchor: str | None = None) -> Raw:
    """``text`` as a link to its row in ``numbers.html``, with a hover title, registered with
    the active :class:`~artifact.render.provenance.Registry` (there must be one)."""
    reg = prov.active()
    assert reg is not None, "provenance_link outside provenance.recording"
    e = reg.add(text, sources, claim=claim, anchor=anchor)
    classes = ".claim .num" if claim else ".num"
    link = (f'[{md_escape(text)}]({reg.page}#{e.id} "{_title(reg.title(e))}")'
            f"{{#{e.anchor} {classes}}}")
    reg.issued.add(link)
    return Raw(link)


# a link provenance_link made, as a template's macro returns it inside plain text
_LINK = re.compile(r'\[(?:\\.|[^\]\\])*\]\([^ )]+ "[^"]*"\)\{#[^ }]+ [^}]*\}')


def _escaped_around_links(text: str, escape: Callable[[str], str], issued: set[str]) -> str:
    """``text`` escaped, except the number links this rendering made (a macro's output is plain
    text to Jinja, though it holds them)."""
    out, at = [], 0
    for m in _LINK.finditer(text):
        if m.group(0) in issued:
            out += [escape(text[at:m.start()]), m.group(0)]
            at = m.end()
    return "".join(out) + escape(text[at:])


def _shown(text: str, args: tuple[Any, ...]) -> str:
    """``text`` formatted from ``args``: a link when a registry is recording and a number among
    ``args`` carries sources; counted as untracked when numbers among them carry none."""
    reg = prov.active()
    if reg is None or text == DASH:
        return text
    sources, numeric = prov.collect(args)
    if not numeric:
        return text
    if not sources:
        reg.untracked.append(text)
        return text
    return provenance_link(text, sources)


def marking(f: Callable[..., Any],
            shown: Callable[..., tuple[Any, ...]] | None = None) -> Callable[..., Any]:
    """A formatting filter whose output is a provenance link while a registry records: its
    sources are those of the numbers among its arguments, or among ``shown(*args)`` (the values
    it prints, when an argument holds more)."""
    @functools.wraps(f)
    def marked(*args: Any, **kwargs: Any) -> Any:
        out = f(*args, **kwargs)
        if out is None or isinstance(out, Raw):
            return out
        return _shown(out, shown(*args) if shown is not None else args)

    return marked


def _item(x: Any, escape: Callable[[str], str]) -> str:
    """One item of a list a template joins: a link for a tagged number, markup as it is, any
    other text escaped."""
    if isinstance(x, Raw):
        return str(x)
    if prov.is_number(x):
        return _shown(num(x) if isinstance(x, float) else str(x), (x,))
    return escape(str(x))


@jinja2.pass_eval_context
def _join(ctx: Any, value: Any, d: str = "", attribute: Any = None) -> Any:
    """Jinja's ``join``; while a registry records, numbers joined are links."""
    items = list(value)
    if prov.active() is None or not any(prov.is_number(x) or isinstance(x, Raw)
                                        for x in items):
        return jfilters.do_join(ctx, items, d, attribute)
    return Raw(md_escape(d).join(_item(x, md_escape) for x in items))


def _prose_list_marked(items: Any, conj: str = "and") -> str:
    xs = list(items)
    if prov.active() is None or not any(prov.is_number(x) or isinstance(x, Raw) for x in xs):
        return prose_list(xs, conj)
    return Raw(_joined([str(x) for x in xs], [_item(x, md_escape) for x in xs], conj))




def _keeping(f: Callable[..., Any]) -> Callable[..., Any]:
    """A Jinja number filter (``int``, ``round``, ``abs``) that keeps its input's sources."""
    def kept(x: Any, *args: Any, **kwargs: Any) -> Any:
        return prov.tagged(f(x, *args, **kwargs), prov.sources_of(x))

    return kept


def _unmarked(text: str, args: tuple[Any, ...]) -> str:
    return text


def _finalizer(escape: Any, mark: Callable[[str, tuple[Any, ...]], str]) -> Any:
    def finalize(value: Any) -> Any:
        if isinstance(value, Raw):
            return str(value)
        if value is None:
            return escape(DASH)
        if isinstance(value, float):
            return mark(escape(num(value)), (value,))
        if isinstance(value, str):
            reg = prov.active() if mark is _shown else None
            if reg is not None and reg.issued and f"]({reg.page}#" in value:
                return _escaped_around_links(value, escape, reg.issued)
            return escape(value)
        if mark is _shown and prov.is_number(value):
            return _shown(str(value), (value,))
        return value

    return finalize


def environment(
    fmt: str, loader: jinja2.BaseLoader | None = None, *, strict: bool = True
) -> jinja2.Environment:
    """A Jinja environment whose printed strings are escaped for ``fmt`` (``tex`` or ``md``).

    Comments use ``{## ... ##}`` so pandoc attributes like ``{#fig:x}`` stay literal.
    """
    escape = {"tex": tex_escape, "md": md_escape, "none": str}[fmt]
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined if strict else jinja2.Undefined,
        finalize=_finalizer(escape, _shown if fmt == "md" else _unmarked),
        comment_start_string="{##",
        comment_end_string="##}",
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    formats: list[tuple[str, Callable[..., Any]]] = [
        ("num", num), ("interval", interval), ("ci", ci), ("bracket", bracket),
        ("spelled", spelled), ("of_total", of_total), ("prose_list", prose_list)]
    if fmt == "md":
        # Markdown (paper.html): while a provenance registry records, what a filter prints from
        # a tagged number is a link to where it comes from; otherwise exactly its text
        formats = [(name, marking(f)) for name, f in formats[:-1]]
        formats.append(("prose_list", _prose_list_marked))
        env.filters["join"] = _join
        env.filters["length"] = env.filters["count"] = prov.count
        env.filters["int"] = _keeping(jfilters.do_int)
        env.filters["round"] = _keeping(jfilters.do_round)
        env.filters["abs"] = _keeping(abs)
    env.filters.update(formats)
    env.filters["raw"] = Raw
    env.filters["code"] = code
    env.globals["DASH"] = DASH
    env.globals["NBSP"] = NBSP
    return env
