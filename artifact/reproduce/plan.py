"""What a reproduction reruns, where it writes, and how long it should take.

A reproduction reruns the study's own runs (same campaign file, same specs) into
``experiments/reproductions/<hardware slug>-<date>[-<label>]/runs/``, beside and never inside the
committed ``experiments/runs/``. It may be the whole study, a named subset of runs, or the
kick-sized smoke version (three runs, one prompt per domain). Its ``reproduction.json`` records
the selection, the machine, the calibration, each run's wall time and the machine's load, and is
what a rerun reads to resume.

The ETA is the committed runs' own wall times (model load, warm-up and measurement, from their
``metrics.json``), scaled to the prompts selected and by a calibration factor: the same requests
timed on this machine over the committed records' times. Once runs have finished, their measured
time replaces the calibration's guess.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import files, paths, records
from artifact.analysis.validate import calibration
from artifact.errors import PlanError
from artifact.reproduce import studies

SCHEMA = 1
MANIFEST = "reproduction.json"
RUNS = "runs"

# The kick-sized smoke version of the first study: a no-draft baseline, an n-gram drafter and a
# draft model, one prompt per domain, at the study's own protocol (so the committed runs give the
# reference). Each other study names its own (artifact.reproduce.studies).
KICK_RUNS = studies.STUDIES["first"].kick_runs
KICK_PROMPTS_PER_DOMAIN = studies.STUDIES["first"].kick_prompts_per_domain


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Which runs, and which of their prompts (``None``: all) or sessions (``None``: all)."""

    label: str  # "full", "kick" or "subset": part of the folder name
    runs: tuple[str, ...]
    prompts_per_domain: int | None = None
    sessions: int | None = None  # a session study: the first N sessions of each run

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"label": self.label, "runs": list(self.runs),
                             "prompts_per_domain": self.prompts_per_domain}
        if self.sessions is not None:  # only then: a prompt study's selection keeps its shape
            d["sessions"] = self.sessions
        return d


def _positive(flag: str, n: int | None) -> None:
    if n is not None and n < 1:
        raise PlanError(f"{flag}: expected a positive integer, got {n}")


def select(available: Sequence[str], *, patterns: Sequence[str] = (), kick: bool = False,
           prompts_per_domain: int | None = None, study: studies.Study | None = None,
           windows: Sequence[str] = (), window_of: Mapping[str, str | None] | None = None,
           sessions: int | None = None) -> Selection:
    """The runs to reproduce, in the campaign's order.

    ``study`` (default: the first) names the kick and how a subset is cut below the runs:
    ``prompts_per_domain`` for a study of prompts, ``sessions`` for one of sessions;
    ``windows`` keeps the runs measured in those windows (``window_of``: each run's window).

    >>> ids = ["final-none", "final-ngram-mod", "final-draft-self", "ksweep-x"]
    >>> select(ids)
    Selection(label='full', runs=('final-none', 'final-ngram-mod', 'final-draft-self', 'ksweep-x'), prompts_per_domain=None, sessions=None)
    >>> select(ids, patterns=["final-*"], prompts_per_domain=2).runs
    ('final-none', 'final-ngram-mod', 'final-draft-self')
    >>> select(ids, kick=True).prompts_per_domain
    1
    >>> select(ids, patterns=["nope-*"])
    Traceback (most recent call last):
    ...
    artifact.errors.PlanError: --runs: 'nope-*' matches no run of the campaign (have: final-none, final-ngram-mod, final-draft-self, ksweep-x)
    """  # noqa: E501
    study = study or studies.STUDIES["first"]
    _positive("--prompts-per-domain", prompts_per_domain)
    _positive("--sessions", sessions)
    if study.sessions and prompts_per_domain is not None:
        raise PlanError(f"--prompts-per-domain: the {study.name} study plays sessions, not "
                        "prompts; give --sessions N")
    if not study.sessions and sessions is not None:
        raise PlanError(f"--sessions: the {study.name} study sends prompts, not sessions; "
                        "give --prompts-per-domain N")
    if kick:
        if patterns or windows:
            raise PlanError("--kick: a fixed selection; give it without --runs or --windows")
        missing = [r for r in study.kick_runs if r not in available]
        if missing:
            raise PlanError(f"--kick: the campaign has no run {missing[0]!r}")
        return Selection(label="kick", runs=study.kick_runs,
                         prompts_per_domain=None if study.sessions else
                         prompts_per_domain or study.kick_prompts_per_domain,
                         sessions=sessions or study.kick_sessions)
    pool = list(available)
    if windows:
        known = sorted({w for w in (window_of or {}).values() if w})
        for w in windows:
            if w not in known:
                raise PlanError(f"--windows: {w!r} is no measurement window of the campaign "
                                f"(have: {', '.join(known) or 'none'})")
        pool = [r for r in pool if (window_of or {}).get(r) in windows]
    chosen: set[str] = set(pool)
    if patterns:
        chosen = set()
        for pat in patterns:
            hit = [r for r in pool if fnmatch.fnmatchcase(r, pat)]
            if not hit:
                where = "of the windows asked" if windows else "of the campaign"
                raise PlanError(f"--runs: {pat!r} matches no run {where} "
                                f"(have: {', '.join(pool)})")
            chosen.update(hit)
    runs = tuple(r for r in available if r in chosen)
    full = len(runs) == len(available) and prompts_per_domain is None and sessions is None
    return Selection(label="full" if full else "subset", runs=runs,
                     prompts_per_domain=prompts_per_domain, sessions=sessions)


