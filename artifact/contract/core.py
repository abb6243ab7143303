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

SCHEMA_VERSION = 4
TARGETS = ("q4_1", "q8_0", "f16")
GEMMA_TARGETS = ("q4_k_m", "q8_0", "f16")  # the second model family (issue 44)
FAMILY_TARGETS = {"smollm2-135m": TARGETS, "gemma3-270m": GEMMA_TARGETS}
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


class Score(TypedDict):
    """A cell's interval score (Gneiting & Raftery 2007, alpha = 0.05): width + 40 x the miss of
    the measured mean; lower is better."""

    prediction: Annotated[float, "of the committed 95 % prediction interval"]
    reference: Annotated[float | None, "of the reference forecast 'no drafter changes "
                         "anything': the group's control interval; null without a control"]


class Pilot(TypedDict):
    """The pilot (prompts) that would have made the prediction interval exclude 1, by the
    predictions file's formula (half = t(0.975, n - 1) sqrt(var_boot + s^2/new_prompts),
    var_boot shrinking as 1/n, the point and s held)."""

    n_pilot: Annotated[int | None, "the smallest such pilot; null when none can (why)"]
    why: Annotated[str | None, "why no pilot can; null when one can"]
    var_boot: Annotated[float | None, "the bootstrap variance recovered from the committed "
                        "half-width"]
    s: Annotated[float | None, "sd of the per-prompt predictions"]
    floor_half: Annotated[float | None, "1.96 s / sqrt(new_prompts): the half-width of an "
                          "infinite pilot"]
    distance_to_1: Annotated[float | None, "|predicted - 1|"]


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
    sign_verdict: Annotated[Literal["right", "wrong", "undecided"] | None, "from the measured "
                            "95 % interval over prompts: right when it excludes 1 on the "
                            "predicted side, wrong on the other, undecided when it contains 1; "
                            "null for the control"]
    sign_right: Annotated[bool | None, "the point mean alone on the predicted side of 1 (weak: "
                          "see sign_verdict); null for the control"]
    inside_weak: Annotated[bool | None, "measured mean inside the prediction interval: weak, "
                           "the n-gram intervals are wide and most contain 1 (see "
                           "interval_score); null for the control"]
    interval_score: Annotated[Score | None, "null for the control"]
    pilot_needed: Annotated[Pilot | None, "null for the control"]
    posthoc: Annotated[dict[str, Any] | None, "a post-hoc prediction (cost model v3), labelled "
                       "so and never replacing the committed one; null when none is given"]


class Group(TypedDict):
    """One (target, task): its six runs, measured as one interleave group over three passes."""

    target: Annotated[str, "one of its family's targets"]
    task: Literal["study", "edit"]
    none_passes_disagree: Annotated[int, "the no-draft run's prompts whose passes differ"]
    none_requests: Annotated[int, "quiet requests read of the no-draft run"]
    cells: Annotated[dict[str, Cell | None], "by drafter, and 'control' (a second no-draft run); "
                     "null when not computable (no prompt with a quiet request in both this run "
                     "and the no-draft run)"]
    p_raw: Annotated[dict[str, float], "by pair 'a vs b': paired t-test over prompts of the "
                     "two drafters' per-prompt speedups, unadjusted"]
    p_holm: Annotated[dict[str, float], "by pair: p Holm-adjusted over one family of every "
                      "pair of every group of the study (holm_tests)"]
    separated: Annotated[list[str], "'a > b' for each pair whose study-wide adjusted p is below "
                         "0.05"]


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


class Tally(TypedDict):
    """Sign verdicts of a drafter family's judged cells."""

    right: int
    wrong: int
    undecided: int


class ScoreMean(TypedDict):
    """Mean interval scores of a drafter family's judged cells with a control."""

    prediction: Annotated[float | None, "mean score of the prediction intervals"]
    reference: Annotated[float | None, "mean score of the reference (the control interval)"]
    n: Annotated[int, "cells scored"]
    better: Annotated[Literal["prediction", "reference", "tie"] | None, "the lower mean"]


class Offset(TypedDict):
    """The control's speedup pooled over prompts."""

    mean: float | None
    lo: Annotated[float | None, "95 % t-interval over prompts, low"]
    hi: Annotated[float | None, "95 % t-interval over prompts, high"]
    n: Annotated[int, "prompts"]
    p_vs_1: Annotated[float | None, "one-sample t-test over prompts against 1"]
    unit: Annotated[str, "what one unit is"]


