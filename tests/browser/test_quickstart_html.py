"""The quickstart as a shared file: executed headless, exported, opened OFFLINE in Chromium.

Every request that is not a local file (or data:/blob:) is aborted and recorded; the test
asserts none was needed, that the charts and the report card show, and that the explorers,
rendered from saved widget state, work with no kernel: page 3, select a case (its evidence
and results show), filter by mode and by score range, and the comparison explorer shows a
case side by side. The files stay within the data budget recorded in the README.
"""

from __future__ import annotations

import json

import pytest

from heta_notebook.display._notebook import run_notebook
from tests.browser import _explorer as steps
from tests.browser._lab import PROBLEM_TEXTS, NetworkGuard

pytestmark = pytest.mark.browser

MAX_NOTEBOOK_BYTES = 5_900_000  # the budget of issue #13: no bigger than before the explorers
MAX_HTML_BYTES = 6_000_000  # issue #25: the widget manager travels compressed

DRAWN_CHARTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
  .filter(p => p.querySelector('.main-svg') && p.getBoundingClientRect().height > 50).length"""


def html_figure_count(executed: dict) -> int:
    """How many outputs carry a plotly figure as text/html (what the export draws)."""
    return sum(
        1
        for cell in executed["cells"]
        for out in cell.get("outputs", [])
        if "Plotly.newPlot" in "".join(out.get("data", {}).get("text/html", ""))
    )


def test_exported_quickstart_renders_offline(notebooks_copy, tmp_path, chromium_browser, screens):
    run = run_notebook(notebooks_copy / "01_quickstart.ipynb", tmp_path / "out", timeout=600)
    executed = json.loads(run.notebook.read_text(encoding="utf-8"))
    expected_charts = html_figure_count(executed)
    assert expected_charts >= 3
    assert run.notebook.stat().st_size <= MAX_NOTEBOOK_BYTES
    assert run.html.stat().st_size <= MAX_HTML_BYTES

    guard = NetworkGuard()
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 900})
    context.route("**/*", guard)
    page = context.new_page()
    page_errors: list[str] = []
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))
    try:
        page.goto(run.html.as_uri(), wait_until="load", timeout=120_000)
        page.wait_for_function(f"() => ({DRAWN_CHARTS_JS})() >= {expected_charts}", timeout=90_000)
        page.wait_for_function(
            "(problems) => { const t = document.body.innerText;"
            " return !problems.some(p => t.includes(p)); }",
            arg=list(PROBLEM_TEXTS),
            timeout=60_000,
        )
        page.locator(".hn-card").first.wait_for(state="visible", timeout=30_000)
        explorer = page.locator(".hnx-report").first
        explorer.wait_for(state="visible", timeout=30_000)  # rendered from saved widget state
        assert not page.locator(".hn-explorer-fallback").first.is_visible()
        page.screenshot(path=str(screens / "quickstart-html.png"), full_page=True)
        steps.report_explorer_steps(explorer, screens, "quickstart-html-explorer")
        comparison = page.locator(".hnx-compare").first
        comparison.wait_for(state="visible", timeout=30_000)
        steps.comparison_steps(comparison, screens, "quickstart-html-comparison")
    finally:
        context.close()

    assert guard.blocked == [], f"the exported HTML needed the internet: {guard.blocked[:5]}"
    assert page_errors == []
    stock_export_shows_static_views(
        run.notebook, tmp_path / "stock.html", chromium_browser, screens
    )


def stock_export_shows_static_views(notebook, html, chromium_browser, screens) -> None:
    """A stock ``jupyter nbconvert --to html`` of the same executed notebook, opened offline
    (its CDN scripts blocked): the card, the report explorers' and the comparison explorer's
    static views are readable (a shared notebook is never blank)."""
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(notebook)]
        + ["--output", html.stem, "--output-dir", str(html.parent), "--log-level=ERROR"],
        check=True,
        timeout=300,
    )
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 900})
    context.route("**/*", NetworkGuard())  # nbconvert's CDN scripts: aborted, as offline
    page = context.new_page()
    try:
        page.goto(html.as_uri(), wait_until="load", timeout=120_000)
        card = page.locator(".hn-card").first
        card.wait_for(state="visible", timeout=30_000)
        assert "beir_ndcg@10" in card.inner_text()
        static = page.locator(".hn-explorer-fallback").first
        static.wait_for(state="visible", timeout=30_000)
        text = static.inner_text()
        assert (
            "Case explorer" in text and "Expected evidence" in text and "Retrieved results" in text
        )
        compared = page.locator(".hn-compare-explorer-fallback").first
        assert compared.is_visible() and compared.inner_text().strip()
        card.screenshot(path=str(screens / "quickstart-stock-card.png"))
        static.screenshot(path=str(screens / "quickstart-stock-explorer.png"))
    finally:
        context.close()
