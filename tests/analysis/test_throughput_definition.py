"""One definition of decoding throughput: the paper states the one the analysis uses.

The analysis uses the server's ``predicted_per_second``; the methods section says it is
``(predicted_n - 1) / predicted_ms``. Both sides are checked here: the identity on every
committed record, and the sentence in ``paper.md``.
"""

from __future__ import annotations

import math

import pytest

from artifact import paths, records
from artifact.analysis.runs import is_spurious, load_runs

STATED = "`(predicted_n - 1) / predicted_ms`"


def _real_records() -> list[records.Result]:
    out = []
    for run in records.raw_run_files(paths.RUNS):
        if run.name == records.RESULTS:
            out += records.read_results(run.parent, keep_events=False)[0]
    return [r for r in out if not is_spurious(r.timings)]


def test_the_server_rate_is_tokens_after_the_first_over_decoding_time() -> None:
    recs = _real_records()
    assert len(recs) >= 100, "the committed runs should hold real records"
    for r in recs:
        t = r.timings
        assert t.predicted_per_second == pytest.approx(
            (t.predicted_n - 1) / t.predicted_ms * 1000.0, rel=1e-9), r.key
    # ... and it is not predicted_n / predicted_ms (the two differ by 1/predicted_n)
    assert any(not math.isclose(r.timings.predicted_per_second,
                                r.timings.predicted_n / r.timings.predicted_ms * 1000.0,
                                rel_tol=1e-3) for r in recs)


def test_the_analysis_uses_the_server_rate_and_the_paper_states_its_definition() -> None:
    from artifact.analysis import final

    run = next(r for r in load_runs(paths.RUNS)[0] if r.desc.family == "final")
    stats = final.final_stats(run, [None] * len(run.records), pairing_ok=False)
    rates = [r.timings.predicted_per_second for r in run.included]
    assert stats["overall"]["tok_per_s"]["mean"] == pytest.approx(math.fsum(rates) / len(rates))
    text = (paths.MANUSCRIPT / "paper.md").read_text(encoding="utf-8")
    assert "predicted_per_second" in text and STATED in text
    assert "`predicted_n / predicted_ms`" not in text
