"""The manuscript: ``manuscript/paper.md`` (Jinja over pandoc Markdown) → tex, html, pdf.

``paper.md`` is a Jinja template rendered with :data:`StrictUndefined`, so a name it uses that
the computed files do not define fails the build. Its context:

``v``
    the variables of ``vars.json`` (:mod:`artifact.render.vars`), computed from summary.json.
``claim(id)``
    the current value of a claim in ``experiments/claims.toml``, formatted as the ledger says;
    an id missing from the ledger fails the build.
``ref(key)``, ``table(name)``, ``figure(name, caption)``
    cross-references and floats. Figures and tables are numbered in the catalogue's order
    (:mod:`artifact.render.catalogue`); placing them in another order fails the build, so the
    numbers the text prints are the ones LaTeX and Typst print.

One intermediate Markdown per output (``paper.<fmt>.md``): LaTeX gets the booktabs tables by
``\\input`` and PDF figures, HTML and Typst get the pipe tables and PNG figures. pandoc writes
``paper.tex`` (standalone), ``paper.html`` and ``paper.pdf``: with a LaTeX engine when one is
installed, else through Typst (``typst`` from PyPI), so every machine gets a PDF. Either way the
figures and tables the engine would read pass :func:`artifact.render.includes.local_file` first,
the check the arXiv bundle makes: regular files inside the build folder only. The engine used
is printed and written to ``engine.txt``. Before ``paper.pdf`` is put in place, the layout check
(:mod:`artifact.render.layout`) fails the build on any text outside the page's text area or
printed over other text, whichever engine made it. ``SOURCE_DATE_EPOCH`` comes from vars.json
(the last run's start time), so rebuilds give the same bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2
import pypandoc

from artifact import files, paths, warning_classes
from artifact.claims import Claim, format_value, resolve
from artifact.claims import load as load_claims
from artifact.errors import ManuscriptError as ManuscriptError
from artifact.log import Log
from artifact.log import stderr as log_stderr
from artifact.render import (
    arxiv,
    catalogue,
    includes,
    layout,
    mdcheck,
    numbers,
    provenance,
    texchars,
)
from artifact.render import vars as vars_
from artifact.render.text import Raw, environment, md_escape, provenance_link

_log: Log = log_stderr("manuscript")


def pandoc() -> str:
    return str(pypandoc.get_pandoc_path())


class _Floats:
    """Numbers floats in a fixed order and checks the template places them in it."""

    def __init__(self, fmt: str, build: Path, claims: Mapping[str, Any],
                 variables: Mapping[str, Any], summary: Mapping[str, Any]) -> None:
        self.fmt, self.build = fmt, build
        self.claims, self.variables, self.summary = claims, variables, summary
        self.placed: dict[str, list[str]] = {"fig": [], "tbl": []}
        self.used_claims: list[str] = []

    def _number(self, kind: str, name: str) -> int:
        order = catalogue.FIGURE_NAMES if kind == "fig" else catalogue.TABLE_NAMES
        if name not in order:
            raise ManuscriptError(f"paper.md: unknown {kind} {name!r} (known: {', '.join(order)})")
        return order.index(name) + 1

    def ref(self, key: str) -> Raw:
        kind, _, name = key.partition(":")
        n = self._number(kind, name)
        word = "Figure" if kind == "fig" else "Table"
        if self.fmt == "latex":
            return Raw(f"{word}\u00a0\\ref{{{key}}}")  # pandoc writes a no-break space as ~
        return Raw(f"{word} {n}")

    def _place(self, kind: str, name: str) -> int:
        n = self._number(kind, name)
        order = catalogue.FIGURE_NAMES if kind == "fig" else catalogue.TABLE_NAMES
        expected = order[len(self.placed[kind])] if len(self.placed[kind]) < len(order) else None
        if name != expected:
            raise ManuscriptError(
                f"paper.md: {kind} {name!r} placed out of order (next expected: {expected!r})")
        self.placed[kind].append(name)
        return n

    def table(self, name: str) -> Raw:
        n = self._place("tbl", name)
        if self.fmt == "latex":
            return Raw(f"```{{=latex}}\n\\input{{tables/{name}.tex}}\n```\n")
        if self.fmt == "html" and (reg := provenance.active()) is not None:
            # the table's numbers as links (tables.write_html), in the paper's numbering
            md, listed = catalogue.table_html_files(name, self.build / "tables")
            text = md.read_text(encoding="utf-8")
            got = json.loads(listed.read_text(encoding="utf-8"))["numbers"]
            reg.entries.extend(provenance.Entry(**e) for e in got)
            return Raw(html_table(text, n, name))
        text = (self.build / "tables" / f"{name}.md").read_text(encoding="utf-8")
        if self.fmt == "html":
            return Raw(html_table(text, n, name))
        return Raw(text)

    def figure(self, name: str, caption: str) -> Raw:
        n = self._place("fig", name)
        ext = {"latex": "pdf", "typst": "svg"}.get(self.fmt, "png")  # vector where it can
        if self.fmt == "html":
            return Raw(html_figure(name, n, caption))
        return Raw(f"![{caption}](figures/{name}.{ext}){{#fig:{name} width=100%}}\n")

    def claim(self, cid: str) -> str:
        c = self.claims.get(cid)
        if not isinstance(c, Claim):
            raise ManuscriptError(f"paper.md: claim {cid!r} is not in the claims ledger")
        if c.qualitative:
            raise ManuscriptError(f"paper.md: claim {cid!r} is qualitative: it has no value "
                                  "to print (write the statement in words)")
        try:
            value = resolve(c, self.summary, self.variables)
        except (KeyError, IndexError, ValueError) as err:
            raise ManuscriptError(
                f"paper.md: claim {cid!r}: quantity {c.quantity!r} not in the computed files"
                + _why(self.summary)
            ) from err
        if value is None:
            raise ManuscriptError(f"paper.md: claim {cid!r}: quantity {c.quantity!r} is null"
                                  + _why(self.summary))
        self.used_claims.append(cid)
        text = format_value(c, value)
        if self.fmt == "html":
            # an anchor per use, claim-<id>-<n>, that the reproduction report links to
            n = self.used_claims.count(cid)
            if provenance.active() is not None:  # and a link to where the number comes from
                return provenance_link(text, provenance.sources_of(value), claim=cid,
                                       anchor=claim_anchor(cid, n))
            return Raw(f"[{md_escape(text)}]{{#{claim_anchor(cid, n)} .claim}}")
        return text


def html_table(md: str, n: int, name: str) -> str:
    """A pipe table for paper.html: its caption above a box that scrolls sideways, so that at
    phone width the table scrolls and its caption stays whole (pandoc puts the caption inside
    the table, which scrolls with it).

    >>> print(html_table("| a |\\n|--|\\n| 1 |\\n\\n: Few rows. {#tbl:t}\\n", 2, "t"))
    ::: {#tbl:t .table}
    ::: caption
    Table 2. Few rows.
    :::
    <BLANKLINE>
    ::: table-scroll
    | a |
    |--|
    | 1 |
    :::
    :::
    <BLANKLINE>
    """
    body, sep, caption = md.rstrip("\n").rpartition("\n: ")
    if not sep:
        raise ManuscriptError(f"tables/{name}.md: no caption line (': ...') after the table")
    caption = caption.removesuffix(f"{{#tbl:{name}}}").rstrip()
    return (f"::: {{#tbl:{name} .table}}\n::: caption\nTable {n}. {caption}\n:::\n\n"
            f"::: table-scroll\n{body.strip()}\n:::\n:::\n")


def html_figure(name: str, n: int, caption: str) -> str:
    """A figure for paper.html: the image links to the full-size PNG, sits in a box that scrolls
    sideways at phone width (html.yaml keeps it legible there), and its caption stays below."""
    src = f"figures/{name}.png"
    return (f"::: {{#fig:{name} .figure}}\n::: figure-scroll\n[![Figure {n}]({src})]({src})\n"
            f":::\n\n::: caption\nFigure {n}. {caption}\n:::\n:::\n")


def claim_anchor(cid: str, n: int) -> str:
    """The HTML id of the ``n``-th use (from 1) of claim ``cid`` in paper.html."""
    return f"claim-{cid}-{n}"


def _why(summary: Mapping[str, Any]) -> str:
    """The likely cause of a missing number, from the analysis: its fatal warnings, if any."""
    fatal = warning_classes.fatal(str(w) for w in summary.get("warnings", []))
    if not fatal:
        return ""
    more = f" (and {len(fatal) - 1} more)" if len(fatal) > 1 else ""
    return f"; the analysis warned: {fatal[0]}{more}"


def render_markdown(
    fmt: str,
    *,
    template: Path,
    build: Path,
    variables: Mapping[str, Any],
    summary: Mapping[str, Any],
    ledger: Path,
    registry: provenance.Registry | None = None,
) -> tuple[str, list[str]]:
    """The intermediate Markdown for one output format, and the claim ids it used.

    With a ``registry`` (paper.html), every number printed from ``variables`` or a claim is a
    link to its row in ``numbers.html`` and is registered there (:mod:`provenance`)."""
    claims = {c.id: c for c in load_claims(ledger)}
    if registry is not None:
        variables = provenance.tag_keys(variables)
        summary = provenance.tag(summary, "summary.json")
    floats = _Floats(fmt, build, claims, variables, summary)
    env = environment("md", jinja2.FileSystemLoader(template.parent))
    funcs: dict[str, Callable[..., Any]] = {
        "claim": floats.claim, "ref": floats.ref, "table": floats.table, "figure": floats.figure,
    }
    try:
        with _recording(registry):
            text = env.get_template(template.name).render(v=variables, fmt=fmt, **funcs)
    except jinja2.UndefinedError as err:
        raise ManuscriptError(f"{template}: unresolved variable: {err.message}"
                              + _why(summary)) from err
    for kind, order in (("fig", catalogue.FIGURE_NAMES), ("tbl", catalogue.TABLE_NAMES)):
        missing = [n for n in order if n not in floats.placed[kind]]
        if missing:
            raise ManuscriptError(f"{template}: {kind} not placed: {', '.join(missing)}")
    return text, floats.used_claims


@contextlib.contextmanager
def _recording(registry: provenance.Registry | None) -> Iterator[None]:
    if registry is None:
        yield
        return
    with provenance.recording(registry):
        yield


def _env(epoch: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"SOURCE_DATE_EPOCH": str(epoch), "FORCE_SOURCE_DATE": "1", "TZ": "UTC",
                "LC_ALL": "C.UTF-8"})
    return env


def _pandoc(args: list[str], cwd: Path, epoch: int) -> None:
    proc = subprocess.run([pandoc(), *args], cwd=cwd, env=_env(epoch), capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise ManuscriptError(f"pandoc {' '.join(args)}: {proc.stderr.strip()}")


def _common(defaults: Path, bib: Path) -> list[str]:
    # --columns: pipe tables wider than this would get dash-proportional widths and wrap;
    # --number-sections: a reader (and a reviewer's comment) can name a section by its number
    return ["--from", "markdown", "--standalone", "--citeproc", "--columns=10000",
            "--number-sections",
            "--bibliography", str(bib.resolve()), "--metadata-file", str(defaults.resolve())]


def write_intermediate(
    fmt: str, *, build: Path = paths.BUILD, template: Path = paths.MANUSCRIPT / "paper.md",
    ledger: Path = paths.CLAIMS, summary: Path = paths.SUMMARY,
) -> Path:
    """Render ``paper.<fmt>.md`` from vars.json, the tables and the ledger."""
    variables = json.loads((build / "vars.json").read_text(encoding="utf-8"))
    raw = json.loads(summary.read_text(encoding="utf-8"))
    registry = resolver = None
    if fmt == "html":  # each number a link to where it comes from (numbers.html)
        resolver = numbers.resolver((summary.parent / n for n in numbers.RUN_FOLDERS),
                                    load_claims(ledger), sources=build / vars_.SOURCES_NAME)
        registry = provenance.Registry(describe=resolver.title)
    text, _ = render_markdown(fmt, template=template, build=build, variables=variables,
                              summary=raw, ledger=ledger, registry=registry)
    out = files.write_text(build / f"paper.{fmt}.md", text)
    mdcheck.check(out, text)  # written first, so that a defect can be read where it is
    if registry is not None and resolver is not None:
        if registry.untracked:
            raise ManuscriptError(
                f"{template}: {len(registry.untracked)} numbers printed without a source "
                f"(first: {registry.untracked[0]!r}); print them from vars.json")
        rows = [resolver.row(e) for e in numbers.printed(registry.entries, text, template)]
        numbers.contexts(text, rows)
        numbers.write(rows, build)
    return out


def _epoch(build: Path) -> int:
    v = json.loads((build / "vars.json").read_text(encoding="utf-8"))
    return int(v["source_date_epoch"])


def write_tex(*, build: Path = paths.BUILD, manuscript: Path = paths.MANUSCRIPT) -> Path:
    """Standalone ``paper.tex`` beside ``tables/`` and ``figures/`` (arXiv-ready)."""
    defaults = manuscript / "defaults" / "latex.yaml"
    with files.output(build / "paper.tex") as tmp:
        _pandoc([*_common(defaults, manuscript / "references.bib"),
                 "paper.latex.md", "--to", "latex", "-o", tmp.name], build, _epoch(build))
        # before paper.tex is in place: a character pdflatex would stop on fails here, anywhere
        texchars.check_paper(tmp, build, defaults, shown_as=build / "paper.tex")
    return build / "paper.tex"


def write_html(*, build: Path = paths.BUILD, manuscript: Path = paths.MANUSCRIPT) -> Path:
    with files.output(build / "paper.html") as tmp:
        _pandoc([*_common(manuscript / "defaults" / "html.yaml", manuscript / "references.bib"),
                 "paper.html.md", "--to", "html5", "--mathml", "-o", tmp.name],
                build, _epoch(build))
    return build / "paper.html"


def typst_fonts() -> list[str]:
    """Matplotlib's STIX fonts: the figures' font, so text and figures match."""
    import matplotlib  # only the Typst engine needs its fonts; LaTeX builds never load it

    return [str(Path(matplotlib.get_data_path()) / "fonts" / "ttf")]


def check_layout(pdf: Path, *, shown_as: Path, log: Log = _log) -> None:
    """The layout check on a finished PDF; where poppler's ``pdftotext`` is missing, one line
    says the check was skipped."""
    if not layout.available():
        log(f"{shown_as.name}: layout not checked: pdftotext (poppler-utils) is not installed")
        return
    layout.check(pdf, shown_as=shown_as)


def _latex(engine: str, build: Path, epoch: int, log: Log = _log) -> None:
    """Compile the standalone ``paper.tex`` itself (twice, for cross-references).

    The PDF is then made from exactly the file an arXiv submission holds, and no temporary
    path of pandoc's enters it (pdfTeX writes the paths of included figures into the PDF).
    """
    if not (build / "paper.tex").exists():
        write_tex(build=build)
    tex = includes.read_local(build, "paper.tex", where=build, error=ManuscriptError)
    for name in arxiv.referenced_files(tex.decode("utf-8"), build):
        includes.local_file(build, name, where=build / "paper.tex", error=ManuscriptError)
    # The engine writes into a private folder beside the build; paper.pdf is then renamed into
    # place, so a reader (or a second build) never sees half a PDF.
    with tempfile.TemporaryDirectory(dir=build, prefix=".latex-") as work:
        cmd = [engine, "-interaction=nonstopmode", "-halt-on-error",
               f"-output-directory={Path(work).name}", "paper.tex"]
        for _ in range(2):
            proc = subprocess.run(cmd, cwd=build, env=_env(epoch), capture_output=True,
                                  text=True, check=False)
            if proc.returncode != 0:
                tail = " | ".join(proc.stdout.strip().splitlines()[-12:])
                raise ManuscriptError(f"{engine} paper.tex failed: {tail}")
        check_layout(Path(work) / "paper.pdf", shown_as=build / "paper.pdf", log=log)
        files.write_bytes(build / "paper.pdf", (Path(work) / "paper.pdf").read_bytes())


def write_pdf(*, build: Path = paths.BUILD, manuscript: Path = paths.MANUSCRIPT,
              log: Log = _log) -> str:
    """``paper.pdf`` with a LaTeX engine if installed, else Typst; returns the engine line."""
    epoch = _epoch(build)
    engine = catalogue.latex_engine()
    if engine is not None:
        _latex(engine, build, epoch, log)
        line = f"{engine} (on paper.tex)"
    else:
        with files.output(build / "paper.typ") as tmp:
            _pandoc([*_common(manuscript / "defaults" / "typst.yaml",
                              manuscript / "references.bib"),
                     "paper.typst.md", "--to", "typst", "-o", tmp.name], build, epoch)
            for name in includes.typst_images(tmp.read_text(encoding="utf-8")):
                includes.local_file(build, name, where=build / "paper.typ",
                                    error=ManuscriptError)
        with files.output(build / "paper.pdf") as tmp:
            _typst(build / "paper.typ", tmp, root=build, epoch=epoch)
            check_layout(tmp, shown_as=build / "paper.pdf", log=log)
        line = "typst (pandoc -> typst, typst-py " + _version("typst") + ")"
    log(f"paper.pdf made by {line}")
    files.write_text(build / "engine.txt", line + "\n")
    return line


# Typst compiles in a process of its own: its 120 MB come and go with it, not on top of what
# the build's worker already holds (issue 32: the clean build's peak, 396 MiB, was that sum).
_TYPST = """
import sys, typst
src, out, root, epoch, *fonts = sys.argv[1:]
try:
    typst.compile(src, output=out, root=root, font_paths=fonts, ignore_system_fonts=True,
                  timestamp=int(epoch))
except typst.TypstError as err:
    sys.stderr.write(str(err))
    sys.exit(3)
"""


def _typst(src: Path, out: Path, *, root: Path, epoch: int) -> None:
    """``typst.compile`` of ``src`` into ``out`` (matplotlib's fonts only, the build's time),
    in a child process; its error is one line naming ``src``."""
    proc = subprocess.run([sys.executable, "-c", _TYPST, str(src), str(out), str(root),
                           str(epoch), *typst_fonts()],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        said = proc.stderr.strip().splitlines() or ["(no message)"]
        if proc.returncode != 3:  # not typst's own error: the child's last line says what
            said = [f"exit status {proc.returncode}: {said[-1]}"]
        raise ManuscriptError(f"{src}: typst: {said[0]}")


def _version(dist: str) -> str:
    return metadata.version(dist)
