"""The core study's predictions file read by its own rules (issue 46): a configuration input,
refused in one line naming the file, the field and what was expected; predictions made after
the runs started are a fatal warning of the analysis."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from artifact import paths, warning_classes
from artifact.analysis import core as C
from artifact.analysis.validate import predictions as P
from artifact.errors import AnalysisError

from .test_core_validation import one_group

Doc = dict[str, Any]


def committed() -> Doc:
    out: Doc = json.loads(paths.CORE_PREDICTIONS.read_text(encoding="utf-8"))
    return out


def _set(doc: Doc, where: str, value: Any) -> None:
    *head, last = where.split(".")
    node: Any = doc
    for k in head:
        node = node[int(k)] if isinstance(node, list) else node[k]
    node[int(last) if isinstance(node, list) else last] = value


def _duplicate(doc: Doc) -> None:
    twin = dict(doc["cells"][0], predicted=3.0, lo=2.0, hi=4.0)
    doc["cells"].append(twin)


CASES: list[tuple[str, Callable[[Doc], None], str]] = [
    ("duplicate cell", _duplicate,
     r"cells\[24\]: expected each \(target, task, drafter\) once; q4_1-study-ngram-mod already "
     r"predicted by cells\[0\]"),
    ("lo above hi", lambda d: _set(d, "cells.0.lo", 2.0),
     r"cells\[0\]\.lo: expected at most hi 1\.4264, got 2\.0"),
    ("point outside its interval", lambda d: _set(d, "cells.0.predicted", 1.5),
     r"cells\[0\]\.predicted: expected inside its interval \[0\.7709, 1\.4264\], got 1\.5"),
    ("sign against the point", lambda d: _set(d, "cells.0.sign", "loses"),
     r"cells\[0\]\.sign: expected 'pays' \(predicted 1\.0986 is above 1\), got 'loses'"),
    ("sign against a point below 1", lambda d: _set(d, "cells.9.sign", "pays"),
     r"cells\[9\]\.sign: expected 'loses' \(predicted 0\.4679 is not above 1\), got 'pays'"),
    ("unknown drafter", lambda d: _set(d, "cells.0.drafter", "ngram-mood"),
     r"cells\[0\]\.drafter: expected one of ngram-mod, ngram-mod-k16, ngram-simple, "
     r"draft-q2k, got 'ngram-mood'"),
    ("unknown target", lambda d: _set(d, "cells.0.target", "q5_0"),
     r"cells\[0\]\.target: expected one of q4_1, q8_0, f16, got 'q5_0'"),
    ("unknown task", lambda d: _set(d, "cells.0.task", "chat"),
     r"cells\[0\]\.task: expected one of study, edit, got 'chat'"),
    ("cell not an object", lambda d: _set(d, "cells.0", 3), r"cells\[0\]: expected an object"),
    ("negative step cost", lambda d: _set(d, "costs.q4_1.c1_ms", -18.461),
     r"costs\.q4_1\.c1_ms: expected a step time in ms above 0, got -18\.461"),
    ("zero step cost", lambda d: _set(d, "costs.f16.draft_round_ms", 0),
     r"costs\.f16\.draft_round_ms: expected a step time in ms above 0, got 0\.0"),
    ("negative intercept", lambda d: _set(d, "costs.q8_0.a_ms", -1.0),
     r"costs\.q8_0\.a_ms: expected a step time in ms at least 0, got -1\.0"),
    ("cost of an unknown target", lambda d: _set(d, "costs.q5_0", d["costs"]["q4_1"]),
     r"costs\.q5_0: expected a target of the study \(q4_1, q8_0, f16\)"),
    ("made_utc not a time", lambda d: _set(d, "made_utc", "before the runs"),
     r"made_utc: expected a UTC time such as 2026-12-03T07:40:25Z \(when they were made\), "
     r"got 'before the runs'"),
    ("made_utc without its zone", lambda d: _set(d, "made_utc", "2026-12-03T07:40:25"),
     r"made_utc: expected a UTC time"),
]


@pytest.mark.parametrize("what,change,message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_predictions_file_is_refused_in_one_line(tmp_path: Path, what: str,
                                                       change: Callable[[Doc], None],
                                                       message: str) -> None:
    doc = committed()
    change(doc)
    bad = tmp_path / "core-predictions.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(AnalysisError, match=rf"^{bad}: {message}") as err:
        C.build(paths.CORE_RUNS, bad)
    assert "\n" not in str(err.value)
    with pytest.raises(AnalysisError, match=message):  # what prediction.py would write
        P.check(doc, "p.json")


def test_the_committed_predictions_are_read_as_before() -> None:
    cells, meta = P.read(paths.CORE_PREDICTIONS)
    assert len(cells) == 24 and meta is not None
    assert set(meta["costs"]) == {"q4_1", "q8_0", "f16"}
    P.check(committed(), "p.json")


def test_predictions_made_after_the_runs_started_are_a_fatal_warning(tmp_path: Path) -> None:
    runs = one_group(tmp_path / "runs")
    doc = committed()
    doc["made_utc"] = "2026-12-03T09:00:00Z"  # the group started at 07:41:41
    late = tmp_path / "core-predictions.json"
    late.write_text(json.dumps(doc))
    got = C.build(runs, late)
    (w,) = [w for w in got["warnings"] if "made_utc" in w]
    assert w == ("core-predictions.json: made_utc 2026-12-03T09:00:00Z: predictions made after "
                 "the runs started (run q4_1-edit-none started 2026-12-03T07:41:41+00:00): not "
                 "committed before the study was measured")
    assert warning_classes.classify(w) == "predicted-after"
    assert warning_classes.fatal([w]) == [w]
    on_time = C.build(runs, paths.CORE_PREDICTIONS)
    assert not any("made_utc" in w for w in on_time["warnings"])
