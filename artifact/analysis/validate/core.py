"""The core study's records (``experiments/runs-core/<target>-<task>-<drafter>``), read by the
rules every study shares (:mod:`artifact.analysis.validate`) and by the campaign's passes.

- **Unreadable** lines (not a result of the right JSON types, or a count beyond an int32) are
  skipped and counted in a warning, as in every study.
- **Contended** requests are left out and counted, as before; a contended attempt measured
  again is no duplicate.
- **Duplicates**: a (prompt, pass) recorded twice keeps its first quiet copy; the later ones
  are excluded and named (fatal under ``doit verify --strict``).
- **Impossible** values (:func:`artifact.analysis.validate.result_problem`: negative or
  non-finite times and counts, and so on), a decode time of 0 ms for decoded tokens, and a pass
  outside the campaign's declared passes (``config.json`` ``spec.repeats``): the record is
  excluded and named (fatal).
- **Missing passes**: a declared pass of a prompt with no record at all is named in a warning;
  the prompt's mean is taken over the passes it has, as for a pass left out as contended.
- **Passes that differ**: greedy decoding on servers restarted before each pass must repeat
  itself; a pass whose text differs from the prompt's first pass is kept and named.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from artifact import paths, records
from artifact.analysis import validate
from artifact.errors import AnalysisError
from artifact.records import Result

MIN_DECODED = 2  # a request's time per token needs a decoding step after the prompt pass


def declared_passes(run: Path) -> range:
    """The passes the run's campaign declared: ``range(spec.repeats)`` of its ``config.json``.

    >>> import json, tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "config.json").write_text(json.dumps({"spec": {"repeats": 3}}))
    >>> declared_passes(d)
    range(0, 3)
    """
    where = paths.shown(run / records.CONFIG)
    try:
        spec = records.read_json(run / records.CONFIG).get("spec")
    except records.RecordError as err:
        raise AnalysisError(str(err)) from err
    n = spec.get("repeats") if isinstance(spec, dict) else None
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise AnalysisError(f"{where}: spec.repeats: expected an integer >= 1 (the campaign's "
                            f"passes), got {n!r}")
    return range(n)


def read(run: Path, warnings: list[str]) -> tuple[list[Result], int]:
    """A run's quiet requests that can be analysed (file order; the first quiet copy of each
    (prompt, pass)) and the number of contended requests left out. Lines that are not results
    (a pass beyond an int32 among them) are skipped and counted, as every study's are; every
    line and record set aside is named in ``warnings``."""
    passes = declared_passes(run)
    recs, bad = records.read_results(run)
    if bad:
        warnings.append(f"run {run.name}: {records.RESULTS}: {bad} unreadable line(s) skipped")
    return screen(recs, where=run.name, passes=passes, warnings=warnings)


def screen(recs: Sequence[Result], *, where: str, passes: range,
           warnings: list[str]) -> tuple[list[Result], int]:
    """:func:`read`'s rules on records already read (``where``: the run's name)."""
    contended = [r.contended is True for r in recs]
    few = [r.timings.predicted_n < MIN_DECODED for r in recs]  # no step to time: not analysed

    def problem(r: Result) -> validate.Problem | None:
        if r.repeat not in passes:
            return (validate.IMPOSSIBLE, f"pass {r.repeat} outside the campaign's passes "
                    f"{passes.start}-{passes.stop - 1}")
        why = validate.result_problem(r)
        if why is None and r.timings.predicted_n >= MIN_DECODED and r.timings.predicted_ms <= 0:
            why = (f"timings.predicted_ms {r.timings.predicted_ms!r} for "
                   f"{r.timings.predicted_n} tokens: decoding takes time")
        return None if why is None else (validate.IMPOSSIBLE, why)

    out = validate.screen(recs, key=lambda r: r.key, label=lambda r: f"{r.prompt_id}#{r.repeat}",
                          problem=problem, where=where, warnings=warnings, excluded=few,
                          set_aside=contended)
    missing(recs, where=where, passes=passes, warnings=warnings)
    kept = [r for r, x, f in zip(recs, out, few, strict=True) if not x and not f]
    return kept, sum(contended)


def missing(recs: Iterable[Result], *, where: str, passes: range,
            warnings: list[str]) -> list[str]:
    """The declared passes of each prompt that have no record at all (a contended or excluded
    record is one), named in one warning.

    >>> ws: list[str] = []
    >>> missing([], where="r", passes=range(3), warnings=ws)
    []
    """
    have: dict[str, set[int]] = defaultdict(set)
    for r in recs:
        have[r.prompt_id].add(r.repeat)
    gone = [f"{p}#{k}" for p, ks in sorted(have.items()) for k in passes if k not in ks]
    if gone:
        warnings.append(f"run {where}: {records.RESULTS}: {len(gone)} pass(es) of the "
                        f"campaign's {len(passes)} with no record, each prompt's mean taken over "
                        f"the passes it has: {validate.listed(gone)}")
    return gone


def differing(texts: Iterable[tuple[str, int, str]], where: str, warnings: list[str]) -> int:
    """Prompts whose passes gave different text (``texts``: prompt, pass, text of each analysed
    request); each pass whose text differs from its prompt's first pass is named in one warning.
    Returns how many prompts gave the same text in every pass.

    >>> ws: list[str] = []
    >>> differing([("a", 0, "x"), ("a", 2, "y"), ("a", 1, "x"), ("b", 0, "z")], "r", ws)
    1
    >>> print(ws[0])
    run r: 1 prompt(s) whose passes gave different text (greedy decoding on fresh servers \
repeats itself), kept: a#2 (differs from a#0)
    """
    by: dict[str, dict[int, str]] = defaultdict(dict)
    for prompt, rep, text in texts:
        by[prompt].setdefault(rep, text)
    odd: list[str] = []
    agree = 0
    for prompt, passes in sorted(by.items()):
        first = min(passes)
        differ = [k for k in sorted(passes) if passes[k] != passes[first]]
        odd.extend(f"{prompt}#{k} (differs from {prompt}#{first})" for k in differ)
        agree += not differ
    if odd:
        warnings.append(f"run {where}: {len(by) - agree} prompt(s) whose passes gave different "
                        "text (greedy decoding on fresh servers repeats itself), kept: "
                        f"{validate.listed(odd)}")
    return agree
