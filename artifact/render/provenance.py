"""Where each number of ``paper.html`` comes from (issue 33): values that carry their sources.

A number read from a computed file is *tagged*: :func:`tag` copies a JSON tree with each number
replaced by a :class:`PFloat` or :class:`PInt` (a ``float``/``int`` that equals the original and
also carries ``._prov``, the set of places it was read from, such as
``core.json#/groups/5/cells/ngram-simple/speedup/mean``). Arithmetic on tagged numbers keeps the
union of their sources, so a value that :mod:`artifact.render.vars` derives (a difference, a
sum of counts) names every field it was computed from. Containers are tagged too
(:class:`PDict`, :class:`PList`), so a count of items (``|length``) names the list it counted.

Two uses:

* :func:`field_sources`: ``vars.json``'s key → the analysis fields it was computed from, found by
  computing the variables once more from tagged analysis files (the bytes of ``vars.json`` come
  from the untagged computation, as before).
* :class:`Registry`: while ``paper.html.md`` is rendered from tagged variables, every number that
  a template prints is registered (its text, its ``vars.json`` keys, or its claim) and printed as a
  link to its row in ``numbers.html``, with the same facts as a hover title. A number printed
  without sources is counted (:attr:`Registry.untracked`) and fails the build.

Nothing here changes a value: a tagged number compares, hashes, formats and serializes exactly
as the plain one. A key of an analysis file is part of each place below it, so one that a link
cannot hold (a line break, a brace: a prompt's domain from the runs, say) is refused where the
file is tagged, in one line naming the file and the field, before any paper is rendered.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from artifact.errors import SummaryError

Sources = frozenset[str]
_EMPTY: Sources = frozenset()


class PFloat(float):
    """A float that carries the sources it was read from or computed of."""

    __slots__ = ("_prov",)
    _prov: Sources

    def __new__(cls, value: float, sources: Sources) -> PFloat:
        obj = float.__new__(cls, value)
        obj._prov = sources
        return obj

    def __repr__(self) -> str:
        return float.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (float, (float(self),))


class PInt(int):
    """An int that carries the sources it was read from or computed of."""

    _prov: Sources

    def __new__(cls, value: int, sources: Sources) -> PInt:
        obj = int.__new__(cls, value)
        obj._prov = sources
        return obj

    def __repr__(self) -> str:
        return int.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (int, (int(self),))


class PDict(dict[str, Any]):
    """A mapping from a tagged tree; ``sources`` is where it was read from."""

    _prov: Sources


class PList(list[Any]):
    """A list from a tagged tree; ``sources`` is where it was read from."""

    _prov: Sources


def sources_of(x: Any) -> Sources:
    """The sources a value carries; empty for an untagged one.

    >>> sorted(sources_of(PFloat(1.5, frozenset({"a"})))), sources_of(1.5)
    (['a'], frozenset())
    """
    got = getattr(x, "_prov", None)
    return got if isinstance(got, frozenset) else _EMPTY


def tagged(value: Any, sources: Sources) -> Any:
    """``value`` carrying ``sources`` when it is a number (never a bool) and has some.

    >>> x = tagged(3, frozenset({"s"})); type(x).__name__, x + 1, sorted(sources_of(x * 2))
    ('PInt', 4, ['s'])
    """
    if not sources or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return PInt(value, sources)
    if isinstance(value, float):
        return PFloat(value, sources)
    return value


def as_float(x: Any) -> float:
    """``float(x)``, keeping the sources ``x`` carries.

    >>> y = as_float(PInt(2, frozenset({"s"}))); y, sorted(sources_of(y))
    (2.0, ['s'])
    """
    out: float = tagged(float(x), sources_of(x))
    return out


def as_int(x: Any) -> int:
    """``int(x)``, keeping the sources ``x`` carries."""
    out: int = tagged(int(x), sources_of(x))
    return out


def count(xs: Any, within: Any = None) -> int:
    """``len(xs)``, carrying where ``xs`` (or ``within``, the list ``xs`` was selected from)
    was read from, marked as a count.

    >>> t = tag({"a": [1, 2]}, "f.json")
    >>> sorted(sources_of(count(t["a"]))), sorted(sources_of(count([1], within=t["a"])))
    (['f.json#/a (count)'], ['f.json#/a (count)'])
    """
    of = xs if within is None else within
    out: int = tagged(len(xs), frozenset(s + COUNT for s in sources_of(of)))
    return out


COUNT = " (count)"  # after a source: the number of items there, not a value read


def _binary(name: str) -> Callable[[Any, Any], Any]:
    def op(self: Any, other: Any) -> Any:
        base = float if isinstance(self, float) else int
        result = getattr(base, name)(self, other)
        if result is NotImplemented:
            # int + float: the float side computes; keep both sides' sources
            if base is int and isinstance(other, float):
                result = getattr(float, name)(float(self), other)
            else:
                return result
        return tagged(result, self._prov | sources_of(other))

    op.__name__ = name
    return op


def _unary(name: str) -> Callable[..., Any]:
    def op(self: Any, *args: Any) -> Any:
        base = float if isinstance(self, float) else int
        return tagged(getattr(base, name)(self, *args), self._prov)

    op.__name__ = name
    return op


_BINARY = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
           "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
           "__rpow__")
_UNARY = ("__neg__", "__pos__", "__abs__", "__round__")
for _cls in (PFloat, PInt):
    for _name in _BINARY:
        setattr(_cls, _name, _binary(_name))
    for _name in _UNARY:
        setattr(_cls, _name, _unary(_name))


def pointer(parts: Iterable[str | int]) -> str:
    """A JSON pointer (RFC 6901) to the value at ``parts``.

    >>> pointer(["speedup", "final-ngram", "by_domain", "a/b~c", 0])
    '/speedup/final-ngram/by_domain/a~1b~0c/0'
    """
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


# What a key of an analysis file may not hold: it becomes part of each number's source
# (``file#pointer``), which paper.html prints in a link's title and numbers.html in a row. A
# line break ends the link (its number is then printed unlinked); braces read as Markdown
# attributes (``{.class}``, ``{#id}``).
_UNPRINTABLE_KEY = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029{}]")


def _key(k: str, name: str, parts: tuple[str | int, ...]) -> str:
    """``k``, a key of the mapping at ``parts`` of file ``name``, when the paper can print it
    as part of a source; otherwise one line naming the file and the field.

    >>> try:
    ...     _key("ma\\nth", "summary.json", ("by_domain",))
    ... except SummaryError as err:
    ...     print(str(err).split(": expected")[0])
    summary.json: field '/by_domain': key 'ma\\nth'
    """
    if _UNPRINTABLE_KEY.search(k):
        raise SummaryError(f"{name}: field {pointer(parts)!r}: key {k!r}: expected a name on one "
                           "line without braces (a name from the runs, such as a prompt's "
                           "domain, is part of each number's source in paper.html, where a line "
                           "break or a brace breaks its link)")
    return k


def tag(obj: Any, name: str, parts: tuple[str | int, ...] = ()) -> Any:
    """A copy of the JSON tree ``obj`` whose numbers, lists and mappings carry their place in
    it: ``name#<JSON pointer>`` (``name``: the file, as the reader knows it). A key that cannot
    be printed as part of a place (:func:`_key`) is refused with one line naming the file and
    the field.

    >>> t = tag({"a": [1.5, {"b": 2}], "c": "x", "d": True}, "f.json")
    >>> sorted(sources_of(t["a"][1]["b"])), t["c"], t["d"] is True
    (['f.json#/a/1/b'], 'x', True)
    >>> sorted(sources_of(t["a"][0] - t["a"][1]["b"]))
    ['f.json#/a/0', 'f.json#/a/1/b']
    """
    here = frozenset({f"{name}#{pointer(parts)}"})
    if isinstance(obj, Mapping):
        d = PDict((_key(k, name, parts), tag(v, name, (*parts, k))) for k, v in obj.items())
        d._prov = here
        return d
    if isinstance(obj, list | tuple):
        lst = PList(tag(v, name, (*parts, i)) for i, v in enumerate(obj))
        lst._prov = here
        return lst
    return tagged(obj, here)


def tag_keys(obj: Any, parts: tuple[str, ...] = ()) -> Any:
    """A copy of ``vars.json``'s tree whose numbers carry their own key (``vars:a.b.0``).

    >>> sorted(sources_of(tag_keys({"a": [1, 2.5]})["a"][1]))
    ['vars:a.1']
    """
    here = frozenset({"vars:" + ".".join(parts)}) if parts else _EMPTY
    if isinstance(obj, Mapping):
        d = PDict((k, tag_keys(v, (*parts, str(k)))) for k, v in obj.items())
        d._prov = here
        return d
    if isinstance(obj, list | tuple):
        lst = PList(tag_keys(v, (*parts, str(i))) for i, v in enumerate(obj))
        lst._prov = here
        return lst
    return tagged(obj, here)


def is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def field_sources(tree: Any, parts: tuple[str, ...] = ()) -> Iterator[tuple[str, list[str]]]:
    """Each number's dotted key in ``tree`` (computed from tagged files) and its sources,
    sorted; an empty list for a number computed from nothing tagged.

    >>> dict(field_sources({"a": {"b": PInt(2, frozenset({"f#/x"}))}, "c": [1.0]}))
    {'a.b': ['f#/x'], 'c.0': []}
    """
    if isinstance(tree, Mapping):
        for k, v in tree.items():
            yield from field_sources(v, (*parts, str(k)))
    elif isinstance(tree, list | tuple):
        for i, v in enumerate(tree):
            yield from field_sources(v, (*parts, str(i)))
    elif is_number(tree) and not (isinstance(tree, float) and not math.isfinite(tree)):
        yield ".".join(parts), sorted(sources_of(tree))


@dataclass
class Entry:
    """One number as ``paper.html`` prints it."""

    id: str
    text: str
    keys: list[str]  # vars.json keys (``core.x.0``), or claim quantities (``summary:...``)
    claim: str | None = None
    anchor: str = ""  # its id in paper.html


@dataclass
class Registry:
    """The numbers one rendering of ``paper.html.md`` printed, in order."""

    describe: Callable[[Entry], str] | None = None  # the hover text of a number
    prefix: str = "n"  # of each number's id: "n12" (the text), "t-core-3" (a table)
    page: str = "numbers.html"
    entries: list[Entry] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)
    issued: set[str] = field(default_factory=set)  # the link markup printed for each number

    def add(self, text: str, sources: Iterable[str], claim: str | None = None,
            anchor: str | None = None) -> Entry:
        keys = sorted({s.removeprefix("vars:") for s in sources})
        n = f"{self.prefix}{len(self.entries) + 1}"
        e = Entry(id=n, text=text, keys=keys, claim=claim, anchor=anchor or n)
        self.entries.append(e)
        return e

    def title(self, e: Entry) -> str:
        """The hover text of one number: where it comes from, or its keys."""
        if self.describe is not None:
            return self.describe(e)
        said = [f"claim {e.claim}"] if e.claim else []
        return " · ".join([*said, *(f"vars.json {k}" for k in e.keys)])


_ACTIVE: list[Registry] = []


@contextmanager
def recording(registry: Registry) -> Iterator[Registry]:
    """Within this block, the marking filters (:func:`mark`) register and link numbers."""
    _ACTIVE.append(registry)
    try:
        yield registry
    finally:
        _ACTIVE.pop()


def active() -> Registry | None:
    return _ACTIVE[-1] if _ACTIVE else None


def collect(values: Iterable[Any]) -> tuple[Sources, bool]:
    """The sources of the numbers among ``values`` (one level into mappings and lists: an
    interval's ``{"mean", "low", "high"}``), and whether any number was among them."""
    found: set[str] = set()
    any_number = False
    for v in values:
        if isinstance(v, Mapping):  # an interval: what it prints, not its n or sd
            shown = [v[k] for k in ("mean", "low", "high", "value", "lo", "hi") if k in v]
            items: Iterable[Any] = shown or v.values()
        else:
            items = v if isinstance(v, list | tuple) else (v,)
        for x in items:
            if is_number(x):
                any_number = True
                found |= sources_of(x)
    return frozenset(found), any_number
