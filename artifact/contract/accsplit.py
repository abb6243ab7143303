"""``experiments/analysis/accsplit.json``: the acceptance-split study, written by
:mod:`artifact.analysis.accsplit`, read by its tables, figure, manuscript variables and claims.

The prose of the schema is ``docs/accsplit-schema.md``; its field tables are generated from
the classes below (``python -m artifact.contract``). Every number is a :class:`Value` or an
:class:`Interval` that says whether it is ``measured`` (server counters, reply timings, arrival
times as recorded) or ``estimated`` (derived from the client's view of the stream, or a
difference of group means standing in for a quantity nobody counted).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from artifact import files
from artifact.contract import check, check_version
from artifact.errors import ArtifactError

SCHEMA_VERSION = 1

Kind = Literal["measured", "estimated"]


class Value(TypedDict):
    """One number and how it was obtained; null when it could not be computed."""

    value: float | None
    kind: Kind


class Interval(TypedDict):
    """Mean over independent units with its 95% Student-t interval (scipy.stats.t)."""

    n: Annotated[int, "units with a value"]
    mean: float | None
    sd: Annotated[float | None, "sample standard deviation; null when n < 2"]
    low: Annotated[float | None, "null when n < 2 (never a zero-width interval)"]
    high: float | None
    ci_reason: Annotated[str | None, "why there is no interval; null when there is one"]
    kind: Kind
    over: Annotated[str, "the units: runs, windows, prompts, requests"]


class WindowInfo(TypedDict):
    """One measurement window: a separate campaign invocation."""

    start_utc: Annotated[str, "first run's start, ISO 8601 UTC"]
    end_utc: Annotated[str, "last request's end, ISO 8601 UTC"]
    runs: int
    wall_s: Annotated[Value, "end minus start"]
    measure_s: Annotated[Value, "sum of the runs' measured segments (model load, warm-up out)"]
    dates: Annotated[list[str], "UTC dates of its requests"]
    no_draft_ms_per_token: Annotated[
        Interval, "the no-draft control's server time per token at batch 1, over requests: how "
        "busy the machine was (acceptance counts do not depend on it)"]


class StepRule(TypedDict):
    """The step-grouping rule (artifact.analysis.steps)."""

    floor_ms: float
    fraction: float


class PromptRef(TypedDict):
    prompt_id: str
    domain: str


class Protocol(TypedDict):
    """What was run, and when."""

    windows: Annotated[dict[str, WindowInfo], "by window id"]
    wall_s_total: Value
    dates: list[str]
    configs: list[str]
    budgets: Annotated[list[int], "answer budgets (tokens)"]
    batches: Annotated[list[int], "concurrent streams"]
    prompts: list[PromptRef]
    n_requests: int
    n_runs: int
    temperature: list[float]
    step_rule: StepRule


class ConfigRow(TypedDict):
    """One configuration, budget and batch: accepted per round pooled over its prompts."""

    config: str
    budget: int
    batch: int
    n_requests: int
    pooled_accepted_per_round: Annotated[Value, "sum accepted / sum rounds, all its requests"]
    accepted_per_round: Annotated[Interval, "pooled per run, over runs"]
    per_position: Annotated[list[Value], "accepted at draft position i per round, pooled"]
    windows: list[str]


class PromptBudgetRow(TypedDict):
    """Section 1: one configuration, prompt and budget at batch 1."""

    config: str
    prompt_id: str
    domain: str
    budget: int
    accepted_per_round: Annotated[Interval, "over runs"]
    pooled_accepted_per_round: Annotated[Value, "sum accepted / sum rounds"]
    draft_depth: Annotated[Value, "drafted tokens per round"]
    per_position: Annotated[list[Value], "accepted at draft position i per round, pooled"]
    ms_per_step: Annotated[Interval, "server decode ms per target step, over runs"]
    dates: list[str]
    windows: list[str]
    runs: list[str]


class WindowCell(TypedDict):
    """Section 2: one configuration and budget in one window, over its prompts."""

    config: str
    budget: int
    window: str
    dates: list[str]
    n_requests: int
    pooled_accepted_per_round: Value
    accepted_per_round: Annotated[Interval, "over prompts"]


class WindowDiff(TypedDict):
    """A window's accepted per round minus the first window's, paired by prompt."""

    config: str
    budget: int
    window: str
    vs: str
    diff: Annotated[Interval, "over prompts"]


class ByWindow(TypedDict):
    windows: list[str]
    cells: list[WindowCell]
    diff_from_first: list[WindowDiff]
    cell_sd_across_windows: Annotated[Value, "mean over cells of the sd across windows"]


class DateCell(TypedDict):
    config: str
    budget: int
    date: str
    n_requests: int
    pooled_accepted_per_round: Value


class ByDate(TypedDict):
    dates: list[str]
    n_dates: int
    one_date: bool
    cells: list[DateCell]


class EstimatorResult(TypedDict):
    value: Annotated[Interval, "the estimator, over requests"]
    bias: Annotated[Interval, "estimator minus the server's accepted per round, over requests"]


class ReconRow(TypedDict):
    """Section 3: one configuration at batch 1 (the no-draft control's server figure is 0)."""

    config: str
    n_requests: int
    server_accepted_per_round: Interval
    estimators: Annotated[dict[str, EstimatorResult],
                          "tps_x_gap_p50, tps_x_gap_mean, tokens_per_step"]
    steps_minus_server_steps: Annotated[Interval, "client steps minus (answer - accepted)"]


class SourceCheck(TypedDict):
    """Two sources of one per-request count: how often they disagree."""

    quantity: str
    sources: str
    n_compared: int
    n_disagree: int
    max_abs_diff: Value


class Reconciliation(TypedDict):
    rows: list[ReconRow]
    sources: list[SourceCheck]


class LengthRow(TypedDict):
    """Section 4: short-budget acceptance and, ESTIMATED, that of the later tokens."""

    config: str
    prompt_id: Annotated[str, "a prompt id, or 'all prompts'"]
    short: Value
    long: Value
    late: Annotated[Value, "(acc_L - acc_S) / (rounds_L - rounds_S) over group means"]
    late_per_run: Annotated[Interval, "the same per run, over runs"]
    n_short: int
    n_long: int
    short_is_prefix_of_long: Annotated[int, "pairs (same seed) whose short text starts the long"]
    n_pairs: int


class SegmentStats(TypedDict):
    tokens: int
    steps: Annotated[int, "client steps that start in the segment"]
    accepted_per_step: Annotated[Value, "tokens per client step - 1 (estimated)"]
    tok_per_s: Annotated[Value, "client arrival rate of the segment's tokens"]
    answers_with_segment: int


class SegmentRow(TypedDict):
    """Section 5: code vs prose inside the answers of one configuration at batch 1."""

    config: str
    n_answers: int
    n_both_segments: int
    n_single_segment: int
    validation_bias: Annotated[Interval, "estimator minus server on single-segment answers"]
    segments: Annotated[dict[str, SegmentStats], "code, prose"]


class BatchRow(TypedDict):
    """Section 6: one configuration, budget and batch inside one window."""

    config: str
    budget: int
    batch: int
    window: str
    n_requests: int
    pooled_accepted_per_round: Value
    accepted_per_round: Annotated[Interval, "over prompts"]
    per_position: list[Value]
    server_tok_per_s: Interval
    client_tok_per_s: Interval
    source: Annotated[list[str], "metrics, log or none"]


class CellRef(TypedDict):
    prompt_id: str
    budget: int


class ShiftRow(TypedDict):
    """Section 7: (A, short) -> (B, short) -> (B, long), differences within runs."""

    config: str
    from_cell: CellRef
    via_cell: CellRef
    to_cell: CellRef
    a_short: Value
    b_short: Value
    b_long: Value
    prompt_step: Interval
    length_step: Interval
    total: Interval


class AccSplit(TypedDict):
    """The root object of ``accsplit.json``."""

    schema_version: int
    protocol: Protocol
    by_config: list[ConfigRow]
    by_prompt_budget: list[PromptBudgetRow]
    by_window: ByWindow
    by_date: ByDate
    reconciliation: Reconciliation
    length_split: list[LengthRow]
    segment_split: list[SegmentRow]
    batch_split: list[BatchRow]
    shift: list[ShiftRow]
    warnings: Annotated[list[str], "sorted, one line each"]


def validate(data: Any, *, source: str, error: type[ArtifactError]) -> AccSplit:
    """``data`` as an :class:`AccSplit`, or ``error`` naming the file and the first bad field."""
    check_version(data, field="schema_version", version=SCHEMA_VERSION, source=source, error=error)
    check(AccSplit, data, source=source, error=error)
    out: AccSplit = data
    return out


def read(path: Path, *, error: type[ArtifactError]) -> AccSplit:
    """Read and validate ``accsplit.json``; every problem is one line naming the file."""
    return validate(files.read_json(path, error), source=str(path), error=error)
