"""Forward time per step of one model at 1..N tokens, from llama-server's own timings (issue 16).

The cost model (:mod:`artifact.analysis.costmodel`) needs what one forward pass of a model costs
when it evaluates n tokens at once: n = 1 is an ordinary decoding step (and one draft-model
step), n = g + 1 a verification round of g drafted tokens. This module measures it on the
pinned server, with nothing drafted:

1. Start ``llama-server`` for the model (no drafter, one slot, the campaign's threads and
   context), tokenize a real prompt of the study's prompt set with the server's ``/tokenize``
   and keep its first P tokens as a fixed prefix (near the study's context).
2. Warm up: a few unrecorded requests, which also put the prefix in the slot's KV cache.
3. For each (n, rep), n = 1..N and rep = 0..R-1, in a seeded shuffled order, send
   ``/completion`` with ``prompt`` = prefix + n fresh token ids (drawn per (n, rep) from the
   study prompts' own tokens; the first one never equals the previous request's, so exactly the
   prefix is reused), ``n_predict: 1``, ``cache_prompt: true``, temperature 0. The server's
   ``timings.prompt_ms`` is then the time of one forward pass over n tokens (plus sampling one
   token), ``timings.prompt_n`` must be n and ``timings.cache_n`` must be P: a request where
   either differs is recorded with its ``problem`` and left out by the analysis.

Output directory (default ``experiments/runs-cost/<model key>/``):

``config.json``
    model key and file sha256, the environment (binary sha256, CPU, ...), the server's argv
    template, the prefix (prompt id, P), N, R, seed, warm-up count, start time.
``steps.jsonl``
    one line per request, appended and fsynced: ``n``, ``rep``, ``prompt_n``, ``prompt_ms``,
    ``cache_n``, ``client_ms`` (HTTP round trip, kept apart from the server's time),
    ``sent_unix_s`` (a label, not a clock), ``server_start``, ``problem`` (null when clean),
    ``contention`` and ``contended`` (foreign CPU during the request,
    :class:`artifact.campaign.quiet.Window`).
``errors.jsonl``, ``events.jsonl``, ``server.log``
    failed requests; the quiet gate's verdicts; the server's own log with marker lines.

A rerun resumes: the (n, rep) pairs already in ``steps.jsonl`` are skipped. A directory measured
under another protocol (model file, binary, argv, P, N, R or seed) is refused in one line. The
measurement holds this host's measurement lock and waits for a quiet machine first, as every
campaign run does (:func:`artifact.campaign.quiet.measuring`).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from artifact import paths, records
from artifact.campaign import quiet
from artifact.campaign.fingerprint import environment
from artifact.campaign.runner import server_files
from artifact.campaign.server import Server, argv_template
from artifact.errors import ServerError, SpecError, cli
from artifact.log import Log, stderr
from artifact.spec import Campaign, RunSpec, load_campaign
from artifact.workloads import ensure_prompt_set

SCHEMA = 1
STEPS = "steps.jsonl"
DEFAULT_ROOT = paths.COST_RUNS
MARKER = f"{records.MARKER_PREFIX} stepcost"
# What makes two measurements comparable; a resume under any other value is refused.
PROTOCOL_KEYS = ("model", "model_sha256", "binary_sha256", "server_argv", "prefix", "max_n",
                 "repeats", "seed")


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What one step-cost measurement sends."""

    prefix_tokens: int = 200  # P: the cached context every request extends (near the study's)
    max_n: int = 17  # N: tokens per forward pass, 1..N (k up to 16 in the k-sweep, plus one)
    repeats: int = 15  # R: requests per n
    seed: int = 0  # the order of (n, rep) and the fresh tokens
    warmup: int = 3  # unrecorded requests after every server start
    timeout_s: float = 120.0  # per request

    def __post_init__(self) -> None:
        for name in ("prefix_tokens", "max_n", "repeats"):
            if getattr(self, name) < 1:
                raise SpecError(f"stepcost: {name} must be a positive integer, "
                                f"got {getattr(self, name)}")
        if self.warmup < 1:
            raise SpecError("stepcost: warmup must be at least 1 (it caches the prefix)")


def order(plan: Plan) -> list[tuple[int, int]]:
    """Every (n, rep) pair in the plan's seeded shuffled order.

    >>> order(Plan(max_n=2, repeats=2, seed=1))
    [(2, 1), (1, 0), (2, 0), (1, 1)]
    """
    pairs = [(n, rep) for n in range(1, plan.max_n + 1) for rep in range(plan.repeats)]
    random.Random(plan.seed).shuffle(pairs)
    return pairs


