"""``experiments/analysis/realism.json``: the workload-realism study, take three (issue 28),
written by ``doit realism``, read by its tables, figure, the manuscript and the claims ledger.

Every side of the design (REAL-A, REAL-B, each synthetic twin) ran on its own server, for each
drafter; the servers of a stratum were measured together, turn by turn. Every interval is a
percentile bootstrap over **sessions** (whole sessions resampled; at more than one stream whole
**chunks**, the sessions played together; one draw per stratum shared by every server, so every
comparison is paired by session). Each gap of a synthetic side against REAL-A also carries the
**process** spread measured by the replicated stratum (``process``): independent normal draws
of that SD added to its bootstrap draws. It gets one verdict against the margin declared in the
campaign file before measuring: *equivalent* (two one-sided tests, their p Holm-adjusted over
the family of every synthetic gap, below 0.05), *differs* (its Holm-adjusted bootstrap p below
0.05 over the same family), or *cannot tell*. The verdict by the sessions alone (take three's
rule: no process spread, the equivalence uncorrected) is kept beside it.

The prose of the schema is ``docs/realism-schema.md``; its field tables are generated from the
classes below (``python -m artifact.contract``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

from artifact import files
from artifact.contract import check, check_version
from artifact.errors import ArtifactError

SCHEMA_VERSION = 6
QUANTITIES = ("speedup", "e2e", "tpot", "ttft", "acceptance")
VERDICTS = ("equivalent", "differs", "cannot tell")


class Interval(TypedDict):
    """A value and its 95 % session-bootstrap interval (chunks of sessions at more than one
    stream)."""

    value: Annotated[float | None, "the point estimate; null when there is none (acceptance "
                     "of a server that drafted nothing)"]
    lo: Annotated[float | None, "interval low"]
    hi: Annotated[float | None, "interval high"]


class Contention(TypedDict):
    """Foreign CPU (cores) over a server's turns (each turn's own window)."""

    n_turns: int
    median: float | None
    max: float | None
    n_contended: Annotated[int, "turns above the threshold"]
    threshold_cores: float


class Server(TypedDict):
    """One deployment: one drafter serving one side, alone on its server."""

    run_id: str
    drafter: str
    k: int | None
    label: Annotated[str, "the drafter in words"]
    side: Annotated[str, "real-a, real-b or synthetic-<condition>"]
    machine: Annotated[str, "CPU model and cores (config.json environment)"]
    binary_sha256: Annotated[str, "of the llama-server that measured"]
    complete: bool
    n_errors: int
    server_starts: Annotated[int, "starts over the run's life (1: never restarted)"]
    n_turns: Annotated[int, "turns analysed (the stratum's common, quiet turns)"]
    first_unix_s: Annotated[int | None, "when its first turn was sent (Unix seconds)"]
    last_unix_s: Annotated[int | None, "when its last turn was sent (Unix seconds)"]
    places: Annotated[list[int], "turns it served at the 1st, 2nd, ... place among the "
                      "group's servers in their round (at k streams a round sends each server "
                      "k turns, so k per round)"]
    contention: Contention | None
    e2e_ms: Annotated[Interval, "mean end-to-end latency per turn, client side"]
    tpot_ms: Annotated[Interval, "mean (E2E - TTFT) / (output tokens - 1) per turn"]
    ttft_ms: Annotated[Interval, "mean time to first token per turn"]
    acceptance: Annotated[Interval, "accepted over drafted tokens (server timings), pooled "
                          "over turns"]
    drafted_turns: Annotated[float, "share of turns that received a draft"]
    accepted_per_turn: Annotated[float, "mean accepted draft tokens per turn"]
    prompt_chars_per_token: Annotated[float | None, "sum of prompt characters over sum of "
                                      "prompt tokens"]
    cached_tokens_mean: Annotated[float | None, "prompt tokens reused from the slot (cache_n)"]
    cached_turn0_mean: Annotated[float | None, "the same on first turns only (a prefix kept "
                                 "from the previous session)"]


class GapSessions(TypedDict):
    """A gap judged by its sessions alone (take three's rule)."""

    ci95: Annotated[list[float | None], "95 % interval"]
    ci90: Annotated[list[float | None], "90 % interval"]
    p: Annotated[float | None, "two-sided bootstrap p of 'no gap'"]
    p_holm: Annotated[float | None, "Holm-adjusted over the family (null for a floor)"]
    mde: Annotated[float | None, "(z 0.975 + z 0.8) times the bootstrap standard error"]
    verdict: Annotated[str, "equivalent (90 % interval inside the margin), differs (p_holm "
                       "below 0.05) or cannot tell"]


class Gap(TypedDict):
    """One side against REAL-A on one drafter's servers, in one quantity."""

    drafter: str
    label: Annotated[str, "the drafter in words"]
    side: Annotated[str, "the side compared with REAL-A"]
    quantity: Annotated[str, "speedup, e2e, tpot, ttft or acceptance"]
    unit: Annotated[str, "'%' (relative: 100 (side / REAL-A - 1)) or 'points' (acceptance: "
                    "100 (side - REAL-A))"]
    real: Annotated[Interval, "the quantity on REAL-A (speedup: no draft's E2E over the "
                    "drafter's; latencies in ms; acceptance as a fraction)"]
    side_value: Annotated[Interval, "the quantity on the side"]
    value: Annotated[float | None, "the gap (null: a side without a value)"]
    ci95: Annotated[list[float | None], "95 % interval of the gap, the process spread "
                    "included (a floor: sessions only)"]
    ci90: Annotated[list[float | None], "90 % interval, the process spread included (a floor: "
                    "sessions only)"]
    margin: Annotated[float, "the declared margin, in the gap's unit"]
    p: Annotated[float | None, "two-sided p of 'no gap', the process spread included: analytic "
                 "(normal, the sessions' variance by the delta method plus the process's; a "
                 "floor: the bootstrap's tail count)"]
    p_holm: Annotated[float | None, "Holm-adjusted over the study's family of synthetic gaps "
                      "(null for a floor)"]
    p_tost: Annotated[float | None, "p of the two one-sided tests of 'inside the margin' (the "
                      "larger of the two), analytic like p (a floor: the larger tail count of "
                      "the bootstrap beyond -margin and +margin)"]
    p_tost_holm: Annotated[float | None, "p_tost Holm-adjusted over the family of synthetic "
                           "gaps (null for a floor)"]
    process_sd: Annotated[float | None, "SD of the normal process draws added to the gap's "
                          "bootstrap draws, in the gap's unit (relative gaps: 100 log units); "
                          "null for a floor (not adjusted)"]
    process_rule: Annotated[str, "where process_sd comes from: measured, largest (of the "
                            "measured drafters), exact (acceptance agrees exactly at one "
                            "stream: 0), floor (|REAL-B - REAL-A| acceptance at more than one "
                            "stream), none (no process study) or floor-not-adjusted"]
    mde: Annotated[float | None, "smallest gap detected: (z 0.975 + z 0.8) times the gap's "
                   "bootstrap standard error, the process spread included (5 % two-sided, "
                   "80 % power, before the correction)"]
    mde_holm: Annotated[float | None, "the same after the correction: (z(1 - 0.05 / (2 m)) + "
                        "z 0.8) times the standard error, m the family's size (Holm's first "
                        "step); null for a floor"]
    verdict: Annotated[str, "equivalent, differs or cannot tell (a floor: equivalent or "
                       "cannot tell, by its 90 % interval)"]
    sessions_only: Annotated[GapSessions, "the same gap judged by take three's rule: sessions "
                             "(chunks) alone, no process spread, the equivalence uncorrected"]


class Drift(TypedDict):
    """A drafted server's acceptance by halves of the sessions in the order they were played."""

    drafter: str
    side: str
    first: float | None
    second: float | None
    diff_points: Annotated[float | None, "100 (second - first)"]


class Exact(TypedDict):
    """REAL-A against REAL-B on one drafter: two servers with identical histories."""

    drafter: str
    n_turns: Annotated[int, "turns both recorded (contended ones included)"]
    n_differ: Annotated[int, "turns whose drafted or accepted token counts differ"]
    equal: bool


class Echo(TypedDict):
    """Take two's shared server (superseded, kept for this only): a session's REAL replay that
    ran second against the one that ran first, on one server whose drafter kept state."""

    run_id: Annotated[str, "the superseded run (experiments/runs-realism/_superseded/)"]
    drafter: str
    session_set: str
    concurrency: int
    n_sessions: int
    first: Annotated[float | None, "acceptance of the replays that ran first"]
    second: Annotated[float | None, "acceptance of the replays that ran second (the first "
                      "one's text already in the server)"]


class Protocol(TypedDict):
    """What a stratum measured."""

    session_set: str
    n_sessions: Annotated[int, "sessions analysed: with at least one turn quiet on every server"]
    n_sessions_played: Annotated[int, "sessions the servers played, contended ones included"]
    turns_per_side: Annotated[int, "turns analysed on every server"]
    n_turns_dropped: Annotated[int, "(session, turn) pairs dropped from every server: "
                               "contended on one, or missing on one"]
    clip_chars: int | None
    max_turns: int | None
    code_share: float | None
    n_predict_cap: int
    ctx_size: int
    threads: int
    concurrency: int
    temperature: float
    n_servers: int
    n_rounds: int
    chars_per_token_real: float | None
    chars_per_token: Annotated[dict[str, float | None], "by synthetic side, from the plan"]
    prefix_tokens_max: Annotated[dict[str, int], "by synthetic side: the largest shared system "
                                 "prompt a session got (0: none)"]
    session_order: Annotated[list[str], "session ids in the order every server played them"]
    dates: list[str]
    wall_min: Annotated[float, "first turn sent to last, minutes"]
    machines: list[str]
    hosts: Annotated[list[dict[str, str | int | None]],
                     "the distinct extended fingerprints of its servers' runs (config.json "
                     "environment.host, artifact/hostinfo.py); empty when none recorded one"]
    binaries: Annotated[list[str], "llama-server SHA-256 prefixes (12 hex digits)"]


class Stratum(TypedDict):
    """One interleave group: every drafter and side of one session set and concurrency."""

    key: Annotated[str, "the group's label in the campaign file"]
    protocol: Protocol
    resample_unit: Annotated[str, "what the bootstrap resamples: 'session' (one stream) or "
                             "'chunk' (the concurrency sessions played together, which share "
                             "batches)"]
    n_clusters: Annotated[int, "sessions or chunks resampled"]
    servers: list[Server]
    gaps: list[Gap]
    floors: Annotated[list[Gap], "REAL-B against REAL-A: the timing floor"]
    exact: list[Exact]
    drift: list[Drift]


class Component(TypedDict):
    """The process variance component of one quantity on one drafter and side: how far apart
    identical server processes are beyond what the sessions explain."""

    drafter: str
    side: Annotated[str, "real (REAL-A, -B, -C) or synthetic (english, -b, -c)"]
    quantity: Annotated[str, "e2e, tpot, ttft (per turn) or speedup (no draft's E2E over the "
                        "drafter's, processes paired a-a, b-b, c-c)"]
    runs: Annotated[list[str], "the runs of its processes"]
    n_sessions: Annotated[int, "sessions with a value on every process"]
    n_processes: int
    sd_pct: Annotated[Interval, "100 sigma_p (log units: a relative spread), its 95 % interval "
                      "by resampling sessions; null with fewer than 2 sessions or processes"]
    spread_pct: Annotated[float | None, "the largest difference between two processes' means, "
                          "% (100 (exp(max - min) - 1) of the log means)"]
    gap_sd_pct: Annotated[float | None, "the process spread a gap between two sides carries "
                          "when each side ran on one process: sqrt(2) sd_pct"]
    process_pct: Annotated[list[float], "each process's mean against their geometric mean, %"]


class ProcessExact(TypedDict):
    """The processes of one side on one drafter, turn by turn: identical histories."""

    drafter: str
    side: str
    runs: list[str]
    n_turns: Annotated[int, "turns every process recorded (contended ones included)"]
    n_differ: Annotated[int, "turns whose drafted or accepted counts differ among them"]
    equal: bool


class Process(TypedDict):
    """The replicated stratum (experiments/runs-realism-process/, issue 44): three server
    processes per side, its analysis declared in its campaign file before it was measured."""

    stratum: Annotated[str, "its interleave group"]
    campaign: Annotated[str, "the campaign file that planned it and declared its analysis"]
    protocol: Protocol
    components: list[Component]
    exact: list[ProcessExact]
    bootstrap_resamples: int
    bootstrap_seed: int


class Parameters(TypedDict):
    bootstrap_resamples: int
    bootstrap_seed: int
    confidence: float
    equivalence_confidence: Annotated[float, "of the interval a verdict 'equivalent' reads"]
    alpha: Annotated[float, "family-wise, Holm"]
    power: Annotated[float, "of the smallest detectable gap"]
    margins: Annotated[dict[str, float], "declared in the campaign file, per quantity "
                       "(relative; acceptance in fractions, printed in points)"]
    campaign: Annotated[str, "the file that declared them"]
    mc_se_p_max: Annotated[float, "the largest Monte-Carlo standard error of a take-three "
                           "(sessions_only) bootstrap p (2 sqrt(t (1 - t) / resamples), t its "
                           "tail); the verdicts' p and p_tost are analytic, free of the seed"]
    mc_se_interval_max: Annotated[float, "the largest Monte-Carlo standard error of a gap's "
                                  "interval end (95 % and 90 %), in the gap's unit, by batch "
                                  "means over 20 batches of the resamples"]


class VerdictCounts(TypedDict):
    equivalent: int
    differs: int
    cannot_tell: int


class Verdicts(TypedDict):
    n_gaps: int
    equivalent: Annotated[int, "the process spread carried, the equivalence Holm-corrected"]
    differs: int
    cannot_tell: int
    sessions_only: Annotated[VerdictCounts, "by take three's rule (sessions alone, the "
                             "equivalence uncorrected)"]


class Realism(TypedDict):
    """The whole file."""

    schema_version: Annotated[int, "6 (a reader refuses another)"]
    strata: Annotated[list[Stratum], "main (one stream) first, then the others"]
    pending: Annotated[list[str], "interleave groups of the campaign file not yet measured"]
    echo: Annotated[list[Echo], "take two's echo: why every side now has its own server"]
    process: Annotated[Process | None, "the process variance component from the replicated "
                       "stratum; null before its runs exist"]
    verdicts: Verdicts
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


def stratum(data: Realism, key: str) -> Stratum | None:
    """The stratum of interleave group ``key``, if measured."""
    return next((s for s in data["strata"] if s["key"] == key), None)
