"""The core study's data for render tests: the committed core runs, analysed as `doit core`
does it (the numbers are real)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from artifact import files, paths
from artifact.analysis.core import build
from artifact.contract import core as contract


@cache
def _build() -> str:
    return files.dumps_json(build(paths.CORE_RUNS, paths.CORE_PREDICTIONS))


def build_core_fixture() -> contract.Core:
    out: contract.Core = json.loads(_build())
    return out


def write_core_fixture(target: Path) -> Path:
    """The fixture as ``target`` (a core.json)."""
    target.write_text(_build(), encoding="utf-8")
    return target
