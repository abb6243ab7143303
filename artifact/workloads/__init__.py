"""Workload planning: what a run sends, built below the campaign and handed to it as a plan.

This package is the interface; the campaign imports nothing else of it. Modules:
``prompts`` (prompt sets from installed datasets), ``sessions`` (session sets: the dataset, id
locks, clipping, context fit), ``synthetic`` (token-matched synthetic twins and their
calibration), ``sessionplan`` (a workload run's sides and order), ``roundplan`` (the rounds of a
group of per-side deployments), ``runplan`` (the entry point: :func:`plan`). It imports nothing
from the campaign, the analysis or the renderer; a tokenizer that talks to a server is the
caller's, handed in (:class:`Tokenizer`).

``python -m artifact.workloads plan <campaign.toml> --run ID`` prints a run's plan.
"""

from __future__ import annotations

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
