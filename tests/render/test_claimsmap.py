"""The claims map (docs/claims.md, linked from the README) is generated from the ledger and the
committed runs, and current."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifact import claims, paths
from artifact.render import claimsmap, tasks


def test_claims_map_is_current() -> None:
    old, new = claimsmap.current()
    assert old == new, ("docs/claims.md's claims map is stale: run `doit readme` and commit "
                        "docs/claims.md")


def test_the_task_writes_the_page_the_readme_links() -> None:
    assert claimsmap.PAGE == paths.ROOT / "docs" / "claims.md"
    assert tasks.task_readme()["targets"] == [str(claimsmap.PAGE)]
    assert "(docs/claims.md)" in (paths.ROOT / "README.md").read_text(encoding="utf-8")


def test_every_claim_has_a_row_with_its_runs_and_time() -> None:
    text = claimsmap.render(claims.load(paths.CLAIMS), paths.RUNS)
    for c in claims.load(paths.CLAIMS):
        row = next(line for line in text.splitlines() if line.startswith(f"| `{c.id}` |"))
        # doit reproduce's options; the workload study's runs name the campaign runner
        assert "--runs " in row or "all " in row or "--runs-dir DIR" in row
        if c.id.startswith("accsplit-"):
            assert "`--campaign experiments/campaigns/accsplit.toml`" in row
        if c.id.startswith("wl-"):
            assert "experiments/campaigns/workload.toml" in row
        assert "not recorded" not in row and "min" in row
        for place in c.used_in:
            assert place in row


def test_update_replaces_only_the_section() -> None:
    page = f"intro\n{claimsmap.BEGIN}\nold\n{claimsmap.END}\nrest\n"
    expected = f"intro\n{claimsmap.BEGIN}\nnew\n{claimsmap.END}\nrest\n"
    assert claimsmap.update(page, "new\n") == expected


def test_missing_markers_are_one_clear_error(tmp_path: Path) -> None:
    page = tmp_path / "claims.md"
    page.write_text("no section here\n")
    with pytest.raises(claimsmap.ClaimsMapError, match=r"claims\.md: no claims-map section"):
        claimsmap.current(page)


def test_time_is_what_the_runs_measured(tmp_path: Path) -> None:
    run = tmp_path / "r1"
    run.mkdir()
    (run / "metrics.json").write_text('{"measure_s": 170, "model_load_s": [5], "warmup_s": [5]}')
    (run / "config.json").write_text('{"environment": {"cpu_cores": 4, "cpu_model": "X"}, '
                                     '"spec": {"threads": 2, "target_model": "m"}}')
    ledger = claims.parse({"claim": [{"id": "c", "quantity": "vars:a", "expected": 1.0,
                                      "scope": "hardware-bound", "noise": "exact",
                                      "runs": ["r*"], "used_in": ["Results"]}]})
    row = claimsmap.render(ledger, tmp_path).splitlines()[-1]
    assert row == ("| `c` | 1.00 (exact; noise: exact) | Results | none: all 1 run | about 3 min | "
                   "4 cores, X, 2 server threads, no GPU |")


def test_a_missing_or_unreadable_page_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(claimsmap.ClaimsMapError, match=r"claims\.md: file not found"):
        claimsmap.current(tmp_path / "claims.md")
    bad = tmp_path / "claims.md"
    bad.write_bytes(b"\xff\xfe not text")
    with pytest.raises(claimsmap.ClaimsMapError, match=r"claims\.md: cannot be read"):
        claimsmap.current(bad)