def prompt_subset(prompts: Sequence[tuple[str, str]], per_domain: int | None) -> list[str] | None:
    """The first ``per_domain`` prompt ids of each domain, in set order (``None``: all).

    >>> prompt_subset([("c1", "code"), ("c2", "code"), ("m1", "math")], 1)
    ['c1', 'm1']
    >>> prompt_subset([("c1", "code")], None) is None
    True
    """
    if per_domain is None:
        return None
    taken: dict[str, int] = {}
    out = []
    for pid, domain in prompts:
        if taken.get(domain, 0) < per_domain:
            taken[domain] = taken.get(domain, 0) + 1
            out.append(pid)
    return out


def folder_name(slug: str, day: dt.date, selection: Selection, study: str = "first") -> str:
    """``<hardware slug>-<yyyymmdd>`` for the whole study, ``-<label>`` appended otherwise;
    a subset also gets a short hash of what it selects, so two subsets never share a folder.
    A study other than the first is named after the date (``-core``, ``-core-kick``).

    >>> day = dt.date(2026, 11, 30)
    >>> folder_name("intel-xeon-processor-2c", day, Selection(label="kick", runs=("a",)))
    'intel-xeon-processor-2c-20261130-kick'
    >>> folder_name("x-2c", day, Selection(label="subset", runs=("a",), prompts_per_domain=3))
    'x-2c-20261130-subset-46eeef'
    >>> folder_name("x-2c", day, Selection(label="kick", runs=("a",)), "core")
    'x-2c-20261130-core-kick'
    """
    base = f"{slug}-{day:%Y%m%d}" + ("" if study == "first" else f"-{study}")
    if selection.label == "full":
        return base
    if selection.label == "subset":
        digest = hashlib.sha256(json.dumps(selection.as_dict(), sort_keys=True).encode())
        return f"{base}-subset-{digest.hexdigest()[:6]}"
    return f"{base}-{selection.label}"


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """``reproduction.json`` of ``folder``, its fields' types checked; ``None`` when there is
    none. A field of the wrong type is one line naming it (:func:`check_manifest`)."""
    if not (folder / MANIFEST).is_file():
        return None
    try:
        m = records.read_json(folder / MANIFEST)
    except ValueError as err:
        raise PlanError(f"{folder / MANIFEST}: {err}") from err
    check_manifest(m, folder / MANIFEST)
    return m


