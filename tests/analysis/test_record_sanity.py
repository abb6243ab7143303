"""Records that cannot be measurements are excluded and counted; duplicates keep the first copy;
implausible rates are flagged; every baseline match checks the protocol and names what differs."""

from __future__ import annotations

import json

from artifact.analysis import build_summary, runs
from tests.corpus import record, spec, write_run

DONE = {"complete": True, "measure_s": 1.0}
NO_GPU = {"gpu_present": False, "reason": "cpu"}


def _write(root, sp, recs):
    return write_run(root, sp, records=recs, log=[], metrics=DONE, vram=NO_GPU)


def _pair(root, *, base_extra=None, mod_recs=None):
    base = [record("c1", "code", 50.0), record("c2", "code", 40.0), record("c3", "code", 45.0)]
    _write(root, spec("final-none", family="final", **(base_extra or {})), base)
    mod = mod_recs or [record("c1", "code", 55.0), record("c2", "code", 44.0),
                       record("c3", "code", 45.0)]
    _write(root, spec("final-mod", family="final", drafter="ngram-mod", k=4), mod)


def test_a_duplicate_keeps_the_first_copy_and_is_named(tmp_path):
    clean = tmp_path / "clean"
    _pair(clean)
    dup = tmp_path / "dup"
    _pair(dup, mod_recs=[record("c1", "code", 55.0), record("c2", "code", 44.0),
                         record("c3", "code", 45.0), record("c1", "code", 500.0)])
    a, b = build_summary(clean), build_summary(dup)
    assert a["speedup"]["final-mod"] == b["speedup"]["final-mod"]  # the copy moved nothing
    assert any("1 duplicate record(s) excluded, first copy kept: c1#0" in w
               for w in b["warnings"])
    assert b["runs"]["final-mod"]["n_excluded"] == 1


def test_impossible_values_are_excluded_and_counted(tmp_path):
    bad = [
        record("x1", "code", 50.0, alpha=0.5),  # an alpha but nothing drafted
        record("x2", "code", 50.0, alpha=1.5, draft=(6, 4)),  # alpha above 1
        record("x3", "code", 50.0, ttft_ms=-3.0),  # negative TTFT
    ]
    _pair(tmp_path, mod_recs=[record("c1", "code", 55.0), record("c2", "code", 44.0),
                              record("c3", "code", 45.0), *bad])
    s = build_summary(tmp_path)
    assert s["runs"]["final-mod"]["n_excluded"] == 3
    (w,) = [w for w in s["warnings"] if "impossible" in w]
    assert w.startswith("run final-mod: results.jsonl: 3 record(s) with impossible values")
    assert "x1#0 (alpha 0.5 without drafted tokens)" in w and "x3#0 (ttft_ms -3.0" in w
    clean = tmp_path.parent / (tmp_path.name + "-clean")
    _pair(clean)
    assert build_summary(clean)["speedup"] == s["speedup"]


def test_an_integer_too_large_for_a_float_is_excluded_not_a_crash(tmp_path):
    """JSON allows a number of any length: one beyond a float's range is an impossible value
    (or, inside the contention fields, an unreadable line), never an OverflowError."""
    big = 10 ** 400
    extra = [record(f"x{i}", "code", 50.0) for i in range(4)]
    _pair(tmp_path, mod_recs=[record("c1", "code", 55.0), record("c2", "code", 44.0),
                              record("c3", "code", 45.0), *extra])
    results = tmp_path / "final-mod" / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    rows[3]["ttft_ms"] = big
    rows[4]["e2e_ms"] = big
    rows[5]["event_ms"][1] = big
    rows[6]["contention"] = {"foreign_cores": big}
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = build_summary(tmp_path)
    assert s["runs"]["final-mod"]["n_excluded"] == 3
    assert s["runs"]["final-mod"]["n_bad_lines"] == 1
    (w,) = [w for w in s["warnings"] if "impossible" in w]
    assert "x0#0 (ttft_ms 1000" in w and "x1#0 (e2e_ms 1000" in w and "x2#0 (event_ms[1]" in w


def test_an_implausible_rate_is_kept_and_flagged(tmp_path):
    recs = [record(f"c{i}", "code", 50.0 + i) for i in range(6)] + [record("c9", "code", 900.0)]
    _write(tmp_path, spec("final-none", family="final"), recs)
    s = build_summary(tmp_path)
    assert s["runs"]["final-none"]["n_excluded"] == 0
    assert any("1 implausible decode rate(s)" in w and "c9#0 (900 tok/s)" in w
               for w in s["warnings"])


def test_a_final_baseline_of_another_protocol_gives_no_speedup_and_names_the_fields(tmp_path):
    _pair(tmp_path, base_extra={"n_predict": 64, "temperature": 0.7})
    cfg_path = tmp_path / "final-none" / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["prompt_set"]["sha256"] = "0" * 64
    cfg_path.write_text(json.dumps(cfg))
    s = build_summary(tmp_path)
    assert "final-mod" not in s["speedup"]
    (w,) = [w for w in s["warnings"] if w.startswith("run final-mod: speedup")]
    assert "baseline final-none measured another protocol" in w
    for field in ("prompt_set_sha256", "n_predict 64 vs 128", "sampling.temperature 0.7 vs 0.0"):
        assert field in w


