"""The extended hardware fingerprint (issue 34): what tells two hosts with one CPU model string
apart, read from another machine's files and from this one."""

from __future__ import annotations

import json

from artifact import hostinfo
from artifact.reproduce import host

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
model name\t: Intel(R) Xeon(R) Processor
stepping\t: 8
microcode\t: 0x2b000603
cpu MHz\t\t: 2099.998
flags\t\t: fpu vme sse2 avx2 avx512f

processor\t: 1
vendor_id\t: GenuineIntel
model\t\t: 999
"""
LSCPU = json.dumps({"lscpu": [
    {"field": "Model name:", "data": "Intel(R) Xeon(R) Processor"},
    {"field": "Thread(s) per core:", "data": "1"},
    {"field": "Hypervisor vendor:", "data": "KVM"},
    {"field": "L1d cache:", "data": "96 KiB (2 instances)"},
    {"field": "L1i cache:", "data": "64 KiB (2 instances)"},
    {"field": "L2 cache:", "data": "4 MiB (2 instances)"},
    {"field": "L3 cache:", "data": "480 MiB (1 instance)"}]})


def test_the_fingerprint_reads_the_first_processor_the_caches_and_the_memory() -> None:
    fp = hostinfo.combine(CPUINFO, LSCPU, "MemTotal: 8039936 kB\n", "6.8.0-49-generic")
    assert list(fp) == list(hostinfo.FIELDS)
    assert fp["cpu_model_id"] == "143"  # the first processor's, not the second's
    assert (fp["cache_l3"], fp["cache_l1d"], fp["hypervisor"]) == ("480 MiB", "96 KiB", "KVM")
    assert (fp["cpu_mhz"], fp["mem_total_mib"], fp["kernel"]) == (2100, 7851, "6.8.0-49-generic")
    assert fp["cpu_flags"] == hostinfo.flags_hash("avx512f avx2 sse2 vme fpu")


def test_what_a_file_does_not_say_is_none_never_invented() -> None:
    fp = hostinfo.combine("", "not json", "", "")
    assert all(v is None for v in fp.values())


def test_this_machine_records_every_field() -> None:
    fp = hostinfo.capture()
    assert list(fp) == list(hostinfo.FIELDS)
    assert fp["kernel"] and fp["mem_total_mib"]


def _hw(**host_fields: object) -> host.Hardware:
    fp = hostinfo.combine(CPUINFO, LSCPU, "MemTotal: 8039936 kB\n", "6.8.0")
    fp.update(host_fields)
    return host.Hardware(cpu_model="Intel(R) Xeon(R) Processor", cpu_cores=2, gpu=None,
                         host=tuple(fp.items()))


def test_same_hardware_is_earned_by_equal_fingerprints_and_a_speed_ratio_within_noise() -> None:
    a = _hw()
    assert host.judge(a, _hw(), 1.0 + host.SPEED_BAND / 2).verdict == "same"
    # only the cache differs: not the same hardware, whatever the speed
    other = host.judge(a, _hw(cache_l3="32 MiB"), 1.0)
    assert (other.verdict, other.differing) == ("different", ("cache_l3",))
    # only the calibrated speed differs
    faster = host.judge(a, _hw(), 0.58)
    assert faster.verdict == "different" and "0.58" in faster.why and "0.58" in faster.note()
    # no calibration, or a side without the extended fingerprint: not known to be the same
    assert host.judge(a, _hw(), None).verdict == "unknown"
    old = host.Hardware(cpu_model="Intel(R) Xeon(R) Processor", cpu_cores=2, gpu=None)
    assert host.judge(old, a, 1.0).verdict == "unknown"
    assert host.judge(a, host.Hardware(cpu_model="AMD EPYC", cpu_cores=2, gpu=None),
                      1.0).differing == ("cpu_model",)