_NONE = type(None)
# the fields the resume and the report read, with the types execute.py writes
_MANIFEST_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "selection": ((dict,), "an object"), "campaign": ((str,), "a string"),
    "started": ((str, _NONE), "a string or null"), "finished": ((str, _NONE), "a string or null"),
    "complete": ((bool,), "true or false"), "calibration": ((dict, _NONE), "an object or null"),
    "expected_s": ((dict,), "an object"), "runs": ((dict,), "an object"),
    "load": ((list,), "a list"), "cpu_count": ((int, _NONE), "an integer or null"),
}


def _is(v: Any, types: tuple[type, ...]) -> bool:
    return isinstance(v, types) and (bool in types or not isinstance(v, bool))


def check_manifest(m: Any, file: Path) -> None:
    """Raise :class:`PlanError`, one line naming the field, unless ``m`` has the manifest's types.

    >>> check_manifest({"runs": {"r": {"wall_s": "slow"}}}, Path("reproduction.json"))
    Traceback (most recent call last):
    ...
    artifact.errors.PlanError: reproduction.json: field 'runs.r.wall_s': expected a number, \
got 'slow'
    """
    def fail(field: str, said: str, v: Any) -> PlanError:
        return PlanError(f"{file}: field {field!r}: expected {said}, got {v!r}")

    num = (int, float)
    if not isinstance(m, dict):
        raise PlanError(f"{file}: expected a JSON object, got {type(m).__name__}")
    for k, (types, said) in _MANIFEST_FIELDS.items():
        if k in m and not _is(m[k], types):
            raise fail(k, said, m[k])
    for r, v in m.get("expected_s", {}).items():
        if not _is(v, num):
            raise fail(f"expected_s.{r}", "a number", v)
    for r, v in m.get("runs", {}).items():
        if not isinstance(v, dict):
            raise fail(f"runs.{r}", "an object", v)
        if not _is(v.get("wall_s", 0.0), num):
            raise fail(f"runs.{r}.wall_s", "a number", v["wall_s"])
    for i, x in enumerate(m.get("load", [])):
        if not isinstance(x, dict):
            raise fail(f"load[{i}]", "an object", x)
    c = m.get("calibration")
    if c is not None:  # its times and their ratio, by the validation layer's rules
        calibration.check(c, str(file), PlanError)
        if not isinstance(c.get("prompt_ids", []), list):
            raise fail("calibration.prompt_ids", "a list", c["prompt_ids"])


def committed_runs() -> list[Path]:
    """The folders a reproduction never writes into: the committed runs
    (:data:`artifact.paths.COMMITTED_RUNS`) and each reproduction's own runs folder."""
    return [*paths.COMMITTED_RUNS, *sorted(paths.REPRODUCTIONS.glob(f"*/{RUNS}"))]


def check_into(folder: Path, *, committed: Sequence[Path] | None = None) -> Path:
    """``folder`` (``--into``), a reproduction's own folder: :class:`PlanError`, one line, when
    it is a file, or lies in (or is) a folder of :func:`committed_runs` (links resolved).

    >>> import tempfile
    >>> runs = Path(tempfile.mkdtemp()) / "runs"
    >>> check_into(runs.parent / "rerun", committed=[runs]) == runs.parent / "rerun"
    True
    >>> check_into(runs / "final-none", committed=[runs])
    Traceback (most recent call last):
    ...
    artifact.errors.PlanError: --into .../runs/final-none: inside the committed runs .../runs, \
which only a campaign writes; choose a folder of the reproduction's own ...
    """
    files.folder(folder, what="--into", error=PlanError)
    real = Path(os.path.realpath(folder))
    for runs in committed_runs() if committed is None else committed:
        if real.is_relative_to(os.path.realpath(runs)):
            raise PlanError(f"--into {folder}: inside the committed runs {paths.shown(runs)}, "
                            "which only a campaign writes; choose a folder of the "
                            "reproduction's own (default: experiments/reproductions/"
                            "<hardware>-<date>)")
    return folder


