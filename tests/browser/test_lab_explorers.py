"""Explorers live in JupyterLab (headless Chromium): reason search in a report with judge
reasons, and details fetched from the kernel for a large report and a large comparison.

Apart from the quickstart's own test (test_quickstart_lab.py) so that the two files run on
different test workers."""

from __future__ import annotations

import pytest

from tests.browser import _explorer as steps
from tests.browser.test_quickstart_lab import notebook_run, write_notebook

pytestmark = pytest.mark.browser


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
