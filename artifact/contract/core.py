"""``experiments/analysis/core.json``: the core study, take three (where drafting pays on a CPU),
written by ``doit core`` (:mod:`artifact.analysis.core`), read by its table, its figure, the
manuscript and the claims ledger.

The prose of the schema is ``docs/core-schema.md``; its field tables are generated from the
classes below (``python -m artifact.contract``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from artifact import files
from artifact.contract import check, check_version
from artifact.errors import ArtifactError

SCHEMA_VERSION = 3
TARGETS = ("q4_1", "q8_0", "f16")
TASKS = ("study", "edit")
DRAFTERS = ("ngram-mod", "ngram-mod-k16", "ngram-simple", "draft-q2k")
CONTROL = "control"


class Interval(TypedDict):
    """A mean over units (prompts) and its 95 % t-interval over them."""

    mean: float
    lo: Annotated[float | None, "null below two units"]
    hi: Annotated[float | None, "null below two units"]
    n: Annotated[int, "units (prompts)"]


class Predicted(TypedDict):
    """What ``experiments/core-predictions.json`` said of the cell before it was measured."""

    predicted: Annotated[float, "predicted mean speedup over 30 new prompts"]
    lo: Annotated[float, "95 % prediction interval, low"]
    hi: Annotated[float, "95 % prediction interval, high"]
    sign: Annotated[Literal["pays", "loses"], "predicted above 1 (pays) or not (loses)"]


class Cell(TypedDict):
    """One drafter (or the control) on one target and task, against the group's no-draft run."""

    speedup: Annotated[Interval, "no-draft time per token over this run's, per prompt (passes "
                       "averaged first), mean and interval over prompts"]
    per_prompt: Annotated[dict[str, float], "by prompt id: that prompt's speedup"]
    repeats: Annotated[list[int], "the passes measured (0, 1, 2)"]
    n_requests: Annotated[int, "quiet requests read"]
    acceptance: Annotated[float | None, "accepted over drafted tokens, pooled over the cell's "
                          "quiet requests; null when nothing was drafted"]
    tokens_per_round: Annotated[float | None, "(accepted + rounds) / rounds, rounds from the "
                                "per-request /metrics deltas: tokens one verification yields"]
    drafted_prompts: Annotated[int, "prompts that received a draft in some pass"]
    undrafted: Annotated[Interval | None, "speedup over the prompts that received no draft in "
                         "any pass: what looking for a draft costs; null when there are none"]
    passes_disagree: Annotated[int, "prompts whose passes gave different text (expected 0)"]
    predicted: Annotated[Predicted | None, "null for the control"]
    sign_right: Annotated[bool | None, "measured mean on the predicted side of 1; null for "
                          "the control"]
    inside: Annotated[bool | None, "measured mean inside the prediction interval; null for "
                      "the control"]


class Group(TypedDict):
    """One (target, task): its six runs, measured as one interleave group over three passes."""

    target: Literal["q4_1", "q8_0", "f16"]
    task: Literal["study", "edit"]
    none_passes_disagree: Annotated[int, "the no-draft run's prompts whose passes differ"]
    none_requests: Annotated[int, "quiet requests read of the no-draft run"]
    cells: Annotated[dict[str, Cell | None], "by drafter, and 'control' (a second no-draft run); "
                     "null when not computable (no prompt with a quiet request in both this run "
                     "and the no-draft run)"]
    holm: Annotated[dict[str, float], "by pair 'a vs b': paired t-test over prompts of the two "
                    "drafters' per-prompt speedups, Holm-adjusted over the group's pairs"]
    separated: Annotated[list[str], "'a > b' for each pair whose adjusted p is below 0.05"]


class Cost(TypedDict):
    """A target's step costs, as the committed predictions used them (ms)."""

    c1_ms: Annotated[float, "no-draft decode step"]
    a_ms: Annotated[float, "verification round v(w) = a + b w: intercept"]
    b_ms: Annotated[float, "verification round: cost per verified token"]
    draft_round_ms: Annotated[float, "one round with the Q2_K draft at k = 3, drafting included"]


class Predictions(TypedDict):
    """Where the predictions come from."""

    file: Annotated[str, "relative to the repository"]
    sha256: Annotated[str, "of the file as read"]
    made_utc: Annotated[str, "when they were computed (before the campaign's runs; a fatal "
                        "warning when after the first run started)"]
    costs: Annotated[dict[str, Cost], "by target"]


class Core(TypedDict):
    """The whole file."""

    schema_version: Annotated[int, "3 (a reader refuses another)"]
    groups: Annotated[list[Group], "measured (target, task) groups, targets then tasks in the "
                      "campaign's order"]
    left_out_contended: Annotated[dict[str, int], "by run: contended requests left out"]
    machines: Annotated[list[str], "the CPU models and core counts its runs' fingerprints name "
                        "(config.json environment), e.g. \"AMD EPYC (2 cores)\""]
    dates: Annotated[list[str], "the days its runs started (config.json environment.start_time, "
                     "UTC)"]
    signs_right: Annotated[int, "drafter cells whose measured mean is on the predicted side of 1"]
    signs_judged: Annotated[int, "drafter cells with a prediction"]
    inside: Annotated[int, "drafter cells whose measured mean is inside the prediction interval"]
    prompts_same_text: Annotated[int, "prompts, counted once per run, whose analysed passes all "
                                 "gave the same text (greedy decoding: expected all of "
                                 "prompts_read)"]
    prompts_read: Annotated[int, "prompts, counted once per run, with an analysed request"]
    predictions: Predictions | None
    warnings: Annotated[list[str], "sorted, one line each"]


def measured(g: Group) -> dict[str, Cell]:
    """A group's computable cells (a cell that is not computable is null), in the file's order.

    >>> measured({"cells": {"control": None}})  # type: ignore[typeddict-item]
    {}
    """
    return {d: c for d, c in g["cells"].items() if c is not None}


def validate(data: Any, *, source: str, error: type[ArtifactError]) -> Core:
    """``data`` as a :class:`Core`, or ``error`` naming the file and the first bad field."""
    check_version(data, field="schema_version", version=SCHEMA_VERSION, source=source,
                  error=error)
    check(Core, data, source=source, error=error)
    out: Core = data
    for i, g in enumerate(out["groups"]):
        for name in g["cells"]:
            if name not in (CONTROL, *DRAFTERS):
                raise error(f"{source}: field 'groups.{i}.cells.{name}': not a drafter of the "
                            f"study (expected one of {CONTROL}, {', '.join(DRAFTERS)})")
    return out


def read(path: Path, *, error: type[ArtifactError]) -> Core:
    """Read and validate ``core.json``; every problem is one line naming the file."""
    return validate(files.read_json(path, error), source=str(path), error=error)
