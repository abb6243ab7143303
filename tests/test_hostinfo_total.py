"""The host fingerprint's parsers are total (issue 46): they run at every run's start, so what
they cannot read is None (or left out), never an exception: a clock of ``inf`` or ``1e400``,
JSON nested 100,000 deep, values of the wrong type, text that is not Unicode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from artifact import hardware, hostinfo
from artifact.campaign import fingerprint

DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE_NUMBERS = ["inf", "-inf", "Infinity", "nan", "NaN", "1e400", "-1e400", "-2100", "0",
                   "0.0", "-0", "1e300", "1e6", "x", "", "0x10", "9" * 5000, "2100 MHz",
                   "\ud800", "\x00"]


def _lscpu(*rows: Any) -> str:
    return json.dumps({"lscpu": list(rows)})


def test_a_clock_that_is_no_clock_is_none_never_an_overflow() -> None:
    for v in HOSTILE_NUMBERS:
        assert hostinfo.parse_cpuinfo(f"cpu MHz : {v}\n").get("cpu_mhz") is None, v
        # lscpu's maximum unreadable: the clock is /proc/cpuinfo's
        fp = hostinfo.combine("cpu MHz : 2099.9\n",
                              _lscpu({"field": "CPU max MHz:", "data": v}), "", "")
        assert fp["cpu_mhz"] == 2100, v
    assert hostinfo.combine("", _lscpu({"field": "CPU max MHz:", "data": "3500.0000"}), "",
                            "")["cpu_mhz"] == 3500


def test_lscpu_json_nested_too_deep_or_of_the_wrong_types_reads_as_nothing() -> None:
    hostile = [DEEP, '{"lscpu": ' + DEEP + "}", '{"lscpu": [' + DEEP + "]}", "[]", "null",
               '"x"', '{"lscpu": "x"}', '{"lscpu": {"field": "L3 cache:"}}', "{", "",
               _lscpu({"field": ["L3 cache:"], "data": "32 MiB"}),
               _lscpu({"field": "L3 cache:", "data": 32}),
               _lscpu({"field": "L3 cache:", "data": ["32 MiB"]}),
               _lscpu({"field": "L3 cache:", "data": "\ud800"}),
               _lscpu({"field": "L3 cache:", "data": {"x": json.loads("[" * 500 + "]" * 500)}}),
               _lscpu({"field": json.loads("[" * 500 + "]" * 500), "data": "x"}),
               _lscpu(None, 3, "L3 cache:")]
    for text in hostile:
        assert hostinfo.parse_lscpu(text) == {}, text[:60]
        fp = hostinfo.combine("", text, "", "")
        assert all(v is None for v in fp.values()), text[:60]


def test_a_memory_size_that_is_no_size_is_none() -> None:
    for v in [*HOSTILE_NUMBERS, "99999999999999999999", "-8", "1023"]:
        if " " in v:  # "2100 MHz kB" says 2100 kB
            continue
        assert hostinfo.parse_meminfo(f"MemTotal: {v} kB\n") is None, v
    assert hostinfo.parse_meminfo("MemTotal: 2048 kB\n") == 2


def test_text_that_is_not_unicode_is_left_out_never_a_failed_hash() -> None:
    info = hostinfo.parse_cpuinfo("vendor_id : \udc80\nflags : sse2 \ud800\nmodel : 7\n")
    assert info == {"cpu_model_id": "7"}
    assert hostinfo.combine("", "", "", "\udc80")["kernel"] is None


# What /proc/cpuinfo, lscpu and /proc/meminfo might hold on a hostile or broken machine: the
# keys the parsers look for, with values numeric, not numeric, huge, nested, of any type.
_KEYS = ["vendor_id", "cpu family", "model", "stepping", "microcode", "flags", "cpu MHz",
         "MemTotal", "processor"]
_VALUE = st.one_of(st.sampled_from(HOSTILE_NUMBERS), st.text(max_size=20),
                   st.floats().map(repr), st.integers().map(str))
_LINE = st.one_of(st.tuples(st.sampled_from(_KEYS), _VALUE).map(lambda kv: f"{kv[0]}: {kv[1]}"),
                  st.text(max_size=30))
_TEXT = st.lists(_LINE, max_size=8).map("\n".join)
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10),
              st.sampled_from(HOSTILE_NUMBERS)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=12)
_FIELD = st.sampled_from(["L1d cache:", "L3 cache:", "Thread(s) per core:", "CPU max MHz:",
                          "Hypervisor vendor:"])
_ROW = st.one_of(st.fixed_dictionaries({"field": _FIELD, "data": st.one_of(_VALUE, _JSON)}),
                 _JSON)
_LSCPU_TEXT = st.one_of(st.lists(_ROW, max_size=6).map(lambda rows: _lscpu(*rows)),
                        _JSON.map(lambda v: json.dumps(v)), st.text(max_size=40),
                        st.sampled_from([DEEP, '{"lscpu": ' + DEEP + "}"]))


@settings(max_examples=300, deadline=None)
@given(cpuinfo=_TEXT, lscpu=_LSCPU_TEXT, meminfo=_TEXT, kernel=st.text(max_size=10))
def test_the_fingerprint_is_total_and_writable(cpuinfo: str, lscpu: str, meminfo: str,
                                               kernel: str) -> None:
    fp = hostinfo.combine(cpuinfo, lscpu, meminfo, kernel)
    assert list(fp) == list(hostinfo.FIELDS)
    for k, v in fp.items():
        if k in ("cpu_mhz", "mem_total_mib"):
            assert v is None or (type(v) is int and v > 0), (k, v)
        else:
            assert v is None or isinstance(v, str), (k, v)
    json.dumps(fp, ensure_ascii=False, allow_nan=False).encode("utf-8")  # config.json takes it


def test_a_run_environment_that_is_no_object_compares_as_unknown() -> None:
    # config.json's "environment" null or a list: every field None, not an AttributeError
    env = {"cpu_model": "Xeon", "cpu_cores": 2}
    assert hardware.fingerprint(None) == dict.fromkeys(hardware.FIELDS)
    assert hardware.differing([1], env) == ["cpu_model", "cpu_cores"]
    assert hardware.differing(None, "x") == []


def test_the_cpu_model_and_the_llama_version_never_fail_the_run_start(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_bytes(b"processor : 0\nmodel name : Xeon \xff\xfe Processor\n")
    assert fingerprint.cpu_model(info) == "Xeon \ufffd\ufffd Processor"
    assert fingerprint.llama_version(tmp_path / "no-such-binary") == "unknown"
    script = tmp_path / "llama-server"
    script.write_bytes(b"#!/bin/sh\nprintf 'version: 1 \\377\\n'\n")
    script.chmod(0o755)
    assert fingerprint.llama_version(script) == "version: 1 \ufffd"
