"""``numbers.html``: every number ``paper.html`` prints, with where it comes from (issue 33).

Each number the manuscript prints from a computed file is registered while ``paper.html.md`` is
rendered (:mod:`artifact.render.provenance`). For each, this module finds:

* its **key** in ``vars.json`` (or, for a claim read from the summary, the summary's field);
* the **fields** of ``experiments/analysis/*.json`` that value was computed from
  (``sources.json``, written with ``vars.json``); a value the build counted or selected from a
  file rather than read from one field names the file's top (``core.json#``);
* the **runs** each field was computed from: the run folders the field's path names (a run id
  on the path; an ancestor's ``run_id``, ``run`` or ``baseline_run``; a realism stratum, a core
  study's target, task and drafter, an acceptance-split window, batch, budget and drafter,
  matched against the folder names of the file's runs, a mapping's key among them with the
  no-draft run its cell is measured against), or else every run the file was computed from;
* the **claim** of ``experiments/claims.toml`` that checks it, with its tolerance, if any.

``numbers.json`` holds the same for programs and tests; ``numbers.html`` (Jinja, escaped) lists
them in the paper's order, each row linking back to the number in ``paper.html`` and to the
committed run folders.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from artifact import files, paths
from artifact.claims import Claim
from artifact.errors import ManuscriptError
from artifact.render.provenance import COUNT, Entry, pointer

# the analysis file each group of vars.json is computed from (others: summary.json)
FILE_OF_GROUP = {"accsplit": "accsplit.json", "workload": "workload.json",
                 "costmodel": "costmodel.json", "realism": "realism.json", "core": "core.json",
                 "memory": "memory.json"}
# the run folders each analysis file is computed from
RUN_FOLDERS: dict[str, tuple[Path, ...]] = {
    "summary.json": (paths.RUNS,), "accsplit.json": (paths.RUNS,),
    "workload.json": (paths.WORKLOAD_RUNS,), "costmodel.json": (paths.COST_RUNS, paths.RUNS),
    "realism.json": (paths.REALISM_RUNS,), "core.json": (paths.CORE_RUNS,),
    "memory.json": (paths.MEMORY_RUNS,),
}
# fields along a path that name runs, or a part of their folder names
_RUN_KEYS = ("run_id", "run", "baseline_run")
_LABEL_KEYS: dict[str, str] = {"key": "{}", "target": "{}", "task": "{}", "drafter": "{}",
                               "side": "{}", "batch": "b{}", "budget": "n{}", "window": "{}"}
SHOWN_RUNS = 8  # run folders a row names before "and N more"


@dataclass(frozen=True)
class Field:
    """One field of an analysis file (``file#pointer``) and the runs it was computed from."""

    ref: str
    runs: tuple[str, ...]
    all_runs: bool  # no narrower set is named on its path: every run of the file

    @property
    def file(self) -> str:
        return self.ref.partition("#")[0]


@dataclass
class Row:
    """One printed number with its provenance."""

    id: str
    anchor: str
    text: str
    keys: list[str]
    fields: list[str]
    runs: list[str]
    run_folders: list[str]
    all_runs: bool
    claim: str | None
    claims: list[dict[str, str]] = field(default_factory=list)
    section: str = ""
    context: str = ""


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def _parts(pointer: str) -> list[str]:
    return [_unescape(p) for p in pointer.split("/")[1:]] if pointer else []


class Resolver:
    """Resolves vars keys and analysis fields to fields and runs, from the build's files."""

    def __init__(self, sources: Mapping[str, list[str]], analysis: Mapping[str, Any],
                 runs: Mapping[str, list[str]], claims: Iterable[Claim]) -> None:
        self.sources = sources
        self.analysis = analysis  # file name -> parsed JSON
        self.runs = runs  # file name -> the run folders it is computed from (repository paths)
        self.claims = list(claims)
        self._fields: dict[str, Field] = {}

    @functools.cache  # noqa: B019 (one resolver per build; it lives as long as its caches)
    def _folders(self, name: str) -> tuple[list[str], dict[str, str]]:
        """The run ids of a file's run folders, and each one's folder."""
        where = {r.rsplit("/", 1)[-1]: r for r in self.runs.get(name, [])}
        return list(where), where

    def field(self, ref: str) -> Field:
        """The runs of one ``file#pointer``."""
        if ref not in self._fields:
            self._fields[ref] = self._resolve(ref)
        return self._fields[ref]

    def _resolve(self, ref: str) -> Field:
        name, _, pointer = ref.partition("#")
        candidates, where = self._folders(name)
        _, named, chosen = self._walk(name, (None, *_parts(pointer)))
        if named:
            return Field(ref, tuple(sorted(where[r] for r in named)), all_runs=False)
        return Field(ref, tuple(sorted(where[r] for r in chosen)),
                     all_runs=len(chosen) == len(candidates))

    @functools.cache  # noqa: B019
    def _walk(self, name: str, parts: tuple[str | None, ...]
              ) -> tuple[Any, frozenset[str], tuple[str, ...]]:
        """Where ``parts`` of a pointer into file ``name`` lead: the node, the runs named on
        the way, the runs chosen so far. Kept for every prefix: the fields of one file share
        most of their paths (issue 32: 2,500 fields walked once each took 0.3 s)."""
        candidates, where = self._folders(name)
        if not parts:
            return self.analysis.get(name), frozenset(), tuple(candidates)
        node, named_before, chosen_before = self._walk(name, parts[:-1])
        part = parts[-1]  # None: the file's top; "" is a key like any other (JSON allows it)
        known = where.keys()
        named = set(named_before)
        chosen = list(chosen_before)
        if part is not None:
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                node = None
        labels: list[str] = [part] if part and part in known else []
        if isinstance(node, Mapping):
            named.update(str(node[k]) for k in _RUN_KEYS
                         if isinstance(node.get(k), str) and node[k] in known)
            labels += [fmt.format(node[k]).split(" ")[0] for k, fmt in _LABEL_KEYS.items()
                       if isinstance(node.get(k), str | int) and not isinstance(node[k], bool)]
        if part is not None and part in known:
            named.add(part)
        narrower = [r for r in chosen if all(_names(r, lab) for lab in labels)]
        if labels and narrower:
            chosen = narrower
        # a mapping's key that names a part of the run folders (a core cell's drafter)
        # narrows too, keeping the no-draft run the cell is measured against
        keyed = [r for r in chosen if part and not part.isdigit() and _names(r, part)]
        keyed = [r for r in keyed if r.endswith(f"-{part}")] or keyed  # the cell's own run
        if keyed and len(keyed) < len(chosen):
            chosen = sorted({*keyed, *(r for r in chosen if r.endswith("-none"))})
        return node, frozenset(named), tuple(chosen)

    @functools.cache  # noqa: B019
    def key_fields(self, key: str) -> tuple[str, ...]:
        """The analysis fields a vars key (or a field reference) was computed from."""
        base = key.removesuffix(COUNT)
        if "#" in base:  # a field itself (a table's number, a claim on summary.json)
            return (base,)
        got = self.sources.get(base)
        if got:
            return tuple(got)
        below = [f for k, fs in self.sources.items() if k.startswith(base + ".") for f in fs]
        if below:  # a list or mapping (counted): where its items come from, in common
            return tuple(_common(below))
        return (FILE_OF_GROUP.get(base.split(".")[0], "summary.json") + "#",)

    def claims_of(self, keys: Iterable[str], claim: str | None) -> list[dict[str, str]]:
        """The claims that check a number: the one it prints, and any whose quantity is one of
        its vars keys."""
        wanted = {f"vars:{k}" for k in keys} | {self._claim_field(k) for k in keys if "#" in k}
        return [dict(said) for c, quantity, said in self._claim_quantities()
                if c.id == claim or (quantity in wanted and not c.qualitative)]

    @functools.cache  # noqa: B019
    def _claim_quantities(self) -> list[tuple[Claim, str, dict[str, str]]]:
        """Each claim, the quantity it checks as :meth:`claims_of` compares it, and what a row
        says of it: once per build, not once per number."""
        return [(c, c.quantity if c.source == "vars" else self._claim_field(c.quantity),
                 {"id": c.id, "tolerance": c.describe_tolerance(),
                  "expected": c.describe_expected(), "scope": c.scope})
                for c in self.claims]

    @functools.cache  # noqa: B019
    def _claim_field(self, quantity: str) -> str:
        """A claim's ``summary:`` quantity as the field reference it reads
        (``summary.json#/speedup/final-none/...``): run ids may hold dots, so at each level the
        longest key that matches wins, as :func:`artifact.claims.lookup` reads it. A field
        reference is returned as it is."""
        if "#" in quantity or not quantity.startswith("summary:"):
            return quantity
        node = self.analysis.get("summary.json")
        parts, got, i = quantity.removeprefix("summary:").split("."), [], 0
        while i < len(parts):
            if isinstance(node, list) and parts[i].isdigit() and int(parts[i]) < len(node):
                node, i = node[int(parts[i])], i + 1
                got.append(parts[i - 1])
                continue
            if not isinstance(node, Mapping):
                return quantity
            for j in range(len(parts), i, -1):
                key = ".".join(parts[i:j])
                if key in node:
                    node, i = node[key], j
                    got.append(key)
                    break
            else:
                return quantity
        return "summary.json#" + pointer(got)

    def row(self, e: Entry) -> Row:
        refs, runs, folders, all_runs, claims = self._provenance(tuple(e.keys), e.claim)
        return Row(id=e.id, anchor=e.anchor, text=e.text, keys=e.keys, fields=list(refs),
                   runs=list(runs), run_folders=list(folders), all_runs=all_runs,
                   claim=e.claim, claims=[dict(c) for c in claims])

    @functools.cache  # noqa: B019
    def _provenance(self, keys: tuple[str, ...], claim: str | None
                    ) -> tuple[list[str], list[str], list[str], bool, list[dict[str, str]]]:
        """A row's fields, runs, run folders, whether every run, claims: once per number, not
        once for its hover text and again for its row."""
        refs = sorted({f for k in keys for f in self.key_fields(k)})
        fields = [self.field(r) for r in refs]
        runs = sorted({r for f in fields for r in f.runs})
        folders = sorted({_folder(f.file) for f in fields})
        return (refs, runs, folders, any(f.all_runs for f in fields),
                self.claims_of(keys, claim))

    def title(self, e: Entry) -> str:
        """The hover text of a number in paper.html."""
        r = self.row(e)
        said = [f"claim {c['id']} ({c['tolerance']})" for c in r.claims]
        names = [k for k in r.keys if "#" not in k]
        said.append("vars.json " + " + ".join(names) if names else "")
        said.append(("from " if names else "") + _short_fields(r.fields))
        said.append(_runs_phrase(r))
        return " · ".join(s for s in said if s)


def _names(run: str, label: str) -> bool:
    """Whether a run folder's name holds ``label`` as whole dash-separated parts."""
    return f"-{label}-" in f"-{run}-"


def _common(refs: list[str]) -> list[str]:
    """The longest pointer prefix shared by ``refs``, per file."""
    by_file: dict[str, list[list[str]]] = {}
    for r in refs:
        name, _, pointer = r.partition("#")
        by_file.setdefault(name, []).append(pointer.split("/")[1:])
    out = []
    for name, ps in sorted(by_file.items()):
        common: list[str] = []
        for group in zip(*ps, strict=False):
            if len(set(group)) != 1:
                break
            common.append(group[0])
        out.append(f"{name}#" + "".join("/" + p for p in common))
    return out


@cache
def _folder(name: str) -> str:
    return " and ".join(paths.shown(p) for p in RUN_FOLDERS.get(name, (paths.RUNS,)))


def _short_fields(refs: list[str]) -> str:
    if len(refs) <= 3:
        return ", ".join(refs)
    return f"{', '.join(refs[:3])} and {len(refs) - 3} more fields"


def _runs_phrase(r: Row) -> str:
    if not r.runs:
        return ""
    if r.all_runs:
        return f"runs: all {len(r.runs)} under {', '.join(r.run_folders)}"
    shown = ", ".join(Path(x).name for x in r.runs[:SHOWN_RUNS])
    more = f" and {len(r.runs) - SHOWN_RUNS} more" if len(r.runs) > SHOWN_RUNS else ""
    return f"runs: {shown}{more}"


def run_ids(folder: Path) -> list[str]:
    """The run folders under ``folder`` (not those set aside, named with a leading ``_``)."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("_"))


@cache
def _runs_of(name: str) -> tuple[str, ...]:
    return tuple(f"{paths.shown(folder)}/{r}" for folder in RUN_FOLDERS[name]
                 for r in run_ids(folder))


def resolver(analysis: Iterable[Path], claims: Iterable[Claim],
             sources: Path | None = None) -> Resolver:
    """A resolver over the given analysis files, the run folders each is computed from, the
    claims, and the build's ``sources.json`` when given (a table's numbers are fields already)."""
    keys = json.loads(sources.read_text(encoding="utf-8")) if sources is not None else {}
    data = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in analysis if p.exists()}
    return Resolver(keys, data, {n: list(_runs_of(n)) for n in RUN_FOLDERS}, claims)


def printed(entries: Iterable[Entry], md: str, where: Path) -> list[Entry]:
    """The registered numbers the Markdown prints (a template may format a number it then
    leaves out), in the order it prints them (a table's caption comes before its cells), each
    once: a number printed twice would give two elements one id."""
    seen = Counter(re.findall(r"\{#([A-Za-z0-9_-]+) \.(?:claim \.)?num\}", md))
    twice = sorted(a for a, k in seen.items() if k > 1)
    if twice:
        raise ManuscriptError(f"{where}: number {twice[0]} printed {seen[twice[0]]} times "
                              "(a formatted number kept in a variable): format it where printed")
    at = {a: i for i, a in enumerate(seen)}  # in the order the paper prints them
    return sorted((e for e in entries if e.anchor in seen), key=lambda e: at[e.anchor])


def _plain(md: str) -> str:
    """Markdown of one paragraph as text: links and spans by their text, escapes undone."""
    text = re.sub(r'\[((?:\\.|[^\]\\])*)\]\([^)\s]*(?: "[^"]*")?\)(\{[^}]*\})?', r"\1", md)
    text = re.sub(r"\[((?:\\.|[^\]\\])*)\]\{[^}]*\}", r"\1", text)
    text = re.sub(r"(?<!\\)[*]", "", text)  # emphasis
    text = re.sub(r"\\(.)", r"\1", text)
    return " ".join(text.split())


def contexts(md: str, rows: list[Row]) -> None:
    """Each row's section heading and the sentence around it, from the rendered Markdown."""
    section = "Abstract"  # the metadata block before the first heading: title, abstract
    table = ""
    said: dict[str, tuple[str, str]] = {}
    for para in md.split("\n\n"):
        lines = para.splitlines()
        for line in lines:
            if line.startswith("#"):
                section = _plain(line.lstrip("#").split("{")[0].strip())
            elif m := re.match(r"(Table \d+)\. ", line):
                table = m.group(1)
        rows_at = [i for i, line in enumerate(lines) if line.startswith("|")]
        for anchor in _anchors(para):
            line_no = next((i for i in rows_at if f"{{#{anchor} " in lines[i]), None)
            if line_no is None:
                said[anchor] = (section, _snippet(para, anchor))
            else:  # a table cell: its row and column
                said[anchor] = (f"{section}, {table}", _cell(lines, rows_at, line_no, anchor))
    for r in rows:
        r.section, r.context = said.get(r.anchor, ("", ""))


_PIPE = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in _PIPE.split(line.strip())[1:-1]]


