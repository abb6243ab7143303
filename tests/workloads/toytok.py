"""A small deterministic tokenizer and chat template standing in for the server's in unit tests.

Words are cut into pieces of at most four letters (with their leading space); every other
character is a piece of its own. The template wraps each message in a role line and adds a
default system message when none is given, like SmolLM2's.
"""

from __future__ import annotations

import re

_PIECE = re.compile(r" ?[A-Za-z]{1,4}|.", re.DOTALL)
DEFAULT_SYSTEM = "You are a helpful assistant"


class ToyTokenizer:
    def __init__(self) -> None:
        self.calls = 0

    def pieces(self, text: str) -> list[bytes]:
        self.calls += 1
        return [p.encode() for p in _PIECE.findall(text)]

    def render(self, messages: list[dict[str, str]]) -> str:
        msgs = messages if messages and messages[0]["role"] == "system" else [
            {"role": "system", "content": DEFAULT_SYSTEM}, *messages]
        return "".join(f"<{m['role']}>\n{m['content']}</>\n" for m in msgs) + "<assistant>\n"

    def count_prompt(self, messages: list[dict[str, str]]) -> int:
        # role markers and "</>" count as one token each, like special tokens
        text = self.render(messages)
        n_special = len(re.findall(r"<[a-z]+>|</>", text))
        return n_special + len(self.pieces(re.sub(r"<[a-z]+>|</>", "", text)))
