from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from artifact import claims, paths
from artifact.render import catalogue, manuscript, model, tables
from artifact.render import vars as rvars
from artifact.render import workload as rworkload
from tests.workload_corpus import write_workload_fixture

from .fixture import build_summary


def _prepare(tmp_path: Path) -> tuple[Path, dict[str, object], dict[str, object]]:
    from artifact import files
    from artifact.render import accsplit_vars

    from .accsplit_fixture import build_accsplit

    raw = build_summary()
    s = model.from_json(raw)
    a = build_accsplit()
    build = tmp_path / "build"
    (build / "tables").mkdir(parents=True)
    for name in tables.CONTEXTS:
        (build / "tables" / f"{name}.md").write_text(
            tables.render(s, name, "md", paths.TEMPLATES), encoding="utf-8")
    for name in tables.ACCSPLIT_CONTEXTS:
        (build / "tables" / f"{name}.md").write_text(
            tables.render_accsplit(a, name, "md", paths.TEMPLATES), encoding="utf-8")
    w = rworkload.load(write_workload_fixture(tmp_path / "workload.json"))
    for name in tables.WORKLOAD_CONTEXTS:
        (build / "tables" / f"{name}.md").write_text(
            tables.render_workload(w, name, "md", paths.TEMPLATES), encoding="utf-8")
    v = rvars.compute(s)
    v["accsplit"] = files.to_plain(accsplit_vars.compute(a))
    v["workload"] = files.to_plain(rworkload.variables(w))
    return build, v, raw


@pytest.mark.parametrize("fmt", catalogue.PAPER_FORMATS)
def test_paper_renders_without_unresolved_names(tmp_path: Path, fmt: str) -> None:
    build, v, raw = _prepare(tmp_path)
    text, used = manuscript.render_markdown(
        fmt, template=paths.MANUSCRIPT / "paper.md", build=build, variables=v, summary=raw,
        ledger=paths.CLAIMS)
    assert "{{" not in text and "{%" not in text
    assert used, "the paper states no claim"


def test_every_claim_in_the_text_is_in_the_ledger() -> None:
    text = (paths.MANUSCRIPT / "paper.md").read_text(encoding="utf-8")
    ids = set(re.findall(r"""claim\(\s*["']([^"']+)["']\s*\)""", text))
    ledger = {c.id for c in claims.load(paths.CLAIMS)}
    assert ids, "no claim() in paper.md"
    assert ids <= ledger, f"not in the ledger: {sorted(ids - ledger)}"


@pytest.mark.parametrize(("body", "error"), [
    ("Speedup {{ v.no_such_number }}\n", "unresolved variable"),
    ('{{ claim("no-such-claim") }}\n', "not in the claims ledger"),
    ('{{ figure("hardware", "x") }}\n', "out of order"),
])
def test_a_paper_the_computed_files_cannot_fill_fails(
    tmp_path: Path, body: str, error: str
) -> None:
    build, v, raw = _prepare(tmp_path)
    tpl = tmp_path / "bad.md"
    tpl.write_text(body, encoding="utf-8")
    with pytest.raises(manuscript.ManuscriptError, match=error):
        manuscript.render_markdown("html", template=tpl, build=build, variables=v,
                                   summary=raw, ledger=paths.CLAIMS)


def test_vars_are_canonical_json() -> None:
    v = rvars.compute(model.from_json(build_summary()))
    text = rvars.dumps(v)
    assert json.loads(text) == v
    assert v["draft_model"]["all_slower"] is True
    assert v["best"]["drafter_key"] == "ngram-mod k=4"
