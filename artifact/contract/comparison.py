"""``<reproduction>/report/comparison.json``: written by the comparison, read by its report.

Two run sets side by side (A, the reference, and B, the reproduction): their machines, every
claim of the ledger with both values and a verdict, and the raw statistics of every run. The
prose is ``docs/comparison-schema.md``; its field tables are generated from the classes below
(``python -m artifact.contract``), and a test keeps the two equal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from artifact import files
from artifact.contract import check, check_version
from artifact.errors import ArtifactError

SCHEMA_VERSION = 3

Scope = Literal["hardware-independent", "hardware-bound", "noise", "qualitative"]
Verdict = Literal["reproduced", "holds", "differs with hardware", "noise differs",
                  "cannot tell", "cannot tell (no interval)", "not run", "failed", "violated",
                  "missing"]
Answer = Literal["reproduced", "differs", "cannot tell", "cannot tell (no interval)"]
Status = Literal["ok", "deviates", "missing"]


class Hardware(TypedDict):
    """What rates depend on: the hardware fingerprint of a run set."""

    cpu_model: str
    cpu_cores: int | None
    gpu: Annotated[str | None, "the GPU model; null without one"]
    slug: Annotated[str, "folder-name form, e.g. intel-xeon-processor-2c"]
    host: Annotated[dict[str, str | int | None] | None,
                    "the extended fingerprint (artifact/hostinfo.py): CPU vendor, family, "
                    "model, stepping, microcode, flags hash, clock, caches, SMT, hypervisor, "
                    "memory, kernel; null when the runs did not all record the same one"]
    description: Annotated[str, "one line for a reader"]


class HardwareJudged(TypedDict):
    """Whether the two sides ran on the same hardware, and what decided it."""

    verdict: Annotated[Literal["same", "different", "unknown"],
                       "same: equal fingerprints (extended included) and a calibrated speed "
                       "ratio within the band; unknown: a side without the extended "
                       "fingerprint, or no calibration"]
    why: Annotated[str, "one line"]
    differing: Annotated[list[str], "the fingerprint fields that differ"]
    speed_ratio: Annotated[float | None, "the reproduction's calibration: its time for the "
                           "calibration prompts over the committed runs' (null: none)"]
    band: Annotated[float, "how far from 1 the ratio may lie on the same hardware"]


class Software(TypedDict):
    """What should be equal for a like-for-like comparison."""

    llama_cpp_version: str | None
    binary_sha256: Annotated[str | None, "of llama-server"]
    model_sha256: Annotated[dict[str, str] | None, "per model key"]
    prompt_sets: Annotated[list[str], "'<name> <sha256 prefix>' of every prompt set used"]


class Measured(TypedDict):
    """When the run set's runs started (ISO 8601, UTC)."""

    first: str | None
    last: str | None


class Calibration(TypedDict):
    """The short timing of the reproducing machine against the committed records."""

    run_id: Annotated[str, "the no-draft run whose first prompts were timed"]
    prompt_ids: list[str]
    here_ms: Annotated[float | None, "their end-to-end time here (sum)"]
    committed_ms: Annotated[float | None, "the committed records' end-to-end time (sum)"]
    scale: Annotated[float, "here over committed: the factor applied to committed durations"]
    skipped: Annotated[str | None, "why no calibration was made; null when one was"]


class Selection(TypedDict):
    """What the reproduction reran."""

    label: Literal["full", "subset", "kick"]
    runs: list[str]
    prompts_per_domain: Annotated[int | None, "null: every prompt"]
    sessions: Annotated[int | None, "a study of sessions: each run's first N sessions in play "
                        "order (config.json: session_ids names them); null: every session, or "
                        "a study of prompts"]


class LoadSample(TypedDict):
    """The machine's load averages at one moment of the reproduction."""

    at: Annotated[str, "ISO 8601, UTC"]
    event: Annotated[str, "what had just happened, e.g. 'after final-none'"]
    load1: float | None
    load5: float | None
    load15: float | None


class Reproduction(TypedDict):
    """A reproduction's manifest (``reproduction.json``), as the report shows it."""

    selection: Selection
    started: str | None
    finished: Annotated[str | None, "null while incomplete"]
    complete: bool
    calibration: Calibration | None
    expected_s: Annotated[float, "the ETA at the start: committed durations, scaled"]
    wall_s: Annotated[float, "the runs' measured wall time (sum)"]
    run_wall_s: dict[str, float | None]
    load: list[LoadSample]
    load1_max: float | None
    load1_mean: float | None
    cpu_count: int | None


class Side(TypedDict):
    """One run set."""

    name: Annotated[str, "'committed' for experiments/runs, else the folder's name"]
    root: Annotated[str, "the runs folder, relative to the repository"]
    runs: Annotated[list[str], "run ids compared (A: cut to B's)"]
    hardware: Hardware
    software: Software
    measured: Measured
    reproduction: Annotated[Reproduction | None, "null for a plain runs folder"]
    warnings: Annotated[list[str], "the analysis warnings of this side"]


