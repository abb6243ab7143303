"""The side-by-side report of two run sets, from ``comparison.json`` only.

``comparison.md`` (Jinja, ``templates/comparison.md.j2``), a self-contained
``comparison.html`` (pandoc, figure embedded) and ``claims.png``: one small panel per claim with
the reference (A) and the reproduction (B), the tolerance band around A for a numeric claim, the
forbidden side of the bound for a qualitative one, and the verdict under each panel.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from artifact import files, hostinfo, paths
from artifact.contract.comparison import Comparison, read
from artifact.errors import ComparisonError
from artifact.render.figures import PNG_METADATA, STYLE, TEXT_WIDTH_IN
from artifact.render.text import environment, num

FIGURE = "claims.png"
MD, HTML = "comparison.md", "comparison.html"
NCOLS = 4
# Verdict colours (Okabe-Ito): agreement blue/green, hardware or noise orange, failure vermilion
VERDICT_COLOURS = {
    "reproduced": "#0072B2", "holds": "#009E73", "differs with hardware": "#E69F00",
    "noise differs": "#CC79A7", "cannot tell": "#56B4E9", "cannot tell (no interval)": "#56B4E9",
    "failed": "#D55E00", "violated": "#D55E00",
    "missing": "#000000", "not run": "#999999",
}


def load(path: Path) -> Comparison:
    """Read and validate ``comparison.json`` (one line naming the file and field if it is off)."""
    return read(path, error=ComparisonError)


# --- figure ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Panel:
    """What one claim's panel shows (for tests: no pixels compared)."""

    claim: str
    verdict: str
    a: tuple[float, ...]
    b: tuple[float, ...]
    band: tuple[float, float] | None
    bounds: tuple[tuple[str, float, float], ...]  # (op, A's bound, B's bound)


def _finite(xs: Sequence[Any]) -> tuple[float, ...]:
    return tuple(float(x) for x in xs if isinstance(x, int | float) and math.isfinite(x))


def plot_claim(ax: Axes, claim: Mapping[str, Any]) -> Panel:
    """One claim: A at x=0, B at x=1; the tolerance band or the bound's forbidden side."""
    verdict = str(claim["verdict"])
    colour = VERDICT_COLOURS.get(verdict, "#000000")
    ax.set_title(str(claim["id"]), fontsize=6.5, pad=2)
    ax.set_xlim(-0.6, 1.6)
    ax.set_xticks([0, 1], ["A", "B"])
    ax.tick_params(labelsize=6, length=2)
    ax.set_xlabel(verdict, fontsize=6.5, color=colour, labelpad=1)
    if verdict == "not run":  # the reproduction did not measure what the claim needs
        ax.text(0.5, 0.5, "runs not\nreproduced", transform=ax.transAxes, ha="center",
                va="center", fontsize=6.5, color=colour)
        ax.set_yticks([])
        return Panel(claim=str(claim["id"]), verdict=verdict, a=(), b=(), band=None, bounds=())
    if claim["scope"] == "qualitative":
        a = _finite([v for _, v in claim["values_a"]])
        b = _finite([v for _, v in claim["values_b"]])
    else:
        a, b = _finite([claim["a"]]), _finite([claim["b"]])
    band = tuple(claim["band"]) if claim.get("band") else None
    ba = {str(op): float(v) for op, v in claim.get("bounds_a") or []}
    bb = {str(op): float(v) for op, v in claim.get("bounds_b") or []}
    bounds = tuple((op, ba.get(op, bb.get(op, math.nan)), bb.get(op, ba.get(op, math.nan)))
                   for op in dict.fromkeys([*ba, *bb]))
    shown = [*a, *b, *(band or ()), *(v for _, x, y in bounds for v in (x, y))]
    if shown:
        lo, hi = min(shown), max(shown)
        pad = (hi - lo) * 0.15 or abs(hi) * 0.1 or 0.1
        ax.set_ylim(lo - pad, hi + pad)
    if band is not None:
        ax.axhspan(band[0], band[1], color="#0072B2", alpha=0.15, lw=0)
    for op, ya, yb in bounds:
        for x, y in ((0, ya), (1, yb)):
            ax.hlines(y, x - 0.4, x + 0.4, colors="#000000", linestyles="dashed", lw=0.7)
            if op in ("gt", "ge"):  # forbidden: below the bound
                bottom, top = ax.get_ylim()[0], y
            else:  # forbidden: above it
                bottom, top = y, ax.get_ylim()[1]
            ax.fill_between([x - 0.4, x + 0.4], bottom, top, color="#D55E00", alpha=0.12, lw=0)
    ax.plot([0] * len(a), a, "o", color="#000000", ms=3.2)
    ax.plot([1] * len(b), b, "o", color=colour, ms=3.2)
    if not a and not b:
        ax.text(0.5, 0.5, verdict, transform=ax.transAxes, ha="center", va="center",
                fontsize=6.5, color=colour)
        ax.set_yticks([])
    return Panel(claim=str(claim["id"]), verdict=verdict, a=a, b=b,
                 band=(float(band[0]), float(band[1])) if band else None, bounds=bounds)


