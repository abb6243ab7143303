"""Fixtures of the analysis tests: a small synthetic corpus (tests/corpus.py) per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `pytest` (not `python -m pytest`) leaves the root out
    sys.path.insert(0, str(ROOT))

from tests import corpus  # noqa: E402

SCALE = 0.2  # 6 prompts per domain x 3 repeats = 54 records per run


@pytest.fixture(scope="session")
def corpus_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    corpus.write_corpus(root, scale=SCALE)
    return root


@pytest.fixture(scope="session")
def corpus_summary(corpus_root: Path) -> dict:
    from artifact.analysis import build_summary

    return build_summary(corpus_root)


@pytest.fixture(scope="session")
def bad_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("bad")
    corpus.write_corpus(root, scale=SCALE)
    return root, corpus.write_bad_runs(root, scale=SCALE)
