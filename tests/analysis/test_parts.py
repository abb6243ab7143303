"""A run's entries of summary.json, rendered once and spliced: the same bytes as encoding the
whole summary, and an entry that does not fit the contract still named by its field."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artifact import files
from artifact.analysis import parts, summary
from artifact.analysis.params import BOOTSTRAP
from artifact.analysis.runs import AnalysisError, load_run
from artifact.analysis.summary import reduce
from artifact.contract.summary import RunEntry
from tests import corpus

_scalars = (st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8)
            | st.floats(allow_nan=False, allow_infinity=False))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=12)
_entries = st.dictionaries(st.text(max_size=6), _values, max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["runs", "final", "a", "zz", "é"]),
                       _entries | _values, max_size=5), st.data())
def test_render_is_dumps_json_byte_for_byte(raw: dict[str, Any], data: st.DataObject) -> None:
    doc = files.to_plain(raw)  # the summary is plain before it is rendered (floats rounded)
    sections = sorted(s for s in doc if isinstance(doc[s], dict))
    splice = data.draw(st.sets(st.sampled_from(sections))) if sections else set()
    got = {s: {rid: parts.make(s, rid, v, Any) for rid, v in doc[s].items()} for s in splice}
    for s in splice:
        doc[s] = {rid: p.value for rid, p in got[s].items()}  # the summary holds their values
        for rid in list(got[s])[:1]:  # an equal copy in the summary: encoded, the part unused
            if isinstance(doc[s][rid], dict | list):
                doc[s][rid] = copy.deepcopy(doc[s][rid])
                got[s][rid] = replace(got[s][rid], text="stale")
    assert parts.render(doc, got) == files.dumps_json(doc)


def test_render_of_an_empty_summary() -> None:
    assert parts.render({}, {}) == files.dumps_json({})
    assert parts.render({"runs": {}}, {"runs": {}}) == files.dumps_json({"runs": {}})


def test_the_written_summary_is_its_canonical_text_cold_and_warm(
        bad_root: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, _ = bad_root
    for cache in (None, tmp_path / "cache", tmp_path / "cache"):
        out = tmp_path / "summary.json"
        written = summary.write_summary(root, out, cache=cache)
        assert out.read_text() == summary.dumps(written)
        assert written == summary.build_summary(root)


def _reduced(tmp_path: Path) -> Any:
    sp = corpus.study_specs()[0]
    run = corpus.write_study_run(tmp_path / "runs", sp, scale=corpus.TEST_SCALE)
    return reduce(load_run(run), BOOTSTRAP)


def test_an_entry_that_does_not_fit_is_named_by_its_field(tmp_path: Path) -> None:
    red = _reduced(tmp_path)
    rid = red.desc.run_id
    bad = {**red.parts["runs"].value, "n_records": "many"}
    part = parts.make("runs", rid, bad, RunEntry)
    assert not part.fits
    with pytest.raises(AnalysisError, match=rf"field 'runs\.{rid}\.n_records': expected int"):
        summary.summarize_text([replace(red, parts={**red.parts, "runs": part})])


def test_a_fitting_entry_is_not_checked_again(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    red = _reduced(tmp_path)
    assert all(p.fits for p in red.parts.values()) and {"runs", "final"} <= set(red.parts)
    checked: list[object] = []
    real = summary.contract.check

    def spy(tp: Any, value: Any, **kw: Any) -> None:
        checked.append(value)
        real(tp, value, **kw)

    monkeypatch.setattr("artifact.contract.summary.check", spy)
    got, text = summary.summarize_text([red])
    assert got["runs"] == {red.desc.run_id: red.parts["runs"].value}
    (top,) = checked
    assert top["runs"] == {} and top["final"] == {}  # the entries were checked when reduced
    assert text == summary.dumps(got)