def figure(doc: Mapping[str, Any]) -> tuple[Figure, list[Panel]]:
    claims = list(doc["claims"])
    nrows = max(1, math.ceil(len(claims) / NCOLS))
    with plt.rc_context(STYLE):  # type: ignore[arg-type]
        fig, axes = plt.subplots(nrows, NCOLS, figsize=(TEXT_WIDTH_IN, 1.45 * nrows),
                                 layout="constrained", squeeze=False)
        panels = [plot_claim(ax, c) for ax, c in zip(axes.flat, claims, strict=False)]
        for ax in list(axes.flat)[len(claims):]:
            ax.set_visible(False)
    return fig, panels


# --- report ------------------------------------------------------------------------------------


def _short(sha: Any) -> str:
    return str(sha)[:12] if sha else "\u2014"


def _clock(seconds: Any) -> str:
    if not isinstance(seconds, int | float) or not math.isfinite(seconds):
        return "\u2014"
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else \
        f"{s // 60}:{s % 60:02d}"


def _value(claim: Mapping[str, Any], x: Any) -> str:
    if not isinstance(x, int | float) or isinstance(x, bool):
        return "\u2014" if x is None else str(x)
    fmt = str(claim.get("format") or ".2f")
    return format(round(x), fmt) if fmt.endswith("d") else format(x, fmt)


def _ratio(a: Any, b: Any) -> float | None:
    ok = all(isinstance(x, int | float) and math.isfinite(x) for x in (a, b))
    return b / a if ok and a else None


def markdown(doc: Mapping[str, Any], *, templates: Path = paths.TEMPLATES,
             figure_name: str = FIGURE) -> str:
    env = environment("md", jinja2.FileSystemLoader(templates))
    env.filters.update(short=_short, clock=_clock, num=num)
    ma = doc["a"]["software"].get("model_sha256") or {}
    mb = doc["b"]["software"].get("model_sha256") or {}
    models = [(m, ma.get(m), mb.get(m)) for m in sorted(set(ma) | set(mb))]
    return env.get_template("comparison.md.j2").render(
        doc=doc, figure=figure_name, value=_value, ratio=_ratio, models=models,
        host_fields=[f for f in hostinfo.FIELDS
                     if any((doc[s]["hardware"]["host"] or {}).get(f) is not None
                            for s in ("a", "b"))])


START = "<!-- reproduction-example: {} -->"
END = "<!-- reproduction-example: end -->"
EXAMPLE_PAGE = Path("docs") / "reproducing.md"  # the page with the example, from the root


def example_table(doc: Mapping[str, Any], *, templates: Path = paths.TEMPLATES) -> str:
    """The claims of a comparison as the example table of :data:`EXAMPLE_PAGE` (Markdown)."""
    env = environment("md", jinja2.FileSystemLoader(templates))
    env.filters.update(clock=_clock, num=num)
    return env.get_template("comparison-example.md.j2").render(doc=doc, value=_value)


def update_example(page: Path, *, root: Path = paths.ROOT) -> Path | None:
    """Regenerate the table between the page's example markers from the file the start
    marker names (``<!-- reproduction-example: <comparison.json> -->``); returns that file."""
    try:
        text = page.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        raise ComparisonError(f"{page}: file not found") from err
    except (OSError, UnicodeDecodeError) as err:
        raise ComparisonError(f"{page}: cannot be read as UTF-8 text ({err})") from err
    head, sep, rest = text.partition("<!-- reproduction-example: ")
    if not sep:
        return None
    source, _, after = rest.partition(" -->")
    _, end, tail = after.partition(END)
    if not end:
        raise ComparisonError(f"{page.name}: '{START.format(source)}' without '{END}'")
    table = example_table(load(root / source))
    files.write_text(page, f"{head}{START.format(source)}\n{table}{END}{tail}")
    return root / source


def write(doc_path: Path, out_dir: Path, *, templates: Path = paths.TEMPLATES,
          dpi: int = 200) -> tuple[Path, Path, Path]:
    """``comparison.md``, ``comparison.html`` and ``claims.png`` beside ``comparison.json``."""
    doc = load(doc_path)
    fig, _ = figure(doc)
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / FIGURE
    fig.savefig(png, dpi=dpi, metadata=PNG_METADATA)
    plt.close(fig)
    md = files.write_text(out_dir / MD, markdown(doc, templates=templates))
    import pypandoc

    html = subprocess.run(
        [pypandoc.get_pandoc_path(), MD, "-s", "--embed-resources", "--metadata",
         "title=Reproduction: side by side", "--to", "html"],
        cwd=out_dir, check=True, capture_output=True).stdout
    return md, files.write_text(out_dir / HTML, html.decode("utf-8")), png