def _cell(lines: list[str], rows_at: list[int], at: int, anchor: str) -> str:
    """Where a table cell is, in words: its row (the first cells that name it) and column."""
    cells = _cells(lines[at])
    col = next(i for i, c in enumerate(cells) if f"{{#{anchor} " in c)
    header = _cells(lines[rows_at[0]]) if rows_at else []
    names = [_plain(c) for c in cells[:col] if c and "](" not in c][:3]
    head = _plain(header[col]) if col < len(header) else ""
    row = ", ".join(n for n in names if n) or "first column empty"
    return f"row {row}; column {head}" if head else f"row {row}"


def _anchors(para: str) -> list[str]:
    return re.findall(r"\{#([A-Za-z0-9_-]+) \.(?:claim \.)?num\}", para)


def _snippet(para: str, anchor: str, width: int = 90) -> str:
    """About ``width`` characters either side of the number, as text, with it marked."""
    marker = "\u2063"  # invisible separator: where the number is
    i = para.find(f"{{#{anchor} ")
    if i < 0:
        return ""
    start = para.rfind("[", 0, i)
    while start > 0 and para[start - 1] == "\\":
        start = para.rfind("[", 0, start - 1)
    start = max(start, 0)
    before, _, after = _plain(para[:start] + marker + para[start:]).partition(marker)
    if len(before) > width:  # whole words, an ellipsis where the sentence goes on
        cut = before[-width:]
        before = "…" + cut[cut.find(" ") + 1:] if " " in cut else "…" + cut
    if len(after) > width:
        cut = after[:width]
        after = (cut[:cut.rfind(" ")] if " " in cut else cut) + "…"
    return before + marker + after


def write(rows: list[Row], out_dir: Path, templates: Path = paths.TEMPLATES) -> tuple[Path, Path]:
    """``numbers.json`` and ``numbers.html`` in ``out_dir``."""
    data = [dict(vars(r)) for r in rows]  # asdict's deep copy, 0.15 s, for plain values
    js = files.write_text(out_dir / "numbers.json", files.dumps_json({"numbers": data},
                                                                         ensure_ascii=False))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    page = env.get_template("numbers.html.j2").render(
        rows=rows, n_claims=sum(1 for r in rows if r.claims), shown_runs=SHOWN_RUNS,
        root=_relative_root(out_dir))
    return js, files.write_text(out_dir / "numbers.html", page)


def _relative_root(out_dir: Path) -> str:
    """The repository root as seen from ``out_dir`` (for links to the run folders)."""
    try:
        depth = len(out_dir.resolve().relative_to(paths.ROOT).parts)
    except ValueError:
        return paths.ROOT.as_posix() + "/"
    return "../" * depth
