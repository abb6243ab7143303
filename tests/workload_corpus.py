"""A small corpus of workload runs, written as the runner writes them (for tests)."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from artifact import records
from artifact.analysis.workload import write_workload


def write_run(root: Path, run_id: str, condition: str, start: str, slow: float,
              sessions: dict[str, int], **knobs: object) -> Path:
    run = root / run_id
    run.mkdir(parents=True)
    w = {"condition": condition, "style": "code", "chars_per_token": None, "prefix_tokens": 0,
         "block": 16, "recurrent": False, **knobs}
    spec = {"workload": w, "drafter": "ngram-mod", "k": 8, "n_predict": 16, "ctx_size": 4096,
            "concurrency": 1, "threads": 1, "temperature": 0.0, "prompt_set": "workload"}
    records.write_json(run / records.CONFIG, {"spec": spec, "environment": {"start_time": start}})
    records.write_json(run / records.METRICS, {"complete": True, "measure_s": 60.0})
    records.write_json(run / records.WORKLOAD, {
        "id_jaccard": 1.0, "problems": [],
        "chars_per_token": {"real": 4.2, "synthetic": 4.1, "target": 4.2}})
    for sid, n in sessions.items():  # the plan, as the runner writes it before measuring
        for sd in ("real", "synthetic"):
            records.append_jsonl(run / records.SESSIONS, plan_row(sid, sd, n))
    rng = np.random.default_rng(zlib.crc32(run_id.encode()))
    for sid, n in sessions.items():
        for t in range(n):
            for sd, f in (("real", 1.0), ("synthetic", slow)):
                ttft = f * (200.0 + 10 * t) * rng.uniform(0.95, 1.05)
                records.append_jsonl(run / records.RESULTS, records.TurnResult(
                    session_id=sid, side=sd, condition=condition, turn=t, order=0, slot=0,
                    attempt=1, server_start=1, sent_unix_s=0.0, queue_ms=0.0,
                    prompt_chars=400 * (t + 1), prompt_tokens=100 * (t + 1),
                    cached_tokens=90 * t, output_tokens=16, n_predict=16, ttft_ms=ttft,
                    tpot_ms=50.0 * f, e2e_ms=ttft + 750.0 * f, event_ms=[1.0],
                    timings=records.Timings(prompt_n=10, prompt_ms=1.0, predicted_n=16,
                                            predicted_ms=1.0, predicted_per_second=1.0,
                                            cache_n=90 * t, draft_n=8, draft_n_accepted=4),
                    stop_type="length", alpha=0.5))
    return run


def plan_row(session: str, side: str, n_turns: int) -> dict[str, object]:
    """One line of ``sessions.jsonl``: turn t sends 100 (t + 1) tokens, 400 (t + 1) characters,
    and asks for 16 tokens (what :func:`write_run` records)."""
    return {"session_id": session, "side": side, "order": 0, "system": None, "prefix_tokens": 0,
            "users": ["u"] * n_turns, "replies": ["r"] * n_turns,
            "turns": [{"turn": t, "prompt_tokens": 100 * (t + 1), "prompt_chars": 400 * (t + 1),
                       "n_predict": 16} for t in range(n_turns)]}


def corpus(root: Path) -> Path:
    sessions = {"s1": 3, "s2": 8, "s3": 14, "s4": 24, "s5": 32}
    write_run(root, "wl-b", "code", "2026-01-01T00:02:00", 1.3, sessions)
    write_run(root, "wl-a", "english", "2026-01-01T00:01:00", 1.0, sessions, style="english")
    write_run(root, "wl-c", "code+prefix", "2026-01-01T00:03:00", 1.3, sessions,
              prefix_tokens=64)
    write_run(root, "wl-d", "recurrent", "2026-01-01T00:04:00", 1.1, sessions,
              recurrent=True, style="english")
    (root / "_superseded").mkdir()
    return root


def write_workload_fixture(path: Path) -> Path:
    """``workload.json`` of the corpus, written by the real analysis, at ``path``."""
    root = corpus(path.parent / "_workload_runs")
    write_workload(root, path)
    return path


def tiny_session_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recipe_toml: str,
                     extra_ids: tuple[str, ...] = ()) -> None:
    """A session set ``tiny`` (``recipe_toml``: its recipe table) drawn from the real dataset
    into ``tmp_path``, its id lock written (with ``extra_ids`` appended), and the session
    module pointed at both, for the test's duration."""
    from artifact.workloads import sessions as S

    recipe_file = tmp_path / "session_sets.toml"
    recipe_file.write_text(recipe_toml)
    monkeypatch.setattr(S, "SESSION_RECIPES", recipe_file)
    monkeypatch.setattr(S, "SESSIONS", tmp_path / "sessions")
    recipe = S.load_recipes(recipe_file)["tiny"]
    S.write_id_lock(recipe, [*S.select_ids(recipe, S.dataset()), *extra_ids],
                    S.lock_path("tiny"))
