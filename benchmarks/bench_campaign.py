"""Campaign overheads, from run directories (not a timed test).

Prints, per run and for the whole campaign:
- client overhead per request: client end-to-end time minus the server's own
  prompt_ms + predicted_ms (median and p95; goal: median under 2 ms);
- campaign efficiency: server-reported request time over measured wall time (goal: >= 0.9),
  with model load and warm-up reported apart.

    python benchmarks/bench_campaign.py [RUNS_DIR]     # default: experiments/runs
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from artifact import paths, records


def main(root: Path) -> int:
    runs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("_"))
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
    print(f"campaign efficiency: {tot_server:.1f} s server time / {tot_wall:.1f} s measured wall "
          f"= {tot_server / tot_wall:.3f} (goal >= 0.9)")
    print(f"apart from it: model load {tot_load:.1f} s, warm-up {tot_warm:.1f} s; "
          f"whole campaign {tot_wall + tot_load + tot_warm:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else paths.RUNS))
