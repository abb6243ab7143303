"""Loading run directories into typed, analysable runs.

``config.json`` is normalized into a frozen :class:`RunDescription`; a missing or mistyped field
or an unknown drafter is a :class:`ConfigError` whose message is one line naming the run and the
field. Everything else a run holds is data: unreadable result lines are counted, failed attempts
counted, records with spurious server timings excluded (and counted), the server log parsed.

Exceptions::

    AnalysisError (artifact.errors.ArtifactError)
     └── ConfigError        a run's config.json cannot be used; the run is skipped
"""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from artifact import records
from artifact.analysis import validate
from artifact.analysis.logs import LogEntry, parse_server_log
from artifact.contract.summary import Sampling
from artifact.errors import AnalysisError as AnalysisError
from artifact.errors import ConfigError as ConfigError
from artifact.records import DRAFTERS, Result, Timings

# A record whose server timings say this is not a measured decoding rate: with one generated
# token the server reports predicted_ms 0 and predicted_per_second 1e6.
SPURIOUS_TOK_PER_S = 1e5


@dataclass(frozen=True, kw_only=True)
class RunDescription:
    """What a run measured, normalized from its ``config.json``."""

    run_id: str
    campaign: str | None
    family: str  # "final" | "curves" | "ksweep" | "baseline" | "kick" | ...
    target: str  # model family, e.g. "smollm2-135m"
    target_model: str | None
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
    sampling: Sampling  # two runs compare only when these are equal
    concurrency: int
    repeats: int | None
    environment: Mapping[str, Any]
    interleave: str | None = None  # the group it was measured interleaved with (issue 16)

    @property
    def label(self) -> str:
        """Short human label, e.g. ``"ngram-mod k=4"`` or ``"no draft"``."""
        if self.drafter == "none":
            return "no draft"
        parts = [self.drafter]
        if self.draft_model:
            parts.append(
                f"{self.draft_model} {self.draft_quant}" if self.draft_quant else self.draft_model
            )
        if self.k is not None:
            parts.append(f"k={self.k}")
        if self.p_min is not None:
            parts.append(f"p_min={self.p_min:g}")
        return " ".join(parts)


def _field(spec: Mapping[str, Any], name: str, kind: str, where: str, *, optional: bool) -> Any:
    if name not in spec or spec[name] is None:
        if optional:
            return None
        raise ConfigError(f"run {where}: config.json: spec.{name}: missing")
    v = spec[name]
    ok = {
        "str": isinstance(v, str) and v != "",
        "int": isinstance(v, int) and not isinstance(v, bool),
        "float": isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v),
    }[kind]
    if not ok:
        raise ConfigError(f"run {where}: config.json: spec.{name}: expected {kind}, got {v!r}")
    return float(v) if kind == "float" else v


def describe(config: Mapping[str, Any], *, where: str) -> RunDescription:
    """Normalize a decoded ``config.json`` (extra keys are ignored).

    ``where`` names the run in error messages (its directory name).
    """
    spec = config.get("spec")
    if not isinstance(spec, Mapping):
        raise ConfigError(f"run {where}: config.json: spec: missing or not an object")
    ps = config.get("prompt_set")
    if not isinstance(ps, Mapping) or not isinstance(ps.get("sha256"), str):
        raise ConfigError(f"run {where}: config.json: prompt_set.sha256: missing")
    env = config.get("environment")

    def req(name: str, kind: str) -> Any:
        return _field(spec, name, kind, where, optional=False)

    def opt(name: str, kind: str) -> Any:
        return _field(spec, name, kind, where, optional=True)

    drafter = req("drafter", "str")
    if drafter not in DRAFTERS:
        raise ConfigError(
            f"run {where}: config.json: spec.drafter: unknown drafter {drafter!r} "
            f"(known: {', '.join(sorted(DRAFTERS))})"
        )
    run_id = config.get("run_id", spec.get("run_id"))
    if not isinstance(run_id, str) or not run_id:
        raise ConfigError(f"run {where}: config.json: run_id: missing")
    return RunDescription(
        run_id=run_id,
        campaign=config.get("campaign") if isinstance(config.get("campaign"), str) else None,
        family=req("family", "str"),
        target=req("target", "str"),
        target_model=opt("target_model", "str"),
        target_quant=req("target_quant", "str"),
        drafter=drafter,
        draft_model=opt("draft_model", "str"),
        draft_quant=opt("draft_quant", "str"),
        k=opt("k", "int"),
        p_min=opt("p_min", "float"),
        ctx_size=req("ctx_size", "int"),
        n_predict=req("n_predict", "int"),
        prompt_set=req("prompt_set", "str"),
        prompt_set_sha256=ps["sha256"],
        sampling=Sampling(
            temperature=req("temperature", "float"),
            top_k=req("top_k", "int"),
            top_p=req("top_p", "float"),
            seed=req("seed", "int"),
        ),
        concurrency=req("concurrency", "int"),
        repeats=opt("repeats", "int"),
        environment=env if isinstance(env, Mapping) else {},
        interleave=opt("interleave", "str"),
    )


