"""The contention measure: its noise floor, that it sees a load, and what it costs.

Prints, in one run (about 100 s; ``--quick``: a few seconds, only checks that it works):

(a) foreign cores on this machine left alone, over 20 windows of 3 s: the floor of the measure
    (background daemons, tick sampling);
(b) the same with a known load: a child busy-looping on one core, one at a 20 % duty cycle
    (each beside its own CPU time from ``/proc/<pid>/stat``, the truth), and the busy child
    counted as own (should fall back to the floor), and ``top_foreign`` naming it;
(c) the cost of one snapshot pair per request (two snapshots and ``between``), in µs of wall
    and CPU time, and as a share of one core at one request per 2 s (goal < 0.5 %);
(d) TTFT of the project's ``complete()`` client against a local stub server streaming SSE like
    llama-server's ``/completion``, with and without a snapshot pair around each request,
    interleaved, medians and their ratio (goal: no measurable change).

The default quiet threshold (``contention.DEFAULT_THRESHOLD_CORES``) is chosen from (a) and (b).

    python benchmarks/bench_contention.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from artifact.campaign import contention as c
from artifact.campaign.client import Completed, complete

HOG = "while True:\n    pass\n"
DUTY = """\
import time
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < 0.02:
        pass
    time.sleep(0.08)
"""


def fmt(xs: Sequence[float]) -> str:
    s = sorted(xs)
    p95 = s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]
    return (f"median {statistics.median(s):.3f}, p95 {p95:.3f}, max {s[-1]:.3f} "
            f"(n={len(s)})")


def windows(own: Sequence[int], n: int, each_s: float) -> list[c.Window]:
    out = []
    for _ in range(n):
        a = c.snapshot(own)
        time.sleep(each_s)
        b = c.snapshot(own)
        assert a is not None and b is not None
        out.append(c.between(a, b))
    return out


def child_cores(pid: int, n: int, each_s: float, own: Sequence[int]) -> tuple[list[float],
                                                                              list[float]]:
    """Foreign cores over ``n`` windows, and the child's own CPU over the same windows."""
    foreign, truth = [], []
    for _ in range(n):
        a = c.snapshot([*own, pid])
        time.sleep(each_s)
        b = c.snapshot([*own, pid])
        assert a is not None and b is not None
        dt = (b.t_ns - a.t_ns) / 1e9
        # the foreign view leaves the child out of own: recompute from the same readings
        a_f = c.Snapshot(t_ns=a.t_ns, total_busy_ticks=a.total_busy_ticks,
                         steal_ticks=a.steal_ticks, own_ticks=0,
                         own_by_pid=tuple(p for p in a.own_by_pid if p[0] != pid))
        b_f = c.Snapshot(t_ns=b.t_ns, total_busy_ticks=b.total_busy_ticks,
                         steal_ticks=b.steal_ticks, own_ticks=0,
                         own_by_pid=tuple(p for p in b.own_by_pid if p[0] != pid))
        foreign.append(c.between(a_f, b_f).foreign_cores)
        ticks = dict(b.own_by_pid).get(pid, 0) - dict(a.own_by_pid).get(pid, 0)
        truth.append(ticks / c.REAL.clk_tck / dt)
    return foreign, truth


def part_a(n: int, each_s: float) -> list[float]:
    ws = windows([os.getpid()], n, each_s)
    foreign = [w.foreign_cores for w in ws]
    print(f"(a) idle, {n} windows of {each_s:g} s: foreign cores {fmt(foreign)}; "
          f"steal max {max(w.steal_cores for w in ws):.3f}; load1 {ws[-1].load1}; "
          f"cpu_mhz {ws[-1].cpu_mhz}")
    return foreign


def part_b(n: int, each_s: float) -> tuple[list[float], list[float]]:
    me = os.getpid()
    hog = subprocess.Popen([sys.executable, "-c", HOG])
    try:
        time.sleep(0.3)
        foreign, truth = child_cores(hog.pid, n, each_s, [me])
        print(f"(b) busy loop child: foreign cores {fmt(foreign)}; the child's own CPU "
              f"{fmt(truth)}")
        as_own = [w.foreign_cores for w in windows([me, hog.pid], n, each_s)]
        print(f"    the same child counted as own: foreign cores {fmt(as_own)}")
        top = c.top_foreign([me], sample_s=min(each_s, 1.0), n=3)
        named = [f"{comm}[{pid}] {cores:.2f}{' <- the child' if pid == hog.pid else ''}"
                 for pid, comm, cores in top]
        print(f"    top_foreign: {', '.join(named)}")
    finally:
        hog.kill()
        hog.wait()
    duty = subprocess.Popen([sys.executable, "-c", DUTY])
    try:
        time.sleep(0.3)
        duty_foreign, duty_truth = child_cores(duty.pid, n, each_s, [me])
        print(f"    20 % duty-cycle child: foreign cores {fmt(duty_foreign)}; the child's own "
              f"CPU {fmt(duty_truth)}")
    finally:
        duty.kill()
        duty.wait()
    return foreign, duty_foreign


