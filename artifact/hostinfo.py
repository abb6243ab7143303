"""What tells two hosts apart beyond the CPU model string (issue 34).

Virtual machines report one generic model string ("Intel(R) Xeon(R) Processor") for very
different hosts: a fresh CI machine with that string and 2 cores decoded 1.7 times faster than
the committed runs' machine, with 480 MiB of L3 against 32. The *extended fingerprint* is what
``/proc/cpuinfo``, ``lscpu``, ``/proc/meminfo`` and the kernel say beyond the model string:
vendor, family, model, stepping, microcode, the CPU flags (as a short hash of the sorted set),
the cache sizes, the clock (to 100 MHz), the hypervisor, SMT, the memory size and the kernel.
Every new run records it in its environment (``config.json: environment.host``); runs measured
before have none and compare as "unknown" (:mod:`artifact.reproduce.host`).

The parsers take text, so tests feed them another machine's files. They are total (issue 46):
they run at every run's start, so what they cannot read (a clock of ``inf``, ``1e400`` or
``-5``, JSON nested deeper than the parser holds, a value of the wrong type, text that is not
Unicode) is ``None``, or left out of what they return, never an exception.

>>> info = parse_cpuinfo("vendor_id : GenuineIntel\\ncpu family : 6\\nmodel : 143\\n"
...                      "stepping : 8\\nmicrocode : 0x2b000603\\ncpu MHz : 2099.998\\n"
...                      "flags : sse2 avx2 fpu\\n")
>>> info["cpu_vendor"], info["cpu_model_id"], info["cpu_mhz"], info["cpu_flags"]
('GenuineIntel', '143', 2100, 'bf17f8520e47')
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

# The fields of the extended fingerprint, in the order a report lists them.
FIELDS = ("cpu_vendor", "cpu_family", "cpu_model_id", "cpu_stepping", "microcode", "cpu_flags",
          "cpu_mhz", "cache_l1d", "cache_l1i", "cache_l2", "cache_l3", "threads_per_core",
          "hypervisor", "mem_total_mib", "kernel")
_CPUINFO = {"vendor_id": "cpu_vendor", "cpu family": "cpu_family", "model": "cpu_model_id",
            "stepping": "cpu_stepping", "microcode": "microcode"}
_LSCPU = {"L1d cache": "cache_l1d", "L1i cache": "cache_l1i", "L2 cache": "cache_l2",
          "L3 cache": "cache_l3", "Thread(s) per core": "threads_per_core",
          "Hypervisor vendor": "hypervisor", "CPU max MHz": "cpu_max_mhz"}
# A clock no CPU has: at or above 1 THz (and a memory of 2**53 kB, 8 EiB, or more) is unread.
_MHZ_MAX = 1e6
_KB_MAX = 2**53


def _text(v: Any) -> str | None:
    """``v`` when it is text that UTF-8 encodes (a lone surrogate is not), else None.

    >>> _text("KVM"), _text("\\ud800"), _text(3)
    ('KVM', None, None)
    """
    if not isinstance(v, str):
        return None
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return v


def machine_name(env: Any) -> str:
    """A run's machine in words, from its environment: CPU model and cores, the one form every
    study prints.

    >>> machine_name({"cpu_model": "AMD EPYC", "cpu_cores": 2}), machine_name({})
    ('AMD EPYC (2 cores)', 'unknown CPU (? cores)')
    >>> machine_name(None)
    'unknown machine'
    """
    if not isinstance(env, dict):
        return "unknown machine"
    return f"{env.get('cpu_model') or 'unknown CPU'} ({env.get('cpu_cores') or '?'} cores)"


def flags_hash(flags: str) -> str:
    """The CPU flags as 12 hex digits of the SHA-256 of their sorted, unique set.

    >>> flags_hash("avx2 sse2 fpu") == flags_hash("fpu  sse2 avx2 sse2")
    True
    """
    joined = " ".join(sorted(set(flags.split())))
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _mhz(text: Any) -> int | None:
    """A clock in MHz rounded to 100 (it moves by a few MHz between reads); None for what is
    not one: not a number, not finite, not above 0 once rounded, or 1 THz or more.

    >>> _mhz("2099.998"), _mhz("x"), _mhz("inf"), _mhz("1e400"), _mhz("nan"), _mhz("-2100")
    (2100, None, None, None, None, None)
    """
    if not isinstance(text, str):
        return None
    try:
        mhz = float(text)
    except ValueError:
        return None
    if not 0.0 < mhz < _MHZ_MAX:  # NaN, infinities and negatives fail this too
        return None
    return int(round(mhz / 100.0) * 100) or None


def parse_cpuinfo(text: str) -> dict[str, Any]:
    """The first processor's block of ``/proc/cpuinfo``; a value that is not text is left out.

    >>> parse_cpuinfo("vendor_id : \\udc80\\ncpu MHz : 1e400\\nmodel : 7\\n")
    {'cpu_mhz': None, 'cpu_model_id': '7'}
    """
    out: dict[str, Any] = {}
    for line in text.splitlines() if isinstance(text, str) else []:
        if not line.strip():
            if out:
                break  # the first processor only: the others repeat it
            continue
        key, sep, raw = line.partition(":")
        value = _text(raw.strip())
        if not sep or value is None:
            continue
        key = key.strip()
        if key in _CPUINFO:
            out[_CPUINFO[key]] = value
        elif key == "flags":
            out["cpu_flags"] = flags_hash(value)
        elif key == "cpu MHz":
            out["cpu_mhz"] = _mhz(value)
    return out


def parse_lscpu(text: str) -> dict[str, Any]:
    """``lscpu --json``: cache sizes, threads per core, hypervisor, maximum clock.

    >>> parse_lscpu('{"lscpu": [{"field": "L3 cache:", "data": "480 MiB (1 instance)"},'
    ...             '{"field": "Thread(s) per core:", "data": "1"}]}')
    {'cache_l3': '480 MiB', 'threads_per_core': '1'}
    >>> parse_lscpu('{"lscpu": ' + '[' * 100_000), parse_lscpu('[' * 100_000 + ']' * 100_000)
    ({}, {})
    """
    try:
        top = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser holds
        return {}
    rows = top.get("lscpu") if isinstance(top, dict) else None
    out: dict[str, Any] = {}
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or not isinstance(row.get("field"), str):
            continue
        field = row["field"].rstrip(":").strip()
        data = _text(row.get("data"))
        if field in _LSCPU and data is not None:
            # "480 MiB (1 instance)": the size, not how many caches hold it
            out[_LSCPU[field]] = data.split(" (", 1)[0].strip()
    return out


def parse_meminfo(text: str) -> int | None:
    """``MemTotal`` of ``/proc/meminfo`` in MiB.

    >>> parse_meminfo("MemTotal:        8039936 kB\\nMemFree: 1 kB\\n")
    7851
    >>> parse_meminfo("MemTotal: -8 kB"), parse_meminfo("MemTotal: 1e400 kB")
    (None, None)
    """
    for line in text.splitlines() if isinstance(text, str) else []:
        if line.startswith("MemTotal:"):
            parts = line.split()
            try:
                kib = int(parts[1])  # ValueError too for more digits than int() reads
            except (IndexError, ValueError):
                return None
            return (kib // 1024 or None) if 0 < kib < _KB_MAX else None  # under 1 MiB: none
    return None


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _lscpu() -> str:
    exe = shutil.which("lscpu")
    if exe is None:
        return ""
    try:
        proc = subprocess.run([exe, "--json"], capture_output=True, check=False, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    # bytes that are not UTF-8 are replaced, not a UnicodeDecodeError at the run's start
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else ""


def combine(cpuinfo: str, lscpu: str, meminfo: str, kernel: str) -> dict[str, Any]:
    """The extended fingerprint from the three files' text and the kernel release: every field
    of :data:`FIELDS`, ``None`` where a file did not say it (or said what is not one); the
    clock is lscpu's maximum, else ``/proc/cpuinfo``'s.

    >>> combine("cpu MHz : 2099.9", '{"lscpu": [{"field": "CPU max MHz:", "data": "inf"}]}',
    ...         "", "")["cpu_mhz"]
    2100
    """
    cpu, ls = parse_cpuinfo(cpuinfo), parse_lscpu(lscpu)
    clock = _mhz(ls.get("cpu_max_mhz")) or cpu.get("cpu_mhz")
    merged = {**cpu, **ls, "cpu_mhz": clock, "mem_total_mib": parse_meminfo(meminfo),
              "kernel": _text(kernel) or None}
    return {f: merged.get(f) for f in FIELDS}


def capture() -> dict[str, Any]:
    """This host's extended fingerprint (a few milliseconds; ``lscpu`` when installed)."""
    return combine(_read("/proc/cpuinfo"), _lscpu(), _read("/proc/meminfo"), platform.release())
