"""Streaming ``/completion`` and ``/v1/chat/completions`` client (httpx): every outcome is data.

A finished stream gives a :class:`Completed`; an error inside a 200 stream, a stream that ends
without ``stop: true``, a timeout, a refused connection or a non-200 status give a
:class:`Failed` with a reason. Client times use ``time.perf_counter_ns``; the server's own
``timings`` are kept apart.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from artifact.records import Timings
from artifact.spec import RunSpec


@dataclass(frozen=True, kw_only=True)
class Completed:
    ttft_ms: float | None  # first event that carries generated text
    e2e_ms: float
    event_ms: list[float]
    event_text: list[str]  # the ``content`` of each event, parallel to event_ms
    timings: Timings
    stop_type: str

    @property
    def alpha(self) -> float | None:
        t = self.timings
        if t.draft_n is None or t.draft_n_accepted is None or t.draft_n == 0:
            return None
        return t.draft_n_accepted / t.draft_n


@dataclass(frozen=True, kw_only=True)
class Failed:
    reason: str  # http_status | stream_error | truncated | timeout | connect | bad_event
    status: int | None
    detail: str


Outcome = Completed | Failed


def request_body(spec: RunSpec, prompt: str, repeat: int = 0) -> dict[str, Any]:
    """The JSON body of one cold, streamed request (its seed from :meth:`RunSpec.request_seed`)."""
    body: dict[str, Any] = {
        "prompt": prompt,
        "n_predict": spec.n_predict,
        "temperature": spec.temperature,
        "top_k": spec.top_k,
        "top_p": spec.top_p,
        "seed": spec.request_seed(repeat),
        "stream": True,
        "cache_prompt": False,  # cold runs: no prefix reuse between requests
    }
    if spec.ignore_eos:
        body["ignore_eos"] = True  # the answer runs to n_predict tokens
    return body


def _ms(ns: int) -> float:
    return round(ns / 1e6, 3)


def _timings(raw: dict[str, Any]) -> Timings:
    def num(key: str) -> float:
        v = raw.get(key)
        if not isinstance(v, int | float):
            raise ValueError(f"timings.{key}: expected a number, got {v!r}")
        return float(v)

    def opt(key: str) -> int | None:
        v = raw.get(key)
        return int(v) if isinstance(v, int | float) else None

    return Timings(
        prompt_n=int(num("prompt_n")),
        prompt_ms=num("prompt_ms"),
        predicted_n=int(num("predicted_n")),
        predicted_ms=num("predicted_ms"),
        predicted_per_second=num("predicted_per_second"),
        cache_n=int(raw.get("cache_n", 0) or 0),
        draft_n=opt("draft_n"),
        draft_n_accepted=opt("draft_n_accepted"),
    )


async def _events(client: httpx.AsyncClient, url: str, body: dict[str, Any],
                  timeout_s: float, t0: int) -> AsyncIterator[tuple[int, dict[str, Any]] | Failed]:
    """The ``data:`` events of one streamed request as (arrival ns, object); a non-200 status,
    an undecodable event or an error inside the stream ends it with one :class:`Failed`."""
    timeout = httpx.Timeout(timeout_s, connect=10.0)
    async with client.stream("POST", url, json=body, timeout=timeout) as resp:
        if resp.status_code != 200:
            text = (await resp.aread()).decode("utf-8", errors="replace")
            yield Failed(reason="http_status", status=resp.status_code, detail=text[:500])
            return
        async for line in resp.aiter_lines():
            if not line.startswith("data:"):
                continue
            now = time.perf_counter_ns()
            payload = line[5:].strip()
            if payload == "[DONE]":
                continue
            try:
                event = json.loads(payload)
            except json.JSONDecodeError:
                yield Failed(reason="bad_event", status=200, detail=payload[:500])
                return
            if not isinstance(event, dict):
                yield Failed(reason="bad_event", status=200, detail=payload[:500])
                return
            if "error" in event:
                yield Failed(reason="stream_error", status=200,
                             detail=json.dumps(event["error"])[:500])
                return
            yield now, event


def _io_failure(err: httpx.TransportError) -> Failed:
    if isinstance(err, httpx.TimeoutException):
        return Failed(reason="timeout", status=None, detail=f"{type(err).__name__}: {err}")
    if isinstance(err, httpx.ConnectError):
        return Failed(reason="connect", status=None, detail=str(err)[:500])
    # connection dropped mid-stream
    return Failed(reason="truncated", status=None, detail=f"{type(err).__name__}: {err}")


async def complete(client: httpx.AsyncClient, base_url: str, body: dict[str, Any],
                   timeout_s: float) -> Outcome:
    """Send one streamed ``/completion`` and return what happened (never raises for I/O)."""
    t0 = time.perf_counter_ns()
    events: list[float] = []
    texts: list[str] = []
    ttft: float | None = None
    try:
        async for item in _events(client, f"{base_url}/completion", body, timeout_s, t0):
            if isinstance(item, Failed):
                return item
            now, event = item
            events.append(_ms(now - t0))
            content = event.get("content")
            texts.append(content if isinstance(content, str) else "")
            if ttft is None and event.get("content"):
                ttft = _ms(now - t0)
            if event.get("stop"):
                return _finish(event, event.get("stop_type"), ttft, events, texts, t0)
    except httpx.TransportError as err:
        return _io_failure(err)
    return Failed(reason="truncated", status=200,
                  detail=f"stream ended after {len(events)} events without stop")


def _finish(event: dict[str, Any], stop_type: Any, ttft: float | None, events: list[float],
            texts: list[str], t0: int) -> Outcome:
    try:
        timings = _timings(event.get("timings") or {})
    except ValueError as err:
        return Failed(reason="bad_event", status=200, detail=str(err))
    return Completed(ttft_ms=ttft, e2e_ms=_ms(time.perf_counter_ns() - t0), event_ms=events,
                     event_text=texts, timings=timings, stop_type=str(stop_type or ""))


def chat_body(messages: list[dict[str, str]], *, n_predict: int, slot: int, spec: RunSpec
              ) -> dict[str, Any]:
    """The JSON body of one streamed ``/v1/chat/completions`` turn: prompt caching on, the
    session's own slot, exactly ``n_predict`` tokens (``ignore_eos``)."""
    return {
        "messages": messages,
        "max_tokens": n_predict,
        "ignore_eos": True,
        "temperature": spec.temperature,
        "top_k": spec.top_k,
        "top_p": spec.top_p,
        "seed": spec.seed,
        "stream": True,
        "cache_prompt": True,  # a session reuses its own prefix turn after turn
        "id_slot": slot,
    }


