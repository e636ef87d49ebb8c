"""Run All in JupyterLab (headless Chromium) of a notebook whose evaluated functions use a
notebook-made ``httpx.AsyncClient`` through the sync ``evaluate()`` and ``run_benchmark()``:
no cell errors, no hang, and the client still works afterwards."""

from __future__ import annotations

import nbformat
import pytest

from tests._loop_notebook import DONE, AnswerServer, cells
from tests.browser._lab import NetworkGuard
from tests.browser.test_quickstart_lab import (
    CELL_ERRORS_JS,
    full_screenshot,
    open_notebook,
    run_all,
)

pytestmark = pytest.mark.browser

NAME = "loop_bound_client.ipynb"


def test_run_all_with_a_loop_bound_client_in_jupyterlab(lab, chromium_browser, screens):
    with AnswerServer() as answers:
        notebook = nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_code_cell(c) for c in cells(answers.url)]
        )
        notebook.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nbformat.write(notebook, lab.root / NAME)
        guard = NetworkGuard()
        context = chromium_browser.new_context(viewport={"width": 1400, "height": 900})
        context.route("**/*", guard)
        page = context.new_page()
        try:
            open_notebook(page, lab, NAME)
            run_all(page)
            full_screenshot(page, screens / "loop-bound-client-lab.png")
            assert page.evaluate(CELL_ERRORS_JS) == []
            last = page.locator(".jp-Notebook .jp-Cell").last.inner_text()
            assert DONE in last
            assert answers.requests == 1 + 6 + 6 + 8
            assert guard.blocked == [], "JupyterLab needed the internet"
        finally:
            context.close()
