"""Where a claim comes from: its committed runs (folder, files, measured cost) and where its
number stands in ``paper.html``. Read by the reproduction report and the claims map
(``docs/claims.md``).

A claim's ``runs`` in the ledger are run ids or shell-style patterns (``final-ngram-*``,
``*``); :func:`expand_runs` matches them against the committed run folders as the analysis
lists them (:func:`artifact.records.run_folders`: scratch folders, whose names start with ``_``
or ``.``, never match, and a run folder leading out of the repository is refused).
"""

from __future__ import annotations

import fnmatch
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import paths, records


@dataclass(frozen=True, kw_only=True)
class RunSource:
    """One committed run, as a reader of the report or the README sees it."""

    run_id: str
    path: Path
    files: tuple[str, ...]  # the run folder's files, sorted
    wall_s: float | None  # measured: model load + warm-up + measurement, from metrics.json
    cpu: str  # "2 cores, Intel(R) Xeon(R) Processor" as config.json recorded it
    gpu: str | None
    threads: int | None
    models: tuple[str, ...]  # the target and draft model keys of the spec
    campaign: str | None = None  # the campaign file's name that measured it, e.g. "cpu-study"


@dataclass(frozen=True, kw_only=True)
class PaperSpot:
    """One place in paper.html where a claim's number is printed."""

    anchor: str  # the element id, e.g. claim-baseline-tok-s-1
    section: str  # the heading it stands under, e.g. "Abstract", "Results"


def expand_runs(patterns: Sequence[str], runs_root: Path) -> list[str]:
    """The committed run ids that ``patterns`` name, in a stable order.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for d in ("final-a", "final-b", "_kick", "other"): (root / d).mkdir()
    >>> expand_runs(["final-*", "other"], root)
    ['final-a', 'final-b', 'other']
    """
    names = [p.name for p in records.run_folders(runs_root)]  # refuses one leading outside
    out: list[str] = []
    for pat in patterns:
        for n in names:
            if fnmatch.fnmatchcase(n, pat) and n not in out:
                out.append(n)
    return out


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run_source(run_dir: Path) -> RunSource:
    """What the run folder says about itself (missing fields stay ``None``, never invented)."""
    metrics = _json(run_dir / "metrics.json")
    config = _json(run_dir / "config.json")
    env = config.get("environment") or {}
    spec = config.get("spec") or {}
    parts = [metrics.get("measure_s"), *(metrics.get("model_load_s") or []),
             *(metrics.get("warmup_s") or [])]
    wall = sum(float(p) for p in parts if isinstance(p, int | float)) if metrics else None
    cores, model = env.get("cpu_cores"), env.get("cpu_model")
    cpu = ", ".join(str(x) for x in (f"{cores} cores" if cores else None, model) if x)
    gpu = env.get("gpu")
    models = tuple(str(spec[k]) for k in ("target_model", "draft_model") if spec.get(k))
    threads = spec.get("threads")
    return RunSource(
        run_id=run_dir.name, path=run_dir,
        files=tuple(sorted(p.name for p in run_dir.iterdir() if p.is_file())),
        wall_s=wall, cpu=cpu or "unknown CPU",
        gpu=str(gpu) if gpu else None,
        threads=int(threads) if isinstance(threads, int) else None, models=models,
        campaign=str(config["campaign"]) if config.get("campaign") else None,
    )


def claim_runs(patterns: Sequence[str], runs_root: Path) -> list[RunSource]:
    found = [run_source(runs_root / r) for r in expand_runs(patterns, runs_root)]
    # the studies with runs of their own: workload, realism and the core study, take three
    for other in (paths.WORKLOAD_RUNS, paths.REALISM_RUNS, paths.CORE_RUNS, paths.MEMORY_RUNS):
        if not found and runs_root == paths.RUNS:
            found = [run_source(other / r) for r in expand_runs(patterns, other)]
    return found


_HEADING = re.compile(
    r'<h[1-3][^>]*>(?P<h>.*?)</h[1-3]>|<div class="abstract-title">(?P<a>.*?)</div>'
    r'|<(?:span|a)\b[^>]*\bid="(?P<id>claim-[^"]+)"[^>]*\bclass="claim\b[^"]*"', re.S)
_TAG = re.compile(r"<[^>]+>")


def paper_spots(paper_html: str) -> dict[str, list[PaperSpot]]:
    """Each claim id's printed places in ``paper.html`` (anchors ``claim-<id>-<n>``).

    The number is a span, or a link to its row in ``numbers.html`` (the provenance layer).

    >>> page = ('<div class="abstract-title">Abstract</div><span id="claim-x-1" class="claim">'
    ...         '<h1 id="r">3 Results</h1><a href="numbers.html#n3" id="claim-x-2" '
    ...         'class="claim num" title="t">')
    >>> [(s.anchor, s.section) for s in paper_spots(page)["x"]]
    [('claim-x-1', 'Abstract'), ('claim-x-2', '3 Results')]
    """
    spots: dict[str, list[PaperSpot]] = {}
    section = "Title"
    for m in _HEADING.finditer(paper_html):
        if m.group("id"):
            anchor = m.group("id")
            cid = anchor[len("claim-"):].rsplit("-", 1)[0]
            spots.setdefault(cid, []).append(PaperSpot(anchor=anchor, section=section))
        else:
            raw = m.group("h") if m.group("h") is not None else m.group("a")
            section = " ".join(html.unescape(_TAG.sub("", raw)).split()) or section
    return spots


def human_duration(seconds: float | None) -> str:
    """``None`` → "not recorded"; else rounded for a reader.

    >>> [human_duration(s) for s in (None, 25, 125, 3725)]
    ['not recorded', 'under 1 min', 'about 2 min', 'about 1 h 2 min']
    """
    if seconds is None:
        return "not recorded"
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under 1 min"
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"
