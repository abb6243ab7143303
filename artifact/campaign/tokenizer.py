"""The tokenizer and chat template of a running ``llama-server``: what planning a workload run
needs of the server (:class:`artifact.workloads.Tokenizer`), asked over HTTP (``/tokenize``,
``/apply-template``). The campaign starts a server for it and hands it to the plan."""

from __future__ import annotations

from typing import Any

import httpx


class ServerTokenizer:
    """The tokenizer and chat template of a running ``llama-server`` (``/tokenize``,
    ``/apply-template``)."""

    def __init__(self, base_url: str, timeout_s: float = 60.0) -> None:
        self.client = httpx.Client(base_url=base_url, timeout=timeout_s)

    def close(self) -> None:
        self.client.close()

    def _tokens(self, text: str, pieces: bool) -> list[Any]:
        r = self.client.post("/tokenize", json={"content": text, "with_pieces": pieces})
        r.raise_for_status()
        toks = r.json()["tokens"]
        assert isinstance(toks, list)
        return toks

    def pieces(self, text: str) -> list[bytes]:
        out = []
        for t in self._tokens(text, True):
            p = t["piece"]
            out.append(p.encode("utf-8") if isinstance(p, str) else bytes(p))
        return out

    def render(self, messages: list[dict[str, str]]) -> str:
        r = self.client.post("/apply-template", json={"messages": messages})
        r.raise_for_status()
        return str(r.json()["prompt"])

    def count_prompt(self, messages: list[dict[str, str]]) -> int:
        return len(self._tokens(self.render(messages), False))
