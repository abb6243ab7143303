from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from matplotlib.axes import Axes
from matplotlib.text import Text

from artifact.render import figures, model

from .fixture import build_summary


@pytest.fixture
def ax() -> Iterator[Axes]:
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig, a = plt.subplots()
        yield a
        plt.close(fig)


@pytest.fixture
def summary() -> model.Summary:
    return model.from_json(build_summary())


def test_speedup_draws_each_ratio(ax: Axes, summary: model.Summary) -> None:
    drawn = figures.plot_speedup(ax, summary)
    assert drawn.reference == 1.0
    assert drawn.groups == ("overall", "code", "chat", "math")
    raw = summary.raw["speedup"]
    for i, run in enumerate(summary.speedup_ids):
        assert drawn.categories[i] == summary.label(run)
        assert drawn.values["overall"][i] == raw[run]["overall"]["mean_ratio"]
    # a null ratio is not drawn as a bar of 0
    i = summary.speedup_ids.index("final-ngram-cache")
    assert drawn.values["math"][i] is None
    n_bars = sum(len(c.patches) for c in ax.containers)
    assert n_bars == sum(v is not None for vs in drawn.values.values() for v in vs)
    # a domain where nothing was drafted is drawn hatched, and the legend says what that means
    hatched = [p for c in ax.containers for p in c.patches if p.get_hatch()]
    assert len(hatched) == 1
    legend = ax.get_legend()
    assert legend is not None
    assert "nothing drafted in the domain" in [t.get_text() for t in legend.get_texts()]


def test_empty_panel_says_so(ax: Axes) -> None:
    figures.plot_positions(ax, [], title="math")
    assert [t.get_text() for t in ax.texts] == ["no per-position data"]


def test_positions_curves_and_bands(ax: Axes, summary: model.Summary) -> None:
    curves = figures.position_curves(summary, "code")
    drawn = figures.plot_positions(ax, curves)
    assert [c.label for c in drawn.curves] == [
        "draft model Q4_1 (self) k=8 (Q4_1 target)", "ngram-mod k=8 (Q4_1 target)"]
    for c in drawn.curves:
        assert all(lo <= m <= hi for lo, m, hi in zip(c.ci_low, c.mean, c.ci_high, strict=True))
    assert len(ax.lines) == 2 and len(ax.collections) == 2  # one band per curve



def test_no_band_where_too_few_requests_reached_the_position(ax: Axes) -> None:
    """Positions 1-3 reached by 20, 9 and 5 requests get a band; 4 and 5, by 3 and 1, do not."""
    c = figures.Curve("x", (1, 2, 3, 4, 5), (0.9, 0.8, 0.7, 0.6, 0.5),
                      (0.8, 0.7, 0.6, 0.0, 0.5), (1.0, 0.9, 0.8, 1.0, 0.5), (20, 9, 5, 3, 1))
    figures.plot_positions(ax, [c])
    (band,) = ax.collections
    xs = {round(float(x), 6) for path in band.get_paths() for x, _ in path.vertices}
    assert max(xs) == 3.0 and min(xs) == 1.0

def test_breakeven_lines_baseline_and_points(ax: Axes, summary: model.Summary) -> None:
    lines, base = figures.breakeven_lines(summary, None)
    drawn = figures.plot_breakeven(ax, lines, base)
    assert drawn.baseline == 60.0
    assert [ln.label for ln in drawn.lines] == [summary.label("ksweep-draft-q2k-k2")] + [
        summary.label(f"ksweep-ngram-mod-k{k}") for k in (2, 4, 8)]
    for ln in drawn.lines:
        assert ln.alpha_be is not None
        assert ln.a + ln.beta * ln.alpha_be == pytest.approx(60.0, rel=1e-4)
    # a failed domain fit is left out, not drawn as a line
    math_lines, _ = figures.breakeven_lines(summary, "math")
    assert [ln.label for ln in math_lines] == [summary.label("ksweep-draft-q2k-k2")] + [
        summary.label(f"ksweep-ngram-mod-k{k}") for k in (2, 4)]


def test_breakeven_relative_marks_points_only_where_informative(
    ax: Axes, summary: model.Summary
) -> None:
    lines, base = figures.breakeven_lines(summary, None)
    figures.plot_breakeven(ax, lines, base, relative=True)
    # every baseline is the dashed line at 1; each line starts at a / baseline
    dashed = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert [tuple(ln.get_ydata()) for ln in dashed] == [(1.0, 1.0)]
    first = ax.lines[0]
    assert first.get_ydata()[0] == pytest.approx(lines[0].a / 60.0)
    # the draft model never breaks even: a right-pointing marker at alpha = 1, no error bar
    assert any(ln.get_marker() == ">" and ln.get_xdata()[0] >= 1.0 for ln in ax.lines)
    assert len(ax.containers) == 3  # error bars of the three ngram-mod fits


def test_a_falling_line_gets_no_breakeven_point(ax: Axes) -> None:
    """Issue 29: a break-even point is drawn only where a line of positive slope places it;
    a line that falls through the baseline at alpha = 0.12 with a narrow interval gets none."""
    falling = figures.FitLine(label="k=4", a=64.0, beta=-30.0, alpha_be=0.12, ci_low=0.05,
                              ci_high=0.3, baseline=60.4)
    rising = figures.FitLine(label="k=2", a=40.0, beta=30.0, alpha_be=0.68, ci_low=0.6,
                             ci_high=0.75, baseline=60.4)
    figures.plot_breakeven(ax, [falling], 60.4, relative=True)
    assert len(ax.containers) == 0
    assert not any(ln.get_marker() in (">", "o") for ln in ax.lines)
    figures.plot_breakeven(ax, [rising], 60.4, relative=True)
    assert len(ax.containers) == 1


