"""Two clean builds from the same summary.json give the same bytes."""

from __future__ import annotations

from pathlib import Path

from .build import build_all
from .fixture import write_summary


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_clean_builds_are_byte_identical(tmp_path: Path) -> None:
    summary = write_summary(tmp_path / "summary.json")
    a = _files(build_all(summary, tmp_path / "a", pdf=True))
    b = _files(build_all(summary, tmp_path / "b", pdf=True))
    assert set(a) == set(b)
    expected = {"paper.tex", "paper.html", "paper.pdf", "vars.json", "tables/speedup.tex",
                "figures/speedup.png", "figures/speedup.pdf", "figures/speedup.svg"}
    assert expected <= set(a)
    differ = sorted(k for k in a if a[k] != b[k])
    assert not differ, f"differ between builds: {differ}"