async def chat_complete(client: httpx.AsyncClient, base_url: str, body: dict[str, Any],
                        timeout_s: float) -> Outcome:
    """One streamed OpenAI-compatible chat turn; TTFT is the first event carrying content.

    llama-server ends the stream with a chunk whose ``finish_reason`` is set and that carries
    ``timings``, then ``data: [DONE]``.
    """
    t0 = time.perf_counter_ns()
    events: list[float] = []
    texts: list[str] = []
    ttft: float | None = None
    try:
        async for item in _events(client, f"{base_url}/v1/chat/completions", body, timeout_s,
                                  t0):
            if isinstance(item, Failed):
                return item
            now, event = item
            choices = event.get("choices") or [{}]
            choice = choices[0] if isinstance(choices[0], dict) else {}
            delta = choice.get("delta") or {}
            if isinstance(delta, dict) and delta.get("content"):
                events.append(_ms(now - t0))
                texts.append(str(delta["content"]))
                if ttft is None:
                    ttft = _ms(now - t0)
            if choice.get("finish_reason"):
                return _finish(event, choice["finish_reason"], ttft, events, texts, t0)
    except httpx.TransportError as err:
        return _io_failure(err)
    return Failed(reason="truncated", status=200,
                  detail=f"stream ended after {len(events)} events without finish_reason")