# What must be equal for a no-draft run to be the baseline of a drafted run (final speedups
# and ksweep break-even alike): the same model, context, prompts, answer length and sampling.
PROTOCOL_FIELDS = (
    "target",
    "target_quant",
    "ctx_size",
    "prompt_set_sha256",
    "n_predict",
    "sampling",
)


def protocol_diff(a: RunDescription, b: RunDescription) -> list[str]:
    """Names of the protocol fields where two runs differ."""
    return [f for f in PROTOCOL_FIELDS if getattr(a, f) != getattr(b, f)]


def describe_diff(run: RunDescription, base: RunDescription) -> str:
    """The differing protocol fields as ``field base-value vs run-value`` (sampling by part)."""
    parts = []
    for f in protocol_diff(run, base):
        if f == "sampling":
            for k in ("temperature", "top_k", "top_p", "seed"):
                b, r = base.sampling[k], run.sampling[k]
                if b != r:
                    parts.append(f"sampling.{k} {b!r} vs {r!r}")
        else:
            parts.append(f"{f} {getattr(base, f)!r} vs {getattr(run, f)!r}")
    return "; ".join(parts)


def is_spurious(t: Timings) -> bool:
    """True when a record's server timings are not a decoding rate (excluded everywhere).

    >>> t = records.Timings(prompt_n=5, prompt_ms=1.0, predicted_n=1, predicted_ms=0.0,
    ...                     predicted_per_second=1e6, cache_n=0)
    >>> is_spurious(t)
    True
    """
    tps, ms = t.predicted_per_second, t.predicted_ms
    if not isinstance(tps, int | float) or not isinstance(ms, int | float):
        return True
    return not math.isfinite(tps) or tps >= SPURIOUS_TOK_PER_S or ms <= 0.0


# A decode rate this many times above or below its run's median is possible but suspicious:
# it is kept, and flagged by a warning naming the records.
IMPLAUSIBLE_FACTOR = 10.0


def impossible(r: Result) -> str | None:
    """Why a record's values cannot be a measurement (it is then excluded and counted), or None:
    the rules of :func:`artifact.analysis.validate.result_problem`, shared by every study.

    >>> t = records.Timings(prompt_n=5, prompt_ms=1.0, predicted_n=9, predicted_ms=90.0,
    ...                     predicted_per_second=88.9, cache_n=0, draft_n=0)
    >>> r = records.Result(prompt_id="p", domain="code", prompt_sha256="", repeat=0, attempt=1,
    ...     server_start=1, sent_unix_s=0.0, queue_ms=0.0, ttft_ms=5.0, e2e_ms=100.0,
    ...     event_ms=[], timings=t, stop_type="limit", alpha=0.5)
    >>> impossible(r)
    'alpha 0.5 without drafted tokens'
    """
    return validate.result_problem(r)


