"""A run's own entries of ``summary.json``, made plain, checked and rendered once, when the run
is reduced, so that a summary of a thousand cached runs splices their text instead of rounding,
checking and encoding every entry again.

A :class:`Part` is one entry (``runs.<id>``, ``final.<id>`` or ``positions.<id>``) as it
stands in the file: its plain JSON value (:func:`artifact.files.to_plain`), the fields that were
not computable, whether it fits the contract, and its text at the depth it has in the file.
:func:`render` writes a summary with those texts in place: the same bytes as
:func:`artifact.files.dumps_json` of the whole object (a test checks it), which with an indent
runs Python's own JSON encoder, not the C one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from artifact import contract, files

# summary.json's sections that hold one entry per run, each from that run alone
SECTIONS = ("runs", "final", "positions")
_DEPTH = 2  # a section's entry lies two levels into the file: {"section": {"<id>": entry}}


@dataclass(frozen=True)
class Part:
    """One run's entry in one section (see the module's docstring)."""

    value: Any  # plain JSON data, floats rounded
    nan_paths: tuple[str, ...]  # dotted paths of the values written as null, not computable
    fits: bool  # whether ``value`` fits the section's entry type of the contract
    text: str  # ``value`` as canonical JSON at depth two of the file, without a newline at the end


def _indented(value: Any, depth: int) -> str:
    """``value`` as :func:`artifact.files.dumps_json` writes it ``depth`` levels into an object
    (a JSON string holds no raw newline, so every newline is the encoder's own)."""
    return files.dumps_json(value)[:-1].replace("\n", "\n" + "  " * depth)


def make(section: str, run_id: str, obj: Any, tp: Any) -> Part:
    """The part of ``obj``, the entry of ``run_id`` in ``section`` whose type is ``tp``."""
    nan_paths: list[str] = []
    value = files.to_plain(obj, f"{section}.{run_id}", nan_paths)
    return Part(value=value, nan_paths=tuple(nan_paths), fits=contract.fits(tp, value),
                text=_indented(value, _DEPTH))


def render(summary: Mapping[str, Any], parts: Mapping[str, Mapping[str, Part]]) -> str:
    """The canonical text of ``summary`` (:func:`artifact.files.dumps_json`), each entry of
    ``parts`` (section -> run id -> part) spliced in as rendered, where the summary holds that
    very part's value (anything else is encoded)."""
    items = []
    for key in sorted(summary):
        value, given = summary[key], parts.get(key, {})
        if isinstance(value, dict) and value and given:
            entries = []
            for rid in sorted(value):
                part = given.get(rid)
                text = (part.text if part is not None and part.value is value[rid]
                        else _indented(value[rid], _DEPTH))
                entries.append(f"{'  ' * _DEPTH}{json.dumps(rid)}: {text}")
            text = "{\n" + ",\n".join(entries) + "\n  }"
        else:
            text = _indented(value, 1)
        items.append(f"  {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(items) + "\n}\n" if items else "{}\n"
