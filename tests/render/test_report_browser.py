"""The reproduction report and the paper in a real browser: Debian's Chromium, headless, driven
by Playwright.

At 1200 px every column of the claims table shows (no horizontal scroll); at phone width each
claim is a card that fits the screen; every claim links to its run folders and files, which
exist, and to the places in paper.html where its number is printed, which hold that number.
paper.html at phone width: captions stay whole outside their tables' scrolling boxes, and each
figure links to its full-size PNG.

Needs `chromium` on PATH and the `playwright` package (in the dev lock); skipped without them,
except where SPECDEC_REQUIRE_BROWSER=1 (CI), where their absence fails. Screenshots go to
$SPECDEC_SCREENSHOTS when set (else the test's temporary folder).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from artifact import paths
from artifact.render import report

from .build import build_all

# the flags of this environment's notes for a headless Chromium without a desktop session
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DESKTOP = {"width": 1200, "height": 900}
PHONE = {"width": 390, "height": 844}
COLUMNS = ["Claim", "Expected", "Recomputed", "Difference", "Tolerance", "Status", "Runs",
           "In the paper"]


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        exe = None
    if exe is None:
        if os.environ.get("SPECDEC_REQUIRE_BROWSER") == "1":
            pytest.fail("SPECDEC_REQUIRE_BROWSER=1 but chromium or playwright is missing")
        pytest.skip("no chromium/playwright here (CI installs Debian's chromium)")
    return exe


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from .fixture import write_summary

    root = tmp_path_factory.mktemp("report")
    build = build_all(write_summary(root / "summary.json"), root / "build")
    report.verify(ledger=paths.CLAIMS, summary=root / "summary.json",
                  variables=build / "vars.json", out_dir=build,
                  figures=sorted((build / "figures").glob("*.png")))
    return build


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    exe = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=FLAGS)
        yield b
        b.close()


def _shots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("SPECDEC_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _open(browser: Any, page_path: Path, viewport: dict[str, int]) -> Any:
    page = browser.new_page(viewport=viewport)
    page.goto(page_path.as_uri())
    return page


def _box(page: Any, selector: str) -> list[dict[str, float]]:
    return list(page.eval_on_selector_all(selector, """els => els.map(e => {
        const r = e.getBoundingClientRect();
        return {left: r.left, right: r.right, width: r.width, height: r.height};
    })"""))


def test_every_column_shows_at_1200px(browser: Any, built: Path, tmp_path: Path) -> None:
    page = _open(browser, built / "report.html", DESKTOP)
    assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"]
    heads = page.eval_on_selector_all("table.claims th", "els => els.map(e => e.innerText)")
    assert [h.strip() for h in heads] == COLUMNS
    for b in _box(page, "table.claims th") + _box(page, "table.claims td"):
        assert b["width"] > 0 and b["height"] > 0
        assert b["left"] >= 0 and b["right"] <= DESKTOP["width"], b
    table = page.eval_on_selector("table.claims", "t => [t.scrollWidth, t.clientWidth]")
    assert table[0] <= table[1]
    n_rows = page.eval_on_selector_all("table.claims tbody tr", "els => els.length")
    assert n_rows == len(report.claims.load(paths.CLAIMS))
    shot = _shots(tmp_path) / "report-1200.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    page.close()


def test_usable_at_phone_width(browser: Any, built: Path, tmp_path: Path) -> None:
    page = _open(browser, built / "report.html", PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for b in _box(page, "table.claims td"):
        assert b["left"] >= 0 and b["right"] <= PHONE["width"], b
    # each cell says what it is, since the header row is hidden on a phone
    labels = page.eval_on_selector_all("table.claims tbody tr:first-child td", """els =>
        els.map(e => getComputedStyle(e, '::before').content.replaceAll('"', ''))""")
    assert labels == COLUMNS
    size = page.eval_on_selector("table.claims td", "e => parseFloat(getComputedStyle(e).fontSize)")
    assert size >= 14
    shot = _shots(tmp_path) / "report-390.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    page.close()


def _local(url: str) -> tuple[Path, str]:
    u = urlparse(url)
    assert u.scheme == "file", url
    return Path(unquote(u.path)), u.fragment


def test_each_claim_links_to_its_runs_and_files(browser: Any, built: Path) -> None:
    page = _open(browser, built / "report.html", DESKTOP)
    rows = page.eval_on_selector_all("table.claims tbody tr", """els => els.map(r => ({
        id: r.id, runs: [...r.querySelectorAll('a.run')].map(a => a.href)}))""")
    for row in rows:
        assert row["runs"], f"{row['id']}: no run linked"
        for href in row["runs"]:
            folder, _ = _local(href)
            assert folder.is_dir() and folder.parent in (
                paths.RUNS, paths.WORKLOAD_RUNS, paths.REALISM_RUNS, paths.CORE_RUNS,
                paths.MEMORY_RUNS), href
    files = page.eval_on_selector_all("section.source a.file", "els => els.map(a => a.href)")
    assert files
    for href in files:
        assert _local(href)[0].is_file(), href
    names = {_local(h)[0].name for h in files}
    assert {"config.json", "results.jsonl", "metrics.json"} <= names
    page.close()


def test_each_claim_links_to_its_number_in_the_paper(browser: Any, built: Path) -> None:
    page = _open(browser, built / "report.html", DESKTOP)
    rows = page.eval_on_selector_all("table.claims tbody tr", """els => els.map(r => ({
        id: r.id.replace(/^claim-/, ''),
        reproduced: r.querySelector('td[data-label=Recomputed]').innerText.trim(),
        spots: [...r.querySelectorAll('a.spot')].map(a => a.href)}))""")
    printed = [r for r in rows if r["spots"]]
    assert printed, "no claim links to the paper"
    paper = browser.new_page(viewport=DESKTOP)
    for row in printed:
        for href in row["spots"]:
            path, anchor = _local(href)
            assert path == built / "paper.html" and anchor.startswith(f"claim-{row['id']}-")
            paper.goto(href)
            text = paper.eval_on_selector(f"#{anchor}", "e => e.innerText")
            assert text == row["reproduced"], (row["id"], anchor)
    # following a link scrolls the number into view and marks it
    link = page.locator("table.claims a.spot").first
    link.click()
    page.wait_for_url("**/paper.html#claim-*")
    target = page.evaluate("""() => {
        const e = document.querySelector(':target'); const r = e.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, bg: getComputedStyle(e).backgroundColor};}""")
    # in view, to a pixel: a target scrolled to the top may sit a fraction of a pixel above it
    assert target["top"] >= -1 and target["bottom"] <= DESKTOP["height"] + 1
    assert target["bg"] not in ("rgba(0, 0, 0, 0)", "transparent")
    paper.close()
    page.close()


def test_paper_at_phone_width_keeps_captions_whole_and_links_figures(
        browser: Any, built: Path, tmp_path: Path) -> None:
    """paper.html at 390 px: the page itself does not scroll sideways; a wide table scrolls in
    its own box while its caption stays whole above it; each figure fits the screen whole (none
    cropped) and links to its full-size PNG, which exists, for zooming."""
    from artifact.render import catalogue

    page = _open(browser, built / "paper.html", PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    tables = page.eval_on_selector_all("div.table", """els => els.map(d => {
        const c = d.querySelector(':scope > .caption');
        const s = d.querySelector(':scope > .table-scroll');
        const r = c.getBoundingClientRect();
        return {id: d.id, caption: [r.left, r.right, c.scrollWidth, c.clientWidth],
                scroll: getComputedStyle(s).overflowX, inside: !!s.querySelector('table'),
                captionInTable: !!d.querySelector('table caption')};
    })""")
    assert [t["id"] for t in tables] == [f"tbl:{n}" for n in catalogue.TABLE_NAMES]
    for t in tables:
        left, right, scroll_w, client_w = t["caption"]
        assert left >= 0 and right <= PHONE["width"] and scroll_w <= client_w, t
        assert t["scroll"] == "auto" and t["inside"] and not t["captionInTable"], t
    figures = page.eval_on_selector_all("div.figure", """els => els.map(d => ({id: d.id,
        href: d.querySelector('a').href, img: d.querySelector('img').getBoundingClientRect().width,
        caption: d.querySelector(':scope > .caption').getBoundingClientRect().right}))""")
    assert [f["id"] for f in figures] == [f"fig:{n}" for n in catalogue.FIGURE_NAMES]
    for f in figures:
        target, _ = _local(f["href"])
        assert target == built / "figures" / f"{f['id'][4:]}.png" and target.is_file(), f
        assert 300 <= f["img"] <= PHONE["width"] and f["caption"] <= PHONE["width"], f
    shot = _shots(tmp_path) / "paper-390.png"
    page.screenshot(path=str(shot), full_page=False)
    page.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1200px", "390px"])
def test_a_number_links_to_where_it_comes_from_and_back(
        browser: Any, built: Path, tmp_path: Path, viewport: dict[str, int]) -> None:
    """The provenance layer in a browser: a number in the text and one in a table each open
    their row of numbers.html, marked and in view; from the row, a run folder (which exists),
    the claim's row in report.html and the number in paper.html (marked) open; numbers.html
    does not scroll sideways at phone width."""
    page = _open(browser, built / "paper.html", viewport)
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    for selector in ("p a.num", "div.table a.num"):
        link = page.locator(selector).first
        number = link.inner_text()
        assert link.get_attribute("title")  # the hover says where it is from
        link.click()
        page.wait_for_url("**/numbers.html#*")
        row = page.evaluate("""() => {
            const e = document.querySelector(':target'); const r = e.getBoundingClientRect();
            return {id: e.id, top: r.top, bottom: r.bottom, bg: getComputedStyle(e).backgroundColor,
                    value: e.querySelector('a.value').innerText, width: r.width};}""")
        assert row["value"] == number and row["top"] >= -1 and row["top"] < viewport["height"]
        assert row["bg"] not in ("rgba(0, 0, 0, 0)", "transparent")
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        page.go_back()
    page.goto((built / "numbers.html").as_uri())
    runs = page.eval_on_selector_all("td[data-label=Runs] a", "els => els.map(a => a.href)")
    assert runs and all(_local(h)[0].is_dir() for h in runs[:50])
    claim = page.locator("td[data-label=Claim] a").first
    cid = claim.inner_text()
    claim.click()
    page.wait_for_url("**/report.html#src-*")
    assert page.evaluate("document.querySelector(':target').id") == f"src-{cid}"
    page.goto((built / "numbers.html").as_uri())
    back = page.locator("a.value").nth(3)
    text = back.inner_text()
    back.click()
    page.wait_for_url("**/paper.html#*")
    target = page.evaluate("""() => {const e = document.querySelector(':target');
        return {text: e.innerText, bg: getComputedStyle(e).backgroundColor};}""")
    assert target["text"] == text and target["bg"] not in ("rgba(0, 0, 0, 0)", "transparent")
    shot = _shots(tmp_path) / f"numbers-{viewport['width']}.png"
    page.goto((built / "numbers.html").as_uri())
    page.screenshot(path=str(shot), full_page=False)
    page.close()