def fresh_tokens(pool: Sequence[int], n: int, rep: int, seed: int, avoid: int | None) -> list[int]:
    """n distinct token ids from ``pool`` for request (n, rep), the first never ``avoid`` (the
    previous request's first fresh token, so that only the prefix is found in the cache).

    >>> fresh_tokens(list(range(100)), 3, 0, 0, None) == fresh_tokens(list(range(100)), 3, 0, 0,
    ...                                                               None)
    True
    >>> fresh_tokens([5, 6], 1, 0, 0, 5), fresh_tokens([5, 6], 1, 0, 0, 6)
    ([6], [5])
    """
    if len(pool) < n + 1:
        raise SpecError(f"stepcost: only {len(pool)} distinct tokens to draw {n} fresh ones from")
    rng = random.Random(f"{seed}:{n}:{rep}")
    toks = rng.sample(list(pool), n + 1)  # one spare to replace a first token that repeats
    return toks[1:] if toks[0] == avoid else toks[:n]


def spec_for(campaign: Campaign, model: str, *, threads: int | None = None) -> RunSpec:
    """A no-draft, one-slot spec for ``model`` with the campaign's settings (threads, context,
    prompt set) taken from its no-draft final run, else its first run."""
    if model not in campaign.models:
        raise SpecError(f"{campaign.file.name}: no model {model!r} "
                        f"(have: {', '.join(sorted(campaign.models))})")
    if not campaign.runs:
        raise SpecError(f"{campaign.file.name}: no runs to take the settings from")
    base = next((r for r in campaign.runs if r.family == "final" and r.drafter == "none"),
                campaign.runs[0])
    m = campaign.models[model]
    return replace(base, run_id=f"stepcost-{model}", family="stepcost", target_model=model,
                   target=m.family, target_quant=m.quant, drafter="none", draft_model=None,
                   draft_quant=None, k=None, p_min=None, ngram_match=None, n_predict=1,
                   concurrency=1, repeats=1, interleave=None, workload=None,
                   threads=base.threads if threads is None else threads)


def done_pairs(out: Path) -> set[tuple[int, int]]:
    """The (n, rep) pairs already in ``steps.jsonl`` (what a resume skips)."""
    done = set()
    for row in records.read_jsonl(out / STEPS).rows:
        n, rep = row.get("n"), row.get("rep")
        if isinstance(n, int) and isinstance(rep, int):
            done.add((n, rep))
    return done


def step_row(n: int, rep: int, timings: Any, *, prefix_tokens: int, client_ms: float,
             sent_unix_s: float, server_start: int) -> dict[str, Any]:
    """One line of ``steps.jsonl`` from a reply's ``timings``; ``problem`` says why the request
    does not measure an n-token forward pass over the cached prefix (None when it does).

    >>> r = step_row(3, 0, {"prompt_n": 3, "prompt_ms": 12.5, "cache_n": 200}, prefix_tokens=200,
    ...              client_ms=14.0, sent_unix_s=1.0, server_start=1)
    >>> r["prompt_ms"], r["problem"]
    (12.5, None)
    >>> step_row(3, 0, {"prompt_n": 203, "prompt_ms": 80.0, "cache_n": 0}, prefix_tokens=200,
    ...          client_ms=90.0, sent_unix_s=1.0, server_start=1)["problem"]
    'prompt_n 203 != n 3; cache_n 0 != prefix 200'
    """
    t = timings if isinstance(timings, dict) else {}
    pn, pms, cn = t.get("prompt_n"), t.get("prompt_ms"), t.get("cache_n")
    problems = []
    if not isinstance(pms, int | float) or isinstance(pms, bool):
        problems.append(f"no timings.prompt_ms ({pms!r})")
        pms = None
    if pn != n:
        problems.append(f"prompt_n {pn} != n {n}")
    if cn is not None and cn != prefix_tokens:
        problems.append(f"cache_n {cn} != prefix {prefix_tokens}")
    return {"n": n, "rep": rep, "prompt_n": pn, "prompt_ms": pms, "cache_n": cn,
            "client_ms": round(client_ms, 3), "sent_unix_s": round(sent_unix_s, 3),
            "server_start": server_start, "problem": "; ".join(problems) or None}


def completion_body(tokens: list[int]) -> dict[str, Any]:
    """One request: evaluate ``tokens`` (prefix cached), sample one token greedily."""
    return {"prompt": tokens, "n_predict": 1, "cache_prompt": True, "temperature": 0.0,
            "stream": False}


