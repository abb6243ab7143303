"""The server's memory sampler (artifact/campaign/memory.py), on a /proc made by hand and on
this process's own."""

from __future__ import annotations

import os
from pathlib import Path

from artifact.campaign.memory import MemorySampler, read_status

STATUS = """Name:\tllama-server
VmPeak:\t  900000 kB
VmHWM:\t  {hwm} kB
VmRSS:\t  {rss} kB
RssAnon:\t  {anon} kB
RssFile:\t  {file} kB
RssShmem:\t       0 kB
"""


def _proc(tmp_path: Path, pid: int, **kib: int) -> Path:
    (tmp_path / str(pid)).mkdir(parents=True, exist_ok=True)
    (tmp_path / str(pid) / "status").write_text(STATUS.format(**kib), encoding="ascii")
    return tmp_path


def test_status_fields_in_kib(tmp_path: Path) -> None:
    proc = _proc(tmp_path, 7, hwm=300, rss=250, anon=100, file=150)
    assert read_status(7, proc) == {"rss": 250, "anon": 100, "file": 150, "hwm": 300}
    assert read_status(8, proc) is None  # gone
    (proc / "7" / "status").write_text("Name:\tx\nVmRSS:\t12 kB\n", encoding="ascii")
    assert read_status(7, proc) is None  # a kernel without the split fields: no sample


def test_peaks_over_samples_and_over_a_resumed_run(tmp_path: Path) -> None:
    proc = _proc(tmp_path, 7, hwm=2048, rss=1024, anon=512, file=512)
    m = MemorySampler(lambda: [7, 99], proc=proc)
    m.sample()
    _proc(tmp_path, 7, hwm=4096, rss=3072, anon=1024, file=2048)
    m.sample()
    _proc(tmp_path, 7, hwm=4096, rss=1024, anon=512, file=512)  # a later, smaller sample
    m.sample()
    m._thread = object()  # type: ignore[assignment]  # as if it had run in its thread
    got = m.record()
    assert got["measured"] and got["n_samples"] == 3
    assert (got["peak_rss_mib"], got["peak_anon_mib"], got["peak_file_mib"],
            got["peak_hwm_mib"]) == (3.0, 1.0, 2.0, 4.0)
    earlier = {"measured": True, "n_samples": 5, "peak_rss_mib": 9.0, "peak_anon_mib": 0.5,
               "peak_file_mib": 1.0, "peak_hwm_mib": 9.5}
    both = m.record(earlier)
    assert both["n_samples"] == 8 and both["peak_rss_mib"] == 9.0
    assert both["peak_anon_mib"] == 1.0 and both["peak_hwm_mib"] == 9.5


def test_no_proc_says_why(tmp_path: Path) -> None:
    m = MemorySampler(lambda: [1], proc=tmp_path / "missing")
    with m:
        pass
    got = m.record()
    assert got["measured"] is False and "not found" in got["reason"]


def test_samples_a_live_process_in_its_thread() -> None:
    with MemorySampler(lambda: [os.getpid()], interval_s=0.01) as m:
        block = bytearray(32 * 1024 * 1024)  # 32 MiB touched: the resident set grows
        for i in range(0, len(block), 4096):
            block[i] = 1
        import time

        time.sleep(0.1)
    got = m.record()
    assert got["measured"] and got["n_samples"] >= 2
    assert got["peak_hwm_mib"] >= got["peak_rss_mib"] > 32
    assert got["peak_anon_mib"] > 32
