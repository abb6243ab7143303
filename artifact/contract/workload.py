"""``experiments/analysis/workload.json``: the workload-realism study, written by
``doit workload``, read by its tables, figure, the manuscript and the claims ledger.

The prose of the schema is ``docs/workload-schema.md``; its field tables are generated from the
classes below (``python -m artifact.contract``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

from artifact import files
from artifact.contract import check, check_version
from artifact.errors import ArtifactError

SCHEMA_VERSION = 1
BINS = ("00-04", "05-09", "10-19", "20-29", "30+")  # turn bins (0-based turn index)
METRICS = ("ttft_ms", "tpot_ms", "e2e_ms")


class Interval(TypedDict):
    """A percent difference and its session-bootstrap interval."""

    pct: Annotated[float | None, "100 (b / a - 1); null when a side has no value"]
    lo: Annotated[float | None, "interval low; null with fewer than 2 sessions"]
    hi: Annotated[float | None, "interval high; null with fewer than 2 sessions"]


class Side(TypedDict):
    """One side's turns in a bin (REAL or SYNTHETIC)."""

    n_turns: int
    ttft_ms_p50: Annotated[float | None, "median time to first token, client side"]
    tpot_ms_p50: Annotated[float | None, "median (E2E - TTFT) / (output tokens - 1), turns "
                           "with 2+ output tokens"]
    e2e_ms_p50: Annotated[float | None, "median end-to-end latency, client side"]
    prompt_tokens_mean: Annotated[float | None, "templated prompt tokens (server /tokenize)"]
    prompt_chars_mean: Annotated[float | None, "characters of the message contents sent"]
    chars_per_token: Annotated[float | None, "sum of prompt characters over sum of prompt "
                               "tokens"]
    cached_tokens_mean: Annotated[float | None, "prompt tokens reused from the slot (cache_n)"]
    output_tokens_mean: float | None
    acceptance: Annotated[float | None, "accepted over drafted tokens (server timings); null "
                          "when nothing was drafted"]
    n_drafted: Annotated[int, "turns that received a draft"]


class Bin(TypedDict):
    """REAL against SYNTHETIC in one turn bin (or over all turns)."""

    n_sessions: Annotated[int, "sessions with turns in the bin (the bootstrap's clusters)"]
    real: Side
    synthetic: Side
    diff: Annotated[dict[str, Interval], "by metric (ttft_ms, tpot_ms, e2e_ms): SYNTHETIC "
                    "p50 against REAL p50"]
    prompt_tokens_diff_pct: float | None
    prompt_chars_diff_pct: float | None


class Protocol(TypedDict):
    """How a condition's run was measured (its spec and its session recipe)."""

    drafter: str
    k: int | None
    n_predict_cap: Annotated[int, "output tokens per turn, at most (ignore_eos: exactly "
                             "min(cap, recorded reply tokens))"]
    ctx_size: Annotated[int, "tokens per slot"]
    concurrency: Annotated[int, "client streams"]
    threads: int
    temperature: float
    session_set: str
    clip_chars: Annotated[int | None, "transcript rule: each message's first N characters"]
    max_turns: Annotated[int | None, "turns kept per session, at most"]
    block: Annotated[int, "block size of the shared prefix"]


class Condition(TypedDict):
    """One condition: one run, REAL and its synthetic twins on one server."""

    run_id: str
    protocol: Protocol
    style: Annotated[str, "english | code | real text (recurrent)"]
    prefix_tokens: Annotated[int, "shared system prefix asked for (0: none)"]
    recurrent: bool
    chars_per_token_target: Annotated[float | None, "null for recurrent (real text)"]
    chars_per_token_real: Annotated[float | None, "the real sessions' message contents"]
    chars_per_token_synthetic: float | None
    id_jaccard: Annotated[float | None, "of the session ids the two sides ran"]
    n_sessions: int
    n_turns: Annotated[int, "turns measured per side"]
    n_errors: int
    duration_s: Annotated[float | None, "measuring wall time of the run"]
    sessions_left_out: Annotated[list[str], "one line each, from planning"]
    bins: Annotated[dict[str, Bin], "by turn bin"]
    aggregate: Annotated[Bin, "over all turns"]


class Floor(TypedDict):
    """REAL against REAL of two conditions (same sessions, other server instance)."""

    a: Annotated[str, "condition"]
    b: Annotated[str, "condition"]
    bins: Annotated[dict[str, dict[str, Interval]], "by turn bin, by metric: REAL(b) against "
                    "REAL(a)"]
    aggregate: Annotated[dict[str, Interval], "by metric"]


class NoiseFloor(TypedDict):
    """The spread of REAL across conditions: the gap a condition must beat to mean anything."""

    pairs: list[Floor]
    max_abs_pct: Annotated[dict[str, dict[str, float | None]], "by turn bin and 'all', by "
                           "metric: the largest |REAL vs REAL| difference over the pairs"]


class AblationRow(TypedDict):
    """One condition's aggregate gaps beside the noise floor."""

    condition: str
    knobs: Annotated[str, "what the synthetic side changed"]
    diff: Annotated[dict[str, Interval], "by metric, over all turns"]
    beyond_floor: Annotated[dict[str, bool | None], "by metric: |gap| larger than the noise "
                            "floor and the interval excludes 0"]


class Parameters(TypedDict):
    """Settings that shape the numbers."""

    bootstrap_resamples: int
    bootstrap_seed: int
    confidence: float
    bins: list[str]


class Workload(TypedDict):
    """The whole file; conditions keyed by condition name."""

    schema_version: Annotated[int, "1 (a reader refuses another)"]
    conditions: dict[str, Condition]
    order: Annotated[list[str], "condition names in the campaign's order"]
    noise_floor: NoiseFloor
    ablation: list[AblationRow]
    parameters: Parameters
    warnings: Annotated[list[str], "sorted, one line each"]


def validate(data: Any, *, source: str, error: type[ArtifactError]) -> Workload:
    """``data`` as a :class:`Workload`, or ``error`` naming the file and the first bad field."""
    check_version(data, field="schema_version", version=SCHEMA_VERSION, source=source, error=error)
    check(Workload, data, source=source, error=error)
    out: Workload = data
    for name in out["order"]:
        if name not in out["conditions"]:
            raise error(f"{source}: field 'order': condition {name!r} not in 'conditions'")
    return out


def read(path: Path, *, error: type[ArtifactError]) -> Workload:
    """Read and validate ``workload.json``; every problem is one line naming the file."""
    return validate(files.read_json(path, error), source=str(path), error=error)
