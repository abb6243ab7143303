"""Read string metadata (such as ``tokenizer.chat_template``) from a GGUF file's header.

Only the key/value section is parsed; tensors are never read.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from artifact.errors import GGUFError as GGUFError

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def _u64(f: BinaryIO) -> int:
    return int(struct.unpack("<Q", f.read(8))[0])


def _skip_or_read(f: BinaryIO, vtype: int) -> str | None:
    if vtype == _STRING:
        return f.read(_u64(f)).decode("utf-8", errors="replace")
    if vtype in _SCALAR:
        f.read(struct.calcsize(_SCALAR[vtype]))
        return None
    if vtype == _ARRAY:
        etype = struct.unpack("<I", f.read(4))[0]
        n = _u64(f)
        if etype in _SCALAR:
            f.seek(n * struct.calcsize(_SCALAR[etype]), 1)
        else:
            for _ in range(n):
                _skip_or_read(f, etype)
        return None
    raise GGUFError(f"unknown GGUF value type {vtype}")


def string_metadata(path: Path) -> dict[str, str]:
    """All string-valued metadata keys of a GGUF file."""
    out: dict[str, str] = {}
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise GGUFError(f"{path.name}: not a GGUF file")
        version = struct.unpack("<I", f.read(4))[0]
        if version < 2:
            raise GGUFError(f"{path.name}: GGUF version {version} is not supported")
        _u64(f)  # tensor count
        for _ in range(_u64(f)):
            key = f.read(_u64(f)).decode("utf-8", errors="replace")
            vtype = struct.unpack("<I", f.read(4))[0]
            value = _skip_or_read(f, vtype)
            if value is not None:
                out[key] = value
    return out