def check_reference(folder: Path) -> Path:
    """``folder`` (``--reference``), the runs a reproduction is compared with: :class:`PlanError`,
    one line, when it is a file, checked before anything is measured (a folder that is not one
    of runs is said when the comparison reads it)."""
    return files.folder(folder, what="--reference", error=PlanError)


def resumable(folder: Path, selection: Selection, campaign: str) -> bool:
    """True when ``folder`` holds a reproduction of exactly this selection (resume it).

    A folder holding another selection is an error: reproductions are never mixed.
    """
    files.folder(folder, what="reproduction folder", error=PlanError)
    manifest = read_manifest(folder)
    if manifest is None:
        if folder.exists() and any(folder.iterdir()):
            raise PlanError(f"{folder}: exists and is not a reproduction (no {MANIFEST})")
        return False
    if manifest.get("selection") != selection.as_dict() or manifest.get("campaign") != campaign:
        raise PlanError(f"{folder / MANIFEST}: field 'selection': this folder reproduces "
                        f"{manifest.get('selection')}, not {selection.as_dict()}; "
                        "choose another folder with --into")
    return True


# --- ETA --------------------------------------------------------------------------------------


def committed_seconds(metrics: Mapping[str, Any]) -> float:
    """A committed run's wall time: model loads, warm-ups and measurement (``metrics.json``).

    >>> committed_seconds({"measure_s": 100.0, "model_load_s": [0.5], "warmup_s": [1.5]})
    102.0
    """
    return (float(metrics.get("measure_s", 0.0))
            + sum(float(x) for x in metrics.get("model_load_s", []))
            + sum(float(x) for x in metrics.get("warmup_s", [])))


def expected_seconds(metrics: Mapping[str, Any], n_prompts: int | None, scale: float) -> float:
    """What a rerun of a committed run should take here: its time for ``n_prompts`` prompts.

    Load and warm-up are paid once whatever the number of prompts; measurement scales with it.

    >>> expected_seconds({"measure_s": 100.0, "model_load_s": [1.0], "warmup_s": [1.0],
    ...                   "n_expected": 10}, 5, 2.0)
    104.0
    """
    fixed = (sum(float(x) for x in metrics.get("model_load_s", [])[:1])
             + sum(float(x) for x in metrics.get("warmup_s", [])[:1]))
    measure = float(metrics.get("measure_s", 0.0))
    n_all = int(metrics.get("n_expected") or 0)
    if n_prompts is not None and n_all:
        measure *= min(n_prompts, n_all) / n_all
    return scale * (fixed + measure)


def eta_seconds(expected: Mapping[str, float], done: Mapping[str, float],
                running: str | Collection[str] = (), running_fraction: float = 0.0) -> float:
    """Seconds left: runs not done at their expected time, corrected by how the finished ones
    compared with their own expectation, less the part of the running ones already done (an
    interleaved group runs together).

    >>> eta_seconds({"a": 10.0, "b": 20.0, "c": 30.0}, {"a": 15.0})
    75.0
    >>> eta_seconds({"a": 10.0, "b": 20.0}, {}, running="a", running_fraction=0.5)
    25.0
    >>> eta_seconds({"a": 10.0, "b": 20.0}, {}, running=("a", "b"), running_fraction=0.5)
    15.0
    """
    now = {running} if isinstance(running, str) else set(running)
    exp_done = sum(expected[r] for r in done if r in expected)
    drift = sum(done.values()) / exp_done if exp_done > 0 else 1.0
    left = 0.0
    for run, secs in expected.items():
        if run in done:
            continue
        share = 1.0 - running_fraction if run in now else 1.0
        left += secs * share
    return left * drift


def clock(seconds: float) -> str:
    """``m:ss`` or ``h:mm:ss``.

    >>> clock(75), clock(3725)
    ('1:15', '1:02:05')
    """
    s = int(max(seconds, 0) + 0.5)
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"