def tokenize(client: httpx.Client, base_url: str, text: str) -> list[int]:
    """Token ids of ``text`` by the server's own tokenizer (``/tokenize``)."""
    r = client.post(f"{base_url}/tokenize", json={"content": text})
    r.raise_for_status()
    toks = r.json().get("tokens")
    if not isinstance(toks, list) or not all(isinstance(t, int) for t in toks):
        raise ServerError(f"/tokenize: expected a list of token ids, got {str(toks)[:80]}")
    return toks


@dataclass(frozen=True, kw_only=True)
class Prefix:
    prompt_id: str
    tokens: list[int]
    pool: list[int]  # distinct token ids of the study prompts: where fresh tokens come from


def choose_prefix(tokenized: Sequence[tuple[str, list[int]]], p: int) -> Prefix:
    """The first prompt (in set order) with at least ``p`` tokens gives the prefix; every
    prompt's tokens form the pool of fresh ones.

    >>> choose_prefix([("a", [1, 2]), ("b", [3, 4, 5])], 3)
    Prefix(prompt_id='b', tokens=[3, 4, 5], pool=[1, 2, 3, 4, 5])
    """
    pool = sorted({t for _, toks in tokenized for t in toks})
    for pid, toks in tokenized:
        if len(toks) >= p:
            return Prefix(prompt_id=pid, tokens=list(toks[:p]), pool=pool)
    longest = max((len(t) for _, t in tokenized), default=0)
    raise SpecError(f"stepcost: no prompt has {p} tokens (the longest has {longest}); "
                    "choose a smaller --prefix-tokens")


def _check_protocol(out: Path, config: dict[str, Any]) -> None:
    try:
        old = records.read_json(out / records.CONFIG)
    except records.RecordError:
        return
    for key in PROTOCOL_KEYS:
        if old.get(key) != config.get(key):
            raise SpecError(f"{out.name}: measured under another protocol ({key} differs); "
                            "choose another --out or move that directory aside")


def measure(campaign: Campaign, model: str, out: Path, plan: Plan, *,
            cond: quiet.Conditions | None = None, threads: int | None = None,
            say: Log | None = None) -> Path:
    """Measure (or finish measuring) one model into ``out``; returns ``out / steps.jsonl``."""
    say = say if say is not None else stderr("stepcost")
    cond = cond if cond is not None else quiet.Conditions.from_env()
    spec = spec_for(campaign, model, threads=threads)
    files = server_files(campaign, spec)
    prompts, set_sha = ensure_prompt_set(spec.prompt_set, files.model)
    out.mkdir(parents=True, exist_ok=True)
    server = Server(files, spec, out / records.SERVER_LOG)  # no draft model: drafter "none"
    todo = [pair for pair in order(plan) if pair not in done_pairs(out)]
    starts = max((r["server_start"] for r in records.read_jsonl(out / STEPS).rows
                  if isinstance(r.get("server_start"), int)), default=0)
    with quiet.measuring(f"stepcost {model}", [out], cond, say):
        try:
            server.start()
            starts += 1
            with httpx.Client(timeout=plan.timeout_s) as client:
                tokenized = [(p.id, tokenize(client, server.base_url, p.text)) for p in prompts]
                prefix = choose_prefix(tokenized, plan.prefix_tokens)
                env = environment(files.binary, {model: files.model})
                config = {
                    "schema": SCHEMA, "kind": "stepcost", "model": model,
                    "model_sha256": env["model_sha256"],
                    "binary_sha256": env["binary_sha256"],
                    "server_argv": argv_template(spec),
                    "spec": spec.as_dict(),
                    "prefix": {"prompt_set": spec.prompt_set, "prompt_set_sha256": set_sha,
                               "prompt_id": prefix.prompt_id, "tokens": plan.prefix_tokens},
                    "max_n": plan.max_n, "repeats": plan.repeats, "seed": plan.seed,
                    "warmup": plan.warmup, "environment": env,
                    "start_time": env["start_time"],
                }
                _check_protocol(out, config)
                if not (out / records.CONFIG).exists():
                    records.write_json(out / records.CONFIG, config)
                if todo:
                    _run(server, client, out, plan, prefix, todo, cond, starts, say)
        finally:
            server.stop()
    return out / STEPS


