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


REASONS_NOTEBOOK = "reasons.ipynb"
BAD_REASON = "does not mention the expected relationship"


def write_reasons_notebook(folder, repo) -> None:
    """A notebook showing a synthetic report whose judge reasons live in score metadata."""
    cells = [
        f"import sys\nsys.path.insert(0, {str(repo)!r})\n"
        "from tests._display_helpers import make_report\nreport = make_report(30)",
        "explorer = report.explore()\nexplorer",
    ]
    write_notebook(folder, REASONS_NOTEBOOK, cells)


def test_reason_search_live_in_jupyterlab(lab, chromium_browser, screens):
    from tests.browser.conftest import REPO

    write_reasons_notebook(lab.root, REPO)
    with notebook_run(lab, chromium_browser, REASONS_NOTEBOOK) as page:
        root = page.locator(".jp-OutputArea-output .hnx-report").first
        root.wait_for(state="visible", timeout=60_000)
        steps.type_into(root, "search", BAD_REASON)
        assert steps.n_matching(root) > 0
        detail = steps.select_row(root, 0)
        assert BAD_REASON in detail and "Judge reasons" in detail
        root.screenshot(path=str(screens / "reasons-lab.png"))


LARGE_NOTEBOOK = "large.ipynb"


def write_large_notebook(folder, repo) -> None:
    """A notebook showing a columnar report counted as "large" (a tiny eager budget): its
    explorer starts from a first-page preview and fetches other cases' details on selection."""
    cells = [
        f"import sys\nsys.path.insert(0, {str(repo)!r})\n"
        "from tests._display_helpers import make_report\n"
        "from heta_notebook import ReportStore\n"
        "from heta_notebook.display import _widgets as widgets\n"
        "widgets.EAGER_RESULTS = 50  # count this small report as a large one\n"
        "store = ReportStore('large-store')\n"
        "made = make_report(30, report_id='large')\n"
        "store.save(made)\n"
        "report = store.load(made.knowledge_base_name, 'large')",
        "explorer = report.explore(max_cases=60)\nexplorer",
    ]
    write_notebook(folder, LARGE_NOTEBOOK, cells)


def test_large_report_fetches_details_live_in_jupyterlab(lab, chromium_browser, screens):
    from tests.browser.conftest import REPO

    write_large_notebook(lab.root, REPO)
    with notebook_run(lab, chromium_browser, LARGE_NOTEBOOK) as page:
        root = page.locator(".jp-OutputArea-output .hnx-report").first
        root.wait_for(state="visible", timeout=60_000)
        page.wait_for_function(  # the full payload replaced the preview (a new view)
            "() => { const el = document.querySelector('.jp-OutputArea-output .hnx-report');"
            " return el && !el.querySelector('[data-note=preview]')"
            " && /of 60 case results/.test(el.querySelector('.hnx-page').innerText); }",
            timeout=60_000,
        )
        root = page.locator(".jp-OutputArea-output .hnx-report").first
        note = root.locator('[data-note="details"]').first.inner_text()
        assert "load from the kernel when selected" in note
        steps.go_to_page(root, 3)
        root.locator(".hnx-list tbody tr").nth(2).click()
        page.wait_for_function(
            "(el) => /Retrieved results \\(\\d+/.test(el.querySelector('.hnx-pane').innerText)",
            arg=root.element_handle(),
            timeout=30_000,
        )
        detail = steps.detail_text(root)
        assert "Expected evidence" in detail and "not embedded" not in detail
        root.screenshot(path=str(screens / "large-lab-fetched.png"))


LARGE_COMPARISON = "large_comparison.ipynb"


def write_large_comparison_notebook(folder, repo) -> None:
    """A comparison of two columnar reports counted as "large": its explorer starts from
    previews of the first page and fetches other cases' details, A's and B's, on selection."""
    cells = [
        f"import sys\nsys.path.insert(0, {str(repo)!r})\n"
        "from tests._display_helpers import make_report\n"
        "from heta_notebook import ReportStore, compare\n"
        "from heta_notebook.display import _widgets as widgets\n"
        "widgets.EAGER_RESULTS = 50  # count these small reports as large ones\n"
        "store = ReportStore('large-store')\n"
        "for n, rid in enumerate(('base', 'shifted')):\n"
        "    store.save(make_report(30, report_id=rid, label=rid, seed=n, quality_shift=-0.2 * n))\n"
        "kb = make_report(1).knowledge_base_name\n"
        "comparison = compare([store.load(kb, rid) for rid in ('base', 'shifted')])",
        "explorer = comparison.explore(max_cases=60)\nexplorer",
    ]
    write_notebook(folder, LARGE_COMPARISON, cells)


def test_large_comparison_fetches_details_live_in_jupyterlab(lab, chromium_browser, screens):
    from tests.browser.conftest import REPO

    write_large_comparison_notebook(lab.root, REPO)
    with notebook_run(lab, chromium_browser, LARGE_COMPARISON) as page:
        page.wait_for_function(  # the full payloads replaced the previews (a new view)
            "() => { const el = document.querySelector('.jp-OutputArea-output .hnx-compare');"
            " return el && !el.querySelector('[data-note=preview]')"
            " && /^page 1 \\/ [2-9]/.test(el.querySelector('.hnx-page').innerText); }",
            timeout=60_000,
        )
        root = page.locator(".jp-OutputArea-output .hnx-compare").first
        notes = root.locator('[data-note="details"]').all_inner_texts()
        assert len(notes) == 2 and all("load from the kernel when selected" in n for n in notes)
        steps.go_to_page(root, 2)
        root.locator(".hnx-list tbody tr").nth(2).click()
        page.wait_for_function(
            "(el) => { const sides = el.querySelectorAll('.hnx-side');"
            " return sides.length === 2 && Array.from(sides).every("
            "s => /Retrieved results \\(\\d+/.test(s.innerText)); }",
            arg=root.element_handle(),
            timeout=30_000,
        )
        sides = root.locator(".hnx-side").all_inner_texts()
        assert all("expected evidence" in s and "not embedded" not in s for s in sides)
        root.screenshot(path=str(screens / "large-comparison-lab-fetched.png"))
