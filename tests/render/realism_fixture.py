"""The realism study's data for render tests: the committed realism runs, analysed with a small
bootstrap (the numbers are real; only the intervals are drawn from fewer resamples), the
replicated stratum's process components included."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from artifact import files, paths
from artifact.analysis.params import Bootstrap
from artifact.analysis.realism import build_realism
from artifact.contract import realism as contract


@cache
def _build() -> str:
    return files.dumps_json(build_realism(paths.REALISM_RUNS,
                                          bootstrap=Bootstrap(resamples=300, seed=3),
                                          process_root=paths.PROCESS_RUNS))


def build_realism_fixture() -> contract.Realism:
    import json

    out: contract.Realism = json.loads(_build())
    return out


def write_realism_fixture(target: Path) -> Path:
    """The fixture as ``target`` (a realism.json)."""
    target.write_text(_build(), encoding="utf-8")
    return target
