from __future__ import annotations

from pathlib import Path

import pytest

from .fixture import write_summary


@pytest.fixture
def summary_path(tmp_path: Path) -> Path:
    return write_summary(tmp_path / "summary.json")