def _remeasured(recs: list[Result]) -> list[bool]:
    """Per record: a contended attempt that a later attempt of its key measured again.

    The runner may measure a contended request again (``--remeasure-contended``) and keeps
    every attempt; the first uncontended attempt of a key is the one analysed, so the contended
    attempts before it are set aside (counted, not warned about as duplicates).

    >>> def r(key, contended):
    ...     return Result(prompt_id=key, domain="d", prompt_sha256="", repeat=0, attempt=1,
    ...         server_start=1, sent_unix_s=0.0, queue_ms=0.0, ttft_ms=1.0, e2e_ms=2.0,
    ...         event_ms=[], timings=records.Timings(prompt_n=1, prompt_ms=1.0,
    ...         predicted_n=2, predicted_ms=1.0, predicted_per_second=2.0, cache_n=0),
    ...         stop_type="limit", alpha=None, contended=contended)
    >>> _remeasured([r("a", True), r("a", False), r("b", True), r("b", True), r("c", None),
    ...              r("c", None)])
    [True, False, False, True, False, False]
    """
    if True not in [r.contended for r in recs]:  # no attempt contended: none set aside
        return [False] * len(recs)
    by_key: dict[tuple[str, int], list[int]] = {}
    for i, rec in enumerate(recs):
        by_key.setdefault(rec.key, []).append(i)
    out = [False] * len(recs)
    for idx in by_key.values():
        clean = next((i for i in idx if recs[i].contended is not True), None)
        if clean is None:  # every attempt contended: the first is analysed (marked contended)
            for i in idx[1:]:
                out[i] = True
            continue
        for i in idx:
            if i < clean and recs[i].contended is True:
                out[i] = True
    return out


