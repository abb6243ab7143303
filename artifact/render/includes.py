"""Files a built paper includes: regular files inside the build folder, checked in one place.

``paper.tex`` (``\\includegraphics``, ``\\input``) and ``paper.typ`` (``image("...")``) name the
figures and tables they include by paths relative to the build folder. Whatever reads them (the
Typst engine, the arXiv bundle) first passes each name through :func:`local_file`, so a name that
is absolute, climbs out with ``..``, is or goes through a symbolic link leading out of the build
folder, is a symbolic link at all, or is not a regular file is refused in one line, the same
way for every output. :func:`read_local` reads such a file without following a link swapped in
after the check.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath

from artifact.errors import ArtifactError

# image("figures/a.png", ...) in pandoc's Typst output; a Typst string, with its escapes
_TYPST_IMAGE = re.compile(r'(?<![\w.])image\(\s*"((?:[^"\\]|\\.)*)"')
_TYPST_ESCAPE = re.compile(r'\\(u\{[0-9A-Fa-f]+\}|.)')


def problem(build: Path, name: str) -> str | None:
    """Why ``name`` is not a regular file inside ``build``; None when it is.

    >>> import tempfile
    >>> build = Path(tempfile.mkdtemp())
    >>> _ = (build / "a.pdf").write_bytes(b"%PDF")
    >>> [problem(build, n) for n in ("a.pdf", "../a.pdf", "/etc/passwd", "b.pdf", ".")]
    [None, 'an absolute or outside path', 'an absolute or outside path', 'not found', \
'not a regular file']
    """
    pure = PurePosixPath(name)
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a control character in the name"
    if not name or pure.is_absolute() or ".." in pure.parts:
        return "an absolute or outside path"
    path = build / name
    if path.is_symlink():
        return f"a symbolic link (to {os.readlink(path)})"
    base, resolved = build.resolve(), path.resolve()
    if resolved != base and base not in resolved.parents:
        return f"resolves outside the build folder (to {resolved})"
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    return None if stat.S_ISREG(mode) else "not a regular file"


def local_file(build: Path, name: str, *, where: object, error: type[ArtifactError]) -> Path:
    """``build / name``, a regular file inside ``build``; else ``error``, one line.

    >>> import tempfile
    >>> from artifact.errors import RenderError
    >>> local_file(Path(tempfile.mkdtemp()), "../x.png", where="paper.typ", error=RenderError)
    Traceback (most recent call last):
    ...
    artifact.errors.RenderError: paper.typ: includes '../x.png': an absolute or outside path; \
expected a regular file inside the build folder ...
    """
    why = problem(build, name)
    if why is not None:
        raise error(f"{where}: includes {name!r}: {why}; expected a regular file inside the "
                    f"build folder {build}")
    return build / name


def read_local(build: Path, name: str, *, where: object, error: type[ArtifactError]) -> bytes:
    """The bytes of :func:`local_file`, opened without following a symbolic link."""
    path = local_file(build, name, where=where, error=error)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as err:
        raise error(f"{where}: includes {name!r}: cannot be read ({err.strerror})") from err
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise error(f"{where}: includes {name!r}: not a regular file")
        return f.read()


def typst_images(typ: str) -> list[str]:
    """The paths of ``image("...")`` calls in Typst source, unescaped, in order.

    >>> typst_images('#figure(image("figures/a.png", width: 100%)) #image("../o\\\\"ut.png")')
    ['figures/a.png', '../o"ut.png']
    """
    def unescape(m: re.Match[str]) -> str:
        e = m.group(1)
        if e.startswith("u{"):
            return chr(int(e[2:-1], 16))
        return {"n": "\n", "r": "\r", "t": "\t"}.get(e, e)

    return [_TYPST_ESCAPE.sub(unescape, m.group(1)) for m in _TYPST_IMAGE.finditer(typ)]


__all__ = ["local_file", "problem", "read_local", "typst_images"]
