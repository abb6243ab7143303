"""The typed shape of every computed JSON file: one module per file, on the ground floor.

Each file (``summary.json`` today, each new study's file beside it) is described once, as
``TypedDict`` classes in ``artifact/contract/<file>.py``. The same classes are used by

- the writer (the analysis builds these dicts; mypy checks every key it sets),
- the reader (:func:`check` validates a parsed file against them at load, with one line naming
  the file and the field; mypy checks every key the renderers read),
- the test fixtures (typed as the same classes), and
- the schema document (:func:`schema_markdown` generates its field tables; a test keeps the
  document equal to it).

A field's meaning is written beside its type as ``Annotated[type, "meaning"]``. Types in use:
``int``, ``float`` (a JSON integer is accepted), ``str``, ``bool``, ``Literal[...]``, ``X | None``
(``null``), ``list[X]``, ``dict[str, X]`` (keys are run ids, domains or names) and nested
``TypedDict`` classes, whose keys are exactly the declared ones. Errors are the caller's family
of the error tree (:mod:`artifact.errors`); nothing else of ours is imported.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from artifact.errors import ArtifactError

__all__ = ["check", "check_version", "describe", "fits", "schema_markdown"]


@functools.cache
def _hints(td: type) -> dict[str, Any]:
    """A TypedDict's field types (read only; cached: a summary checks thousands of objects)."""
    return get_type_hints(td, include_extras=True)


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def _strip(tp: Any) -> tuple[Any, str]:
    """A type without its ``Annotated`` wrapper, and the meaning written there."""
    if get_origin(tp) is typing.Annotated:
        base, *meta = get_args(tp)
        return base, " ".join(str(m) for m in meta if isinstance(m, str))
    return tp, ""


def describe(tp: Any) -> str:
    """A type as the schema document writes it.

    >>> describe(dict[str, list[int | None]])
    '{str: [int | null]}'
    """
    tp, _ = _strip(tp)
    origin, args = get_origin(tp), get_args(tp)
    if tp is type(None):
        return "null"
    if origin in (Union, types.UnionType):
        return " | ".join(describe(a) for a in args)
    if origin is Literal:
        return " | ".join(f'"{a}"' if isinstance(a, str) else str(a) for a in args)
    if origin is list:
        return f"[{describe(args[0])}]"
    if origin is dict:
        return f"{{{describe(args[0])}: {describe(args[1])}}}"
    if tp is Any:
        return "any"
    return str(tp.__name__)


def _fail(
    error: type[ArtifactError], source: str, where: str, expected: Any, value: Any
) -> ArtifactError:
    got = "null" if value is None else type(value).__name__
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        got = f"{value!r}"[:40]
    return error(f"{source}: field '{where}': expected {describe(expected)}, got {got}")


def _matches_scalar(tp: Any, value: Any) -> bool:
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is str:
        return isinstance(value, str)
    return tp is Any


def check_version(data: Any, *, field: str, version: int, source: str,
                  error: type[ArtifactError]) -> None:
    """Raise ``error`` when ``data`` names a schema version other than the one read here.

    Checked before the fields, so that a file of another version says so rather than naming
    the first field that moved. A file without the field is left to :func:`check`.

    >>> check_version({"schema": 2}, field="schema", version=1, source="f.json",
    ...               error=ArtifactError)
    Traceback (most recent call last):
    artifact.errors.ArtifactError: f.json: field 'schema': 2, this reader reads 1
    """
    if isinstance(data, dict) and field in data and data[field] != version:
        raise error(f"{source}: field {field!r}: {data[field]!r}, this reader reads {version}")


@functools.cache
def _shape(tp: Any) -> tuple[str, Any]:
    """What checking a value against ``tp`` needs, worked out once per type."""
    tp, _ = _strip(tp)
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        plain = tuple(a for a in args if _strip(a)[0] is not type(None))
        return "union", (len(plain) < len(args), plain, tuple(_strip(a)[0] for a in plain))
    if origin is Literal:
        return "literal", args
    if origin is list:
        return "list", args[0]
    if origin is dict:
        return "dict", args[1]
    if _is_typeddict(tp):
        hints = _hints(tp)
        return "typeddict", (tuple(hints.items()), len(hints))
    return "scalar", tp