def _run(server: Server, client: httpx.Client, out: Path, plan: Plan, prefix: Prefix,
         todo: list[tuple[int, int]], cond: quiet.Conditions, start: int, say: Log) -> None:
    url = f"{server.base_url}/completion"
    last_first: int | None = None
    server.mark(f"{MARKER} warmup begin (server start {start})")
    for w in range(plan.warmup):
        fresh = fresh_tokens(prefix.pool, plan.max_n, -1 - w, plan.seed, last_first)
        last_first = fresh[0]
        client.post(url, json=completion_body(prefix.tokens + fresh)).raise_for_status()
    server.mark(f"{MARKER} measure begin (server start {start})")
    proc = server.proc
    own = [os.getpid()] + ([proc.pid] if proc is not None else [])
    t_begin = time.perf_counter()
    for i, (n, rep) in enumerate(todo):
        fresh = fresh_tokens(prefix.pool, n, rep, plan.seed, last_first)
        last_first = fresh[0]
        body = completion_body(prefix.tokens + fresh)
        window = quiet.Window(lambda: own, cond.threshold_cores)
        sent = time.time()
        t0 = time.perf_counter_ns()
        try:
            r = client.post(url, json=body)
            client_ms = (time.perf_counter_ns() - t0) / 1e6
            busy, contended = window.close()
            r.raise_for_status()
            reply = r.json()
        except (httpx.HTTPError, ValueError) as err:
            records.append_jsonl(out / records.ERRORS, {
                "n": n, "rep": rep, "sent_unix_s": round(sent, 3),
                "reason": type(err).__name__, "detail": str(err)[:300]})
            if not server.alive():
                raise ServerError(f"llama-server died during stepcost (n={n}, rep={rep}); "
                                  f"see {records.SERVER_LOG}; rerun to resume") from err
            continue
        row = step_row(n, rep, reply.get("timings") if isinstance(reply, dict) else None,
                       prefix_tokens=plan.prefix_tokens, client_ms=client_ms,
                       sent_unix_s=sent, server_start=start)
        row["contention"], row["contended"] = busy, contended
        records.append_jsonl(out / STEPS, row)
        if row["problem"]:
            say(f"n={n} rep={rep}: {row['problem']} (recorded, flagged)")
        if (i + 1) % max(1, len(todo) // 10) == 0 or i + 1 == len(todo):
            say(f"{i + 1}/{len(todo)} requests, {time.perf_counter() - t_begin:.0f} s")


def _default_models(campaign: Campaign) -> list[str]:
    return sorted(campaign.models)


@cli
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m artifact.campaign.stepcost",
        description="Measure a model's forward time per step at 1..N tokens from "
        "llama-server's own timings (prompt_ms of n fresh tokens over a cached prefix), for "
        "the cost model of speculative decoding.")
    ap.add_argument("--campaign", type=Path, default=paths.STUDY,
                    help="campaign file naming the models and the server settings "
                    "(default: experiments/campaigns/cpu-study.toml)")
    ap.add_argument("--model", action="append", default=[], metavar="KEY",
                    help="model key of the campaign (repeatable; default: every model of it)")
    ap.add_argument("--out", type=Path, default=DEFAULT_ROOT,
                    help="root directory; each model goes to OUT/<model key>/ "
                    "(default: experiments/runs-cost)")
    d = Plan()
    ap.add_argument("--prefix-tokens", type=int, default=d.prefix_tokens, metavar="P",
                    help=f"tokens of the cached prefix (default {d.prefix_tokens})")
    ap.add_argument("--max-n", type=int, default=d.max_n, metavar="N",
                    help=f"largest number of tokens per forward pass (default {d.max_n})")
    ap.add_argument("--repeats", type=int, default=d.repeats, metavar="R",
                    help=f"requests per n (default {d.repeats})")
    ap.add_argument("--seed", type=int, default=d.seed, help="order and fresh tokens")
    ap.add_argument("--warmup", type=int, default=d.warmup,
                    help=f"unrecorded requests after the server starts (default {d.warmup})")
    ap.add_argument("--threads", type=int, default=None,
                    help="server threads (default: the campaign's)")
    ap.add_argument("--no-wait", action="store_true",
                    help="fail in one line when another measurement holds this host's lock")
    ap.add_argument("--allow-contention", action="store_true",
                    help="measure even when the machine does not become quiet (each request "
                    "still records its contention)")
    args = ap.parse_args(argv)
    campaign = load_campaign(args.campaign)
    plan = Plan(prefix_tokens=args.prefix_tokens, max_n=args.max_n, repeats=args.repeats,
                seed=args.seed, warmup=args.warmup)
    cond = quiet.Conditions.from_env(wait_for_lock=not args.no_wait,
                                     allow_contention=args.allow_contention or None)
    say = stderr("stepcost")
    for model in args.model or _default_models(campaign):
        steps = measure(campaign, model, args.out / model, plan, cond=cond,
                        threads=args.threads, say=say)
        say(f"{model}: {steps}")
    return 0


__all__ = ["DEFAULT_ROOT", "STEPS", "Plan", "Prefix", "choose_prefix", "completion_body",
           "done_pairs", "fresh_tokens", "main", "measure", "order", "spec_for", "step_row",
           "tokenize"]

if __name__ == "__main__":
    sys.exit(main())
