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

SCHEMA_VERSION = 3

Kind = Literal["measured", "estimated"]


class Value(TypedDict):
    """One number and how it was obtained; null when it could not be computed."""

    value: float | None
    kind: Kind


Method = Literal["t", "t-ratio"]


class Interval(TypedDict):
    """A statistic over independent units with its 95% interval (Student-t, scipy.stats.t)."""

    n: Annotated[int, "units with a value"]
    mean: Annotated[float | None, "the mean of the units' values (t) or the pooled ratio "
                    "(t-ratio)"]
    sd: Annotated[float | None, "sample standard deviation of the units' values (t-ratio: of "
                  "the linearised values); null when n < 2"]
    low: Annotated[float | None, "null when n < 3 (never a zero-width interval); cut to the "
                   "quantity's range (accepted per round: [0, k], their differences: [-k, k], "
                   "times and speeds: above 0), null when it would cover all of it"]
    high: float | None
    ci_reason: Annotated[str | None, "why there is no interval; null when there is one"]
    kind: Kind
    over: Annotated[str, "the units, one value each: prompts (a prompt's requests reduced to "
                    "one value first), windows, requests"]
    method: Annotated[Method, "t: Student-t over the units' values; t-ratio: sum a / sum b, "
                      "delta method with the units as clusters, t with n - 1 df"]


class Friedman(TypedDict):
    """Friedman's omnibus test over a complete block design (blocks x treatments)."""

    test: Literal["friedman"]
    n_blocks: Annotated[int, "blocks (prompts with a value in every treatment)"]
    n_treatments: Annotated[int, "treatments (windows)"]
    statistic: Annotated[float | None, "chi-square, ties corrected"]
    df: int | None
    p: float | None
    kendall_w: Annotated[float | None, "chi2 / (n (k - 1)), in [0, 1]"]
    reason: Annotated[str | None, "why there is no test; null when there is one"]


class WindowLoad(TypedDict):
    """Whether a window's timings are quiet: from its contention record where it has one,
    else from the study's declaration (``artifact.analysis.accsplit.DECLARED_LOAD``)."""

    quiet: Annotated[bool, "its timing enters timing statistics (contended requests left out)"]
    source: Annotated[Literal["record", "declared", "none"],
                      "record: per-request contention; declared: no record, a committed "
                      "statement with its reason; none: neither (not quiet)"]
    reason: str
    n_requests: int
    n_contended: Annotated[int, "requests the record marks contended (left out of timing)"]
    other_machine: Annotated[bool, "quiet by its load, but measured on another machine than "
                             "the windows whose timings are pooled (so not quiet here)"]
    foreign_cores_median: Annotated[float | None, "median over its requests of the CPU used "
                                    "by everything else during the request (cores); null "
                                    "without a contention record"]
    foreign_cores_max: Annotated[float | None, "the largest such value of one request (cores); "
                                 "null without a contention record"]


class WindowInfo(TypedDict):
    """One measurement window: a separate campaign invocation."""

    start_utc: Annotated[str, "first run's start, ISO 8601 UTC"]
    end_utc: Annotated[str, "last request's end, ISO 8601 UTC"]
    runs: int
    wall_s: Annotated[Value, "end minus start"]
    measure_s: Annotated[Value, "sum of the runs' measured segments (model load, warm-up out)"]
    dates: Annotated[list[str], "UTC dates of its requests"]
    no_draft_ms_per_token: Annotated[
        Interval, "the no-draft control's server time per token at batch 1, over requests (all "
        "of them, contended ones included): how busy the machine was (acceptance counts do not "
        "depend on it)"]
    load: Annotated[WindowLoad, "whether its timings are used"]
    machine: Annotated[str, "the CPU model and core count its runs' fingerprints name (several "
                       "joined by '; ' if they differ)"]
    binary_sha256: Annotated[list[str], "the llama-server binaries its runs used (sha256)"]


