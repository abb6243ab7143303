"""Where a campaign's runs execute: the ``[executor]`` table of a campaign file or a site file.

``local`` (the default) measures one run after another on this machine; ``slurm`` submits one
job per run. The Slurm settings belong to a lab, not to a study, so they may live in an
uncommitted site file (``experiments/site.toml``, or the file named by ``$SPECDEC_SITE``) whose
``[executor]`` table is laid over the campaign's, key by key::

    [executor]
    kind = "slurm"

    [executor.slurm]
    partition = "gpu"            # -p
    account = "mylab"            # -A
    time = "01:30:00"            # --time: minutes, or [D-]HH:MM:SS
    cpus_per_task = 8            # -c
    mem = "32G"                  # --mem
    gres = "gpu:a100:1"          # --gres (or gpus_per_node = 1)
    constraint = "a100"          # -C: same hardware for every run of a study
    exclusive = true             # --exclusive: no other job disturbs the measurement
    requeue = true               # --requeue: preempted or failed-node jobs come back, resume
    extra = ["--qos=high"]       # any other sbatch option, as --name=value
    setup = ["module load cuda/12.4"]   # shell lines run before the job, on the node
    runs_dir = "/shared/specdec/runs"   # run directories on the shared filesystem
    cache_dir = "/shared/specdec/cache" # the pinned toolchain cache ($SPECDEC_CACHE on nodes)

Every mistake is an :class:`ExecutorSpecError` (a :class:`~artifact.errors.SpecError`) whose
message is one line naming the file and the field, like the rest of the campaign file.

Only ``setup`` lines are shell. Every other value ends up in the job script as an ``#SBATCH``
option or a shell word (:mod:`artifact.executors.slurm_script` writes it, quoting), so each is
checked here, where the settings are read, and again when the script is written
(:func:`slurm_problems`): no control or invisible format characters anywhere (a newline would
end an ``#SBATCH`` line and start a shell one); Slurm's own syntax for partition, account,
job name, constraint, mem and gres; ``extra`` options as ``--name=value`` with a plain value
(no spaces, quotes, ``#``, ``$`` or backslash, which sbatch reads as syntax), and none of the
options the executor sets itself; run and log folders without ``%`` or backslash (Slurm reads
them as file-name patterns in ``--output``).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from artifact import files, paths
from artifact.errors import SpecError

KINDS = ("local", "slurm")
SITE_ENV = "SPECDEC_SITE"
SITE_FILE = paths.EXPERIMENTS / "site.toml"
_TIME = re.compile(r"^(\d+-)?\d{1,2}(:\d{2}){0,2}$")
_SLURM_KEYS = {
    "partition", "account", "time", "cpus_per_task", "mem", "gres", "gpus_per_node",
    "constraint", "exclusive", "requeue", "extra", "setup", "runs_dir", "log_dir",
    "cache_dir", "poll_s", "signal_delay_s", "job_name",
}


_NAME = r"[A-Za-z0-9][A-Za-z0-9_.\-]*"
# Slurm syntax per field (ASCII only, so no look-alike or invisible character gets through).
_SYNTAX: dict[str, tuple[re.Pattern[str], str]] = {
    "partition": (re.compile(rf"{_NAME}(,{_NAME})*"),
                  "Slurm partition names (a letter or digit, then letters, digits, _ . -), "
                  "comma-separated"),
    "account": (re.compile(_NAME),
                "a Slurm account name (a letter or digit, then letters, digits, _ . -)"),
    "job_name": (re.compile(_NAME), "a job name (a letter or digit, then letters, digits, _ . -)"),
    "constraint": (re.compile(r"[A-Za-z0-9\[(][A-Za-z0-9_.\-,&|\[\]*:()]*"),
                   "Slurm node features (letters, digits, _ . -) joined by , & | [ ] * : ( )"),
    "mem": (re.compile(r"[0-9]+[KMGT]?"), "a size like 32G (digits, then K, M, G or T)"),
    "gres": (re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-:,]*"), "a Slurm GRES list like gpu:a100:1"),
}
_EXTRA = re.compile(r"--([a-z][a-z0-9-]*)=([A-Za-z0-9/\[(][A-Za-z0-9_.,:=@%/+*&|\[\]()!~^-]*)")
# Options the executor sets itself; an `extra` one would break the logs, the checkout or requeue.
MANAGED_OPTIONS = frozenset({"chdir", "output", "error", "open-mode", "signal", "job-name",
                             "array", "wrap", "parsable", "nodes", "wckey"})
# Control, format (invisible), surrogate, private-use, unassigned; line and paragraph separators.
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def control_char(value: str, *, allow_tab: bool = False) -> str | None:
    """The first control or invisible character of ``value``, as ``U+XXXX``; None if none.

    >>> [control_char(v) for v in ("/data/ünï cache", "a" + chr(10), "x" + chr(0x202E), "$(id)")]
    [None, 'U+000A', 'U+202E', None]
    """
    for c in value:
        if unicodedata.category(c) in _BAD_CATEGORIES and not (allow_tab and c == "\t"):
            return f"U+{ord(c):04X}"
    return None


def slurm_problem(name: str, value: str) -> str | None:
    """What is wrong with the string setting ``name`` (a field of :class:`SlurmSettings`, or
    ``extra`` for one extra option, ``setup`` for one setup line); None when it is fine.

    >>> slurm_problem("constraint", "[a100*2&ib]"), slurm_problem("mem", "32G;id")
    (None, "expected a size like 32G (digits, then K, M, G or T), got '32G;id'")
    >>> slurm_problem("cache_dir", "/a b/$(id)") is None
    True
    >>> slurm_problem("log_dir", "/logs/%j")
    "expected a folder without '%' or a backslash (Slurm reads them in log paths), got '/logs/%j'"
    """
    bad = control_char(value, allow_tab=name == "setup")
    if bad is not None:
        what = "one shell line" if name == "setup" else "a value"
        return f"expected {what} without control characters, got {bad} in {value!r}"
    if not value:
        return "expected a non-empty string"
    if name in _SYNTAX:
        pattern, said = _SYNTAX[name]
        return None if pattern.fullmatch(value) else f"expected {said}, got {value!r}"
    if name == "extra":
        m = _EXTRA.fullmatch(value)
        if m is None:
            return ("expected a long sbatch option '--name=value', the value a letter, digit, "
                    "/ [ or ( then letters, digits and _ . , : = @ % / + * & | [ ] ( ) ! ~ ^ - "
                    f"only, got {value!r}")
        if m.group(1) in MANAGED_OPTIONS:
            return f"--{m.group(1)} is set by the executor itself, got {value!r}"
        return None
    if name in ("runs_dir", "log_dir") and ("%" in value or "\\" in value):
        return ("expected a folder without '%' or a backslash (Slurm reads them in log paths), "
                f"got {value!r}")
    return None


def slurm_problems(s: SlurmSettings) -> Iterator[tuple[str, str]]:
    """Every ``(field, problem)`` of settings built in code or read from a file."""
    for name in ("partition", "account", "time", "mem", "gres", "constraint", "runs_dir",
                 "log_dir", "cache_dir", "job_name"):
        v = getattr(s, name)
        if v is None:
            continue
        problem = slurm_problem(name, v)
        if problem is None and name == "time" and not _TIME.fullmatch(v):
            problem = f"expected minutes or [D-]HH:MM:SS, got {v!r}"
        if problem is not None:
            yield name, problem
    for name in ("extra", "setup"):
        for i, line in enumerate(getattr(s, name)):
            problem = slurm_problem(name, line)
            if problem is not None:
                yield f"{name}[{i}]", problem


class ExecutorSpecError(SpecError):
    """An ``[executor]`` table is wrong; one line naming the file and the field."""


@dataclass(frozen=True, kw_only=True)
class SlurmSettings:
    """What ``sbatch`` is asked for, per run (one run = one job)."""

    partition: str | None = None
    account: str | None = None
    time: str | None = None  # sbatch --time (minutes or [D-]HH:MM:SS); None: the partition's
    cpus_per_task: int | None = None
    mem: str | None = None  # sbatch --mem, e.g. "16G"
    gres: str | None = None
    gpus_per_node: int | None = None
    constraint: str | None = None
    exclusive: bool = False
    requeue: bool = True
    extra: tuple[str, ...] = ()  # further sbatch options, e.g. "--qos=high"
    setup: tuple[str, ...] = ()  # shell lines before the job starts (module load ...)
    runs_dir: str | None = None  # absolute; None: the campaign's runs directory
    log_dir: str | None = None  # absolute; None: <runs dir>/_slurm/logs
    cache_dir: str | None = None  # absolute; None: this machine's cache (shared home)
    poll_s: float = 5.0  # how often the progress view asks squeue
    signal_delay_s: int = 120  # USR2 this long before the time limit: the job requeues itself
    job_name: str = "specdec"


@dataclass(frozen=True, kw_only=True)
class ExecutorSpec:
    kind: str = "local"
    slurm: SlurmSettings = field(default_factory=SlurmSettings)
    source: str = ""  # where the settings came from, for messages


def site_file() -> Path:
    env = os.environ.get(SITE_ENV)
    return Path(env) if env else SITE_FILE


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(paths.ROOT))
    except ValueError:
        return str(path)


def _fail(where: str, field_: str, msg: str) -> ExecutorSpecError:
    return ExecutorSpecError(f"{where}: {field_}: {msg}")


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _read_site(file: Path) -> dict[str, Any]:
    where = _rel(file)
    if not file.exists() and not os.environ.get(SITE_ENV):
        return {}  # no site file: the campaign's own settings
    doc = files.load_toml(file, ExecutorSpecError, where=where)
    for k in doc:
        if k != "executor":
            raise _fail(where, k, "unknown table (a site file holds only [executor])")
    table = doc.get("executor", {})
    if not isinstance(table, dict):
        raise _fail(where, "executor", "expected a table")
    return table


def parse_executor(raw: Any, *, where: str, base: Path, site: Path | None = None,
                   override_kind: str | None = None, read_site: bool = True) -> ExecutorSpec:
    """The campaign's ``[executor]`` table, with the site file's laid over it
    (``read_site=False``: the campaign's own, for a reader that never measures, such as the
    paper build: a typo in the uncommitted site file is not its to stop on)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _fail(where, "executor", "expected a table")
    site = site_file() if site is None else site
    site_raw = _read_site(site) if read_site else {}
    merged = _merge(raw, site_raw)
    source = where + (f" + {_rel(site)}" if site_raw else "")
    for k in merged:
        if k not in {"kind", "slurm"}:
            raise _fail(source, f"executor.{k}", "unknown key (allowed: kind, slurm)")
    kind = override_kind or merged.get("kind", "local")
    if kind not in KINDS:
        raise _fail(source, "executor.kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
    sraw = merged.get("slurm", {})
    if not isinstance(sraw, dict):
        raise _fail(source, "executor.slurm", "expected a table")
    return ExecutorSpec(kind=kind, slurm=_slurm(sraw, source, base), source=source)


def _slurm(t: dict[str, Any], where: str, base: Path) -> SlurmSettings:
    kw: dict[str, Any] = {}
    for k, v in t.items():
        f = f"executor.slurm.{k}"
        if k not in _SLURM_KEYS:
            raise _fail(where, f, f"unknown key (allowed: {', '.join(sorted(_SLURM_KEYS))})")
        if k in _SYNTAX:
            if not isinstance(v, str):
                raise _fail(where, f, f"expected a string, got {v!r}")
            problem = slurm_problem(k, v)
            if problem is not None:
                raise _fail(where, f, problem)
            kw[k] = v
        elif k == "time":
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                kw[k] = str(v)
            elif isinstance(v, str) and _TIME.fullmatch(v):
                kw[k] = v
            else:
                raise _fail(where, f, f"expected minutes or [D-]HH:MM:SS, got {v!r}")
        elif k in ("cpus_per_task", "gpus_per_node", "signal_delay_s"):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise _fail(where, f, f"expected a positive integer, got {v!r}")
            kw[k] = v
        elif k == "poll_s":
            if not isinstance(v, int | float) or isinstance(v, bool) or not 0 < v < 3600:
                raise _fail(where, f, f"expected seconds in (0, 3600), got {v!r}")
            kw[k] = float(v)
        elif k in ("exclusive", "requeue"):
            if not isinstance(v, bool):
                raise _fail(where, f, f"expected true or false, got {v!r}")
            kw[k] = v
        elif k in ("extra", "setup"):
            if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
                raise _fail(where, f, "expected a list of non-empty strings")
            for i, x in enumerate(v):
                problem = slurm_problem(k, x)
                if problem is not None:
                    raise _fail(where, f"{f}[{i}]", problem)
            kw[k] = tuple(v)
        else:  # runs_dir, log_dir, cache_dir
            if not isinstance(v, str) or not v:
                raise _fail(where, f, f"expected a path, got {v!r}")
            problem = slurm_problem(k, v)
            if problem is not None:
                raise _fail(where, f, problem)
            p = Path(v).expanduser()
            kw[k] = str(p if p.is_absolute() else (base / p).resolve())
    if "gres" in kw and "gpus_per_node" in kw:
        raise _fail(where, "executor.slurm.gpus_per_node", "set either gres or gpus_per_node")
    return SlurmSettings(**kw)


def sbatch_options(s: SlurmSettings) -> dict[str, str | bool]:
    """The long sbatch options these settings ask for (``extra`` included), by name.

    >>> sbatch_options(SlurmSettings(partition="gpu", gres="gpu:1", exclusive=True,
    ...                              extra=("--qos=high",)))
    {'partition': 'gpu', 'gres': 'gpu:1', 'exclusive': True, 'requeue': True, 'qos': 'high'}
    """
    out: dict[str, str | bool] = {}
    for name in ("partition", "account", "time", "cpus_per_task", "mem", "gres",
                 "gpus_per_node", "constraint"):
        v = getattr(s, name)
        if v is not None:
            out[name.replace("_", "-")] = str(v)
    if s.exclusive:
        out["exclusive"] = True
    out["requeue" if s.requeue else "no-requeue"] = True
    for opt in s.extra:
        name, _, value = opt[2:].partition("=")
        out[name] = value
    return out
