"""Shared fixtures: the real toolchain for tests marked ``server``, and the synthetic corpus
(tests/corpus.py, shaped like the seed study) with its real analysis output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from artifact import toolchain
from artifact.contract.summary import Summary
from tests import corpus

# Tests are not measurements: their real servers measure under a short quiet gate that proceeds
# (marked) on a busy machine, instead of the campaign's 10 s hold and 10 min timeout.
os.environ.setdefault("SPECDEC_QUIET_HOLD_S", "1")
os.environ.setdefault("SPECDEC_QUIET_TIMEOUT_S", "5")
os.environ.setdefault("SPECDEC_ALLOW_CONTENTION", "1")


@pytest.fixture(scope="session")
def real_toolchain() -> tuple[str, str]:
    """The pinned llama-server and model; builds them on first use (about 12 min on 2 cores)."""
    binary, model = toolchain.ensure_all()
    return str(binary), str(model)


@pytest.fixture(scope="session")
def corpus_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    corpus.write_corpus(root, scale=corpus.TEST_SCALE)
    return root


@pytest.fixture(scope="session")
def corpus_summary(corpus_root: Path) -> Summary:
    from artifact.analysis import build_summary  # numpy/scipy only for tests that use it

    return build_summary(corpus_root)
