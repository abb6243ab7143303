"""Campaign overheads, from run directories, and the client's own cost (not a timed test).

Prints, per run and for the whole campaign:
- client overhead per request: client end-to-end time minus the server's own
  prompt_ms + predicted_ms (median and p95; goal: median under 2 ms);
- campaign efficiency: server-reported request time over measured wall time (goal: >= 0.9),
  with model load and warm-up reported apart;
- side by side, the client's own processing of one request: the same streaming client fed a
  recorded-shape stream (one event per token) by ``httpx.MockTransport``, so no server time.

    python benchmarks/bench_campaign.py [RUNS_DIR] [--quick]    # default: experiments/runs

``--quick``: the first two runs and 20 client requests (checks that the benchmark works).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from artifact import paths, records
from artifact.campaign.client import complete


def client_only_ms(n_events: int = 129, n_requests: int = 200) -> list[float]:
    """Wall time of ``complete()`` on an instant, in-memory stream of ``n_events`` events."""
    import asyncio
    import json
    import time

    import httpx

    timings = {"prompt_n": 150, "prompt_ms": 1.0, "predicted_n": n_events - 1,
               "predicted_ms": 1.0, "predicted_per_second": 1.0, "cache_n": 0,
               "draft_n": 40, "draft_n_accepted": 30}
    event = b"data: " + json.dumps({"content": " tok", "stop": False}).encode() + b"\n\n"
    body = event * (n_events - 1)
    body += b"data: " + json.dumps({"content": "", "stop": True, "timings": timings}).encode()
    body += b"\n\n"

    async def go() -> list[float]:
        out = []
        transport = httpx.MockTransport(lambda req: httpx.Response(200, content=body))
        async with httpx.AsyncClient(transport=transport) as client:
            for _ in range(n_requests):
                t0 = time.perf_counter_ns()
                await complete(client, "http://127.0.0.1:1", {"prompt": "x"}, 30.0)
                out.append((time.perf_counter_ns() - t0) / 1e6)
        return out[10:]  # warm-up

    return asyncio.run(go())


def main(root: Path, quick: bool = False) -> int:
    runs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("_")
                  and (p / records.METRICS).exists())[: 2 if quick else None]
    if not runs:
        print(f"no run directories under {root}")
        return 1
    all_over: list[float] = []
    tot_server = tot_wall = tot_load = tot_warm = 0.0
    print(f"{'run':28s} {'n':>4s} {'overhead ms (median / p95)':>27s} {'efficiency':>10s} "
          f"{'load s':>7s}")
    for run in runs:
        results, _ = records.read_results(run)
        if not results or not (run / records.METRICS).exists():
            continue
        m = records.read_json(run / records.METRICS)
        over = [r.e2e_ms - r.timings.prompt_ms - r.timings.predicted_ms for r in results]
        server_s = sum(r.timings.prompt_ms + r.timings.predicted_ms for r in results) / 1e3
        wall = float(m["measure_s"])
        conc = int(m.get("concurrency", 1))
        eff = server_s / (wall * conc) if wall else float("nan")
        load = sum(m["model_load_s"])
        all_over += over
        tot_server += server_s / conc
        tot_wall += wall
        tot_load += load
        tot_warm += sum(m["warmup_s"])
        med, p95 = np.median(over), np.percentile(over, 95)
        print(f"{run.name:28s} {len(over):4d} {med:13.2f} / {p95:8.2f}   {eff:10.3f} {load:7.2f}")
    print()
    print(f"client overhead per request: median {np.median(all_over):.2f} ms, "
          f"p95 {np.percentile(all_over, 95):.2f} ms over {len(all_over)} requests "
          "(goal: median < 2 ms)")
    heads = [r.ttft_ms - r.timings.prompt_ms for run in runs
             for r in records.read_results(run)[0] if r.ttft_ms is not None]
    print(f"  of which before the first token (ttft - prompt_ms): median {np.median(heads):.2f} ms "
          "(server-side tokenization, slot launch, HTTP: outside the server's timings)")
    own = client_only_ms(n_requests=20 if quick else 200)
    print(f"client's own processing of a 129-event stream (MockTransport, no server): "
          f"median {np.median(own):.2f} ms, p95 {np.percentile(own, 95):.2f} ms "
          f"(ratio to the measured overhead: {np.median(own) / np.median(all_over):.2f})")
    print(f"campaign efficiency: {tot_server:.1f} s server time / {tot_wall:.1f} s measured wall "
          f"= {tot_server / tot_wall:.3f} (goal >= 0.9)")
    print(f"apart from it: model load {tot_load:.1f} s, warm-up {tot_warm:.1f} s; "
          f"whole campaign {tot_wall + tot_load + tot_warm:.1f} s")
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("runs_dir", nargs="?", type=Path, default=paths.RUNS)
    ap.add_argument("--quick", action="store_true",
                    help="two runs, 20 client requests: checks that the benchmark works")
    a = ap.parse_args()
    sys.exit(main(a.runs_dir, a.quick))
