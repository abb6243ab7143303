"""``experiments/analysis/summary.json``: written by the analysis, read by every renderer.

The prose of the schema (what the numbers mean, how they are computed) is
``docs/summary-schema.md``; its field tables are generated from the classes below
(``python -m artifact.contract``), and a test keeps the two equal.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from artifact import files
from artifact.contract import check, check_version
from artifact.errors import ArtifactError

SCHEMA_VERSION = 2  # 2: Stats.alpha_pooled (acceptance pooled over requests)

FitStatus = Literal["ok", "too_few_points", "no_baseline", "ambiguous_baseline", "degenerate"]


class Center(TypedDict):
    """Mean and median over the records of a group; null when the group has no value."""

    mean: float | None
    median: float | None


class Location(TypedDict):
    """Mean, median and 95th percentile over the records of a group; null when it is empty."""

    mean: float | None
    median: float | None
    p95: float | None


class Stats(TypedDict):
    """One configuration's statistics over a group of records (overall, or one domain)."""

    n: Annotated[int, "records in the statistics (spurious timings excluded)"]
    n_drafted: Annotated[int, "requests that received a draft (non-null alpha)"]
    tok_per_s: Annotated[Location, "decoding tok/s (server timings)"]
    alpha: Annotated[Center | None, "draft acceptance per request (accepted over drafted "
                     "tokens), mean and median over the requests that received a draft; "
                     "null for drafter none"]
    alpha_pooled: Annotated[float | None, "draft acceptance pooled over requests: accepted "
                            "over drafted tokens, each summed over the requests (a request "
                            "weighs by its drafted tokens; the cost model's acceptance); null "
                            "for drafter none or when nothing was drafted"]
    tau_mean: Annotated[float | None, "mean acceptance length (the server's `mean len`); "
                        "null for drafter none or when log pairing failed"]
    ttft_ms: Annotated[Location, "time to first token, client side"]
    peak_gpu_mem_mib: Annotated[float | None, "run-level: null per domain and without a GPU"]
    peak_power_w: Annotated[float | None, "run-level: null per domain and without a GPU"]
    duration_s: Annotated[float | None, "run-level measuring time: null per domain"]
    n_errors: Annotated[int, "failed attempts (per domain: of prompts whose domain is known)"]


class FinalEntry(TypedDict):
    """A final run's statistics."""

    overall: Stats
    by_domain: Annotated[dict[str, Stats], "by domain"]


class Ratios(TypedDict):
    """Decoding tok/s of a run over its baseline, matched per (prompt_id, repeat)."""

    n_matched: int
    mean_ratio: Annotated[float | None, "mean of the per-prompt ratios"]
    median_ratio: Annotated[float | None, "median of the per-prompt ratios"]
    ratio_of_means: Annotated[float | None, "ratio of the mean throughputs"]


class SpeedupEntry(TypedDict):
    """A final run with a drafter against the final no-draft run of the same target and quant."""

    baseline_run: str
    overall: Ratios
    by_domain: Annotated[dict[str, Ratios], "by domain"]


class Pos(TypedDict):
    """Acceptance at one draft position: accepted-at-position over verification steps."""

    position: Annotated[int, "1-based"]
    n: Annotated[int, "records that reached the position"]
    mean: float
    median: float
    ci_low: Annotated[float, "percentile-bootstrap interval of the mean"]
    ci_high: float


class PositionsEntry(TypedDict):
    """Per-position acceptance of a curves or ksweep run whose log pairing is ok."""

    all: list[Pos]
    by_domain: Annotated[dict[str, list[Pos]], "by domain"]


class Fit(TypedDict):
    """A break-even fit: OLS of per-prompt tok/s on alpha; null values unless status is ok."""

    n: Annotated[int, "per-prompt points"]
    status: FitStatus
    baseline_tok_per_s: Annotated[float | None, "this group's baseline (pooled or domain)"]
    a: float | None
    beta: Annotated[float | None, "tok/s per unit of alpha"]
    r2: float | None
    alpha_be: Annotated[float | None, "(baseline_tok_per_s - a) / beta"]
    alpha_be_ci_low: Annotated[float | None, "Fieller's interval (t, n - 2 df); null when it is "
                               "unbounded (the slope is not distinguishable from 0)"]
    alpha_be_ci_high: float | None
    alpha_be_delta_low: Annotated[float | None, "delta-method interval (t, n - 2 df), symmetric "
                                  "about alpha_be: for comparison"]
    alpha_be_delta_high: float | None


class BreakevenEntry(TypedDict):
    """Break-even acceptance of a ksweep run against its matched baseline run."""

    baseline_run: str | None
    baseline_tok_per_s: float | None
    n_matched: Annotated[int, "prompts shared with the baseline"]
    ctx_size: int
    k: int | None
    drafter: str
    pooled: Fit
    by_domain: Annotated[dict[str, Fit], "by domain"]


class Sampling(TypedDict):
    """Sampling parameters of a run."""

    temperature: float
    top_k: int
    top_p: float
    seed: int


class LogPairing(TypedDict):
    """How the server log's per-request lines were paired with the records."""

    n_lines: Annotated[int, "draft-acceptance lines of server.log"]
    n_records: Annotated[int, "records with an alpha"]
    max_abs_alpha_diff: Annotated[float | None, "largest |log alpha - record alpha| paired"]
    ok: Annotated[bool, "false drops the run's positions and tau_mean"]