def _screen(recs: list[Result], spurious: list[bool], where: str,
            problems: list[str]) -> list[bool]:
    """Per record: excluded (spurious timings, impossible values, or a repeated key).

    Duplicates of a ``(prompt_id, repeat)`` keep the first readable copy, after contended
    attempts that were measured again (:func:`_remeasured`). Every exclusion other than
    spurious timings and re-measured attempts, and every implausible decode rate, is named in
    ``problems``.
    """
    def problem(r: Result) -> validate.Problem | None:
        why = impossible(r)
        return None if why is None else (validate.IMPOSSIBLE, why)

    out = validate.screen(recs, key=lambda r: r.key, label=lambda r: f"{r.prompt_id}#{r.repeat}",
                          problem=problem, where=where, warnings=problems, excluded=spurious,
                          set_aside=_remeasured(recs))
    rates = sorted(r.timings.predicted_per_second for r, x in zip(recs, out, strict=True)
                   if not x)
    if rates:
        med = rates[len(rates) // 2] if len(rates) % 2 else (
            rates[len(rates) // 2 - 1] + rates[len(rates) // 2]) / 2
        odd = [f"{r.prompt_id}#{r.repeat} ({r.timings.predicted_per_second:.4g} tok/s)"
               for r, x in zip(recs, out, strict=True)
               if not x and med > 0 and not (med / IMPLAUSIBLE_FACTOR
                                             <= r.timings.predicted_per_second
                                             <= med * IMPLAUSIBLE_FACTOR)]
        if odd:
            problems.append(f"run {where}: {records.RESULTS}: {len(odd)} implausible decode "
                            f"rate(s), over {IMPLAUSIBLE_FACTOR:g}x from the run's median "
                            f"{med:.4g} tok/s (kept): {_listed(odd)}")
    return out


_listed = validate.listed


@dataclass(frozen=True, kw_only=True)
class Run:
    """A loaded run: description, records in file order, and what could not be used."""

    path: Path
    desc: RunDescription
    records: list[Result]  # every readable record, file order (spurious ones included)
    spurious: list[bool]  # per record: excluded (spurious timings, impossible values, duplicate)
    n_bad_lines: int
    errors: list[dict[str, Any]]  # rows of errors.jsonl
    n_bad_error_lines: int
    metrics: dict[str, Any] | None
    vram: dict[str, Any] | None
    log: list[LogEntry] | None  # measured draft-acceptance entries; None when no server.log
    log_has_markers: bool
    problems: list[str]  # one-line warnings met while loading
    measured_starts: int = 1  # servers that measured (log markers or records' server_start)

    @property
    def restarted_stateful(self) -> bool:
        """A drafter that keeps state across requests whose server started more than once
        while the run measured: requests after a restart drafted from an emptied pool."""
        return self.measured_starts > 1 and self.desc.drafter in STATEFUL_DRAFTERS

    @property
    def n_excluded(self) -> int:
        return sum(self.spurious)

    @property
    def included(self) -> list[Result]:
        return [r for r, bad in zip(self.records, self.spurious, strict=True) if not bad]

    @property
    def timed(self) -> list[Result]:
        """The included records measured on a quiet machine: what timing statistics use.
        A contended request (its window's foreign CPU above the run's threshold) is left out
        of them and kept for acceptance counts, which do not depend on timing."""
        return [r for r in self.included if r.contended is not True]

    @property
    def n_contended(self) -> int:
        return sum(r.contended is True for r in self.included)


def _read_optional(path: Path, where: str, problems: list[str]) -> dict[str, Any] | None:
    if not path.exists():
        problems.append(f"run {where}: {path.name}: missing")
        return None
    try:
        return records.read_json(path)
    except records.RecordError as err:
        problems.append(f"run {where}: {err}")
        return None


def load_run(path: Path, *, keep_events: bool = False) -> Run:
    """Load one run directory (raises :class:`ConfigError` when its config is unusable).

    ``keep_events`` keeps each record's event times and texts (the acceptance-split study
    needs them; the summary does not).
    """
    where = path.name
    for name in records.RUN_FILES:
        if (path / name).exists() and not (path / name).is_file():
            raise ConfigError(f"run {where}: {name}: is a folder or special file, expected a file")
    try:
        config = records.read_json(path / records.CONFIG)
    except records.RecordError as err:
        raise ConfigError(f"run {where}: {err}") from err
    desc = describe(config, where=where)
    problems: list[str] = []
    recs, n_bad = records.read_results(path, keep_events=keep_events)
    if n_bad:
        problems.append(f"run {where}: {records.RESULTS}: {n_bad} unreadable line(s) skipped")
    errs = records.read_jsonl(path / records.ERRORS)
    if errs.n_bad_lines:
        problems.append(
            f"run {where}: {records.ERRORS}: {errs.n_bad_lines} unreadable line(s) skipped"
        )
    metrics = _read_optional(path / records.METRICS, where, problems)
    vram = _read_optional(path / records.VRAM, where, problems)
    log_path = path / records.SERVER_LOG
    log: list[LogEntry] | None = None
    has_markers = False
    n_marks = 0
    if records.in_repository(log_path).exists():
        text = log_path.read_text(encoding="utf-8", errors="replace")
        n_marks = text.count("\n" + records.MEASURE_MARKER) + text.startswith(
            records.MEASURE_MARKER)
        parsed = parse_server_log(text)
        log, has_markers = parsed.entries, parsed.has_markers
        if not has_markers and parsed.entries:
            problems.append(
                f"run {where}: {records.SERVER_LOG}: no runner markers; every draft-acceptance "
                "line counted as measured"
            )
    elif desc.drafter != "none":
        problems.append(f"run {where}: {records.SERVER_LOG}: missing")
    restarted = max(n_marks, len({r.server_start for r in recs}))
    if restarted > 1 and desc.drafter in STATEFUL_DRAFTERS:
        problems.append(
            f"run {where}: drafter {desc.drafter} keeps state across requests, and its server "
            f"started {restarted} times while the run measured: requests after a restart "
            "drafted from an emptied pool")
    return Run(
        path=path,
        desc=desc,
        records=recs,
        spurious=_screen(recs, [is_spurious(r.timings) for r in recs], where, problems),
        n_bad_lines=n_bad,
        errors=errs.rows,
        n_bad_error_lines=errs.n_bad_lines,
        metrics=metrics,
        vram=vram,
        log=log,
        log_has_markers=has_markers,
        problems=problems,
        measured_starts=restarted,
    )


# Drafters whose state outlives a request (mirrors artifact.campaign.runner: the analysis never
# imports the campaign package).
STATEFUL_DRAFTERS = frozenset({"ngram-mod", "ngram-cache"})
# A server's measured segments are counted by the ``measure begin`` markers of its log, not by
# their numbers: a runner that lost count after a kill numbered two starts alike.


class Loaded(Protocol):
    """What :func:`load_runs_with` needs of a loaded run: a :class:`Run`, or its reduction
    (:class:`artifact.analysis.reduced.Reduced`)."""

    @property
    def path(self) -> Path: ...
    @property
    def desc(self) -> RunDescription: ...
    @property
    def metrics(self) -> dict[str, Any] | None: ...
    @property
    def problems(self) -> list[str]: ...


L = TypeVar("L", bound=Loaded)


def load_runs(root: Path) -> tuple[list[Run], list[str]]:
    """Every run under ``root``, loaded by :func:`load_run` (see :func:`load_runs_with`)."""
    return load_runs_with(root, load_run)


def load_runs_with(root: Path, load: Callable[[Path], L]) -> tuple[list[L], list[str]]:
    """Every run under ``root`` (sorted by run id) and one-line warnings for skipped ones;
    ``load`` loads one run folder (:func:`load_run`, or the cache's
    :func:`artifact.analysis.runcache.load_reduced`).

    The cyclic garbage collector is paused while reading (:func:`gc_paused`).
    """
    with gc_paused():
        return _load_runs(root, load)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused (and restored after): records hold no reference
    cycles, and its passes over an ever larger heap made loading many runs super-linear."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load_runs(root: Path, load: Callable[[Path], L]) -> tuple[list[L], list[str]]:
    runs: list[L] = []
    warnings: list[str] = []
    if not root.is_dir():
        raise AnalysisError(f"{root}: runs directory not found")
    # "_kick", "_superseded": scratch and moved-aside data, not runs of the study; a run whose
    # data lie outside the repository (a symbolic link) is refused (records.run_folders)
    for sub in records.run_folders(root):
        if not (sub / records.CONFIG).exists():
            warnings.append(f"run {sub.name}: no {records.CONFIG}; not a run, skipped")
            continue
        try:
            run = load(sub)
        except ConfigError as err:
            warnings.append(f"{err}; run skipped")
            continue
        warnings.extend(run.problems)
        if (run.metrics or {}).get("complete") is not True:
            # The paper build never measures: an unfinished run is left out, and said so.
            warnings.append(f"run {sub.name}: incomplete ({records.METRICS} missing or not "
                            f"complete); left out (finish it with `doit campaign:{sub.name}`)")
            continue
        runs.append(run)
    unique = validate.unique_runs(runs, run_id=lambda r: r.desc.run_id, folder=lambda r: r.path,
                                  warnings=warnings)
    return unique, warnings


def family_of(run: Path) -> str | None:
    """The ``spec.family`` a run folder's ``config.json`` names, or None (no config, not JSON,
    no such field: not a run of a study; :func:`load_runs` reports it)."""
    try:
        spec = records.read_json(run / records.CONFIG).get("spec")
    except records.RecordError:
        return None
    family = spec.get("family") if isinstance(spec, dict) else None
    return family if isinstance(family, str) else None


def load_family(root: Path, family: str, *, keep_events: bool = False,
                only: frozenset[str] | None = None) -> tuple[list[Run], list[str]]:
    """The runs of one study's ``family`` under ``root`` (``only``: these folders), each
    loaded and screened by :func:`load_run`, one per run id (:func:`validate.unique_runs`: a
    copy of a run folder is skipped), sorted by run id; and the warnings met.
    """
    if not root.is_dir():
        raise AnalysisError(f"{root}: runs directory not found")
    runs: list[Run] = []
    warnings: list[str] = []
    for sub in records.run_folders(root):
        if family_of(sub) != family or (only is not None and sub.name not in only):
            continue
        try:
            run = load_run(sub, keep_events=keep_events)
        except ConfigError as err:
            warnings.append(f"{err}; run skipped")
            continue
        warnings.extend(run.problems)
        runs.append(run)
    return validate.unique_runs(runs, run_id=lambda r: r.desc.run_id, folder=lambda r: r.path,
                                warnings=warnings), warnings
