from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from artifact import claims, paths
from artifact.render import catalogue, manuscript, model, tables
from artifact.render import costmodel as rcostmodel
from artifact.render import vars as rvars
from artifact.render import workload as rworkload
from tests.workload_corpus import write_workload_fixture

from .costmodel_fixture import build_costmodel
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
    from artifact.render import realism as rrealism

    from .realism_fixture import build_realism_fixture

    rl = build_realism_fixture()
    for name in rrealism.TABLES:
        (build / "tables" / f"{name}.md").write_text(
            rrealism.render(rl, name, "md", paths.TEMPLATES), encoding="utf-8")
    from artifact.render import core as rcore

    from .core_fixture import build_core_fixture

    core = build_core_fixture()
    for name in rcore.TABLES:
        (build / "tables" / f"{name}.md").write_text(
            rcore.render(core, name, "md", paths.TEMPLATES), encoding="utf-8")
    cost = build_costmodel()
    (build / "tables" / "costmodel.md").write_text(
        rcostmodel.render(cost, "md", paths.TEMPLATES), encoding="utf-8")
    v = rvars.compute(s)
    v["costmodel"] = files.to_plain(rcostmodel.variables(cost))
    v["accsplit"] = files.to_plain(accsplit_vars.compute(a))
    v["workload"] = files.to_plain(rworkload.variables(w))
    v["realism"] = files.to_plain(rrealism.variables(rl))
    v["core"] = files.to_plain(rcore.variables(core))
    from artifact.render import memory as rmemory

    from .memory_fixture import build_memory

    v["memory"] = files.to_plain(rmemory.variables(build_memory()))
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


EPOCH = 1_700_000_000
OUTSIDE = "an absolute or outside path; expected a regular file inside the build folder"


def _typst_build(tmp_path: Path, image: str) -> Path:
    """A build folder with one figure, whose paper.typst.md shows ``image``."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    build = tmp_path / "build"
    (build / "figures").mkdir(parents=True)
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1])
    fig.savefig(build / "figures" / "a.png")
    fig.savefig(tmp_path / "secret.png")
    plt.close(fig)
    (build / "vars.json").write_text(json.dumps({"source_date_epoch": EPOCH}))
    (build / "paper.typst.md").write_text(f"# A\n\n![a figure]({image}){{#fig:a}}\n")
    return build


@pytest.fixture
def typst_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogue, "latex_engine", lambda: None)


@pytest.mark.usefixtures("typst_engine")
def test_a_typst_pdf_is_built_from_a_figure_inside_the_build(tmp_path: Path) -> None:
    build = _typst_build(tmp_path, "figures/a.png")
    assert manuscript.write_pdf(build=build, log=lambda _: None).startswith("typst")
    assert (build / "paper.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.usefixtures("typst_engine")
@pytest.mark.parametrize(("image", "said"), [
    ("../secret.png", OUTSIDE),
    ("figures/../../secret.png", OUTSIDE),
    ("link.png", "a symbolic link (to "),
    ("figures", "not a regular file"),
])
def test_the_pdf_build_refuses_what_the_arxiv_bundle_refuses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, image: str, said: str) -> None:
    """One check (includes.local_file) for doit's PDF (Typst and LaTeX) and for doit arxiv."""
    from artifact.render import arxiv

    build = _typst_build(tmp_path, image)
    (build / "link.png").symlink_to(tmp_path / "secret.png")
    with pytest.raises(manuscript.ManuscriptError) as typst_err:
        manuscript.write_pdf(build=build, log=lambda _: None)
    assert not (build / "paper.pdf").exists() and not (build / "paper.typ").exists()
    (build / "paper.tex").write_text(f"\\includegraphics{{{image}}}\n")
    with pytest.raises(arxiv.ArxivError) as arxiv_err:
        arxiv.write_bundle(build, tmp_path / "arxiv.tar.gz", epoch=EPOCH)
    msgs = [str(typst_err.value), str(arxiv_err.value)]
    monkeypatch.setattr(catalogue, "latex_engine", lambda: "pdflatex")  # checked before it runs
    with pytest.raises(manuscript.ManuscriptError) as latex_err:
        manuscript.write_pdf(build=build, log=lambda _: None)
    msgs.append(str(latex_err.value))
    for msg, file in zip(msgs, ("paper.typ", "paper.tex", "paper.tex"), strict=True):
        assert "\n" not in msg
        assert msg.startswith(f"{build / file}: includes {image!r}: {said}")


@pytest.mark.usefixtures("typst_engine")
def test_any_other_typst_error_is_one_line(tmp_path: Path) -> None:
    build = _typst_build(tmp_path, "figures/a.png")
    (build / "paper.typst.md").write_text("```{=typst}\n#let x = (\n```\n")
    with pytest.raises(manuscript.ManuscriptError, match=r"paper\.typ: typst: ") as err:
        manuscript.write_pdf(build=build, log=lambda _: None)
    assert "\n" not in str(err.value)