def _fits(tp: Any, value: Any) -> bool:
    """Whether :func:`check` would accept ``value``, without building any field path: the
    fast pass over a whole summary; the path is built only for a value that does not fit."""
    kind, data = _shape(tp)
    if kind == "scalar":
        return _matches_scalar(data, value)
    if kind == "typeddict":
        fields, n = data
        return (isinstance(value, dict) and len(value) == n
                and all(key in value and _fits(sub, value[key]) for key, sub in fields))
    if kind == "list":
        return isinstance(value, list) and all(_fits(data, v) for v in value)
    if kind == "dict":
        return isinstance(value, dict) and all(_fits(data, v) for v in value.values())
    if kind == "union":
        optional, plain, bare = data
        if value is None and optional:
            return True
        if len(plain) == 1:
            return _fits(plain[0], value)
        return any(_matches_scalar(b, value) for b in bare)
    return value in data  # Literal


def fits(tp: Any, value: Any) -> bool:
    """Whether ``value`` fits ``tp`` (:func:`check` without the error naming the field).

    >>> fits(dict[str, int], {"a": 1}), fits(dict[str, int], {"a": "1"})
    (True, False)
    """
    return _fits(tp, value)


def check(tp: Any, value: Any, *, source: str, error: type[ArtifactError], where: str = "") -> None:
    """Raise ``error`` (one line: file, dotted field, expected type) unless ``value`` fits ``tp``.

    >>> from typing import TypedDict
    >>> class P(TypedDict):
    ...     n: int
    ...     mean: float | None
    >>> check(dict[str, P], {"a": {"n": 2, "mean": None}}, source="f.json", error=ArtifactError)
    >>> check(dict[str, P], {"a": {"n": "2", "mean": 1}}, source="f.json", error=ArtifactError)
    Traceback (most recent call last):
    artifact.errors.ArtifactError: f.json: field 'a.n': expected int, got '2'
    """
    if not _fits(tp, value):
        _check(tp, value, source=source, error=error, where=where)


def _check(tp: Any, value: Any, *, source: str, error: type[ArtifactError], where: str) -> None:
    """:func:`check`, naming the first field that does not fit (the slow pass)."""
    tp, _ = _strip(tp)
    origin, args = get_origin(tp), get_args(tp)
    at = where or "(top level)"
    if origin in (Union, types.UnionType):
        plain = [a for a in args if _strip(a)[0] is not type(None)]
        if value is None and len(plain) < len(args):
            return
        if len(plain) == 1:
            return _check(plain[0], value, source=source, error=error, where=where)
        if any(_matches_scalar(_strip(a)[0], value) for a in plain):
            return
        raise _fail(error, source, at, tp, value)
    if origin is Literal:
        if value not in args:
            raise _fail(error, source, at, tp, value)
        return
    if origin is list:
        if not isinstance(value, list):
            raise _fail(error, source, at, tp, value)
        for i, v in enumerate(value):
            _check(args[0], v, source=source, error=error, where=f"{where}.{i}".lstrip("."))
        return
    if origin is dict:
        if not isinstance(value, dict):
            raise _fail(error, source, at, tp, value)
        for k, v in value.items():
            _check(args[1], v, source=source, error=error, where=f"{where}.{k}".lstrip("."))
        return
    if _is_typeddict(tp):
        if not isinstance(value, dict):
            raise _fail(error, source, at, tp, value)
        hints = _hints(tp)
        for key, sub in hints.items():
            path = f"{where}.{key}".lstrip(".")
            if key not in value:
                raise error(f"{source}: field '{path}': missing")
            _check(sub, value[key], source=source, error=error, where=path)
        extra = sorted(set(value) - set(hints))
        if extra:
            raise error(f"{source}: field '{f'{where}.{extra[0]}'.lstrip('.')}': not in the "
                        f"schema ({tp.__name__})")
        return
    if not _matches_scalar(tp, value):
        raise _fail(error, source, at, tp, value)
    return


def _reachable(root: type) -> list[type]:
    """The TypedDicts reachable from ``root``, root first, then in first-use order."""
    seen: list[type] = []

    def walk(tp: Any) -> None:
        tp, _ = _strip(tp)
        if _is_typeddict(tp):
            if tp in seen:
                return
            seen.append(tp)
            for sub in _hints(tp).values():
                walk(sub)
        for a in get_args(tp):
            walk(a)

    walk(root)
    return seen


def schema_markdown(root: type) -> str:
    """The field tables of a file's schema: one Markdown table per ``TypedDict``."""
    out: list[str] = []
    for td in _reachable(root):
        doc = " ".join((td.__doc__ or "").split())
        out.append(f"### `{td.__name__}`\n\n{doc}\n")
        out.append("| field | type | meaning |\n| --- | --- | --- |")
        for key, tp in _hints(td).items():
            meaning = _strip(tp)[1].replace("|", "\\|")
            kind = describe(tp).replace("|", "\\|")
            out.append(f"| `{key}` | `{kind}` | {meaning} |")
        out.append("")
    return "\n".join(out)
