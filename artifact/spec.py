"""Campaign TOML files to frozen, validated :class:`RunSpec` objects.

A campaign file has a ``[campaign]`` table (``name``, ``description``), optional ``[defaults]``
and ``[server]`` tables, ``[models.<key>]`` tables, and one ``[[run]]`` table per run. A run
inherits every field from ``[defaults]`` and may override any of them. Every mistake is a
:class:`SpecError` whose message is one line naming the file and the field::

    experiments/campaigns/x.toml: run[2].k: expected a positive integer, got 'four'

Models are named by key. A model is either ``builtin = "smollm2-135m-q4_1"`` (fetched by the
toolchain), ``path = "..."`` (a GGUF of your own; relative paths are relative to the TOML), or
``derive = "<key>"`` with ``quant = "Q2_K"`` (made with ``llama-quantize`` from another model).
``[server] binary = "..."`` points at your own ``llama-server`` instead of the pinned build.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from artifact import files, paths
from artifact.errors import SpecError as SpecError
from artifact.executor_spec import ExecutorSpec, parse_executor
from artifact.runfiles import DRAFTERS

NGRAM_LOOKUP = ("ngram-mod", "ngram-simple", "ngram-map-k", "ngram-map-k4v")
MODEL_DRAFTERS = frozenset(d for d in DRAFTERS if d.startswith("draft-"))
# "control": a repeat of a no-draft baseline, measured interleaved with it (issue 16): the two
# should agree, so their ratio is the study's noise control.
# "core": the core study's cells (issue 29); "cost": verification rounds of a known width under
# the server's synthetic acceptance; "pilot": the short runs whose acceptance feeds the
# predictions committed before the core campaign. "memory": the core study's server, each
# configuration's peak resident memory (experiments/campaigns/memory.toml, issue 33).
FAMILIES = ("final", "curves", "ksweep", "baseline", "control", "kick", "accsplit", "workload",
            "core", "cost", "pilot", "memory")
STYLES = ("english", "code")  # synthetic filler styles (artifact.workloads.synthetic)
BUILTIN_MODELS = ("smollm2-135m-q4_1", "gemma3-270m-q4_k_m")  # artifact.toolchain.BUILTIN


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """One model of a campaign, by key."""

    key: str
    family: str  # e.g. "smollm2-135m": quantizations of one family share it
    quant: str  # e.g. "Q4_1"
    builtin: str | None = None
    path: str | None = None  # absolute, resolved against the campaign file
    derive: str | None = None  # key of the model this one is quantized from


@dataclass(frozen=True, kw_only=True)
class WorkloadSpec:
    """The synthetic side of a workload run (family ``workload``): the knobs of
    :mod:`artifact.workloads.synthetic`. The REAL side is the same in every condition."""

    condition: str  # label of the condition, e.g. "code+prefix"
    style: str  # "english" | "code"
    chars_per_token: float | None  # None: the real sessions' measured ratio
    prefix_tokens: int  # shared system prefix (a multiple of block); 0 = none
    block: int
    recurrent: bool  # filler from other sessions' real text
    # The interleaved design (issue 17): REAL is replayed ``replays`` times (sides real-a,
    # real-b, ...) beside every synthetic condition (this one first, then ``more``), all on one
    # server. Both enter the spec's hash only when set away from their defaults.
    replays: int = 1
    more: tuple[WorkloadSpec, ...] = ()
    # Take three (issue 28): every side its own deployment. A run that plays one side of the
    # interleaved design (``play``, a name from :meth:`sides`) sends only that side's sessions to
    # its own server. Enters the spec's hash only when set.
    play: str | None = None

    @property
    def interleaved(self) -> bool:
        return self.replays > 1 or bool(self.more)

    def sides(self) -> list[tuple[str, WorkloadSpec | None]]:
        """The run's sides in their fixed index order (a side's slot), with their synthetic
        knobs (None for a REAL replay).

        >>> w = WorkloadSpec(condition="english", style="english", chars_per_token=None,
        ...     prefix_tokens=0, block=16, recurrent=False)
        >>> [s for s, _ in w.sides()]
        ['real', 'synthetic']
        >>> [s for s, _ in WorkloadSpec(condition="e", style="english", chars_per_token=None,
        ...     prefix_tokens=0, block=16, recurrent=False, replays=2).sides()]
        ['real-a', 'real-b', 'synthetic-e']
        """
        if not self.interleaved:
            return [("real", None), ("synthetic", self)]
        reals: list[tuple[str, WorkloadSpec | None]] = [
            (f"real-{chr(ord('a') + i)}", None) for i in range(self.replays)]
        return reals + [(f"synthetic-{c.condition}", c) for c in (self, *self.more)]

    def played(self) -> list[tuple[str, WorkloadSpec | None]]:
        """The sides this run sends: every side, or only ``play`` (its own deployment).

        >>> w = WorkloadSpec(condition="e", style="english", chars_per_token=None,
        ...     prefix_tokens=0, block=16, recurrent=False, replays=2, play="real-b")
        >>> [s for s, _ in w.played()]
        ['real-b']
        """
        return [s for s in self.sides() if self.play is None or s[0] == self.play]


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """One fully resolved run: everything that changes what the run measures."""

    run_id: str
    campaign: str
    family: str
    target_model: str  # model key
    target: str  # model family, e.g. "smollm2-135m"
    target_quant: str
    drafter: str
    draft_model: str | None  # model key, only for draft-* drafters
    draft_quant: str | None
    k: int | None  # draft length (see campaign.server.draft_length_flags); None = default
    p_min: float | None  # --spec-draft-p-min; None = the server's default
    ctx_size: int  # tokens, per slot
    temperature: float
    top_k: int
    top_p: float
    seed: int
    n_predict: int  # tokens generated per request
    prompt_set: str  # name of a recipe in experiments/prompt_sets.toml
    concurrency: int  # parallel client streams; the server gets as many slots (-np)
    repeats: int  # passes over the prompt set, in the same order
    threads: int  # -t
    n_gpu_layers: int  # -ngl; 0 on CPU
    warmup: int  # unrecorded requests after every server start
    timeout_s: float  # per request, read timeout between stream events
    # Added for the acceptance-split study; each enters the hash only when set away from its
    # default (see LATER_FIELDS), so the runs measured before they existed stay current.
    ignore_eos: bool = False  # generate exactly n_predict tokens (the server ignores EOS)
    seed_per_repeat: bool = False  # request seed = seed + repeat: repeats are independent draws
    metrics_per_request: bool = False  # /metrics before and after each request (concurrency 1)
    window: str | None = None  # measurement window label, copied into every record
    ngram_match: int | None = None  # n-gram lookup length (ngram-mod's n-match, the others' size-n)
    # Benchmarking only: every drafted token is accepted (--spec-synth-rates 1,...,1), so each
    # verification round carries exactly k drafted tokens (issue 29's cost runs). The text
    # generated is not the model's; only the timings are used.
    synthetic_accept: bool = False
    # Runs with the same label are measured together, prompt-major over live servers: each
    # prompt goes to every run of the group in turn, in a seeded order (issue 16), so that
    # machine drift cannot bias a comparison between them. None: measured on its own.
    interleave: str | None = None
    # Workload runs only: multi-turn sessions of the session set named by ``prompt_set``
    # (experiments/session_sets.toml); n_predict is then the output cap per turn.
    workload: WorkloadSpec | None = None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if self.workload is None:  # keeps the hash of every prompt run as it was
            del d["workload"]
        else:  # the interleaved design's fields only where used (earlier runs stay current)
            w = d["workload"]
            if w["replays"] == 1:
                del w["replays"]
            if not w["more"]:
                del w["more"]
            else:
                w["more"] = [{k: v for k, v in m.items() if k not in ("replays", "more", "play")}
                             for m in w["more"]]
            if w["play"] is None:
                del w["play"]
        return d

    def request_seed(self, repeat: int) -> int:
        """The sampling seed of one request: ``seed``, plus the repeat when seeds vary.

        >>> s = RunSpec(run_id="r", campaign="c", family="final", target_model="m", target="t",
        ...     target_quant="Q", drafter="none", draft_model=None, draft_quant=None, k=None,
        ...     p_min=None, ctx_size=8, temperature=1.0, top_k=40, top_p=1.0, seed=100,
        ...     n_predict=8, prompt_set="p", concurrency=1, repeats=2, threads=1,
        ...     n_gpu_layers=0, warmup=0, timeout_s=1.0, seed_per_repeat=True)
        >>> s.request_seed(0), s.request_seed(1)
        (100, 101)
        """
        return self.seed + repeat if self.seed_per_repeat else self.seed

    @property
    def sha256(self) -> str:
        """Identity of the spec: a run is current when its recorded hash equals this."""
        d = self.as_dict()
        for name, default in LATER_FIELDS.items():
            if d[name] == default:
                del d[name]
        blob = json.dumps(d, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()


# Fields added after the first runs were measured, with their defaults: left out of the spec
# hash while at the default, so adding a field never makes a measured run stale.
LATER_FIELDS: dict[str, Any] = {
    "ignore_eos": False,
    "seed_per_repeat": False,
    "metrics_per_request": False,
    "window": None,
    "ngram_match": None,
    "interleave": None,
    "synthetic_accept": False,
}


@dataclass(frozen=True, kw_only=True)
class Campaign:
    name: str
    description: str
    file: Path
    server_binary: str | None  # None: the pinned build from the toolchain
    models: dict[str, ModelSpec]
    runs: tuple[RunSpec, ...]
    # Where runs execute (artifact.executor_spec): local unless the campaign or site says.
    executor: ExecutorSpec = field(default_factory=ExecutorSpec)
    # The analysis refuses to pool runs measured on different hardware unless this is true.
    pool_mixed_hardware: bool = False
    # Equivalence margins declared before measuring (issue 28), ``[equivalence]``: quantity ->
    # margin (relative for latencies and speedups, in points of acceptance for acceptance).
    equivalence: dict[str, float] = field(default_factory=dict)

    def run(self, run_id: str) -> RunSpec:
        for r in self.runs:
            if r.run_id == run_id:
                return r
        raise KeyError(run_id)


_DEFAULTS: dict[str, Any] = {
    "k": None,
    "p_min": None,
    "draft_model": None,
    "ctx_size": 2048,
    "temperature": 0.0,
    "top_k": 40,
    "top_p": 1.0,
    "seed": 42,
    "n_predict": 128,
    "concurrency": 1,
    "repeats": 1,
    "threads": 2,
    "n_gpu_layers": 0,
    "warmup": 2,
    "timeout_s": 120.0,
    **LATER_FIELDS,
}
_RUN_KEYS = frozenset(
    {"id", "family", "target", "drafter", "prompt_set", "workload"} | set(_DEFAULTS)
)
_WORKLOAD_KEYS = ("condition", "style", "chars_per_token", "prefix_tokens", "block", "recurrent")
_INTERLEAVED_KEYS = ("replays", "conditions", "deploy")
# How the interleaved design's sides are deployed: all on one server ("shared", take two), or
# each side on its own server ("per-side", take three: the run expands into one run per side,
# ``<id>-<side>``, measured together as an interleave group).
DEPLOYS = ("shared", "per-side")
_POS_INT = ("ctx_size", "n_predict", "concurrency", "repeats", "threads", "timeout_s")
_NONNEG_INT = ("top_k", "seed", "n_gpu_layers", "warmup")


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(paths.ROOT))
    except ValueError:
        return str(path)


class _Ctx:
    def __init__(self, file: Path) -> None:
        self.file = _rel(file)

    def fail(self, where: str, msg: str) -> SpecError:
        return SpecError(f"{self.file}: {where}: {msg}")


def _table(ctx: _Ctx, doc: dict[str, Any], key: str, allowed: set[str]) -> dict[str, Any]:
    t = doc.get(key, {})
    if not isinstance(t, dict):
        raise ctx.fail(key, "expected a table")
    for k in t:
        if k not in allowed:
            raise ctx.fail(f"{key}.{k}", f"unknown key (allowed: {', '.join(sorted(allowed))})")
    return t


def _check_value(ctx: _Ctx, where: str, name: str, v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        raise ctx.fail(f"{where}.{name}", f"expected a finite number, got {v!r}")
    if name in _POS_INT:
        ok = isinstance(v, int | float) and not isinstance(v, bool) and v > 0
        if name != "timeout_s":
            ok = ok and isinstance(v, int)
        if not ok:
            raise ctx.fail(f"{where}.{name}", f"expected a positive integer, got {v!r}")
        return float(v) if name == "timeout_s" else v
    if name in _NONNEG_INT:
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ctx.fail(f"{where}.{name}", f"expected an integer >= 0, got {v!r}")
        return v
    if name in ("k", "ngram_match"):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ctx.fail(f"{where}.{name}", f"expected a positive integer, got {v!r}")
        return v
    if name in ("temperature", "top_p", "p_min"):
        if v is None and name == "p_min":
            return None
        if not isinstance(v, int | float) or isinstance(v, bool) or v < 0:
            raise ctx.fail(f"{where}.{name}", f"expected a number >= 0, got {v!r}")
        if name in ("top_p", "p_min") and v > 1:
            raise ctx.fail(f"{where}.{name}", f"expected a number in [0, 1], got {v!r}")
        return float(v)
    if name in LATER_FIELDS and isinstance(LATER_FIELDS[name], bool):
        if not isinstance(v, bool):
            raise ctx.fail(f"{where}.{name}", f"expected true or false, got {v!r}")
        return v
    if name in ("id", "family", "target", "drafter", "prompt_set", "draft_model", "window",
                "interleave"):
        if v is None and name == "draft_model":
            return None
        if not isinstance(v, str) or not v:
            raise ctx.fail(f"{where}.{name}", f"expected a non-empty string, got {v!r}")
        return v
    raise ctx.fail(f"{where}.{name}", "unknown key")  # pragma: no cover - guarded by callers


def _workload(ctx: _Ctx, where: str, t: Any) -> WorkloadSpec:
    """``{condition = ..., ...}`` (one synthetic condition beside REAL), or the interleaved
    design ``{replays = 2, conditions = [{condition = ..., ...}, ...]}``."""
    w = f"{where}.workload"
    if not isinstance(t, dict):
        raise ctx.fail(w, "expected a table")
    if "conditions" in t or "replays" in t:
        for k in t:
            if k not in _INTERLEAVED_KEYS:
                raise ctx.fail(f"{w}.{k}", "unknown key (allowed with conditions: "
                               f"{', '.join(_INTERLEAVED_KEYS)})")
        reps = t.get("replays", 2)
        if not isinstance(reps, int) or isinstance(reps, bool) or not 1 <= reps <= 4:
            raise ctx.fail(f"{w}.replays", f"expected an integer in [1, 4], got {reps!r}")
        conds = t.get("conditions")
        if not isinstance(conds, list) or not conds:
            raise ctx.fail(f"{w}.conditions", "expected a non-empty list of condition tables")
        parsed = [_condition(ctx, f"{w}.conditions[{i}]", c) for i, c in enumerate(conds)]
        names = [c.condition for c in parsed]
        if len(set(names)) != len(names):
            raise ctx.fail(f"{w}.conditions", f"expected distinct condition labels, got {names}")
        deploy = t.get("deploy", "shared")
        if deploy not in DEPLOYS:
            raise ctx.fail(f"{w}.deploy", f"expected one of {', '.join(DEPLOYS)}, got {deploy!r}")
        # "per-side": a placeholder play ("*") that load_campaign expands into one run per side
        return replace(parsed[0], replays=reps, more=tuple(parsed[1:]),
                       play="*" if deploy == "per-side" else None)
    return _condition(ctx, w, t)


def _condition(ctx: _Ctx, w: str, t: Any) -> WorkloadSpec:
    if not isinstance(t, dict):
        raise ctx.fail(w, "expected a table")
    for k in t:
        if k not in _WORKLOAD_KEYS:
            raise ctx.fail(f"{w}.{k}", f"unknown key (allowed: {', '.join(_WORKLOAD_KEYS)})")
    cond = t.get("condition")
    if not isinstance(cond, str) or not re.fullmatch(r"[a-z0-9][a-z0-9+-]*", cond):
        raise ctx.fail(f"{w}.condition", "expected a label of lower-case letters, digits, '+' "
                       f"and '-', got {cond!r}")
    style = t.get("style", "english")
    if style not in STYLES:
        raise ctx.fail(f"{w}.style", f"expected one of {', '.join(STYLES)}, got {style!r}")
    cpt = t.get("chars_per_token")
    if cpt is not None and (not isinstance(cpt, int | float) or isinstance(cpt, bool)
                            or not 0.5 <= cpt <= 20):
        raise ctx.fail(f"{w}.chars_per_token", f"expected a number in [0.5, 20], got {cpt!r}")
    ints = {}
    for k, default, low in (("prefix_tokens", 0, 0), ("block", 16, 1)):
        v = t.get(k, default)
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            raise ctx.fail(f"{w}.{k}", f"expected an integer >= {low}, got {v!r}")
        ints[k] = v
    if ints["prefix_tokens"] % ints["block"]:
        raise ctx.fail(f"{w}.prefix_tokens", f"expected a multiple of block "
                       f"({ints['block']}), got {ints['prefix_tokens']}")
    rec = t.get("recurrent", False)
    if not isinstance(rec, bool):
        raise ctx.fail(f"{w}.recurrent", f"expected true or false, got {rec!r}")
    return WorkloadSpec(condition=cond, style=style,
                        chars_per_token=None if cpt is None else float(cpt),
                        prefix_tokens=ints["prefix_tokens"], block=ints["block"], recurrent=rec)


def _models(ctx: _Ctx, doc: dict[str, Any], base: Path) -> dict[str, ModelSpec]:
    raw = doc.get("models", {})
    if not isinstance(raw, dict) or not raw:
        raise ctx.fail("models", "expected at least one [models.<key>] table")
    out: dict[str, ModelSpec] = {}
    for key, t in raw.items():
        where = f"models.{key}"
        if not isinstance(t, dict):
            raise ctx.fail(where, "expected a table")
        for k in t:
            if k not in {"family", "quant", "builtin", "path", "derive"}:
                raise ctx.fail(f"{where}.{k}", "unknown key (allowed: builtin, derive, family, "
                               "path, quant)")
        sources = [s for s in ("builtin", "path", "derive") if s in t]
        if len(sources) != 1:
            raise ctx.fail(where, "expected exactly one of builtin, path, derive")
        for k in ("family", "quant"):
            if not isinstance(t.get(k), str) or not t[k]:
                raise ctx.fail(f"{where}.{k}", "expected a non-empty string")
        path = None
        if "path" in t:
            p = Path(t["path"]).expanduser()
            p = p if p.is_absolute() else (base / p)
            if not p.is_file():
                raise ctx.fail(f"{where}.path", f"file not found: {t['path']}")
            path = str(p.resolve())
        if "builtin" in t and t["builtin"] not in BUILTIN_MODELS:
            raise ctx.fail(f"{where}.builtin", f"expected one of {', '.join(BUILTIN_MODELS)}")
        out[key] = ModelSpec(key=key, family=t["family"], quant=t["quant"],
                             builtin=t.get("builtin"), path=path, derive=t.get("derive"))
    for key, m in out.items():
        if m.derive is not None and m.derive not in out:
            raise ctx.fail(f"models.{key}.derive", f"unknown model key {m.derive!r}")
    for key in out:  # a derive chain must end at a builtin or a path, not loop
        chain = [key]
        while (nxt := out[chain[-1]].derive) is not None:
            if nxt in chain:
                raise ctx.fail(f"models.{key}.derive", "cycle: " + " -> ".join([*chain, nxt]))
            chain.append(nxt)
    return out


def load_campaign(file: Path, *, executor_kind: str | None = None,
                  read_site: bool = True) -> Campaign:
    """Parse and validate one campaign file (``executor_kind`` overrides ``[executor] kind``;
    ``read_site=False``: the uncommitted site file is not read, for an analysis that never
    measures)."""
    ctx = _Ctx(file)
    doc = files.load_toml(file, SpecError, where=ctx.file)
    for k in doc:
        if k not in {"campaign", "defaults", "server", "models", "run", "executor",
                     "equivalence"}:
            raise ctx.fail(k, "unknown table (allowed: campaign, defaults, equivalence, "
                           "executor, models, run, server)")
    head = _table(ctx, doc, "campaign", {"name", "description", "pool_mixed_hardware"})
    pool_mixed = head.get("pool_mixed_hardware", False)
    if not isinstance(pool_mixed, bool):
        raise ctx.fail("campaign.pool_mixed_hardware", f"expected true or false, got "
                       f"{pool_mixed!r}")
    executor = parse_executor(doc.get("executor"), where=ctx.file, base=file.parent,
                              override_kind=executor_kind, read_site=read_site)
    name = head.get("name")
    if not isinstance(name, str) or not name:
        raise ctx.fail("campaign.name", "expected a non-empty string")
    server = _table(ctx, doc, "server", {"binary"})
    binary = server.get("binary")
    if binary is not None:
        bp = Path(str(binary)).expanduser()
        bp = bp if bp.is_absolute() else file.parent / bp
        if not bp.is_file():
            raise ctx.fail("server.binary", f"file not found: {binary}")
        binary = str(bp.resolve())
    defaults = _table(ctx, doc, "defaults", set(_RUN_KEYS) - {"id"})
    models = _models(ctx, doc, file.parent)
    recipes = prompt_set_names()
    raw_runs = doc.get("run", [])
    if not isinstance(raw_runs, list) or not raw_runs:
        raise ctx.fail("run", "expected at least one [[run]] table")
    runs: list[RunSpec] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_runs):
        if not isinstance(raw, dict):
            raise ctx.fail(f"run[{i}]", "expected a table ([[run]])")
        for spec in per_side(_run(ctx, f"run[{i}]", {**defaults, **raw}, models, name,
                                  recipes)):
            if spec.run_id in seen:
                raise ctx.fail(f"run[{i}].id", f"duplicate run id {spec.run_id!r}")
            seen.add(spec.run_id)
            runs.append(spec)
    return Campaign(name=name, description=str(head.get("description", "")), file=file,
                    server_binary=binary, models=models, runs=tuple(runs), executor=executor,
                    pool_mixed_hardware=pool_mixed, equivalence=_equivalence(ctx, doc))


# What an [equivalence] table may declare a margin for (issue 28).
EQUIVALENCE_KEYS = ("speedup", "e2e", "tpot", "ttft", "acceptance")


def _equivalence(ctx: _Ctx, doc: dict[str, Any]) -> dict[str, float]:
    """``[equivalence]``: each key of :data:`EQUIVALENCE_KEYS` a margin in (0, 1)."""
    t = _table(ctx, doc, "equivalence", set(EQUIVALENCE_KEYS))
    out: dict[str, float] = {}
    for k, v in t.items():
        if not isinstance(v, int | float) or isinstance(v, bool) or not 0 < v < 1:
            raise ctx.fail(f"equivalence.{k}", f"expected a margin in (0, 1), e.g. 0.05 for "
                           f"+-5 %, got {v!r}")
        out[k] = float(v)
    return out


def _run(ctx: _Ctx, where: str, raw: dict[str, Any], models: dict[str, ModelSpec],
         campaign: str, recipes: set[str] | None) -> RunSpec:
    for k in raw:
        if k not in _RUN_KEYS:
            raise ctx.fail(f"{where}.{k}", "unknown key")
    for k in ("id", "family", "target", "drafter", "prompt_set"):
        if k not in raw:
            raise ctx.fail(f"{where}.{k}", "missing (set it in the run or in [defaults])")
    v = {**_DEFAULTS, **{k: _check_value(ctx, where, k, x) for k, x in raw.items()
                         if k != "workload"}}
    workload = _workload(ctx, where, raw["workload"]) if "workload" in raw else None
    if (workload is None) != (v["family"] != "workload"):
        raise ctx.fail(f"{where}.workload", "expected a [run.workload] table exactly when "
                       "family is \"workload\"")
    for k in ("id", "prompt_set"):  # each becomes a file or folder name
        if not files.is_safe_name(v[k]):
            raise ctx.fail(f"{where}.{k}", "expected letters, digits, '-', '_' or '.', starting "
                           f"with a letter or digit, got {v[k]!r}")
    # a workload run's prompt_set names a session set (experiments/session_sets.toml)
    if workload is None and recipes is not None and v["prompt_set"] not in recipes:
        raise ctx.fail(f"{where}.prompt_set", f"unknown prompt set {v['prompt_set']!r} "
                       f"(experiments/prompt_sets.toml has: {', '.join(sorted(recipes))})")
    if v["family"] not in FAMILIES:
        raise ctx.fail(f"{where}.family", f"expected one of {', '.join(FAMILIES)}, "
                       f"got {v['family']!r}")
    if v["drafter"] not in DRAFTERS:
        raise ctx.fail(f"{where}.drafter", f"unknown drafter {v['drafter']!r} (expected one of "
                       f"{', '.join(DRAFTERS)})")
    if v["target"] not in models:
        raise ctx.fail(f"{where}.target", f"unknown model key {v['target']!r}")
    needs_model = v["drafter"] in MODEL_DRAFTERS
    if needs_model and v["draft_model"] is None:
        raise ctx.fail(f"{where}.draft_model", f"drafter {v['drafter']} needs a draft model")
    if not needs_model and v["draft_model"] is not None:
        raise ctx.fail(f"{where}.draft_model", f"drafter {v['drafter']} takes no draft model")
    if v["draft_model"] is not None and v["draft_model"] not in models:
        raise ctx.fail(f"{where}.draft_model", f"unknown model key {v['draft_model']!r}")
    if v["metrics_per_request"] and v["concurrency"] != 1:
        raise ctx.fail(f"{where}.metrics_per_request", "needs concurrency = 1 (counter deltas "
                       "of overlapping requests cannot be told apart)")
    per_side = workload is not None and workload.play is not None
    if per_side and v["interleave"] is None:
        raise ctx.fail(f"{where}.interleave", "a workload with deploy = \"per-side\" runs each "
                       "side on its own server, measured together: name its interleave group")
    if v["interleave"] is not None and not per_side and (v["concurrency"] != 1
                                                         or workload is not None):
        raise ctx.fail(f"{where}.interleave", "interleaved runs send one request at a time "
                       "(concurrency = 1) and are not workload runs, except workloads with "
                       "deploy = \"per-side\"")
    if v["ngram_match"] is not None and v["drafter"] not in NGRAM_LOOKUP:
        raise ctx.fail(f"{where}.ngram_match", "only the n-gram drafters "
                       f"({', '.join(NGRAM_LOOKUP)}) take a lookup length")
    if v["synthetic_accept"] and (v["drafter"] == "none" or v["k"] is None):
        raise ctx.fail(f"{where}.synthetic_accept", "needs a drafter and its draft length k "
                       "(every one of the k drafted tokens is accepted)")
    if v["drafter"] in ("none", "ngram-cache") and v["k"] is not None:
        raise ctx.fail(f"{where}.k", f"drafter {v['drafter']} takes no draft length "
                       "(ngram-cache drafts a fixed length in this llama-server)")
    target = models[v["target"]]
    draft = models[v["draft_model"]] if v["draft_model"] else None
    known = {f.name for f in fields(RunSpec)}
    kw = {k: x for k, x in v.items() if k in known and k != "target"}
    return RunSpec(
        **kw,
        run_id=v["id"],
        campaign=campaign,
        target_model=target.key,
        target=target.family,
        target_quant=target.quant,
        draft_quant=draft.quant if draft else None,
        workload=workload,
    )


def per_side(spec: RunSpec) -> list[RunSpec]:
    """A run whose workload is deployed per side, as one run per side (``<id>-<side>``, playing
    only that side); any other run as itself."""
    w = spec.workload
    if w is None or w.play != "*":
        return [spec]
    return [replace(spec, run_id=f"{spec.run_id}-{name}", workload=replace(w, play=name))
            for name, _ in w.sides()]


def prompt_set_names(file: Path = paths.PROMPT_RECIPES) -> set[str] | None:
    """Names of the prompt-set recipes (``None`` when the recipe file is absent), so that an
    unknown prompt set is caught when the campaign is read, not after the toolchain build."""
    if not file.exists():
        return None
    doc = files.load_toml(file, SpecError, where=_rel(file))
    sets = doc.get("sets", {})
    return set(sets) if isinstance(sets, dict) else set()


def campaign_files() -> list[Path]:
    return sorted(paths.CAMPAIGNS.glob("*.toml"))
