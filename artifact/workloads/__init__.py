"""Workload planning: what a run sends, built below the campaign and handed to it as a plan.

This package is the interface; the campaign imports nothing else of it. Modules:
``prompts`` (prompt sets from installed datasets), ``sessions`` (session sets: the dataset, id
locks, clipping, context fit), ``synthetic`` (token-matched synthetic twins and their
calibration), ``sessionplan`` (a workload run's sides and order), ``roundplan`` (the rounds of a
group of per-side deployments), ``runplan`` (the entry point: :func:`plan`). It imports nothing
from the campaign, the analysis or the renderer; a tokenizer that talks to a server is the
caller's, handed in (:class:`Tokenizer`).

``python -m artifact.workloads plan <campaign.toml> --run ID`` prints a run's plan.

Each name is imported from its module when first used (PEP 562): ``from artifact.workloads
import prompts``, as the paper build's task list does, then loads that module alone, not the
whole planner (a no-op ``doit`` paid about 30 ms for it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from artifact.workloads.prompts import Prompt, PromptSetError, ensure_prompt_set
    from artifact.workloads.roundplan import Round, round_servers, rounds
    from artifact.workloads.runplan import (
        Inputs,
        OpenTokenizer,
        Request,
        RunPlan,
        inputs,
        plan,
        round_order,
    )
    from artifact.workloads.sessionplan import (
        PlannedSession,
        PlannedTurn,
        session_from_json,
        session_to_json,
    )
    from artifact.workloads.sessions import SessionError
    from artifact.workloads.synthetic import SynthError, Tokenizer

_WHERE = {
    "Inputs": "runplan",
    "OpenTokenizer": "runplan",
    "PlannedSession": "sessionplan",
    "PlannedTurn": "sessionplan",
    "Prompt": "prompts",
    "PromptSetError": "prompts",
    "Request": "runplan",
    "Round": "roundplan",
    "RunPlan": "runplan",
    "SessionError": "sessions",
    "SynthError": "synthetic",
    "Tokenizer": "synthetic",
    "ensure_prompt_set": "prompts",
    "inputs": "runplan",
    "plan": "runplan",
    "round_order": "runplan",
    "round_servers": "roundplan",
    "rounds": "roundplan",
    "session_from_json": "sessionplan",
    "session_to_json": "sessionplan",
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Inputs",
    "OpenTokenizer",
    "PlannedSession",
    "PlannedTurn",
    "Prompt",
    "PromptSetError",
    "Request",
    "Round",
    "RunPlan",
    "SessionError",
    "SynthError",
    "Tokenizer",
    "ensure_prompt_set",
    "inputs",
    "plan",
    "round_order",
    "round_servers",
    "rounds",
    "session_from_json",
    "session_to_json",
]
