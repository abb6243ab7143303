"""numbers.html: every number paper.html prints links to where it comes from (issue 33).

A whole build from the fixtures (tests/render/build.py): each number the paper prints from a
computed file is a link, counted against the numbers the build registered; each link's row
resolves to vars.json keys, analysis fields that exist, and run folders that exist; no numeral
in the paper's text is left unlinked unless the templates wrote it or it is part of a name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from artifact import claims, paths
from artifact.errors import ManuscriptError
from artifact.render import numbers, provenance

from .build import build_all
from .fixture import write_summary

ANALYSIS = ("summary.json", "accsplit.json", "workload.json", "costmodel.json", "realism.json",
            "core.json", "memory.json")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("numbers")
    return build_all(write_summary(root / "summary.json"), root / "build")


def _rows(build: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(
        (build / "numbers.json").read_text(encoding="utf-8"))["numbers"]
    return rows


class _Links(HTMLParser):
    """The number links of a page (``a.num``), and its text outside them, code, math,
    citations and the bibliography."""

    SKIP = ("code", "math", "script", "style", "head", "title")

    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str]] = []
        self.text: list[str] = []
        self._stack: list[tuple[str, bool]] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        cls = a.get("class", "").split()
        if tag == "a" and "num" in cls:
            self.links.append(a)
        skip = (tag in self.SKIP or "num" in cls or "csl-bib-body" in cls
                or a.get("href", "").startswith("#ref-") or a.get("role") == "doc-biblioref")
        self._stack.append((tag, skip))
        self._skip += skip

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            t, skip = self._stack.pop()
            self._skip -= skip
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def _page(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_every_number_registered_is_one_link_and_every_link_one_row(built: Path) -> None:
    rows = _rows(built)
    links = _page(built / "paper.html").links
    assert rows and len(links) == len(rows)  # the count of computed values = linked spans
    assert [a["href"] for a in links] == [f"numbers.html#{r['id']}" for r in rows]
    assert [a["id"] for a in links] == [r["anchor"] for r in rows]
    assert len({r["anchor"] for r in rows}) == len(rows)
    assert all(a.get("title") for a in links)
    page = (built / "numbers.html").read_text(encoding="utf-8")
    assert all(f'<tr id="{r["id"]}">' in page for r in rows)
    assert all(f'href="paper.html#{r["anchor"]}"' in page for r in rows)
    # tables and text both: a table's numbers carry t-<table>- ids
    assert any(r["id"].startswith("t-") for r in rows) and any(r["id"][1:].isdigit()
                                                                   for r in rows)


def _resolve(data: Any, pointer: str) -> Any:
    node = data
    for part in pointer.split("/")[1:] if pointer else []:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def test_every_row_resolves_to_its_key_its_fields_and_its_runs(built: Path) -> None:
    v = json.loads((built / "vars.json").read_text(encoding="utf-8"))
    analysis = {n: json.loads((built.parent / n).read_text(encoding="utf-8")) for n in ANALYSIS}
    ledger = {c.id: c for c in claims.load(paths.CLAIMS)}
    for r in _rows(built):
        assert r["keys"] and r["fields"], r
        for k in r["keys"]:
            if "#" not in k:  # a vars.json key: it holds a number, or the list it counts
                got = claims.lookup(v, k.removesuffix(provenance.COUNT))
                assert got is not None, (r["id"], k)
        for f in r["fields"]:
            name, _, pointer = f.partition("#")
            assert name in analysis, f
            _resolve(analysis[name], pointer.removesuffix(provenance.COUNT))  # it exists
        assert r["runs"], r["id"]
        for run in r["runs"]:
            assert (paths.ROOT / run).is_dir(), run
        for c in r["claims"]:
            assert c["id"] in ledger and c["tolerance"] == ledger[c["id"]].describe_tolerance()
        if r["claim"]:
            assert r["claim"] in {c["id"] for c in r["claims"]}
            assert r["anchor"].startswith(f"claim-{r['claim']}-")


def test_a_field_names_the_runs_on_its_path() -> None:
    res = numbers.Resolver(
        {}, {"summary.json": {"speedup": {"final-a": {"baseline_run": "final-none",
                                                       "overall": {"mean_ratio": 1.1}}}},
             "realism.json": {"strata": [{"key": "r3-main", "gaps": [
                 {"drafter": "ngram-mod", "side": "synthetic-english", "value": 2.0}]}]}},
        {"summary.json": ["experiments/runs/final-a", "experiments/runs/final-none",
                          "experiments/runs/final-b"],
         "realism.json": ["experiments/runs-realism/r3-main-ngram-mod-synthetic-english",
                          "experiments/runs-realism/r3-main-none-real-a",
                          "experiments/runs-realism/r3-code-ngram-mod-synthetic-english"]},
        [])
    f = res.field("summary.json#/speedup/final-a/overall/mean_ratio")
    assert f.runs == ("experiments/runs/final-a", "experiments/runs/final-none")
    assert not f.all_runs
    g = res.field("realism.json#/strata/0/gaps/0/value")
    assert g.runs == ("experiments/runs-realism/r3-main-ngram-mod-synthetic-english",)
    whole = res.field("realism.json#")
    assert whole.all_runs and len(whole.runs) == 3
    core = numbers.Resolver(
        {}, {"core.json": {"groups": [{"target": "f16", "task": "edit", "cells": {
            "ngram-mod": {"speedup": {"mean": 1.1}}}}]}},
        {"core.json": [f"experiments/runs-core/{t}-{k}-{d}" for t in ("f16", "q8_0")
                       for k in ("edit", "study") for d in ("none", "ngram-mod", "draft-q2k")]},
        [])
    cell = core.field("core.json#/groups/0/cells/ngram-mod/speedup/mean")
    assert [r.rsplit("/", 1)[1] for r in cell.runs] == ["f16-edit-ngram-mod", "f16-edit-none"]


_PUNCT = "()[]{},;:.!?\"'*\u2019\u201c\u201d\u00a0"


def _words(text: str) -> set[str]:
    """The words of ``text`` that hold a digit, without the punctuation around them."""
    return {w.strip(_PUNCT) for w in text.replace("\u00a0", " ").split()
            if any(ch.isdigit() for ch in w)}


def _literal_words() -> set[str]:
    """Words with digits that the templates write themselves (outside their expressions)."""
    texts = [(paths.MANUSCRIPT / "paper.md").read_text(encoding="utf-8"),
             *(p.read_text(encoding="utf-8")
               for p in (paths.TEMPLATES / "tables").glob("*.md.j2"))]
    out: set[str] = set()
    for t in texts:
        t = re.sub(r"\{##.*?##\}|\{%.*?%\}", " ", t, flags=re.S)
        # inside {{ }}: only string literals are text the template wrote
        t = re.sub(r"\{\{(.*?)\}\}", lambda m: " ".join(re.findall(r'"([^"]*)"', m.group(1))),
                   t, flags=re.S)
        out |= _words(t)
    return out


def _strings(tree: Any) -> Iterator[str]:
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(tree, list):
        for v in tree:
            yield from _strings(v)
    elif isinstance(tree, str):
        yield tree


def test_no_numeral_in_the_text_is_left_unlinked(built: Path) -> None:
    """What the link count cannot see: a number formatted into text before it reached a
    template. Every word with a digit outside the links is one the templates wrote, a section,
    table or figure number, or a word of a name in the data (a run, a window, a CPU model, a
    date), whole."""
    allowed = _literal_words()
    for tree in [json.loads((built / "vars.json").read_text(encoding="utf-8")),
                 *(json.loads((built.parent / n).read_text(encoding="utf-8")) for n in ANALYSIS)]:
        for s in _strings(tree):
            words = _words(s) | {s}
            # a condition's name printed without its letter: "n1024" at 1024 tokens, "b4"
            allowed |= words | {re.sub(r"^[a-z]+(?=\d+$)", "", w) for w in words}
    text = " ".join(_page(built / "paper.html").text)
    structural = re.compile(r"(?:Table|Figure)\s+\d+|^\s*\d+(?:\.\d+)*\s+[A-Z]", re.M)
    loose = sorted(_words(structural.sub(" ", text)) - allowed)
    assert loose == [], loose


def test_a_number_printed_twice_from_one_variable_fails_the_build() -> None:
    e = provenance.Entry(id="n1", text="1", keys=["a"], anchor="n1")
    md = "a [1](numbers.html#n1 \"t\"){#n1 .num} and again [1](numbers.html#n1 \"t\"){#n1 .num}"
    with pytest.raises(ManuscriptError, match="n1 printed 2 times"):
        numbers.printed([e], md, Path("paper.md"))
    assert numbers.printed([e], md.split(" and")[0], Path("paper.md")) == [e]
