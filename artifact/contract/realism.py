"""``experiments/analysis/realism.json``: the workload-realism study, take two (issue 17),
written by ``doit realism``, read by its tables, figure, the manuscript and the claims ledger.

Every interval is a percentile bootstrap over **sessions** (whole sessions resampled, with the
same draw for every server, side and bin, so that all comparisons are paired by session); a
bin with fewer than ``parameters.min_sessions_interval`` sessions gets no interval (null).

The prose of the schema is ``docs/realism-schema.md``; its field tables are generated from the
classes below (``python -m artifact.contract``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

from artifact import files
from artifact.contract import check, check_version
from artifact.errors import ArtifactError

SCHEMA_VERSION = 2
BINS = ("00-01", "02-03", "04-05")  # turn bins (0-based turn index)
ALL = "all"
METRICS = ("ttft_ms", "tpot_ms", "e2e_ms")
SPEEDUPS = ("speedup_tpot", "speedup_e2e")


class Interval(TypedDict):
    """A value and its session-bootstrap interval."""

    value: Annotated[float | None, "the point estimate; null when a side has no value"]
    lo: Annotated[float | None, "interval low; null with too few sessions"]
    hi: Annotated[float | None, "interval high; null with too few sessions"]


class SideBin(TypedDict):
    """One side of one server in one turn bin (or over all turns)."""

    n_sessions: int
    n_turns: int
    ttft_ms: Annotated[Interval, "median time to first token, client side"]
    tpot_ms: Annotated[Interval, "median (E2E - TTFT) / (output tokens - 1)"]
    e2e_ms: Annotated[Interval, "median end-to-end latency, client side"]
    acceptance: Annotated[Interval, "accepted over drafted tokens (server timings); null "
                          "values when nothing was drafted"]
    drafted_turns: Annotated[Interval, "share of turns that received a draft"]
    accepted_per_turn: Annotated[float | None, "mean accepted draft tokens per turn"]
    prompt_chars_per_token: Annotated[float | None, "sum of prompt characters over sum of "
                                      "prompt tokens"]
    prompt_tokens_mean: float | None
    cached_tokens_mean: Annotated[float | None, "prompt tokens reused from the slot (cache_n)"]
    output_tokens_mean: float | None


class Contention(TypedDict):
    """Foreign CPU (cores) over the run's turns (each turn's own window)."""

    n_turns: int
    median: float | None
    max: float | None
    n_contended: Annotated[int, "turns above the threshold"]
    threshold_cores: float


class Server(TypedDict):
    """One run: one server configuration with every side of every session."""

    run_id: str
    drafter: str
    k: int | None
    label: Annotated[str, "the drafter in words"]
    machine: Annotated[str, "CPU model and cores (config.json environment)"]
    binary_sha256: Annotated[str, "of the llama-server that measured"]
    complete: bool
    n_errors: int
    duration_s: Annotated[float | None, "measuring wall time"]
    first_unix_s: Annotated[int | None, "when the first turn was sent (Unix seconds)"]
    last_unix_s: Annotated[int | None, "when the last turn was sent (Unix seconds)"]
    utc_date: str
    contention: Contention | None
    sides: Annotated[dict[str, dict[str, SideBin]], "by side, by bin and 'all'"]
    cache_turn0_max: Annotated[dict[str, int], "by side: the most prompt tokens any first turn "
                               "reused (the template's opening only, when no side reuses "
                               "another side's cache)"]
    cache_turn0_mean: Annotated[dict[str, float | None], "by side: prompt tokens a first turn "
                                "reused, mean (a shared prefix left in the slot by the previous "
                                "session shows here)"]
    real_cache_equal: Annotated[float | None, "share of REAL-B turns that reused exactly as many "
                                "tokens as the same REAL-A turn"]


class Gap(TypedDict):
    """A synthetic condition (or REAL-B) against REAL-A on one server, in percent."""

    signed: Annotated[Interval, "100 (side / REAL-A - 1)"]
    symmetric: Annotated[Interval, "100 (max(a/b, b/a) - 1): the size of the gap either way"]


class Comparison(TypedDict):
    """One side against REAL-A on one server, for every metric, by bin and 'all'."""

    server: str
    side: Annotated[str, "real-b (the noise floor) or synthetic-<condition>"]
    metrics: Annotated[dict[str, dict[str, Gap]], "by metric (latencies, and the speedups on "
                       "drafter servers), by bin and 'all'"]


class Headline(TypedDict):
    """How far a synthetic condition's predicted speedup and TPOT are from REAL's (all turns)."""

    server: str
    condition: str
    speedup_real: Annotated[Interval, "no-draft TPOT over drafter TPOT, REAL-A"]
    speedup_synthetic: Interval
    speedup_gap: Gap
    speedup_floor: Gap
    tpot_gap: Gap
    tpot_floor: Gap
    e2e_gap: Gap
    e2e_floor: Gap
    beyond_floor: Annotated[dict[str, bool | None], "speedup, tpot, e2e: |gap| above the "
                            "floor's symmetric point and the interval excludes 0"]


class OrderEffect(TypedDict):
    """Whichever REAL replay of a session ran second against the first (paired by session)."""

    server: str
    tpot_pct: Annotated[Interval, "100 (median TPOT second / first - 1)"]
    acceptance_diff: Annotated[Interval, "acceptance second - first (pooled over turns)"]


class Parameters(TypedDict):
    """Settings that shape the numbers."""

    bootstrap_resamples: int
    bootstrap_seed: int
    confidence: float
    bins: list[str]
    min_sessions_interval: int
    mc_batches: Annotated[int, "batches the resamples are split into for the Monte-Carlo error"]


class Protocol(TypedDict):
    """How the runs were measured (shared by all of them)."""

    session_set: str
    clip_chars: Annotated[int | None, "transcript rule: each message's first N characters"]
    max_turns: Annotated[int | None, "turns kept per session, at most"]
    code_share: Annotated[float | None, "the set keeps only sessions with a code fence in at "
                          "least this share of their kept turns (null: no such rule)"]
    n_sessions: int
    turns_per_side: int
    sides: list[str]
    n_predict_cap: int
    ctx_size: int
    threads: int
    concurrency: int
    temperature: float
    chars_per_token_real: float | None
    chars_per_token: Annotated[dict[str, float | None], "by synthetic side, from the plan"]
    prefix_tokens_max: Annotated[dict[str, int], "by synthetic side, from the plan: the largest "
                                 "shared system prompt a session got (0: none)"]


class Stratum(TypedDict):
    """A further stratum: the runs of another session set or another concurrency, analysed on
    their own (their own sessions, bootstrap and no-draft server), with the main study's fields."""

    protocol: Protocol
    servers: Annotated[list[Server], "in the order they were measured"]
    comparisons: list[Comparison]
    headline: list[Headline]
    order_effect: list[OrderEffect]
    mc_error_max: Annotated[float | None, "as the main study's"]


class Realism(TypedDict):
    """The whole file: the main stratum (one stream, the session set most servers ran) at the
    top level, the others under ``strata``."""

    schema_version: Annotated[int, "2 (a reader refuses another)"]
    protocol: Protocol
    servers: Annotated[list[Server], "in the order they were measured"]
    comparisons: list[Comparison]
    headline: list[Headline]
    order_effect: list[OrderEffect]
    mc_error_max: Annotated[float | None, "largest Monte-Carlo standard error of an interval "
                            "endpoint of the headline, in the endpoint's unit"]
    strata: Annotated[list[Stratum], "the other strata, by concurrency, then session set"]
    parameters: Parameters
    warnings: Annotated[list[str], "sorted, one line each"]


def validate(data: Any, *, source: str, error: type[ArtifactError]) -> Realism:
    """``data`` as a :class:`Realism`, or ``error`` naming the file and the first bad field."""
    check_version(data, field="schema_version", version=SCHEMA_VERSION, source=source, error=error)
    check(Realism, data, source=source, error=error)
    out: Realism = data
    return out


def read(path: Path, *, error: type[ArtifactError]) -> Realism:
    """Read and validate ``realism.json``; every problem is one line naming the file."""
    return validate(files.read_json(path, error), source=str(path), error=error)
