"""Workload realism, take three: its tables, figure and variables from the committed runs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
from matplotlib import pyplot as plt

from artifact import paths
from artifact.render import figures
from artifact.render import realism as rrealism

from .realism_fixture import build_realism_fixture

pytestmark = pytest.mark.skipif(not any(paths.REALISM_RUNS.glob("r3-*")),
                                reason="no take-three realism runs")


@pytest.mark.parametrize("fmt", ["md", "tex"])
@pytest.mark.parametrize("name", rrealism.TABLES)
def test_every_table_renders_every_gap_and_no_missing_value_as_text(name: str,
                                                                     fmt: str) -> None:
    r = build_realism_fixture()
    text = rrealism.render(r, name, fmt, paths.TEMPLATES)
    assert "None" not in text and "nan" not in text.lower().replace("nanosecond", "")
    for s in r["strata"]:
        assert rrealism.stratum_label(s) in text
    if name == "realism":  # one verdict mark per gap
        marks = ({"=": "$=$", "≠": "$\\neq$"} if fmt == "tex" else {"=": " =", "≠": " ≠"})
        n = sum(text.count(m) for m in marks.values())
        n_eq_diff = sum(1 for s in r["strata"] for g in s["gaps"] if g["verdict"] != "cannot tell")
        assert n >= n_eq_diff


def test_the_figure_draws_every_gap_and_floor_once() -> None:
    r = build_realism_fixture()
    fig = figures.fig_realism(r)
    try:
        s = r["strata"][0]
        _, ax = plt.subplots()
        drawn = rrealism.plot_gaps(ax, s, "speedup", {})
        want = [g for g in [*s["floors"], *s["gaps"]] if g["quantity"] == "speedup"]
        assert sorted(v for _, v in drawn) == sorted(g["value"] for g in want)
        assert len(fig.axes) == 4 * len(r["strata"])
    finally:
        plt.close("all")


def test_variables_index_gaps_by_drafter_side_and_quantity() -> None:
    r = build_realism_fixture()
    v = rrealism.variables(r)
    main = v["strata"][v["order"][0]]
    g = main["gaps"]["ngram-mod/synthetic-english/speedup"]
    assert g["drafter"] == "ngram-mod" and g["side"] == "synthetic-english"
    assert set(main["by_verdict"]) == {"equivalent", "differs", "cannot tell"}
    assert sum(len(x) for x in main["by_verdict"].values()) == len(r["strata"][0]["gaps"])
    assert main["floors"]["none/e2e"]["side"] == "real-b"
    assert v["margins"]["speedup"] == pytest.approx(5.0)


@pytest.mark.parametrize("fmt", ["md", "tex"])
def test_every_interval_column_names_its_level(fmt: str) -> None:
    """The gaps' 90 % intervals printed beside the floors' and servers' 95 % ones: each
    interval column says which."""
    r = build_realism_fixture()
    pct = "\\%" if fmt == "tex" else "%"
    want = {"realism": (f"[90{pct}]", 5), "realism_floor": (f"[95{pct}]", 3),
            "realism_servers": (f"[95{pct}]", 2)}
    for name, (label, n) in want.items():
        head = next(ln for ln in rrealism.render(r, name, fmt, paths.TEMPLATES).splitlines()
                    if "Drafter" in ln)
        assert head.count(label) == n, (name, head)


def test_variables_carry_both_verdict_counts_and_the_corrected_detectable_gap() -> None:
    r = build_realism_fixture()
    v = rrealism.variables(r)
    assert set(v["verdicts"]["sessions_only"]) == {"equivalent", "differs", "cannot_tell"}
    main = v["strata"][v["order"][0]]
    assert main["mde_holm_speedup_min"] > main["mde_speedup_min"]
