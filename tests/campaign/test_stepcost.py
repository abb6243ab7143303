"""Step-cost measurement: protocol pieces without a server (httpx.MockTransport where a reply is
needed), and a short real measurement against the pinned llama-server when it is built."""

from __future__ import annotations

import json
import math
from pathlib import Path

import httpx
import pytest

from artifact import paths, records, toolchain
from artifact.analysis import costmodel
from artifact.campaign import stepcost as sc
from artifact.errors import ServerError, SpecError
from artifact.spec import load_campaign


def test_order_covers_every_pair_once_and_is_seeded() -> None:
    plan = sc.Plan(max_n=17, repeats=15, seed=4)
    pairs = sc.order(plan)
    assert sorted(pairs) == [(n, r) for n in range(1, 18) for r in range(15)]
    assert pairs == sc.order(plan) != sc.order(sc.Plan(max_n=17, repeats=15, seed=5))
    assert pairs != sorted(pairs)  # shuffled: drift over time does not line up with n


def test_fresh_tokens_are_distinct_deterministic_and_never_repeat_the_first() -> None:
    pool = list(range(1000, 1050))
    for n in (1, 2, 17):
        a = sc.fresh_tokens(pool, n, 3, 0, None)
        assert len(a) == n == len(set(a)) and set(a) <= set(pool)
        assert a == sc.fresh_tokens(pool, n, 3, 0, None)
        b = sc.fresh_tokens(pool, n, 3, 0, a[0])  # the previous request began like this one
        assert len(b) == n and b[0] != a[0]
    assert sc.fresh_tokens(pool, 4, 0, 0, None) != sc.fresh_tokens(pool, 4, 1, 0, None)
    with pytest.raises(SpecError, match="distinct tokens"):
        sc.fresh_tokens([1, 2], 2, 0, 0, None)


def test_step_row_flags_a_request_that_did_not_reuse_exactly_the_prefix() -> None:
    ok = sc.step_row(5, 2, {"prompt_n": 5, "prompt_ms": 40.1, "cache_n": 200},
                     prefix_tokens=200, client_ms=42.0, sent_unix_s=1.0, server_start=1)
    assert ok["problem"] is None and ok["prompt_ms"] == 40.1 and (ok["n"], ok["rep"]) == (5, 2)
    over = sc.step_row(5, 2, {"prompt_n": 6, "prompt_ms": 45.0, "cache_n": 199},
                       prefix_tokens=200, client_ms=1.0, sent_unix_s=1.0, server_start=1)
    assert over["problem"] == "prompt_n 6 != n 5; cache_n 199 != prefix 200"
    none = sc.step_row(5, 2, None, prefix_tokens=200, client_ms=1.0, sent_unix_s=1.0,
                       server_start=1)
    assert none["prompt_ms"] is None and "no timings.prompt_ms" in none["problem"]
    # the analysis leaves flagged rows out of the medians
    assert costmodel.per_n_medians([ok, over, none]) == [{"count": 1, "median_ms": 40.1, "n": 5}]


def test_body_extends_the_cached_prefix_by_token_ids() -> None:
    body = sc.completion_body([1, 2, 3])
    assert body == {"prompt": [1, 2, 3], "n_predict": 1, "cache_prompt": True,
                    "temperature": 0.0, "stream": False}


def test_tokenize_reads_ids_and_refuses_anything_else() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/tokenize"
        text = json.loads(request.content)["content"]
        toks: object = [7, 8, 9] if text == "good" else [{"id": 7}]
        return httpx.Response(200, json={"tokens": toks})

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        assert sc.tokenize(client, "http://x", "good") == [7, 8, 9]
        with pytest.raises(ServerError, match="list of token ids"):
            sc.tokenize(client, "http://x", "bad")


def test_prefix_comes_from_the_first_long_enough_prompt() -> None:
    p = sc.choose_prefix([("short", [1, 2]), ("long", list(range(10, 40))),
                          ("later", list(range(50, 90)))], 25)
    assert p.prompt_id == "long" and p.tokens == list(range(10, 35))
    assert p.pool == sorted({1, 2, *range(10, 40), *range(50, 90)})
    with pytest.raises(SpecError, match="longest has 40"):
        sc.choose_prefix([("a", [1] * 40)], 200)


