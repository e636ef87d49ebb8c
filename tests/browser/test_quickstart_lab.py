"""The quickstart notebook, run by a person in JupyterLab (headless Chromium via Playwright).

Run all cells, then check what a reader sees: no cell error, the report card, drawn plotly
charts, the explorers; and the same steps as in the exported HTML work live: page 3, select a
case (evidence and results show), filter by mode and score range, a case side by side in the
comparison explorer. A small notebook of a report with judge reasons checks reason search live.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.browser import _explorer as steps
from tests.browser._lab import PROBLEM_TEXTS, LabServer, NetworkGuard

pytestmark = pytest.mark.browser

QUICKSTART = "01_quickstart.ipynb"
RUN_TIMEOUT_MS = 420_000  # the notebook itself needs < 2 min on 2 cores; generous for CI

KERNEL_IDLE_JS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!w || !w.sessionContext || !w.context || !w.context.isReady) return false;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle';
}"""

RUN_FINISHED_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const cells = w.content.model.cells;
  let code = 0, started = 0, error = false;
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    code += 1;
    if (c.executionCount) started += 1;
    for (let j = 0; j < c.outputs.length; j++) if (c.outputs.get(j).type === 'error') error = true;
  }
  const queued = Array.from(document.querySelectorAll('.jp-Notebook .jp-InputPrompt'))
    .some(p => (p.textContent || '').includes('*'));
  const kernel = w.sessionContext.session.kernel.status;
  return (error || started === code) && !queued && kernel === 'idle';
}"""

CELL_ERRORS_JS = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  const found = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    if (!c.executionCount) found.push(`cell ${i}: not executed`);
    for (let j = 0; j < c.outputs.length; j++) {
      const o = c.outputs.get(j).toJSON();
      if (o.output_type === 'error') found.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
    }
  }
  return found;
}"""

# outputs that carry a figure in the model, and figures actually drawn on the page
PLOTLY_COUNTS_JS = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  let expected = 0;
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    for (let j = 0; j < c.outputs.length; j++) {
      const data = c.outputs.get(j).toJSON().data || {};
      if ('application/vnd.plotly.v1+json' in data) expected += 1;
    }
  }
  // JupyterLab's plotly renderer draws into the output node itself
  const plots = '.jp-OutputArea-output.js-plotly-plot, .jp-OutputArea-output .js-plotly-plot';
  const drawn = Array.from(document.querySelectorAll(plots))
    .filter(p => p.querySelector('.main-svg') && p.getBoundingClientRect().height > 50).length;
  return [expected, drawn];
}"""

WIDGETS_SETTLED_JS = """(problems) => {
  const text = document.querySelector('.jp-Notebook').innerText || '';
  const views = document.querySelectorAll('.jp-OutputArea-output .jupyter-widgets, .jp-OutputArea-output .widget-box');
  return views.length > 0 && !problems.some(p => text.includes(p));
}"""


def open_notebook(page, server: LabServer, name: str) -> None:
    """Open ``name`` in Lab and wait for an idle kernel. The workspace is reset first: the
    server is shared by the session's tests, and Lab would reopen the notebooks of earlier
    ones beside this one."""
    url = f"{server.url}/lab/tree/{name}?reset"
    page.goto(url, wait_until="domcontentloaded", timeout=120_000)
    page.wait_for_selector(".jp-NotebookPanel", timeout=120_000)
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000, polling=250)
    page.evaluate("() => { try { window.jupyterapp.shell.collapseLeft(); } catch (e) {} }")


def run_all(page) -> None:
    """Run every cell and wait until the run finished (or stopped at an error)."""
    page.evaluate(
        "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }"
    )
    page.wait_for_function(RUN_FINISHED_JS, timeout=RUN_TIMEOUT_MS, polling=500)


def write_notebook(folder, name: str, cells: list[str]) -> None:
    """Save ``cells`` as notebook ``name`` in ``folder`` (python3 kernel)."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, folder / name)


@contextmanager
def notebook_run(lab: LabServer, chromium_browser, name: str) -> Iterator[Any]:
    """A page with notebook ``name`` run in JupyterLab without cell errors; on exit, checks
    that nothing was fetched from the internet."""
    guard = NetworkGuard()
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    context.route("**/*", guard)
    page = context.new_page()
    try:
        open_notebook(page, lab, name)
        run_all(page)
        assert page.evaluate(CELL_ERRORS_JS) == []
        yield page
        assert guard.blocked == [], "JupyterLab needed the internet"
    finally:
        context.close()


def full_screenshot(page, path) -> None:
    """Grow the viewport to the notebook's height (Lab scrolls inside a panel), then shoot."""
    height = page.evaluate(
        "() => { const o = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer')"
        " || document.querySelector('.jp-NotebookPanel .jp-Notebook');"
        " return o ? o.scrollHeight : 900; }"
    )
    page.set_viewport_size({"width": 1400, "height": min(16000, max(900, height + 200))})
    page.evaluate(
        "() => document.querySelectorAll('.jp-NotebookPanel .jp-WindowedPanel-outer,"
        " .jp-NotebookPanel .jp-Notebook').forEach(e => { e.scrollTop = 0; })"
    )
    page.screenshot(path=str(path), full_page=True)


def test_quickstart_runs_and_renders_in_jupyterlab(lab, chromium_browser, screens):
    guard = NetworkGuard()
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 900})
    context.route("**/*", guard)
    page = context.new_page()
    try:
        open_notebook(page, lab, QUICKSTART)
        run_all(page)
        full_screenshot(page, screens / "quickstart-lab.png")

        assert page.evaluate(CELL_ERRORS_JS) == []
        page.wait_for_function(WIDGETS_SETTLED_JS, arg=list(PROBLEM_TEXTS), timeout=60_000)
        expected, drawn = page.evaluate(PLOTLY_COUNTS_JS)
        assert expected >= 3, "the quickstart shows at least three charts"
        page.wait_for_function(
            f"() => ({PLOTLY_COUNTS_JS})()[1] >= {expected}", timeout=60_000, polling=500
        )
        assert_report_card_visible(page)
        select_case_and_check_evidence(page, screens)
        full_screenshot(page, screens / "quickstart-lab-after-click.png")
        assert guard.blocked == [], "JupyterLab needed the internet"
    finally:
        context.close()


def assert_report_card_visible(page) -> None:
    """The report card (display.card) is on screen with its metrics table."""
    card = page.locator(".jp-OutputArea-output .hn-card").first
    card.wait_for(state="visible", timeout=30_000)
    assert "ndcg" in card.inner_text().lower()


def select_case_and_check_evidence(page, screens) -> None:
    """The explorers' steps, live: the first report explorer, then the comparison explorer."""
    explorer = page.locator(".jp-OutputArea-output .hnx-report").first
    explorer.wait_for(state="visible", timeout=60_000)
    assert not page.locator(".jp-OutputArea-output .hn-explorer-fallback").first.is_visible()
    explorer.screenshot(path=str(screens / "explorer-before.png"))
    steps.report_explorer_steps(explorer, screens, "quickstart-lab-explorer")
    comparison = page.locator(".jp-OutputArea-output .hnx-compare").first
    comparison.wait_for(state="visible", timeout=60_000)
    steps.comparison_steps(comparison, screens, "quickstart-lab-comparison")
