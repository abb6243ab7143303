"""Cache entries as data that cannot carry code: tagged JSON, decoded into named types only.

The analysis cache (:mod:`artifact.analysis.runcache`) lies in the checkout, where anyone who
can write a file can plant an entry; so an entry is never a pickle (loading a pickle runs the
code it names). It is JSON in which every value that JSON has no word for is a tagged list:

- ``["l", *items]`` a list, ``["t", *items]`` a tuple,
- ``["d", k1, v1, k2, v2, ...]`` a dict, its keys any encodable value (a tuple, None),
- ``["p", "..."]`` a :class:`pathlib.Path`,
- ``["c", "Name", {field: value}]`` an instance of a dataclass the caller allows by name,
  built with its own constructor from its own init fields, nothing else,
- ``["j", value]`` plain JSON taken as it is (str keys, lists, scalars): a record's metrics,
  a rendered summary entry; decoding it is :func:`json.loads` alone.

Floats round-trip exactly (``repr``), NaN and infinities included; ints stay ints, bools
bools. Anything else in an entry, an unknown tag, a class not allowed, a missing or extra field,
is a :class:`ValueError`: the caller treats it as a miss and computes the value again (it
never leaves the cache, so it is no family of :mod:`artifact.errors`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _plain(v: Any) -> bool:
    """Whether ``v`` is JSON as :func:`json.loads` gives it back, unchanged."""
    if v is None or isinstance(v, bool | int | float | str):
        return True
    if type(v) is list:
        return all(_plain(x) for x in v)
    if type(v) is dict:
        return all(type(k) is str and _plain(x) for k, x in v.items())
    return False


def _enc(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if _plain(v):
        return ["j", v]
    if isinstance(v, tuple):
        return ["t", *(_enc(x) for x in v)]
    if isinstance(v, list):
        return ["l", *(_enc(x) for x in v)]
    if isinstance(v, Mapping):
        out: list[Any] = ["d"]
        for k, x in v.items():
            out += [_enc(k), _enc(x)]
        return out
    if isinstance(v, Path):
        return ["p", str(v)]
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return ["c", type(v).__name__,
                {f.name: _enc(getattr(v, f.name)) for f in dataclasses.fields(v) if f.init}]
    raise TypeError(f"cannot encode a {type(v).__name__} in a cache entry")


def dumps(value: Any) -> bytes:
    """``value`` as an entry's bytes (see the module's docstring for what it may hold)."""
    return json.dumps(_enc(value), separators=(",", ":")).encode()


def _dec(v: Any, allowed: Mapping[str, type[Any]]) -> Any:
    if not isinstance(v, list):
        if isinstance(v, dict):
            raise ValueError("an untagged object")
        return v
    if not v or not isinstance(v[0], str):
        raise ValueError("an untagged list")
    tag, rest = v[0], v[1:]
    if tag == "j" and len(rest) == 1:
        return rest[0]
    if tag == "l":
        return [_dec(x, allowed) for x in rest]
    if tag == "t":
        return tuple(_dec(x, allowed) for x in rest)
    if tag == "d" and len(rest) % 2 == 0:
        return {_dec(rest[i], allowed): _dec(rest[i + 1], allowed) for i in range(0, len(rest), 2)}
    if tag == "p" and len(rest) == 1 and isinstance(rest[0], str):
        return Path(rest[0])
    if tag == "c" and len(rest) == 2 and isinstance(rest[1], dict):
        cls = allowed.get(rest[0]) if isinstance(rest[0], str) else None
        if cls is None:
            raise ValueError(f"class {rest[0]!r} is not allowed")
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        if set(rest[1]) != names:
            raise ValueError(f"fields of {rest[0]} differ")
        return cls(**{k: _dec(x, allowed) for k, x in rest[1].items()})
    raise ValueError(f"unknown tag {tag!r}")


def loads(data: bytes, allowed: Mapping[str, type[Any]] | None = None) -> Any:
    """The value :func:`dumps` wrote; dataclasses only of ``allowed`` (name -> class).
    Raises :class:`ValueError` for anything else (torn bytes included)."""
    try:
        raw = json.loads(data)
    except ValueError as err:  # UnicodeDecodeError and JSONDecodeError included
        raise ValueError(f"not JSON: {err}") from None
    try:
        return _dec(raw, allowed or {})
    except (TypeError, RecursionError) as err:  # a constructor refusing its fields, unhashable keys
        raise ValueError(str(err)) from None
