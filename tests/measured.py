"""What the real-server tests may assert of a run's records whatever the machine's load."""

from __future__ import annotations

from pathlib import Path

from artifact import records


def one_record_per_request(run: Path) -> list[tuple[str, int]]:
    """The run's (prompt id, repeat) keys, one each, in the order first measured. A request
    measured while the machine was busy is flagged ``contended``, kept, and measured again
    (bounded): every record of a key but its last must be such a flagged one; timing is for
    benchmarks, so how many there were is not asserted."""
    results, bad = records.read_results(run)
    assert bad == 0
    by_key: dict[tuple[str, int], list[records.Result]] = {}
    for r in results:
        by_key.setdefault(r.key, []).append(r)
    again = [k for k, recs in by_key.items() if not all(r.contended for r in recs[:-1])]
    assert not again, f"duplicated records not flagged contended: {sorted(again)}"
    return list(by_key)
