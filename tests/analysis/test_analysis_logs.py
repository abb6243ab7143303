"""Server-log parsing and pairing log entries to records."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifact.analysis.logs import ALPHA_TOLERANCE, pair, parse_server_log
from artifact.records import result_from_row
from tests.corpus import accept_line, pos_line, record

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "server_log_sample.txt"


def test_real_server_log_sample():
    """The real llama-server log (-lv 4, draft-simple, 2 slots): warm-up excluded."""
    if not SAMPLE.exists():
        pytest.skip("tests/data/server_log_sample.txt not present")
    p = parse_server_log(SAMPLE.read_text(encoding="utf-8"))
    assert p.has_markers
    assert len(p.entries) == 3  # tasks 6, 7 and 19; task 0 was warm-up
    e = p.entries[0]
    assert (e.accepted, e.generated, e.alpha, e.mean_len) == (37, 37, 1.0, 4.70)
    assert e.acc_per_pos == (1.0, 0.9, 0.9, 0.9)
    assert all(x.acc_per_pos is not None for x in p.entries)


def test_markers_delimit_measured_segments():
    log = "\n".join(
        [
            accept_line(1, 4, 1.25),  # before any marker: not measured
            "[specdec-runner] warmup begin (server start 1)",
            accept_line(2, 4, 1.5),
            pos_line([0.5]),
            "[specdec-runner] measure begin (server start 1)",
            accept_line(3, 4, 1.75),
            pos_line([0.75]),
            "[specdec-runner] warmup begin (server start 2)",
            accept_line(4, 4, 2.0),
            "[specdec-runner] measure begin (server start 2)",
            accept_line(1, 8, 1.1),
        ]
    )
    p = parse_server_log(log)
    assert [(e.accepted, e.generated) for e in p.entries] == [(3, 4), (1, 8)]
    assert p.entries[0].acc_per_pos == (0.75,)
    assert p.entries[1].acc_per_pos is None  # never printed for it


def test_without_markers_every_line_counts():
    p = parse_server_log(accept_line(1, 2, 1.5) + "\n" + accept_line(2, 2, 2.0) + "\n")
    assert not p.has_markers
    assert len(p.entries) == 2


@pytest.mark.parametrize(
    "line",
    [
        "draft acceptance = 0.50000 (    2 accepted /     4 generated), mean len =  1.50",
        "12:00:01 I slot print_timing: id 3 | task 99 | draft acceptance = 0.5 (2 accepted/4 "
        "generated), mean len = 1.5",
        "draft acceptance: 0.5 ( 2 accepted / 4 generated) mean len 1.5",
        "draft acceptance = 0.500 (2 accepted / 4 generated), mean acceptance length = 1.5",
    ],
)
def test_tolerant_formats(line):
    p = parse_server_log(line + "\n     acc per pos = [0.500, 0.250]\n")
    (e,) = p.entries
    assert (e.accepted, e.generated, e.alpha, e.mean_len) == (2, 4, 0.5, 1.5)
    assert e.acc_per_pos == (0.5, 0.25)


def test_old_format_without_mean_len():
    line = "draft acceptance = 0.25000 (    1 accepted /     4 generated)\n"
    (e,) = parse_server_log(line).entries
    assert e.mean_len is None and e.alpha == 0.25


def _rec(alpha_counts, tps=50.0, pid="p"):
    if alpha_counts is None:
        return result_from_row(record(pid, "code", tps))
    a, g = alpha_counts
    return result_from_row(record(pid, "code", tps, alpha=a / g, draft=(a, g)))


def _entries(counts):
    return parse_server_log("\n".join(accept_line(a, g, 1.0 + a / 10) for a, g in counts)).entries


def test_pairing_ok_skips_records_without_alpha():
    recs = [_rec((3, 4)), _rec(None), _rec((1, 4))]
    p = pair(recs, _entries([(3, 4), (1, 4)]), where="r1")
    assert p.ok and p.n_lines == 2 and p.n_records == 2
    assert p.max_abs_alpha_diff == 0.0
    assert p.entry_of[1] is None
    assert p.entry_of[2] is not None and p.entry_of[2].accepted == 1


def test_pairing_count_mismatch_names_the_run():
    p = pair([_rec((3, 4)), _rec((1, 4))], _entries([(3, 4)]), where="run-x")
    assert not p.ok
    assert p.problem is not None and "run run-x" in p.problem and "1 measured" in p.problem
    assert p.entry_of == [None, None]


def test_pairing_reordered_concurrent_completions():
    """Two requests finishing together may be logged in the other order."""
    recs = [_rec((3, 4)), _rec((1, 4)), _rec((2, 4))]
    p = pair(recs, _entries([(1, 4), (3, 4), (2, 4)]), where="r")
    assert p.ok and p.max_abs_alpha_diff == 0.0
    assert [e.accepted for e in p.entry_of if e] == [3, 1, 2]


def test_pairing_alpha_disagreement_is_not_ok():
    recs = [_rec((3, 4)), _rec((1, 4))]
    p = pair(recs, _entries([(3, 4), (4, 4)]), where="r")
    assert not p.ok
    assert p.max_abs_alpha_diff == pytest.approx(0.75)
    assert p.max_abs_alpha_diff > ALPHA_TOLERANCE
    assert p.problem is not None and "differ" in p.problem


def test_the_parser_reads_matches_as_findall_gives_them():
    # parse_server_log unpacks findall's tuples in _GROUPS order, telling a group that took no
    # part ("") from one that matched by its being non-empty (vals aside); and it reads an acc
    # per pos vector split on commas first, on any run of commas and spaces when that fails.
    # Both must read what finditer and the general split read, on damaged log lines.
    import random

    from artifact.analysis import logs

    index = logs._EVENT.groupindex
    assert tuple(sorted(index, key=index.__getitem__)) == logs._GROUPS
    assert logs._EVENT.groups == len(logs._GROUPS)
    rng = random.Random(4)
    lines = [accept_line(3, 4, 1.75), pos_line([0.75, 0.5]), "acc per pos = ()",
             "[specdec-runner] measure begin (server start 1)", "draft acceptance = nan (0 "
             "accepted / 0 generated)", "acc per pos = [1, 2]"]
    bits = ["acc per pos = (", "draft acceptance = ", ")", "]", ",", " ", "\t", "\n", "nan", "x",
            "1_0", "\u2003", "0.5", "(1 accepted / 2 generated)", "[specdec-runner] warmup begin"]
    for _ in range(5000):
        text = "\n".join(rng.choice(lines) for _ in range(rng.randrange(1, 4)))
        chars = list(text)
        for _ in range(rng.randrange(4)):
            chars.insert(rng.randrange(len(chars) + 1), rng.choice(bits))
        text = "".join(chars)
        got = logs._EVENT.findall(text)
        want = [m.group(*logs._GROUPS) for m in logs._EVENT.finditer(text)]
        assert got == [tuple("" if g is None else g for g in w) for w in want]
        for w in want:
            assert all(g is None or g != "" for g in w[:-1])
            if w[-1] is not None:
                reference = tuple(logs._float(v) for v in logs._SPLIT.split(w[-1].strip()) if v)
                assert repr(logs._floats(w[-1])) == repr(reference), w[-1]