class SignTest(TypedDict):
    """Group control means above 1, two-sided binomial test at one half."""

    above: int
    n: Annotated[int, "groups whose control mean is not exactly 1"]
    p: float | None


class OrderSide(TypedDict):
    """The requests of one order."""

    mean: Annotated[float | None, "mean ratio none / control"]
    n: Annotated[int, "(group, prompt, pass) units"]


class OrderTest(TypedDict):
    """Does the control gain from running before or after the no-draft request of its round?"""

    control_first: OrderSide
    control_after: OrderSide
    difference: Annotated[float | None, "control_first minus control_after"]
    test: str
    p: float | None


class PlaceTest(TypedDict):
    """The ratio none / control against the control's place minus the no-draft run's."""

    slope: Annotated[float | None, "change of the ratio per place (round_pos)"]
    p: float | None
    n: int
    test: str


class Control(TypedDict):
    """The control offset: the second no-draft run against the first (artifact.analysis.
    core_control)."""

    group_means: Annotated[dict[str, float], "by group '<target>-<task>': the control's mean "
                           "speedup"]
    pooled: Offset
    sign_test: SignTest
    order: OrderTest
    place: PlaceTest


class Study(TypedDict):
    """One model family's groups and the verdicts on its predictions."""

    groups: Annotated[list[Group], "measured (target, task) groups, targets then tasks in the "
                      "campaign's order"]
    left_out_contended: Annotated[dict[str, int], "by run: contended requests left out"]
    signs_right: Annotated[int, "drafter cells whose measured mean (the point alone) is on the "
                           "predicted side of 1 (weak: see sign_verdicts)"]
    signs_judged: Annotated[int, "drafter cells with a prediction"]
    sign_verdicts: Annotated[dict[str, Tally], "by drafter family ('n-gram': ngram-mod, "
                             "ngram-mod-k16, ngram-simple; 'draft model': draft-q2k) and 'all'"]
    holm_tests: Annotated[int, "pairwise tests in the one Holm family (every group's pairs)"]
    inside_weak: Annotated[int, "drafter cells whose measured mean is inside the prediction "
                           "interval: weak, the intervals are wide (see interval_scores)"]
    interval_scores: Annotated[dict[str, ScoreMean], "by drafter family and 'all'"]
    control: Annotated[Control | None, "null when no group has a computable control"]
    predictions: Predictions | None


class Core(Study):
    """The whole file: the first model family's study at the top, the others under
    ``families``."""

    schema_version: Annotated[int, "4 (a reader refuses another)"]
    family: Annotated[str, "the model family at the top of the file (smollm2-135m)"]
    families: Annotated[dict[str, Study], "other model families (gemma3-270m), each once its "
                        "runs folder holds a measured group; empty until then"]
    machines: Annotated[list[str], "the CPU models and core counts its runs' fingerprints name "
                        "(config.json environment), e.g. \"AMD EPYC (2 cores)\""]
    dates: Annotated[list[str], "the days its runs started (config.json environment.start_time, "
                     "UTC)"]
    prompts_same_text: Annotated[int, "prompts, counted once per run, whose analysed passes all "
                                 "gave the same text (greedy decoding: expected all of "
                                 "prompts_read)"]
    prompts_read: Annotated[int, "prompts, counted once per run, with an analysed request"]
    warnings: Annotated[list[str], "sorted, one line each (another family's prefixed with its "
                        "name)"]


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
    for k in (out["family"], *out["families"]):
        if k not in FAMILY_TARGETS:
            raise error(f"{source}: model family {k!r}: expected one of "
                        f"{', '.join(FAMILY_TARGETS)}")
    studies: list[tuple[str, Study, tuple[str, ...]]] = [("", out, FAMILY_TARGETS[out["family"]])]
    studies += [(f"families.{k}.", v, FAMILY_TARGETS[k]) for k, v in out["families"].items()]
    for at, study, targets in studies:
        for i, g in enumerate(study["groups"]):
            if g["target"] not in targets:
                raise error(f"{source}: field '{at}groups.{i}.target': expected one of "
                            f"{', '.join(targets)}, got {g['target']!r}")
            for name in g["cells"]:
                if name not in (CONTROL, *DRAFTERS):
                    raise error(f"{source}: field '{at}groups.{i}.cells.{name}': not a drafter "
                                f"of the study (expected one of {CONTROL}, {', '.join(DRAFTERS)})")
    return out


def read(path: Path, *, error: type[ArtifactError]) -> Core:
    """Read and validate ``core.json``; every problem is one line naming the file."""
    return validate(files.read_json(path, error), source=str(path), error=error)