class SetAside(TypedDict):
    """A run left out of the statistics, with the reason."""

    run_id: str
    reason: str
    condition: Annotated[str, "the run's condition in words (drafter, batch, answer budget, "
                         "window)"]


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
    n_requests: Annotated[int, "requests analysed (set-aside runs out)"]
    n_runs: Annotated[int, "runs read, set-aside ones included"]
    set_aside: Annotated[list[SetAside], "runs left out of every statistic"]
    timing_windows: Annotated[list[str], "windows whose timings are quiet (see load)"]
    temperature: list[float]
    step_rule: StepRule


class ConfigRow(TypedDict):
    """One configuration, budget and batch: accepted per round pooled over its prompts."""

    config: str
    budget: int
    batch: int
    n_requests: int
    pooled_accepted_per_round: Annotated[Value, "sum accepted / sum rounds, all its requests"]
    pooled_over_prompts: Annotated[Interval, "the same pooled ratio, its interval over prompts "
                                   "(t-ratio)"]
    accepted_per_round: Annotated[Interval, "pooled per window, over windows"]
    per_position: Annotated[list[Value], "accepted at draft position i per round, pooled"]
    windows: list[str]


class PromptBudgetRow(TypedDict):
    """Section 1: one configuration, prompt and budget at batch 1."""

    config: str
    prompt_id: str
    domain: str
    budget: int
    accepted_per_round: Annotated[Interval, "over windows (one request per window)"]
    pooled_accepted_per_round: Annotated[Value, "sum accepted / sum rounds"]
    draft_depth: Annotated[Value, "drafted tokens per round"]
    per_position: Annotated[list[Value], "accepted at draft position i per round, pooled"]
    ms_per_step: Annotated[Interval, "server decode ms per target step, over quiet windows "
                           "(uncontended requests)"]
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


class WindowPair(TypedDict):
    """Window b minus window a, accepted per round paired by prompt (one of a family)."""

    a: str
    b: str
    diff: Annotated[Interval, "b - a per prompt, over prompts (95%, not adjusted)"]
    p: Annotated[float | None, "paired t-test, two-sided"]
    p_holm: Annotated[float | None, "Holm-adjusted over the family's pairs"]
    differs: Annotated[bool, "p_holm < 0.05"]


class WindowFamily(TypedDict):
    """All windows of one configuration and budget at batch 1, compared as a family on the
    per-request accepted per round (prompts x windows, one request per cell)."""

    config: str
    budget: int
    windows: list[str]
    prompts: Annotated[list[str], "prompts with a value in every window (the blocks)"]
    omnibus: Friedman
    pairs: Annotated[list[WindowPair], "every pair of windows, Holm-corrected"]
    n_differ: Annotated[int, "pairs with p_holm < 0.05"]


class ByWindow(TypedDict):
    windows: list[str]
    cells: list[WindowCell]
    families: list[WindowFamily]
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
    value: Annotated[Interval, "the estimator, per-prompt means over prompts"]
    bias: Annotated[Interval, "estimator minus the server's accepted per round, per-prompt "
                    "means over prompts"]


class ReconRow(TypedDict):
    """Section 3: one configuration at batch 1, quiet requests only (the no-draft control's
    server figure is 0)."""

    config: str
    n_requests: Annotated[int, "quiet requests used"]
    n_not_quiet: Annotated[int, "requests left out: not-quiet windows or contended"]
    windows: Annotated[list[str], "windows the requests come from"]
    server_accepted_per_round: Annotated[Interval, "per-prompt means over prompts"]
    estimators: Annotated[dict[str, EstimatorResult],
                          "tps_x_gap_p50, tps_x_gap_mean, tokens_per_step"]
    steps_minus_server_steps: Annotated[Interval, "client steps minus (answer - accepted), "
                                        "per-prompt means over prompts"]


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
    """Section 4: one configuration, short and long budget at batch 1, from the windows that
    ran both (matched): short-budget acceptance and, ESTIMATED, that of the later tokens."""

    config: str
    short_budget: int
    long_budget: int
    windows: Annotated[list[str], "the matched windows"]
    k: Annotated[int, "draft depth: accepted per round lies in [0, k]"]
    short: Annotated[Interval, "sum accepted / sum rounds at the short budget, over prompts "
                     "(t-ratio)"]
    long: Annotated[Interval, "the same at the long budget"]
    late: Annotated[Value, "(sum acc_L - sum acc_S) / (sum rounds_L - sum rounds_S), all "
                    "matched requests, cut to [0, k]"]
    late_by_prompt: Annotated[Interval, "per prompt the same from its pooled counts, cut to "
                              "[0, k]; mean over prompts, interval cut to [0, k]"]
    n_prompts_cut: Annotated[int, "prompts whose late value was cut to [0, k]"]
    n_prompts_undefined: Annotated[int, "prompts with no more rounds at the long budget"]
    interval_cut: Annotated[bool, "the interval over prompts reached past [0, k] and was cut"]
    n_short: int
    n_long: int
    short_is_prefix_of_long: Annotated[int, "pairs (same seed) whose short text starts the long"]
    n_pairs: int