class Equivalence(TypedDict):
    """A hardware-bound claim judged as an interval against an interval: equivalence (TOST)
    against the claim's noise as the margin (``artifact/reproduce/verdict.py``)."""

    answer: Annotated[Answer, "reproduced: the difference's 90 % interval inside +-margin; "
                      "differs: its 95 % interval wholly beyond the margin; cannot tell: "
                      "otherwise; cannot tell (no interval): a side gives only a point"]
    a_interval: Annotated[list[float] | None, "[low, high] beside A's value; null: a point"]
    a_level: Annotated[float | None, "its confidence level (0.95 unless the file says 90 %)"]
    b_interval: Annotated[list[float] | None, "[low, high] beside B's value; null: a point"]
    b_level: float | None
    difference: Annotated[float | None, "b - a"]
    ci90: Annotated[list[float] | None, "the difference's 90 % interval (normal "
                    "approximation from both sides' intervals)"]
    ci95: Annotated[list[float] | None, "its 95 % interval"]
    margin: Annotated[float | None, "the claim's noise on A as a half-width, in the "
                      "quantity's units; null: it does not resolve on A"]
    margin_source: Annotated[str, "the ledger's noise field the margin comes from"]
    speed_ratio: Annotated[float | None, "B's calibrated speed ratio (null: no calibration)"]


class ClaimEntry(TypedDict):
    """One claim of the ledger on both sides, and its verdict."""

    id: str
    scope: Scope
    statement: Annotated[str, "the paper's sentence (qualitative claims)"]
    quantity: Annotated[str, "'vars:<path>' or 'summary:<path>'; '*' matches keys"]
    reason: str
    runs: Annotated[list[str], "run-id patterns the claim draws on"]
    format: Annotated[str, "how the paper prints it"]
    expected: Annotated[float | str | None, "the ledger's value; null for a qualitative claim"]
    expected_text: Annotated[str, "the ledger's value or bounds, as printed"]
    tolerance: Annotated[str, "'rel 0.1', 'abs 0.02', 'exact' or 'inequality'"]
    a: Annotated[float | str | None, "A's value (qualitative: the one closest to a bound)"]
    b: Annotated[float | str | None, "B's value (same)"]
    a_vs_ledger: Annotated[Status, "A's value against the ledger's expected value"]
    difference: Annotated[float | None, "b - a"]
    band: Annotated[list[float] | None, "[low, high]: A's value plus and minus what it was "
                    "judged by (hardware-bound: the margin; an interval noise: its half-width; "
                    "else the tolerance)"]
    values_a: Annotated[list[list[str | float]], "qualitative: every [path, value] matched"]
    values_b: list[list[str | float]]
    bounds_a: Annotated[list[list[str | float]], "qualitative: [op, bound] resolved on A"]
    bounds_b: list[list[str | float]]
    verdict: Verdict
    why: Annotated[str, "one line: what decided the verdict"]
    failing: Annotated[bool, "counts against --strict"]
    missing_runs: Annotated[list[str], "runs the claim needs that B did not reproduce"]
    equivalence: Annotated[Equivalence | None, "hardware-bound numeric claims (not 'not run' "
                           "or 'missing'); null otherwise"]


class RawStats(TypedDict):
    """Descriptive statistics of one run's records (spurious timings left out)."""

    n: float
    tok_per_s_mean: Annotated[float | None, "the server's predicted_per_second"]
    tok_per_s_median: float | None
    ttft_ms_median: float | None
    e2e_ms_median: float | None
    alpha_pooled: Annotated[float | None, "accepted over drafted tokens, all requests"]
    n_drafted: Annotated[float, "requests that received a draft"]
    tokens_generated: float
    errors: Annotated[float, "failed attempts"]
    e2e_s_total: float


class RunRow(TypedDict):
    """One run, both sides (null: not in that set)."""

    run: str
    label: str
    a: RawStats | None
    b: RawStats | None
    same_outputs: Annotated[list[int] | None,
                            "[prompts with equal token and draft counts, prompts in both]"]


class Comparison(TypedDict):
    """The whole file."""

    schema: Annotated[int, f"{SCHEMA_VERSION} (a reader refuses another)"]
    ledger: Annotated[str, "the claims ledger used"]
    a: Side
    b: Side
    same_hardware: Annotated[bool, "the hardware verdict is 'same'"]
    hardware: HardwareJudged
    same_software: Annotated[bool, "equal build, binary, model and prompt-set hashes"]
    claims: Annotated[list[ClaimEntry], "ledger order"]
    counts: Annotated[dict[str, int], "claims per verdict (every verdict listed)"]
    strict_failures: Annotated[list[str], "ids of the claims that fail --strict"]
    runs: Annotated[list[RunRow], "sorted by run id"]


def validate(data: Any, *, source: str, error: type[ArtifactError]) -> Comparison:
    """``data`` as a :class:`Comparison`, or ``error`` naming the file and the first bad field."""
    check_version(data, field="schema", version=SCHEMA_VERSION, source=source, error=error)
    check(Comparison, data, source=source, error=error)
    doc: Comparison = data
    return doc


def read(path: Path, *, error: type[ArtifactError]) -> Comparison:
    """Read and validate ``comparison.json``; every problem is one line naming the file."""
    return validate(files.read_json(path, error), source=str(path), error=error)
