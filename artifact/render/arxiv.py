"""The arXiv source bundle: ``paper.tex`` and exactly the files it includes, as one tarball.

``paper.tex`` is standalone (pandoc ``--standalone``, citations rendered by citeproc, so no
``.bib``/``.bbl`` is needed); it ``\\input``\\ s the booktabs tables and
``\\includegraphics``\\ es the vector figures. :func:`write_bundle` reads those references from
the file itself, so the bundle holds what the paper uses and nothing else, and refuses a
reference that is missing, absolute, a symbolic link, or anything but a regular file inside the
build folder (:mod:`artifact.render.includes`, the check the PDF build makes too). The tarball
is deterministic (sorted members, fixed owner and mode, mtime = the paper's
``SOURCE_DATE_EPOCH``), so rebuilding it gives the same bytes. arXiv compiles it with
pdflatex, as the Docker image's test does.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
from pathlib import Path, PurePosixPath

from artifact import files
from artifact.errors import RenderError
from artifact.render.includes import local_file, problem, read_local

TEX = "paper.tex"
# \input{tables/x.tex}, \includegraphics[...]{figures/x.pdf}, \include{...}, \bibliography{...}
_COMMAND = re.compile(r"\\(input|include|includegraphics)(?![A-Za-z])")
_BIB = re.compile(r"\\bibliography\s*\{([^}]*)\}")
# a path of the machine that built it (pandoc or a template leaking one)
_ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:home|root|tmp|work|var|usr|opt|mnt|private|Users)/")


class ArxivError(RenderError):
    """paper.tex cannot be bundled as it is (a missing file, an absolute path)."""


def _skip_group(tex: str, i: int, open_: str, close: str) -> int:
    """The index after the group opening at ``tex[i]``; ``{...}`` inside is skipped whole."""
    depth, j = 0, i
    while j < len(tex):
        c = tex[j]
        if c == "\\":
            j += 2
            continue
        if c == "{" and open_ != "{":
            j = _skip_group(tex, j, "{", "}")
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ArxivError(f"{TEX}: unbalanced {open_}{close} after offset {i}")


def _references(tex: str) -> list[tuple[str, str]]:
    """``(command, argument)`` of each include; an optional ``[...]`` (whose text may hold
    brackets inside braces, as pandoc's alt text does) is skipped."""
    out = []
    for m in _COMMAND.finditer(tex):
        i = m.end()
        while i < len(tex) and tex[i].isspace():
            i += 1
        if i < len(tex) and tex[i] == "[":
            i = _skip_group(tex, i, "[", "]")
        if i >= len(tex) or tex[i] != "{":
            continue  # e.g. the definition of a macro, not a use
        end = _skip_group(tex, i, "{", "}")
        out.append((m.group(1), tex[i + 1:end - 1].strip()))
    return out


def referenced_files(tex: str, build: Path) -> list[str]:
    """The files ``tex`` includes, relative to ``build``, in a stable order.

    >>> referenced_files(r"\\input{tables/a.tex} \\includegraphics[width=1in]{figures/b.pdf}",
    ...                  Path("."))
    ['figures/b.pdf', 'tables/a.tex']
    """
    names: set[str] = set()  # each checked by includes.local_file where it is read
    for kind, name in _references(tex):
        if kind in ("input", "include") and not PurePosixPath(name).suffix:
            name += ".tex"
        names.add(name)
    for bib in _BIB.findall(tex):
        names.update(f"{b.strip()}.bbl" for b in bib.split(","))
    return sorted(names)


def bundle_members(build: Path) -> list[str]:
    """``paper.tex`` and every file it includes: each a regular file inside ``build`` (not a
    symbolic link, nothing resolving outside; :func:`~artifact.render.includes.local_file`)."""
    tex_path = build / TEX
    if not tex_path.exists() and not tex_path.is_symlink():
        raise ArxivError(f"{tex_path}: missing; build the paper first (doit)")
    tex = read_local(build, TEX, where=build, error=ArxivError).decode("utf-8")
    leak = _ABSOLUTE.search(tex)
    if leak:
        line = tex.count("\n", 0, leak.start()) + 1
        raise ArxivError(f"{tex_path}: line {line}: an absolute path of the build machine; "
                         "expected none (the bundle must compile anywhere)")
    members = referenced_files(tex, build)
    missing = [m for m in members if problem(build, m) == "not found"]
    if missing:
        raise ArxivError(f"{tex_path}: includes {', '.join(missing)}, not found under {build}")
    for m in members:
        local_file(build, m, where=tex_path, error=ArxivError)
    return [TEX, *members]


def write_bundle(build: Path, out: Path, *, epoch: int) -> list[str]:
    """Write ``out`` (a .tar.gz) with :func:`bundle_members`; return the member names."""
    members = bundle_members(build)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in members:
            data = read_local(build, name, where=build / TEX, error=ArxivError)
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), epoch, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    with part.open("wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f,
                                             mtime=epoch) as gz:
        gz.write(raw.getvalue())
    part.replace(out)
    return members


def compile_bundle(tarball: Path, *, engine: str = "pdflatex") -> int:
    """Unpack ``tarball`` into an empty temporary folder and compile it as arXiv would.

    Runs ``engine`` twice (cross-references) with nothing else on hand; returns the PDF's size
    in bytes. Raises :class:`ArxivError` with the end of the log when it does not compile, or
    when references stay undefined.
    """
    import shutil
    import subprocess
    import tempfile

    if shutil.which(engine) is None:
        raise ArxivError(f"{engine}: not installed (the Docker image has it)")
    with tempfile.TemporaryDirectory(prefix="specdec-arxiv-") as tmp_s:
        tmp = Path(tmp_s)
        with tarfile.open(tarball) as tar:
            files.extract_tar(tar, tmp)
        cmd = [engine, "-interaction=nonstopmode", "-halt-on-error", TEX]
        for _ in range(2):
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False,
                                  errors="replace")
            if proc.returncode != 0:
                tail = "\n".join(proc.stdout.strip().splitlines()[-15:])
                raise ArxivError(f"{tarball}: {engine} {TEX} failed:\n{tail}")
        log = (tmp / "paper.log").read_text(encoding="utf-8", errors="replace")
        for bad in ("undefined references", "Citation `", "File `"):
            if bad in log:
                line = next(ln for ln in log.splitlines() if bad in ln)
                raise ArxivError(f"{tarball}: {engine}: {line.strip()}")
        return (tmp / "paper.pdf").stat().st_size


def main(argv: list[str] | None = None) -> int:
    """``python -m artifact.render.arxiv --compile TARBALL``: compile a bundle standalone."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="python -m artifact.render.arxiv",
                                description="Compile an arXiv bundle in an empty folder.")
    p.add_argument("--compile", type=Path, required=True, metavar="TARBALL")
    p.add_argument("--engine", default="pdflatex")
    args = p.parse_args(argv)
    try:
        size = compile_bundle(args.compile, engine=args.engine)
    except ArxivError as err:
        print(f"arxiv: {err}", file=sys.stderr)
        return 1
    print(f"arxiv: {args.compile} compiles standalone with {args.engine} "
          f"(paper.pdf, {size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
