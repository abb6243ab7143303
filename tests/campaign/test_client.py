"""Protocol edge cases of the streaming client, with httpx.MockTransport (no server)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
import pytest

from artifact.campaign.client import Completed, Failed, Outcome, complete

TIMINGS = {"prompt_n": 7, "prompt_ms": 12.5, "predicted_n": 3, "predicted_ms": 30.0,
           "predicted_per_second": 100.0, "cache_n": 0, "draft_n": 4, "draft_n_accepted": 3}


def sse(*events: dict[str, object]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def run(handler: Callable[[httpx.Request], httpx.Response], timeout_s: float = 5.0) -> Outcome:
    async def go() -> Outcome:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await complete(client, "http://127.0.0.1:1", {"prompt": "x"}, timeout_s)

    return asyncio.run(go())


def test_complete_stream_gives_timings_alpha_and_event_times() -> None:
    body = sse({"content": "a", "stop": False}, {"content": "b", "stop": False},
               {"content": "", "stop": True, "stop_type": "limit", "timings": TIMINGS})
    out = run(lambda req: httpx.Response(200, content=body))
    assert isinstance(out, Completed)
    assert out.alpha == pytest.approx(0.75)
    assert out.timings.prompt_n == 7 and out.timings.draft_n_accepted == 3
    assert out.stop_type == "limit"
    assert len(out.event_ms) == 3 and out.event_ms == sorted(out.event_ms)
    assert out.ttft_ms is not None and out.ttft_ms <= out.e2e_ms


def test_request_is_cold_and_streamed() -> None:
    seen: dict[str, object] = {}

    def handler(req: httpx.Request) -> httpx.Response:
        seen.update(json.loads(req.content))
        return httpx.Response(200, content=sse({"stop": True, "timings": TIMINGS}))

    from artifact import paths
    from artifact.campaign.client import request_body
    from artifact.spec import load_campaign

    spec = load_campaign(paths.CAMPAIGNS / "kick.toml").runs[0]
    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            await complete(client, "http://h", request_body(spec, "p"), 5.0)

    asyncio.run(go())
    assert seen["cache_prompt"] is False and seen["stream"] is True
    assert seen["n_predict"] == spec.n_predict


def test_no_draft_gives_null_alpha() -> None:
    t = {k: v for k, v in TIMINGS.items() if not k.startswith("draft")}
    out = run(lambda req: httpx.Response(200, content=sse({"stop": True, "timings": t})))
    assert isinstance(out, Completed) and out.alpha is None and out.timings.draft_n is None


def test_error_payload_inside_a_200_stream_is_a_failure() -> None:
    body = sse({"content": "a", "stop": False}, {"error": {"code": 500, "message": "boom"}})
    out = run(lambda req: httpx.Response(200, content=body))
    assert isinstance(out, Failed) and out.reason == "stream_error" and "boom" in out.detail


def test_truncated_stream_is_a_failure() -> None:
    out = run(lambda req: httpx.Response(200, content=sse({"content": "a", "stop": False})))
    assert isinstance(out, Failed) and out.reason == "truncated" and "1 events" in out.detail


def test_non_200_is_a_failure_with_status() -> None:
    out = run(lambda req: httpx.Response(503, json={"error": "loading model"}))
    assert isinstance(out, Failed) and out.status == 503 and out.reason == "http_status"
    assert "loading" in out.detail


def test_timeout_is_a_failure() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("no event in time", request=req)

    out = run(handler)
    assert isinstance(out, Failed) and out.reason == "timeout"


def test_refused_connection_is_a_failure() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=req)

    out = run(handler)
    assert isinstance(out, Failed) and out.reason == "connect"


def test_garbage_event_is_a_failure() -> None:
    out = run(lambda req: httpx.Response(200, content=b"data: {not json\n\n"))
    assert isinstance(out, Failed) and out.reason == "bad_event"


def test_stop_event_without_timings_is_a_failure() -> None:
    out = run(lambda req: httpx.Response(200, content=sse({"stop": True})))
    assert isinstance(out, Failed) and out.reason == "bad_event" and "timings" in out.detail


def run_chat(handler: Callable[[httpx.Request], httpx.Response]) -> Outcome:
    from artifact.campaign.client import chat_complete

    async def go() -> Outcome:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await chat_complete(client, "http://127.0.0.1:1", {"messages": []}, 5.0)

    return asyncio.run(go())


def chunk(content: str | None, finish: str | None = None, **extra: object) -> dict[str, object]:
    delta = {} if content is None else {"content": content}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def test_chat_stream_gives_ttft_at_first_content_and_the_final_timings() -> None:
    body = sse({"choices": [{"delta": {"role": "assistant", "content": None}}]},
               chunk("Hel"), chunk("lo"), chunk(None, "length", timings=TIMINGS)) \
        + b"data: [DONE]\n\n"
    out = run_chat(lambda req: httpx.Response(200, content=body))
    assert isinstance(out, Completed)
    assert out.stop_type == "length" and out.timings.predicted_n == 3
    assert len(out.event_ms) == 2 and out.ttft_ms == out.event_ms[0]


def test_chat_error_inside_200_and_missing_finish_are_failures() -> None:
    err = run_chat(lambda req: httpx.Response(200, content=sse(
        chunk("a"), {"error": {"code": 500, "message": "context full"}})))
    assert isinstance(err, Failed) and err.reason == "stream_error"
    cut = run_chat(lambda req: httpx.Response(200, content=sse(chunk("a"), chunk("b"))))
    assert isinstance(cut, Failed) and cut.reason == "truncated"
    assert "without finish_reason" in cut.detail


def test_chat_body_keeps_the_slot_caches_and_asks_for_exact_tokens() -> None:
    from artifact.campaign.client import chat_body
    from artifact.spec import load_campaign

    spec = load_campaign(__import__("artifact.paths", fromlist=["x"]).CAMPAIGNS
                         / "workload.toml").runs[0]
    b = chat_body([{"role": "user", "content": "x"}], n_predict=7, slot=1, spec=spec)
    assert b["cache_prompt"] is True and b["id_slot"] == 1 and b["stream"] is True
    assert b["max_tokens"] == 7 and b["ignore_eos"] is True


def test_streamed_text_is_kept_per_event() -> None:
    body = sse({"content": "def", "stop": False}, {"content": " f", "stop": False},
               {"content": "", "stop": True, "stop_type": "limit", "timings": TIMINGS})
    out = run(lambda req: httpx.Response(200, content=body))
    assert isinstance(out, Completed)
    assert out.event_text == ["def", " f", ""] and len(out.event_text) == len(out.event_ms)


def test_request_seed_varies_per_repeat_and_ignore_eos_is_sent() -> None:
    from artifact import paths
    from artifact.campaign.client import request_body
    from artifact.spec import load_campaign

    kick = load_campaign(paths.CAMPAIGNS / "kick.toml").runs[0]
    assert "ignore_eos" not in request_body(kick, "p", 2)
    assert request_body(kick, "p", 2)["seed"] == kick.seed  # fixed seed unless asked
    acc = load_campaign(paths.CAMPAIGNS / "accsplit.toml").runs[0]
    b0, b1 = request_body(acc, "p", 0), request_body(acc, "p", 1)
    assert b0["ignore_eos"] is True and b0["temperature"] == 1.0
    assert (b0["seed"], b1["seed"]) == (acc.seed, acc.seed + 1)
