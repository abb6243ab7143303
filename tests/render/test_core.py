"""The core study's table, regime figure, variables and claims, on the committed core runs."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import matplotlib.pyplot as plt
import pytest
from matplotlib.axes import Axes

from artifact import claims, paths
from artifact.contract import core as contract
from artifact.render import core as rcore
from artifact.render import figures

from .core_fixture import build_core_fixture


@pytest.fixture(scope="module")
def core() -> contract.Core:
    return build_core_fixture()


@pytest.fixture
def ax() -> Iterator[Axes]:
    with plt.rc_context(figures.STYLE):  # type: ignore[arg-type]
        fig, a = plt.subplots()
        yield a
        plt.close(fig)


def test_the_table_has_every_cell_and_says_each_sign(core: contract.Core) -> None:
    text = rcore.render(core, "core", "md", paths.TEMPLATES)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    n_cells = sum(len(g["cells"]) for g in core["groups"])
    assert len(rows) == 1 + n_cells  # the header, then one row per cell
    signs = [line.rstrip(" |").rsplit("| ", 1)[1] for line in rows[1:]]
    assert signs.count("right") == core["signs_right"]
    assert signs.count("wrong") == core["signs_judged"] - core["signs_right"]
    assert f"{core['signs_right']} of {core['signs_judged']} right" in text
    tex = rcore.render(core, "core", "tex", paths.TEMPLATES)
    assert "\\label{tbl:core}" in tex and "Q4\\_1" in tex


def test_the_regime_figure_draws_each_judged_cell_at_predicted_and_measured(
        core: contract.Core, ax: Axes) -> None:
    colours = {d: "#000000" for d in contract.DRAFTERS}
    pts = rcore.plot_regime(ax, core, colours)
    want = [(cell["predicted"]["predicted"], cell["speedup"]["mean"]) for g in core["groups"]
            for d, cell in g["cells"].items() if cell["predicted"] is not None]
    assert pts == want and len(pts) == core["signs_judged"]
    lo, hi = ax.get_xlim()
    assert lo < 1.0 < hi and ax.get_ylim() == (lo, hi)  # the line 1 and the diagonal in view


def test_the_variables_select_and_do_not_estimate(core: contract.Core) -> None:
    v = rcore.variables(core)
    drafted = [e for e in v["cells"].values() if e["drafter"] != contract.CONTROL]
    assert v["n_cells"] == len(drafted) == core["signs_judged"]
    assert v["best"]["speedup"]["mean"] == max(e["speedup"]["mean"] for e in drafted)
    assert v["signs_right"] + len(v["wrong_signs"]) == v["signs_judged"]
    q2k = [e["speedup"]["mean"] for e in drafted if e["drafter"] == "draft-q2k"]
    assert (v["draft_q2k"]["min"], v["draft_q2k"]["max"]) == (min(q2k), max(q2k))
    for e in v["cells"].values():
        s = e["speedup"]
        assert e["pays"] == (s["lo"] is not None and s["lo"] > 1)
        assert not (e["pays"] and e["loses"])


def _set(data: Any, dotted: str, value: float) -> None:
    *head, last = dotted.split(".")
    node = data
    for part in head:
        node = node[part]
    node[last] = value


def _outside(c: claims.Claim) -> float:
    """A value just beyond the claim's band."""
    assert isinstance(c.expected, float | int)
    limit = c.abs if c.abs is not None else abs(c.expected) * (c.rel or 0.0)
    return c.expected + 1.5 * limit + 1e-6


def _status(c: claims.Claim, v: dict[str, Any]) -> str:
    [outcome] = claims.check([c], {}, v)
    return outcome.status


def test_every_core_claim_holds_and_fails_once_moved_out_of_its_band(
        core: contract.Core) -> None:
    """The ledger's claims on the core study hold on the committed runs; each value moved out
    of its band (a tolerance claim) or across its bound (a qualitative one) fails it."""
    ledger = [c for c in claims.load(paths.CLAIMS) if c.quantity.startswith("vars:core.")]
    assert len(ledger) >= 8
    v = {"core": rcore.variables(core)}
    for c in ledger:
        assert _status(c, v) == "ok", c.id
        where = c.path
        moved = copy.deepcopy(v)
        if c.qualitative:
            for op, bound in c.holds:
                assert isinstance(bound, float | int)
                across = bound + 0.01 if op in ("lt", "le") else bound - 0.01
                for path, _ in claims.lookup_all(moved, where):
                    _set(moved, path, across)
        else:
            _set(moved, where, _outside(c))
        assert _status(c, moved) == "deviates", c.id
