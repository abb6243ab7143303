"""Shared fixtures of the reproduction tests."""

from __future__ import annotations

import json

import pytest

from artifact import paths, records
from artifact.reproduce import execute
from artifact.workloads.prompts import Prompt


def _committed_prompts(name: str) -> list[Prompt]:
    """The ids and domains a committed run sent from prompt set ``name`` (no text needed)."""
    seen: dict[str, str] = {}
    for results in sorted(paths.EXPERIMENTS.glob(f"runs*/*/{records.RESULTS}")):
        config = results.parent / records.CONFIG
        drawn = json.loads(config.read_text()).get("prompt_set") if config.is_file() else None
        if not isinstance(drawn, dict) or drawn.get("name") != name:
            continue
        for line in results.read_text().splitlines():
            row = json.loads(line)
            seen.setdefault(str(row["prompt_id"]), str(row["domain"]))
        return [Prompt(id=i, domain=d, source="committed", text=i, sha256="")
                for i, d in seen.items()]
    raise LookupError(f"no committed run drew from prompt set {name!r}")


@pytest.fixture
def prompts_without_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean clone has no drawn prompt set and a test without a server no model to draw one
    with: the plan reads the committed runs' prompt ids instead (CI failed on exactly this)."""
    monkeypatch.setattr(execute, "ensure_prompt_set",
                        lambda name, _model: (_committed_prompts(name), "committed"))