def test_two_final_baselines_of_one_protocol_say_why_there_is_no_speedup(tmp_path):
    _pair(tmp_path)
    _write(tmp_path, spec("final-none-2", family="final"), [record("c1", "code", 50.0)])
    s = build_summary(tmp_path)
    assert "final-mod" not in s["speedup"]
    assert any("several final no-draft baselines with the same protocol (final-none, "
               "final-none-2)" in w for w in s["warnings"])


def test_a_ksweep_baseline_of_another_protocol_names_the_fields(tmp_path):
    pts = [record(f"c{i}", "code", 40.0 + 10 * i, alpha=0.2 * i, draft=(i, 5))
           for i in range(1, 5)]
    _write(tmp_path, spec("ksweep-mod", family="ksweep", drafter="ngram-mod", k=4), pts)
    _write(tmp_path, spec("baseline-none", family="baseline", n_predict=64),
           [record(f"c{i}", "code", 50.0) for i in range(1, 5)])
    s = build_summary(tmp_path)
    assert any(w.startswith("run ksweep-mod: breakeven: no matching baseline; nearest "
                            "baseline-none differs in n_predict 64 vs 128") for w in s["warnings"])


def test_an_unfinished_run_is_left_out_with_a_warning(tmp_path):
    _pair(tmp_path)
    (tmp_path / "final-mod" / "metrics.json").write_text('{"complete": false}')
    s = build_summary(tmp_path)
    assert "final-mod" not in s["runs"]
    assert any(w.startswith("run final-mod: incomplete") and "doit campaign:final-mod" in w
               for w in s["warnings"])


def test_a_folder_where_a_run_file_belongs_skips_the_run_in_one_line(tmp_path):
    _pair(tmp_path)
    path = tmp_path / "final-mod" / "results.jsonl"
    path.unlink()
    path.mkdir()
    loaded, warnings = runs.load_runs(tmp_path)
    assert [r.desc.run_id for r in loaded] == ["final-none"]
    assert any(w.startswith("run final-mod: results.jsonl: is a folder") for w in warnings)


def test_the_gate_at_c_speed_agrees_with_the_rules_one_by_one():
    # result_problem takes a gate (validate._plainly_possible) that passes a record only when
    # it breaks no rule; any other record goes through the rules one by one, which name what it
    # breaks. On random values the verdicts and messages must be the rules' own.
    import dataclasses
    import random

    from artifact import records
    from artifact.analysis import validate

    rng = random.Random(8)
    nan, inf = float("nan"), float("inf")
    numbers = [None, 0, 1, 7, -1, 0.0, -0.0, 2.5, 99.0, 1e308, nan, inf, -inf, 10**400, True]
    t = records.Timings(prompt_n=5, prompt_ms=1.0, predicted_n=9, predicted_ms=90.0,
                        predicted_per_second=88.9, cache_n=0, draft_n=4, draft_n_accepted=2)
    base = records.Result(prompt_id="p", domain="code", prompt_sha256="", repeat=0, attempt=1,
                          server_start=1, sent_unix_s=0.0, queue_ms=0.0, ttft_ms=5.0,
                          e2e_ms=100.0, event_ms=[], timings=t, stop_type="limit", alpha=0.5)

    def outcome(check, r):
        try:
            return check(r)
        except (ArithmeticError, TypeError) as err:  # 10**400, a null e2e_ms: both raise
            return repr(err)

    n_gate = 0
    for i in range(20000):
        tv, rv = {}, {}
        for _ in range(rng.randrange(3) if i else 0):
            pick = rng.random()
            if pick < 0.4:
                tv[rng.choice(["prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "cache_n",
                               "draft_n", "draft_n_accepted"])] = rng.choice(numbers)
            elif pick < 0.7:
                rv[rng.choice(["sent_unix_s", "queue_ms", "ttft_ms", "e2e_ms", "alpha"])] = \
                    rng.choice([*numbers, 0.5, 1.0, 1.5, 150.0])
            elif pick < 0.85:
                rv["event_ms"] = rng.choice([[], [1.0, 2.0], [2.0, 1.0], [1.0, nan], [-1.0],
                                             [1.0, 100.01], [1.0, 100.02], [5, 10**400]])
            else:
                rv["metrics_delta"] = rng.choice([None, {}, {"a_total": 1.0},
                                                  {"a_total": -1.0, "b_total": nan},
                                                  {"a_total": None}])
        r = dataclasses.replace(base, timings=dataclasses.replace(t, **tv), **rv)
        want = outcome(validate._result_rules, r)
        assert outcome(validate.result_problem, r) == want, r
        if outcome(validate._plainly_possible, r) is True:
            n_gate += 1
            assert want is None, r
    assert n_gate > 2000  # the gate passes the records that break no rule, not only a few
