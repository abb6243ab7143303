"""Fixtures of the analysis tests; the corpus itself is shared (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import corpus


@pytest.fixture(scope="session")
def bad_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("bad")
    corpus.write_corpus(root, scale=corpus.TEST_SCALE)
    return root, corpus.write_bad_runs(root, scale=corpus.TEST_SCALE)