def test_hardware_panels(summary: model.Summary) -> None:
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig, (a, b) = plt.subplots(1, 2)
        tok, ttft = figures.plot_hardware(a, b, summary)
        plt.close(fig)
    assert tok.categories == ttft.categories
    assert len(tok.categories) == len(summary.final_ids)
    assert ttft.markers is not None and set(ttft.markers) == {"median", "p95"}


def test_accsplit_figure_draws_positions_and_prompt_intervals() -> None:
    from .accsplit_fixture import build_accsplit

    a = build_accsplit()
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig, (x, y) = plt.subplots(1, 2)
        lines = figures.plot_acc_positions(x, a["by_config"], budget=128)
        pts = figures.plot_acc_prompts(y, a["by_prompt_budget"], budget=128)
        plt.close(fig)
        whole = figures.fig_accsplit(a)
        assert whole.get_figwidth() == figures.TEXT_WIDTH_IN
        plt.close(whole)
    assert lines.labels == ("draft Q2_K k=4", "ngram-mod k=4")  # batch 1 only
    assert lines.rates[0] == pytest.approx((0.75, 0.5, 0.25, 0.0))
    assert pts.mean["draft Q2_K k=4"][0] == pytest.approx(1.25)
    assert pts.n["draft Q2_K k=4"] == (3, 3)


def test_accsplit_batch_panel_draws_the_within_window_differences() -> None:
    from .accsplit_fixture import build_accsplit

    a = build_accsplit()
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig, ax = plt.subplots()
        pts = figures.plot_acc_batch(ax, a["batch_contrasts"], budget=128)
        plt.close(fig)
    assert pts.labels == ("w2: batch 2",) and pts.configs == ("draft Q2_K k=4", "ngram-mod k=4")
    # the fixture's batch 2 in w2 accepts 4 and 6 of 4 rounds against 5 and 7 at batch 1
    assert pts.mean["draft Q2_K k=4"] == (pytest.approx(-0.25),)


@pytest.mark.parametrize("name", figures.FIGURES)
def test_every_figure_is_text_width(name: str, summary: model.Summary) -> None:
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig = figures.FIGURES[name](summary)
        assert fig.get_figwidth() == figures.TEXT_WIDTH_IN
        plt.close(fig)


def test_accsplit_prompt_intervals_are_drawn_within_0_and_k() -> None:
    """The analysis cuts each interval to [0, k], where accepted per round lies: the panel draws
    every interval inside its axis, none running off it."""
    from .accsplit_fixture import build_accsplit

    a = build_accsplit()
    rows = [r for r in a["by_prompt_budget"] if r["budget"] == 128]
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig, ax = plt.subplots()
        figures.plot_acc_prompts(ax, rows, budget=128)
        assert ax.get_xlim() == (0.0, 4.0)
        xs = [float(x) for ln in ax.get_lines() for x in ln.get_xdata()]
        plt.close(fig)
    assert xs and all(0.0 <= x <= 4.0 for x in xs)
    drawn = [r["accepted_per_round"] for r in rows if r["accepted_per_round"]["low"] is not None]
    assert drawn and all(0.0 <= iv["low"] <= iv["high"] <= 4.0 for iv in drawn)


MATH = "my $\\frac{model$ {v2}_x^2"  # unbalanced mathtext: matplotlib raised on it at save


def test_configuration_and_prompt_strings_are_drawn_as_written(tmp_path: Path) -> None:
    """The acceptance-split figure puts configurations and prompt ids from the data on its axes
    and legend; one style setting (text.parse_math off) draws every such text literally."""
    import json

    from artifact import files

    from .accsplit_fixture import build_accsplit

    text = files.dumps_json(build_accsplit())
    config, prompt = "$k$ " + MATH, "chat/$" + MATH
    text = text.replace("draft Q2_K k=4", json.dumps(config)[1:-1])
    text = text.replace("chat/sharegpt-2Hj9Wtq_0", json.dumps(prompt)[1:-1])
    data = tmp_path / "accsplit.json"
    data.write_text(text, encoding="utf-8")
    figures.write(data, "accsplit", tmp_path / "out", dpi=40)  # raised ValueError before
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig = figures.fig_accsplit(json.loads(text))
        fig.canvas.draw()  # tick labels are made at draw time
        drawn = [t for t in fig.findobj(Text) if t.get_text()]
        plt.close(fig)
    shown = [t.get_text() for t in drawn]
    assert any(config in s for s in shown) and any(prompt in s for s in shown)
    assert all(not t.get_parse_math() for t in drawn if MATH in t.get_text())


def test_our_own_math_labels_still_typeset(summary: model.Summary) -> None:
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig = figures.FIGURES["positions"](summary)
        maths = [t for t in fig.findobj(Text) if t.get_parse_math() and t.get_text()]
        plt.close(fig)
    assert maths and {t.get_text() for t in maths} == {"Draft position $i$"}


def test_breakeven_legend_narrows_to_fit_the_figure(summary: model.Summary) -> None:
    # The fixture's labels in four columns are wider than the page: the layout check of the
    # PDF found 'baseline' past the right margin. Fewer columns, the same entries.
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig = figures.fig_breakeven(summary)
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        (legend,) = fig.legends
        labels = [t.get_text() for t in legend.get_texts()]
        assert len(labels) > 2 and "no-draft baseline" in labels
        assert legend.get_window_extent(renderer).width <= fig.get_window_extent().width
        assert legend._ncols < 4  # type: ignore[attr-defined]
    plt.close(fig)