class Contention(TypedDict):
    """How busy the machine was while a run measured, over its requests (issue 16): CPU used by
    everything outside the measuring processes, in cores, per request window."""

    n: Annotated[int, "requests that carry a contention record"]
    n_unavailable: Annotated[int, "of them, measured where /proc was absent"]
    n_contended: Annotated[int, "requests above the threshold (left out of timing statistics)"]
    threshold_cores: Annotated[float | None, "the run's threshold (null: not recorded)"]
    foreign_cores_mean: float | None
    foreign_cores_median: float | None
    foreign_cores_p95: Annotated[float | None, "95th percentile (linear) over requests"]
    foreign_cores_max: float | None
    steal_cores_max: float | None
    load1_max: Annotated[float | None, "1-minute load average at the end of a request"]
    cpu_mhz_min: Annotated[float | None, "null where the kernel gives no frequency"]
    cpu_mhz_max: float | None
    gate_passed: Annotated[bool | None, "every quiet gate passed (null: no gate recorded)"]


class RunEntry(TypedDict):
    """One run found under experiments/runs, as its config.json describes it, with counts."""

    family: Annotated[str, "final, curves, ksweep, baseline, ..."]
    target: str
    target_quant: str
    drafter: str
    draft_model: str | None
    draft_quant: str | None
    k: int | None
    p_min: float | None
    ctx_size: int
    n_predict: int
    prompt_set: str
    prompt_set_sha256: str
    sampling: Sampling
    concurrency: int
    label: Annotated[str, 'short human label, e.g. "ngram-mod k=4"']
    n_records: Annotated[int, "readable records of results.jsonl"]
    n_excluded: Annotated[int, "records left out for spurious timings"]
    n_bad_lines: Annotated[int, "lines of results.jsonl that could not be read"]
    n_errors: Annotated[int, "failed attempts (errors.jsonl)"]
    complete: Annotated[bool, "metrics.json says the run finished"]
    measure_s: Annotated[float | None, "seconds measured (metrics.json)"]
    model_load_s: Annotated[float | None, "mean over server starts"]
    log_pairing: LogPairing
    interleave: Annotated[str | None, "the group it was measured interleaved with, or null"]
    contention: Annotated[Contention | None, "null: measured before contention was recorded"]


class Environment(TypedDict):
    """The final runs' fingerprint: the first run's, checked equal across runs."""

    os: Annotated[str | None, "operating system and kernel release, e.g. \"Linux 6.1.0\""]
    llama_cpp_version: str | None
    binary_sha256: str | None
    model_sha256: Annotated[dict[str, str], "model key to sha256, merged over the runs"]
    cpu_model: str | None
    cpu_cores: int | None
    gpu: str | None
    python: str | None
    packages: dict[str, str]
    start_time_first: str | None
    start_time_last: str | None


class Parameters(TypedDict):
    """Settings that shape the numbers."""

    bootstrap_resamples: int
    bootstrap_seed: int
    confidence: float
    spurious_tok_per_s: float


class Summary(TypedDict):
    """The whole file. Sections are keyed by run id."""

    schema_version: Annotated[int, f"{SCHEMA_VERSION} (a reader refuses another)"]
    environment: Annotated[Environment | None, "null when there are no runs"]
    runs: Annotated[dict[str, RunEntry], "every run found"]
    final: Annotated[dict[str, FinalEntry], "family final"]
    speedup: Annotated[dict[str, SpeedupEntry], "final runs with a drafter and one baseline"]
    positions: Annotated[dict[str, PositionsEntry], "families curves and ksweep"]
    breakeven: Annotated[dict[str, BreakevenEntry], "family ksweep"]
    controls: Annotated[dict[str, SpeedupEntry], "family control: a no-draft repeat over the "
                        "baseline it was measured beside (1 = no drift; the noise control)"]
    parameters: Parameters
    warnings: Annotated[list[str], "sorted, one line each, naming the run"]


def validate(data: Any, *, source: str, error: type[ArtifactError],
             checked: Collection[str] = ()) -> Summary:
    """``data`` as a :class:`Summary`, or ``error`` naming the file and the first bad field.

    Every run id a section names must be in ``runs``. ``checked``: sections each of whose
    entries is known to fit its type already (the analysis checks a run's entries once, when it
    reduces the run: :mod:`artifact.analysis.parts`); of those, only the run ids are checked.
    """
    check_version(data, field="schema_version", version=SCHEMA_VERSION, source=source, error=error)
    if checked and isinstance(data, dict):
        data_but_checked = {**data, **{s: {} for s in checked if isinstance(data.get(s), dict)}}
        check(Summary, data_but_checked, source=source, error=error)
    else:
        check(Summary, data, source=source, error=error)
    summary: Summary = data
    for section in ("final", "speedup", "positions", "breakeven", "controls"):
        for run_id in summary[section]:
            if run_id not in summary["runs"]:
                raise error(f"{source}: field '{section}.{run_id}': run not in 'runs'")
    return summary


def read(path: Path, *, error: type[ArtifactError]) -> Summary:
    """Read and validate ``summary.json``; every problem is one line naming the file."""
    return validate(files.read_json(path, error), source=str(path), error=error)