def test_spec_for_the_study_is_a_one_slot_no_draft_server_with_its_settings() -> None:
    camp = load_campaign(paths.STUDY)
    for key in ("smollm2-135m-q4_1", "smollm2-135m-q2_k"):
        s = sc.spec_for(camp, key)
        assert (s.drafter, s.draft_model, s.k, s.concurrency) == ("none", None, None, 1)
        assert (s.target_model, s.threads, s.ctx_size) == (key, 1, 2048)
        assert s.target_quant == camp.models[key].quant
    assert sc.spec_for(camp, "smollm2-135m-q4_1", threads=2).threads == 2
    with pytest.raises(SpecError, match="no model 'nope'"):
        sc.spec_for(camp, "nope")


@pytest.mark.parametrize("bad", [{"max_n": 0}, {"repeats": 0}, {"prefix_tokens": 0},
                                 {"warmup": 0}])
def test_plan_refuses_empty_measurements(bad: dict[str, int]) -> None:
    with pytest.raises(SpecError):
        sc.Plan(**bad)


def test_cli_help_names_the_method() -> None:
    with pytest.raises(SystemExit) as exc:
        sc.main(["--help"])
    assert exc.value.code == 0


# --- the real server ------------------------------------------------------------------------

TOML = """
[campaign]
name = "stepcost-test"
[defaults]
target = "m"
prompt_set = "kick"
threads = 1
warmup = 1
[models.m]
builtin = "smollm2-135m-q4_1"
family = "smollm2-135m"
quant = "Q4_1"
[[run]]
id = "final-none"
family = "final"
drafter = "none"
"""


@pytest.fixture
def built() -> None:
    if not (toolchain.server_binary().is_file() and toolchain.model_path().is_file()):
        pytest.skip("the pinned llama-server or model is not built (`doit toolchain` builds "
                    "them, about 12 min on 2 cores)")


@pytest.mark.server
@pytest.mark.usefixtures("built")
def test_a_short_real_measurement_then_resume(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(TOML)
    camp = load_campaign(f)
    plan = sc.Plan(prefix_tokens=32, max_n=3, repeats=2, warmup=1, seed=1)
    out = tmp_path / "m"
    said: list[str] = []
    steps = sc.measure(camp, "m", out, plan, say=said.append)
    rows = records.read_jsonl(steps).rows
    assert sorted((r["n"], r["rep"]) for r in rows) == [(n, r) for n in (1, 2, 3) for r in (0, 1)]
    assert [(r["n"], r["rep"]) for r in rows] == sc.order(plan)  # sent in the seeded order
    for r in rows:  # n fresh tokens evaluated on top of exactly the cached prefix
        assert r["problem"] is None, r
        assert r["prompt_n"] == r["n"] and r["cache_n"] == 32
        assert 0 < r["prompt_ms"] <= r["client_ms"]
        assert "foreign_cores" in r["contention"] or "unavailable" in r["contention"]
    config = records.read_json(out / records.CONFIG)
    assert config["model"] == "m" and config["prefix"]["tokens"] == 32
    assert config["binary_sha256"] == toolchain.sha256_file(toolchain.server_binary())
    assert set(config["model_sha256"]) == {"m"} and "-t" in config["server_argv"]
    log = (out / records.SERVER_LOG).read_text()
    assert f"{sc.MARKER} measure begin" in log
    fit = costmodel.model_cost("m", rows).fit
    assert fit is not None
    # the fit is made from these rows (its slope over n = 1..3 is left to the real campaign: six
    # requests of a few ms each give a sign that follows the machine's load, not the model)
    assert fit.n_points == 3 and fit.a_ms > 0 and math.isfinite(fit.b_ms)
    # resume: drop the last two lines, rerun, and get each pair exactly once
    lines = steps.read_text().splitlines(keepends=True)
    steps.write_text("".join(lines[:-2]))
    sc.measure(camp, "m", out, plan, say=said.append)
    again = records.read_jsonl(steps).rows
    assert sorted((r["n"], r["rep"]) for r in again) == sorted((r["n"], r["rep"]) for r in rows)
    assert {r["server_start"] for r in again} == {1, 2}
    # a finished directory is not measured again; another protocol is refused in one line
    sc.measure(camp, "m", out, plan, say=said.append)
    assert len(records.read_jsonl(steps).rows) == 6
    with pytest.raises(SpecError, match="another protocol \\(seed differs\\)"):
        sc.measure(camp, "m", out, sc.Plan(prefix_tokens=32, max_n=3, repeats=2, seed=2))
