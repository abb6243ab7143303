"""A small ``costmodel.json`` for render tests: two models' fitted step costs and the drafted
final runs of the render fixture (a self-draft, a lower-bit draft and an n-gram drafter)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artifact import files
from artifact.render import costmodel


def build_costmodel() -> dict[str, Any]:
    def run(label: str, drafter: str, draft: str | None, acc: float, pred: float,
            meas: float | None, family: str = "final", k: int | None = None) -> dict[str, Any]:
        return {"label": label, "family": family, "drafter": drafter, "draft_model": draft,
                "draft_quant": label.split()[1] if draft else None,
                "target_model": "t-q4", "k": k, "mean_draft": 3.0, "acceptance": acc,
                "predicted_speedup": pred, "measured_speedup": meas, "extrapolated": False,
                "reason": None}

    return {"schema": costmodel.SCHEMA_VERSION, "fit": "test",
            "models": {"t-q4": {"a_ms": 15.0, "b_ms": 8.0, "r2": 0.99, "c1_ms": 23.0},
                       "t-q2": {"a_ms": 15.0, "b_ms": 5.0, "r2": 0.98, "c1_ms": 20.0}},
            "runs": {"final-draft-self": run("draft Q4_1", "draft-simple", "t-q4", 0.99, 0.8,
                                             0.5),
                     "final-draft-q2k": run("draft Q2_K", "draft-simple", "t-q2", 0.6, 0.6,
                                            0.4),
                     "final-ngram-mod": run("ngram-mod", "ngram-mod", None, 0.3, 0.99, 0.95),
                     "ksweep-ngram-mod-k4": run("ngram-mod k=4", "ngram-mod", None, 0.7, 1.01,
                                                None, family="ksweep", k=4)}}


def write_costmodel(path: Path) -> Path:
    return files.write_text(path, files.dumps_json(build_costmodel()))
