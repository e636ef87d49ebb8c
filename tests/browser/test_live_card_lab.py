"""The live card in JupyterLab (headless Chromium): while a run goes, the card's count of
finished cases rises, then it says the run finished and the report's card follows."""

from __future__ import annotations

import time

import pytest

from tests.browser.test_quickstart_lab import (
    CELL_ERRORS_JS,
    open_notebook,
    write_notebook,
)

pytestmark = pytest.mark.browser

LIVE_NOTEBOOK = "live.ipynb"
READ_JS = """() => { const c = document.querySelector('.jp-OutputArea-output .hn-live-card');
  return c ? [Number(c.dataset.done), Number(c.dataset.total), c.dataset.state] : null; }"""


def write_live_notebook(folder, repo) -> None:
    """A run slow enough to watch: 40 Cranfield cases, one at a time, 60 ms each."""
    cells = [
        f"import sys, time\nsys.path.insert(0, {str(repo)!r})\n"
        "from heta_notebook import BeirBenchmark, run_benchmark",
        "def slow(text):\n    time.sleep(0.06)\n    return ['1', '2', '3']\n\n"
        "run = run_benchmark(benchmark=BeirBenchmark.cranfield(), recipe=slow, limit=40,\n"
        "                    config={'max_concurrent_queries': 1,\n"
        "                            'preflight_queries': 0})\n"
        "run.report",
    ]
    write_notebook(folder, LIVE_NOTEBOOK, cells)


def test_the_live_card_count_rises_during_a_run(lab, chromium_browser, screens):
    from tests.browser.conftest import REPO

    write_live_notebook(lab.root, REPO)
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        open_notebook(page, lab, LIVE_NOTEBOOK)
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        seen: list[tuple[int, int, str]] = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            value = page.evaluate(READ_JS)
            if value is not None and (not seen or tuple(value) != seen[-1]):
                seen.append(tuple(value))
                if len(seen) == 2:
                    page.screenshot(path=str(screens / "live-card-running.png"))
            if seen and seen[-1][2] == "finished":
                break
            time.sleep(0.1)
        assert seen and seen[-1][2] == "finished", seen
        counts = [done for done, _, _ in seen]
        running = [done for done, total, state in seen if state == "running" and done < total]
        assert len(running) >= 2 and running == sorted(running) and running[0] < running[-1], seen
        assert counts[-1] == seen[-1][1] == 40
        page.locator(".jp-OutputArea-output .hn-card").first.wait_for(timeout=60_000)
        errors = page.evaluate(CELL_ERRORS_JS)
        until = time.monotonic() + 60  # the card shows before the cell's execution count does
        while errors and time.monotonic() < until:
            time.sleep(0.2)
            errors = page.evaluate(CELL_ERRORS_JS)
        assert errors == []
        page.screenshot(path=str(screens / "live-card-finished.png"))
    finally:
        context.close()
