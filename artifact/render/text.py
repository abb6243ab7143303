"""Escaping and number formatting shared by tables, manuscript and report.

Every value a template prints passes through the environment's ``finalize``: plain strings are
escaped for the target format, so a label taken from data can neither break nor inject markup.
Markup a filter builds on purpose is wrapped in :class:`Raw` and printed as is.

A missing value (``None``, NaN, infinity) prints as an em dash, never as 0 or ``nan``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import jinja2

DASH = "\u2014"

_TEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", DASH: "---",
    "\u2013": "--", "\u2212": "-", "\u00d7": r"$\times$", "\u00b1": r"$\pm$",
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
    """A number with fixed decimals, or an em dash when missing.

    >>> num(1.23456), num(None), num(0.0, 1), num(float("nan"))
    ('1.23', '—', '0.0', '—')
    """
    if is_missing(x):
        return DASH
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    return f"{float(x):.{digits}f}"


def interval(x: Any, lo: Any, hi: Any, digits: int = 2) -> str:
    """``x [lo, hi]``; an em dash when ``x`` is missing.

    >>> interval(0.5, 0.4, 0.61)
    '0.50 [0.40, 0.61]'
    """
    if is_missing(x):
        return DASH
    return f"{num(x, digits)} [{num(lo, digits)}, {num(hi, digits)}]"


def ci(iv: Mapping[str, Any] | None, digits: int = 2) -> str:
    """``mean [low, high]``, the mean alone when there is no interval, a dash when no value.

    >>> ci({"n": 2, "mean": 1.5, "sd": 0.1, "low": 1.2, "high": 1.8, "ci_reason": None,
    ...     "kind": "measured", "over": "runs"})
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


def _finalizer(escape: Any) -> Any:
    def finalize(value: Any) -> Any:
        if isinstance(value, Raw):
            return str(value)
        if value is None:
            return escape(DASH)
        if isinstance(value, float):
            return escape(num(value))
        if isinstance(value, str):
            return escape(value)
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
        finalize=_finalizer(escape),
        comment_start_string="{##",
        comment_end_string="##}",
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["num"] = num
    env.filters["interval"] = interval
    env.filters["raw"] = Raw
    env.filters["code"] = code
    env.filters["ci"] = ci
    env.globals["DASH"] = DASH
    return env
