"""Tagged numbers (artifact/render/provenance.py) and the links they become in paper.html."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import jinja2
import pypandoc
import pytest

from artifact import files
from artifact.render import provenance as prov
from artifact.render import vars as rvars
from artifact.render.text import environment

from .fixture import build_summary


def _render(source: str, **ctx: object) -> tuple[str, prov.Registry]:
    env = environment("md", jinja2.DictLoader({"t": source}))
    reg = prov.Registry()
    with prov.recording(reg):
        text = env.get_template("t").render(**ctx)
    return text, reg


def test_a_tagged_number_equals_formats_and_serializes_as_the_plain_one() -> None:
    x = prov.tagged(0.1 + 0.2, frozenset({"f.json#/a"}))
    n = prov.tagged(7, frozenset({"f.json#/b"}))
    assert x == 0.1 + 0.2 and hash(x) == hash(0.1 + 0.2) and f"{x:.3f}" == "0.300"
    assert json.dumps({"x": x, "n": n}) == json.dumps({"x": 0.1 + 0.2, "n": 7})
    assert files.to_plain({"x": x}) == {"x": 0.3} and repr(n) == "7"
    assert isinstance(True + n, int) and prov.tagged(True, frozenset({"s"})) is True


def test_arithmetic_keeps_every_operand_source() -> None:
    a, b = prov.tagged(3, frozenset({"a"})), prov.tagged(2.0, frozenset({"b"}))
    for value in (a + b, b - a, a * b, a / b, 100 * (a - 1), -a, abs(-b), round(b, 1), a // 2,
                  a ** 2, 2 - a):
        assert prov.sources_of(value) <= {"a", "b"} and prov.sources_of(value), value
    assert prov.sources_of(a + b) == {"a", "b"}
    assert prov.sources_of(max(a, b)) == {"a"}  # a selection keeps the selected one's
    assert prov.sources_of(float(a)) == frozenset()  # a conversion drops them: as_float keeps
    assert prov.sources_of(prov.as_float(a)) == {"a"} and prov.as_float(a) == 3.0


def test_vars_from_tagged_files_name_the_fields_they_were_computed_from() -> None:
    raw = build_summary()
    plain = rvars.compute_all(raw, {})
    tagged = rvars.compute_all(prov.tag(raw, "summary.json"), {})
    assert rvars.dumps(tagged) == rvars.dumps(plain)  # the bytes of vars.json do not change
    found = dict(prov.field_sources(tagged))
    rid = plain["baseline"]["run"]
    assert found["baseline.tok_per_s"] == [f"summary.json#/final/{rid}/overall/tok_per_s/mean"]
    # a sum over runs names every run's field
    assert len(found["counts.records"]) == len(raw["runs"])
    assert all(f.startswith("summary.json#/runs/") for f in found["counts.records"])


def test_a_printed_number_is_a_link_to_its_row_and_says_where_it_is_from() -> None:
    v = prov.tag_keys({"a": {"b": 1.5, "n": 3, "xs": [1, 2]}})
    text, reg = _render("x {{ v.a.b }} y {{ v.a.n|spelled }} z {{ v.a.xs|length }} "
                        "w {{ v.a.xs|join(', ') }}", v=v)
    assert [e.keys for e in reg.entries] == [["a.b"], ["a.n"], ["a.xs (count)"],
                                             ["a.xs.0"], ["a.xs.1"]]
    assert '[1.50](numbers.html#n1 "vars.json a.b"){#n1 .num}' in text
    assert "[Three](numbers.html#n2" in text and reg.untracked == []
    html = pypandoc.convert_text(text, "html5", format="markdown")
    assert html.count('class="num"') == 5 and html.count("numbers.html#n") == 5


def test_a_number_computed_from_nothing_tagged_is_counted_as_untracked() -> None:
    v = prov.tag_keys({"a": 2})
    _, reg = _render("{{ v.a + 1 }} and {{ 3 + 4 }} and {{ '%d'|format(v.a) }} and "
                     "{{ (v.a * 1.5)|num(1) }} and {{ 9.5|num }}", v=v)
    assert reg.untracked == ["7", "9.50"]  # the string from format is text, not a number
    assert [e.text for e in reg.entries] == ["3", "3.0"]
    assert prov.sources_of(v["a"] * 1.5) == {"vars:a"}


@pytest.mark.parametrize("key", ['quote"d', "pi|pe", "bra]cket", "back\\slash", "sources"])
def test_hostile_keys_keep_the_link_whole(key: str) -> None:
    """A key from data holding Markdown's special characters, or the name of an attribute,
    still prints one link with the number as its text (inside a pipe table too)."""
    v = prov.tag_keys({key: 0.25})
    text, reg = _render("| a |\n|--|\n| {{ v[k] }} |\n", v=v, k=key)
    html = pypandoc.convert_text(text, "html5", format="markdown")
    links = re.findall(r'<a\s+href="numbers\.html#n1"[^>]*>([^<]*)</a>', html)
    assert links == ["0.25"], html
    assert "<td>" in html and reg.entries[0].keys == [key]


def test_latex_and_typst_print_the_same_text_as_before() -> None:
    """Only Markdown for paper.html links numbers; a registry never reaches TeX tables."""
    env = environment("tex", jinja2.DictLoader({"t": "{{ x|num }} {{ x }}"}))
    with prov.recording(prov.Registry()) as reg:
        out = env.get_template("t").render(x=prov.tagged(1.5, frozenset({"s"})))
    assert out == "1.50 1.50" and reg.entries == []
    md = environment("md", jinja2.DictLoader({"t": "{{ x|num }} {{ xs|join(', ') }}"}))
    assert md.get_template("t").render(x=prov.tagged(1.5, frozenset({"s"})), xs=[1, 2]) \
        == "1.50 1, 2"  # no registry: plain text


def test_non_finite_and_missing_values_print_a_dash_not_a_link() -> None:
    v = prov.tag_keys({"a": None, "b": math.nan})
    text, reg = _render("{{ v.a }} {{ v.a|num }} {{ v.b|num }}", v=v)
    assert text == "— — —" and reg.entries == [] and reg.untracked == []


def test_vars_write_leaves_vars_json_as_it_was_and_adds_sources(tmp_path: Path) -> None:
    from .fixture import write_summary

    summary = write_summary(tmp_path / "summary.json")
    out = rvars.write(summary, tmp_path / "vars.json")
    assert out.read_text(encoding="utf-8") == rvars.dumps(
        rvars.compute_all(json.loads(summary.read_text(encoding="utf-8")), {}))
    sources = json.loads((tmp_path / rvars.SOURCES_NAME).read_text(encoding="utf-8"))
    assert sources["baseline.tok_per_s"][0].startswith("summary.json#/final/")
