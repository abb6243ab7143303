"""Session-set recipes (``experiments/session_sets.toml``): how a set of real multi-turn sessions
is drawn; and the id lock each set was drawn into (``experiments/sessions/<set>.txt``). Read by
the campaign (which draws and plays the sessions) and by the analysis (which reports the
transcript rule and keeps only the turns of locked sessions); standard library,
:mod:`artifact.paths` and :mod:`artifact.errors` only, so that the analysis never imports the
campaign package.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path

from artifact import paths
from artifact.errors import SessionError

SESSION_RECIPES = paths.EXPERIMENTS / "session_sets.toml"
FENCE = "```"  # a Markdown code fence: what makes a turn count as code


@dataclass(frozen=True, kw_only=True)
class Stratum:
    min_turns: int
    max_turns: int
    n: int


@dataclass(frozen=True, kw_only=True)
class SessionRecipe:
    name: str
    seed: int
    clip_chars: int  # each message's first N characters are sent
    max_turns: int  # turns kept per session, at most
    strata: tuple[Stratum, ...]  # sessions drawn per range of (full) turn counts
    # Keep only sessions in which at least this share of the kept turns carry a code fence
    # (```) in the clipped user message or reply (None: no such rule). The code-heavy set's rule.
    code_share: float | None = None

    def code_heavy(self, pairs: list[tuple[str, str]]) -> bool:
        """Whether a session's kept (user, reply) pairs, unclipped, meet :attr:`code_share`.

        >>> r = SessionRecipe(name="c", seed=1, clip_chars=8, max_turns=2, strata=(),
        ...                   code_share=0.5)
        >>> r.code_heavy([("see ```x```", "ok"), ("hi", "there")])
        True
        >>> r.code_heavy([("hi", "there ```x```"), ("a", "b")])  # the fence is past the clip
        False
        """
        if self.code_share is None:
            return True
        kept = pairs[:self.max_turns]
        fenced = sum(FENCE in u[:self.clip_chars] or FENCE in a[:self.clip_chars]
                     for u, a in kept)
        return bool(kept) and fenced >= self.code_share * len(kept)


def load_recipes(file: Path | None = None) -> dict[str, SessionRecipe]:
    """The session-set recipes (default: experiments/session_sets.toml); each mistake is one
    line naming the file and the field."""
    file = file or SESSION_RECIPES
    where = file.name
    try:
        doc = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise SessionError(f"{where}: cannot read ({err})") from err
    out: dict[str, SessionRecipe] = {}
    for name, t in doc.get("sets", {}).items():
        if not isinstance(t, dict):
            raise SessionError(f"{where}: sets.{name}: expected a table")
        for k in t:
            if k not in {"description", "seed", "clip_chars", "max_turns", "strata",
                         "code_share"}:
                raise SessionError(f"{where}: sets.{name}.{k}: unknown key")
        for k in ("seed", "clip_chars", "max_turns"):
            v = t.get(k)
            if not isinstance(v, int) or isinstance(v, bool) or v < (0 if k == "seed" else 1):
                raise SessionError(f"{where}: sets.{name}.{k}: expected a positive integer, "
                                   f"got {v!r}")
        strata = []
        raw = t.get("strata")
        if not isinstance(raw, list) or not raw:
            raise SessionError(f"{where}: sets.{name}.strata: expected a list of "
                               "[min_turns, max_turns, n]")
        for i, s in enumerate(raw):
            ok = (isinstance(s, list) and len(s) == 3
                  and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in s)
                  and s[0] <= s[1])
            if not ok:
                raise SessionError(f"{where}: sets.{name}.strata[{i}]: expected [min_turns, "
                                   f"max_turns, n] with 1 <= min_turns <= max_turns, got {s!r}")
            strata.append(Stratum(min_turns=s[0], max_turns=s[1], n=s[2]))
        share = t.get("code_share")
        if share is not None and (not isinstance(share, int | float) or isinstance(share, bool)
                                  or not 0 < share <= 1):
            raise SessionError(f"{where}: sets.{name}.code_share: expected a share of turns in "
                               f"(0, 1], got {share!r}")
        out[name] = SessionRecipe(name=name, seed=t["seed"], clip_chars=t["clip_chars"],
                                  max_turns=t["max_turns"], strata=tuple(strata),
                                  code_share=None if share is None else float(share))
    return out


def find_recipe(name: str, file: Path | None = None) -> SessionRecipe | None:
    """The recipe of session set ``name``, or None when the file is missing, malformed or has no
    such set (the analyses report the transcript rule when they can, and go on without it)."""
    try:
        return load_recipes(file).get(name)
    except SessionError:
        return None


def lock_file(name: str, locks: Path | None = None) -> Path:
    """The id lock of session set ``name`` (default folder: ``experiments/sessions``)."""
    return (locks or paths.SESSION_LOCKS) / f"{name}.txt"


def read_id_lock(path: Path) -> tuple[list[tuple[int, str]], str]:
    """(line number, id) pairs of an id lock file and the file's sha256; a file that cannot be
    read, holds no id or repeats one is a :class:`SessionError` naming it.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.txt"
    >>> _ = p.write_text("# a comment\\nab_1\\n\\ncd_0  # kept\\n", encoding="utf-8")
    >>> read_id_lock(p)[0]
    [(2, 'ab_1'), (4, 'cd_0')]
    """
    name = paths.shown(path, outside="name")
    try:
        body = path.read_bytes()
        text = body.decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SessionError(f"{name}: cannot read the session id file ({err}); run "
                           "`doit sessions`") from err
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        sid = line.split("#", 1)[0].strip()
        if not sid:
            continue
        if sid in seen:
            raise SessionError(f"{name}: line {n}: duplicate session id {sid!r}")
        seen.add(sid)
        out.append((n, sid))
    if not out:
        raise SessionError(f"{name}: no session ids")
    return out, hashlib.sha256(body).hexdigest()