def part_c(pairs: int) -> None:
    own = [os.getpid(), os.getppid()]  # two pids, as the runner and the server
    for _ in range(20):  # warm-up
        a = c.snapshot(own)
    wall0, cpu0 = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(pairs):
        a = c.snapshot(own)
        b = c.snapshot(own)
        assert a is not None and b is not None
        c.between(a, b).as_record()
    wall_us = (time.perf_counter_ns() - wall0) / pairs / 1e3
    cpu_us = (time.process_time_ns() - cpu0) / pairs / 1e3
    share = cpu_us / 1e6 / 2.0 * 100
    print(f"(c) one snapshot pair + between per request: {wall_us:.0f} µs wall, {cpu_us:.0f} µs "
          f"CPU ({pairs} pairs); at one request per 2 s: {share:.4f} % of one core "
          "(goal < 0.5 %)")


STUB_EVENTS, STUB_FIRST_MS, STUB_GAP_MS = 40, 20.0, 5.0


async def stub_serve() -> None:
    """A stand-in for llama-server's streamed ``/completion`` on 127.0.0.1 (prints its port)."""
    timings = {"prompt_n": 10, "prompt_ms": STUB_FIRST_MS, "predicted_n": STUB_EVENTS,
               "predicted_ms": STUB_EVENTS * STUB_GAP_MS, "predicted_per_second": 200.0,
               "cache_n": 0}
    token = b"data: " + json.dumps({"content": " tok", "stop": False}).encode() + b"\n\n"
    last = (b"data: " + json.dumps({"content": "", "stop": True, "stop_type": "limit",
                                    "timings": timings}).encode() + b"\n\n")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Connection: close\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(STUB_FIRST_MS / 1e3)
        for _ in range(STUB_EVENTS):
            writer.write(token)
            await writer.drain()
            await asyncio.sleep(STUB_GAP_MS / 1e3)
        writer.write(last)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def part_d(n: int) -> None:
    stub = subprocess.Popen([sys.executable, __file__, "--stub"], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert stub.stdout is not None
        base = f"http://127.0.0.1:{int(stub.stdout.readline())}"
        own = [os.getpid(), stub.pid]
        ttft: dict[str, list[float]] = {"with": [], "without": []}
        seen: list[float] = []

        async def go() -> None:
            import httpx

            async with httpx.AsyncClient() as client:
                for _ in range(3):  # warm-up
                    await complete(client, base, {"prompt": "x"}, 30.0)
                for i in range(n):
                    for arm in (("with", "without") if i % 2 else ("without", "with")):
                        a = c.snapshot(own) if arm == "with" else None
                        out = await complete(client, base, {"prompt": "x"}, 30.0)
                        if arm == "with":
                            b = c.snapshot(own)
                            assert a is not None and b is not None
                            seen.append(c.between(a, b).foreign_cores)
                        assert isinstance(out, Completed) and out.ttft_ms is not None, out
                        ttft[arm].append(out.ttft_ms)

        asyncio.run(go())
    finally:
        stub.kill()
        stub.wait()
    med_with, med_without = statistics.median(ttft["with"]), statistics.median(ttft["without"])
    q = statistics.quantiles
    print(f"(d) TTFT against the stub ({STUB_FIRST_MS:g} ms to the first of {STUB_EVENTS} events,"
          f" {n} requests each way, interleaved): with snapshots median {med_with:.3f} ms "
          f"(IQR {q(ttft['with'])[0]:.3f}-{q(ttft['with'])[2]:.3f}), without {med_without:.3f} "
          f"ms (IQR {q(ttft['without'])[0]:.3f}-{q(ttft['without'])[2]:.3f}); ratio "
          f"{med_with / med_without:.4f}")
    print(f"    foreign cores recorded over those requests (the stub and client are own): "
          f"{fmt(seen)}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="a few iterations: does it work")
    ap.add_argument("--stub", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.stub:
        asyncio.run(stub_serve())
        return 0
    if not c.available():
        print("no /proc on this OS: contention is unavailable here, nothing to measure")
        return 0
    quiet = Path("/tmp/specdec-quiet-please").exists()
    print(f"load average at start: {os.getloadavg()}; CPUs: {os.cpu_count()}; CLK_TCK "
          f"{c.REAL.clk_tck}; a campaign measuring (quiet-please file): {quiet}")
    if args.quick:
        idle = part_a(2, 0.5)
        hog, duty = part_b(1, 0.5)
        part_c(200)
        part_d(5)
    else:
        idle = part_a(20, 3.0)
        hog, duty = part_b(5, 2.0)
        part_c(5000)
        part_d(40)
    print(f"threshold: idle max {max(idle):.3f}, 20 % duty median {statistics.median(duty):.3f}, "
          f"busy loop median {statistics.median(hog):.3f}; default "
          f"{c.DEFAULT_THRESHOLD_CORES} core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
