"""Shared fixtures: the real toolchain for tests marked ``server``."""

from __future__ import annotations

import pytest

from artifact import toolchain


@pytest.fixture(scope="session")
def real_toolchain() -> tuple[str, str]:
    """The pinned llama-server and model; builds them on first use (about 12 min on 2 cores)."""
    binary, model = toolchain.ensure_all()
    return str(binary), str(model)