class FigureRow(TypedDict):
    """Section 4b: the ways of summing one quantity (accepted per round), side by side, for
    one configuration and budget at batch 1 over the same requests."""

    config: str
    budget: int
    n_requests: int
    n_prompts: int
    n_windows: int
    pooled: Annotated[Interval, "sum accepted / sum rounds over all requests (t-ratio over "
                      "prompts): the headline"]
    mean_of_windows: Annotated[Interval, "each window's pooled ratio, mean over windows"]
    mean_of_prompts: Annotated[Interval, "each prompt's pooled ratio, mean over prompts"]
    mean_of_requests: Annotated[Interval, "each request's ratio, mean over requests; the "
                                "interval over prompts (per-prompt means)"]


class AcceptanceFigures(TypedDict):
    headline: Annotated[Literal["pooled"], "the figure the text reports"]
    definitions: Annotated[dict[str, str], "by figure name"]
    rows: list[FigureRow]


class SegmentStats(TypedDict):
    tokens: int
    steps: Annotated[int, "client steps that start in the segment"]
    accepted_per_step: Annotated[Value, "tokens per client step - 1 (estimated)"]
    tok_per_s: Annotated[Value, "client arrival rate of the segment's tokens"]
    answers_with_segment: int


class SegmentRow(TypedDict):
    """Section 5: code vs prose inside the answers of one configuration at batch 1 (quiet
    requests only: client steps come from arrival times)."""

    config: str
    n_answers: int
    n_both_segments: int
    n_single_segment: int
    validation_bias: Annotated[Interval, "estimator minus server on single-segment answers, "
                               "per-prompt means over prompts"]
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
    quiet: Annotated[bool, "the window's timings are quiet; else the tok/s are null"]
    server_tok_per_s: Annotated[Interval, "uncontended requests, over prompts"]
    client_tok_per_s: Annotated[Interval, "uncontended requests, over prompts"]
    source: Annotated[list[str], "metrics, log or none"]


class BatchContrast(TypedDict):
    """Batch b against batch 1 of one configuration and budget inside the same window."""

    config: str
    budget: int
    window: str
    batch: int
    acceptance_diff: Annotated[Interval, "accepted per round, batch b - batch 1, paired by "
                               "prompt, over prompts"]
    has_control: Annotated[bool, "the window ran the no-draft control at batch b"]
    speedup: Annotated[Interval | None, "server tok/s over the no-draft control's at batch b, "
                       "per prompt, over prompts (quiet windows; null without a control)"]
    speedup_b1: Annotated[Interval | None, "the same at batch 1 in the window"]
    note: str


class CellRef(TypedDict):
    prompt_id: str
    budget: int


class ShiftRow(TypedDict):
    """Section 7: (A, short) -> (B, short) -> (B, long), differences within a window."""

    config: str
    from_cell: CellRef
    via_cell: CellRef
    to_cell: CellRef
    a_short: Value
    b_short: Value
    b_long: Value
    windows: Annotated[list[str], "windows with all three cells"]
    prompt_step: Annotated[Interval, "differences within a window, over windows"]
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
    acceptance_figures: AcceptanceFigures
    segment_split: list[SegmentRow]
    batch_split: list[BatchRow]
    batch_contrasts: list[BatchContrast]
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
