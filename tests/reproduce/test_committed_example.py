"""The committed example reproduction: its report is what the committed files give, and the
table of docs/reproducing.md (linked from the README) is generated from it."""

from __future__ import annotations

import re
from pathlib import Path

from artifact import paths
from artifact.render import comparison
from artifact.reproduce import command, plan

MARKER = re.compile(
    r"<!-- reproduction-example: (\S+) -->\n(.*?)<!-- reproduction-example: end -->", re.S)


def example() -> tuple[Path, str]:
    m = MARKER.search((paths.ROOT / comparison.EXAMPLE_PAGE).read_text(encoding="utf-8"))
    assert m, f"{comparison.EXAMPLE_PAGE}: no reproduction-example marker"
    return paths.ROOT / m.group(1), m.group(2)


def test_the_readme_table_is_generated_from_the_committed_comparison() -> None:
    source, table = example()
    assert source.is_file(), source
    assert table == comparison.example_table(comparison.load(source)), \
        f"{comparison.EXAMPLE_PAGE} is stale: run `python -m artifact.reproduce readme`"


def test_the_committed_comparison_is_what_the_committed_runs_give(tmp_path: Path) -> None:
    source, _ = example()
    folder = source.parent.parent  # <reproduction>/report/comparison.json
    assert (folder / plan.MANIFEST).is_file() and (folder / plan.RUNS).is_dir()
    command.compare_sets(paths.RUNS, folder, out=tmp_path,
                         names=("committed", folder.name), say=lambda _: None)
    assert (tmp_path / "comparison.json").read_bytes() == source.read_bytes()
    assert (tmp_path / comparison.MD).read_bytes() == (source.parent / comparison.MD).read_bytes()
