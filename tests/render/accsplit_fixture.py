"""A small ``accsplit.json`` made by the real analysis functions from hand-made observations.

Two drafters and the no-draft control, two prompts, two budgets, three windows at batch 1 and a
batch-2 stratum (with its no-draft control) in window w2; validated by the contract, like the
summary fixture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artifact import files
from artifact.analysis import accsplit as A
from artifact.analysis import accsplit_stats as S
from artifact.analysis import steps
from artifact.analysis.accsplit_obs import Obs, Segment
from artifact.contract import accsplit as C
from artifact.errors import AnalysisError

DRAFT = "draft Q2_K k=4"
NGRAM = "ngram-mod k=4"


def obs(*, prompt: str = "chat/a", budget: int = 128, window: str = "w1", accepted: int = 6,
        rounds: int = 4, drafted: int = 16, batch: int = 1, config: str = DRAFT,
        tokens: int | None = None, event_ms: list[float] | None = None,
        code: Segment | None = None, prose: Segment | None = None,
        pos: tuple[float, ...] | None = (3.0, 2.0, 1.0, 0.0), text: str = "",
        repeat: int = 0, date: str = "2026-11-30", contended: bool | None = None,
        quiet_window: bool = True, predicted_ms: float = 1000.0) -> Obs:
    """One observation; the no-draft control has no server counts."""
    none = config == "no draft"
    # by default one token per 20 ms step (above steps.FLOOR_MS), so that the client's
    # estimators have steps to count after the first
    ev = event_ms if event_ms is not None else [20.0 * i for i in range(budget)]
    st = steps.group_steps(ev)
    return Obs(
        run_id=f"{window}-b{batch}-n{budget}-x", config=config,
        drafter="none" if none else ("ngram-mod" if config == NGRAM else "draft-simple"),
        window=window, utc_date=date, batch=batch, budget=budget, prompt_id=prompt,
        domain=prompt.split("/")[0], repeat=repeat, seed=1,
        answer_tokens=tokens if tokens is not None else budget, prompt_tokens=10,
        predicted_ms=predicted_ms, accepted=None if none else accepted,
        drafted=None if none else drafted, rounds=None if none else rounds,
        pos_accepted=None if none else pos, source="none" if none else "metrics",
        accepted_reply=None if none else accepted, drafted_reply=None if none else drafted,
        accepted_log=None if none else accepted, drafted_log=None if none else drafted,
        rounds_log=None if none else rounds, steps=st, est=steps.estimates(st),
        code=code or Segment(tokens=0, steps=0, ms=0.0),
        prose=prose or Segment(tokens=len(ev), steps=st.steps, ms=ev[-1] - ev[0] if ev else 0),
        text=text, contended=contended, quiet_window=quiet_window, k=None if none else 4)


def observations() -> list[Obs]:
    out: list[Obs] = []
    for wi, w in enumerate(("w1", "w2", "w3")):
        for config in (DRAFT, NGRAM):
            for pi, prompt in enumerate(("chat/sharegpt-2Hj9Wtq_0", "grounded/HumanEval-59")):
                out.append(obs(config=config, prompt=prompt, window=w,
                               accepted=4 + 2 * pi + wi, rounds=4))
                if w == "w1":
                    out.append(obs(config=config, prompt=prompt, window=w, budget=256,
                                   accepted=10 + 2 * pi, rounds=8))
                if w == "w2":
                    out.append(obs(config=config, prompt=prompt, window=w, batch=2,
                                   accepted=4 + 2 * pi, rounds=4))
                if w in ("w2", "w3"):  # a second long budget, in two windows
                    out.append(obs(config=config, prompt=prompt, window=w, budget=1024,
                                   accepted=60 + 4 * pi + wi, rounds=32))
        for prompt in ("chat/sharegpt-2Hj9Wtq_0", "grounded/HumanEval-59"):
            out.append(obs(config="no draft", prompt=prompt, window=w,
                           event_ms=[0.0, 25.0, 50.0], tokens=3))
            if w == "w2":  # the batch stratum's no-draft control
                out.append(obs(config="no draft", prompt=prompt, window=w, batch=2,
                               event_ms=[0.0, 25.0, 50.0], tokens=3, predicted_ms=1500.0))
    return out


def build_accsplit() -> C.AccSplit:
    o = observations()
    windows = {w: C.WindowInfo(start_utc=f"2026-11-30T0{i + 4}:00:00Z",
                               end_utc=f"2026-11-30T0{i + 4}:20:00Z", runs=4,
                               wall_s={"value": 1200.0, "kind": "measured"},
                               measure_s={"value": 1000.0, "kind": "measured"},
                               dates=["2026-11-30"],
                               no_draft_ms_per_token=S.interval(
                                   [25.0, 25.0 + i], kind=S.MEASURED, over="requests"),
                               load={"quiet": True, "source": "declared", "n_requests": 10,
                                     "n_contended": 0, "other_machine": False,
                                     "foreign_cores_median": None,
                                     "foreign_cores_max": None, "reason": "a test window"},
                               machine="Test CPU, 2 cores", binary_sha256=["ab" * 32])
               for i, w in enumerate(("w1", "w2", "w3"))}
    warnings: list[str] = []
    data: dict[str, Any] = {
        "protocol": {"windows": windows, "wall_s_total": {"value": 3600.0, "kind": "measured"},
                     "dates": ["2026-11-30"], "configs": [DRAFT, NGRAM, "no draft"],
                     "budgets": [128, 256, 1024], "batches": [1, 2],
                     "prompts": [{"prompt_id": "chat/sharegpt-2Hj9Wtq_0", "domain": "chat"},
                                 {"prompt_id": "grounded/HumanEval-59", "domain": "grounded"}],
                     "n_requests": len(o), "n_runs": 20, "temperature": [1.0],
                     "set_aside": [{"run_id": "w1-b1-n128-ngram-mod", "reason": "restarted",
                                    "condition": "ngram-mod k=4 at batch 1, "
                                                 "128-token answers, window w1"}],
                     "timing_windows": ["w1", "w2", "w3"],
                     "step_rule": {"floor_ms": steps.FLOOR_MS, "fraction": steps.FRACTION}},
        "by_config": A.by_config(o), "by_prompt_budget": A.by_prompt_budget(o),
        "by_window": A.by_window(o), "by_date": A.by_date(o),
        "reconciliation": A.reconciliation(o), "length_split": A.length_split(o),
        "acceptance_figures": A.acceptance_figures(o),
        "segment_split": A.segment_split(o), "batch_split": A.batch_split(o),
        "batch_contrasts": A.batch_contrasts(o),
        "shift": A.shifts(o, warnings),
    }
    plain = {k: files.to_plain(v, k, []) for k, v in data.items()}
    plain["schema_version"] = C.SCHEMA_VERSION
    plain["warnings"] = warnings
    return C.validate(plain, source="accsplit fixture", error=AnalysisError)


def write_accsplit(path: Path) -> Path:
    files.write_text(path, files.dumps_json(build_accsplit()))
    return path
