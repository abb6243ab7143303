"""The toolchain's build settings: the same bytes from any build folder (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifact import toolchain


def test_the_build_folder_is_mapped_to_one_name() -> None:
    flags = toolchain.prefix_map_flags(Path("/tmp/specdec-build-abc"))
    assert flags == (
        "-DCMAKE_C_FLAGS=-ffile-prefix-map=/tmp/specdec-build-abc=/specdec-llama-build",
        "-DCMAKE_CXX_FLAGS=-ffile-prefix-map=/tmp/specdec-build-abc=/specdec-llama-build")


def test_the_cache_key_covers_the_reproducible_build(monkeypatch: pytest.MonkeyPatch) -> None:
    before = toolchain.build_key()
    monkeypatch.setattr(toolchain, "REPRODUCIBLE_BUILD", "something else")
    assert toolchain.build_key() != before  # a change of build settings is a new build


def test_build_commands_run_with_a_fixed_source_date(tmp_path: Path) -> None:
    log = tmp_path / "log"
    toolchain._run(["sh", "-c", "echo epoch=$SOURCE_DATE_EPOCH"], log)
    assert log.read_text().strip() == f"epoch={toolchain.SOURCE_DATE_EPOCH}"


def test_the_compiler_is_named() -> None:
    assert toolchain.compiler()  # 'unknown' only where no c++ is on PATH


def test_info_names_the_reproducible_settings() -> None:
    text = toolchain.info()
    assert "-ffile-prefix-map=<build folder>=/specdec-llama-build" in text
    assert "compiler" in text
