"""The review widget in a real JupyterLab: a person accepts a case, rejects one with a reason
and edits a query; the decisions reach the benchmark's folder and survive a kernel restart."""

from __future__ import annotations

import json

import pytest

from tests.browser.test_quickstart_lab import RUN_FINISHED_JS, notebook_run, write_notebook

pytestmark = pytest.mark.browser

NOTEBOOK = "review.ipynb"
TITLES = [
    "Flutter of heated panels",
    "Shock standoff on blunt bodies",
    "Heat transfer near leading edges",
    "Kerosene and oxygen engines",
    "Lift of wings in slipstreams",
]


def _counts(page, text: str) -> None:
    page.wait_for_function(
        "(t) => { const el = document.querySelector('.hn-review-counts');"
        " return el && el.innerText.includes(t); }",
        arg=text,
        timeout=30_000,
    )


def test_accept_reject_edit_and_restart(lab, chromium_browser, screens):
    from tests.browser.conftest import REPO

    corpus = [
        {"_id": f"d{i}", "title": t, "text": f"{t}. A study of {t.lower()} in a wind tunnel."}
        for i, t in enumerate(TITLES)
    ]
    cells = [
        f"import sys\nsys.path.insert(0, {str(REPO)!r})\n"
        "import os\nfrom heta_notebook import GeneratedBenchmark, generate_benchmark\n"
        f"generate_benchmark({corpus!r}, 5, method='title', folder='review-bench')\n"
        "print('kernel', os.getpid())",
        "review = GeneratedBenchmark.from_folder('review-bench').review()\nreview",
    ]
    write_notebook(lab.root, NOTEBOOK, cells)
    with notebook_run(lab, chromium_browser, NOTEBOOK) as page:
        root = page.locator(".jp-OutputArea-output .hn-review").first
        root.wait_for(state="visible", timeout=60_000)
        _counts(page, "accepted 0 · rejected 0 · edited 0 · pending 5")
        first = root.locator(".hn-review-page").inner_text()
        root.locator("button.hn-review-accept").click()
        _counts(page, "accepted 1 · rejected 0")
        assert root.locator(".hn-review-page").inner_text() != first  # moved to the next case
        root.locator("input.hn-review-reason").fill("too vague to judge")
        root.locator("button.hn-review-reject").click()
        _counts(page, "accepted 1 · rejected 1")
        root.locator("input.hn-review-query").fill("heat transfer at the leading edge")
        root.locator("button.hn-review-accept").click()
        _counts(page, "accepted 2 · rejected 1 · edited 1 · pending 2")
        root.locator("button.hn-review-prev").click()
        page.wait_for_function(
            "() => document.querySelector('.hn-review-status').innerText === 'accepted'",
            timeout=30_000,
        )
        root.screenshot(path=str(screens / "review-lab.png"))

        saved = json.loads((lab.root / "review-bench" / "review.json").read_text())["decisions"]
        assert sorted(d["decision"] for d in saved.values()) == ["accept", "accept", "reject"]
        assert {d.get("reason") for d in saved.values()} >= {"too vague to judge"}

        pid = page.locator(".jp-OutputArea-output").first.inner_text()
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")
        page.wait_for_timeout(500)  # the restart has begun; wait for idle through the run
        page.evaluate(
            "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }"
        )
        page.wait_for_function(RUN_FINISHED_JS, timeout=120_000, polling=500)
        page.wait_for_function(  # a new kernel ran the cells again
            "(before) => { const o = document.querySelector('.jp-OutputArea-output');"
            " return o && o.innerText.startsWith('kernel') && o.innerText !== before; }",
            arg=pid,
            timeout=60_000,
        )
        _counts(page, "accepted 2 · rejected 1 · edited 1 · pending 2")  # read back from disk
        page.locator(".jp-OutputArea-output .hn-review").last.screenshot(
            path=str(screens / "review-lab-restarted.png")
        )

    from heta_notebook import GeneratedBenchmark

    reviewed = GeneratedBenchmark.from_folder(lab.root / "review-bench")
    queries = [c.query for c in reviewed.load().cases]
    assert len(queries) == 4 and "heat transfer at the leading edge" in queries
    assert reviewed.generation.review == {"accepted": 2, "rejected": 1, "edited": 1, "pending": 2}
