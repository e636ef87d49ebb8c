"""No confident zero, in the browser: two Cranfield reports at top 100 x 3 modes (their details
exceed the explorers' eager budget), the comparison explorer filtered to "found by B, missed
by A" counts what Python counts, live in JupyterLab and in the ``run-notebook`` HTML export,
and its count line says the details are capped."""

from __future__ import annotations

import json
import re

import pytest

from heta_notebook.display._notebook import run_notebook
from tests.browser import _explorer as steps
from tests.browser._lab import NetworkGuard
from tests.browser.test_quickstart_lab import notebook_run, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "counts.ipynb"
PYTHON_COUNT = re.compile(r"python gained: (\d+)")


def write_counts_notebook(folder, repo) -> None:
    cells = [
        f"import sys\nsys.path.insert(0, {str(repo)!r})\n"
        "from heta_notebook import BeirBenchmark, BeirRetrievalMetric, Bm25, Recipe, compare\n"
        "from heta_notebook import run_benchmark\n"
        "options = dict(evaluators=[BeirRetrievalMetric('ndcg', 10)], progress=False,\n"
        "               config={'top_k': 100})\n"
        "runs = run_benchmark(benchmark=BeirBenchmark.cranfield(), recipes={\n"
        "    'a': Recipe(name='a', bm25=Bm25(k1=0.3, b=0.2)), 'b': Recipe(name='b')}, **options)\n"
        "comparison = compare(dict(runs.reports))\n"
        "pair = comparison.pairs()[0]\n"
        "changes = comparison.evidence_changes(*pair)\n"
        "gained = changes.loc[changes['change'] == 'gained', 'case_id'].nunique()\n"
        "print('python gained:', gained, 'results:', sum(len(r.response.results)\n"
        "      for r in runs.reports['b'].case_results))",
        "explorer = comparison.explore(filter='gained')\nexplorer",
    ]
    write_notebook(folder, NOTEBOOK, cells)


def _count_line(root) -> tuple[int, str]:
    text = steps.page_text(root)
    return steps.n_matching(root), text


def test_found_by_b_missed_by_a_in_the_exported_html(tmp_path, chromium_browser, screens):
    from tests.browser.conftest import REPO

    write_counts_notebook(tmp_path, REPO)
    run = run_notebook(tmp_path / NOTEBOOK, tmp_path / "out", timeout=900)
    executed = json.loads(run.notebook.read_text(encoding="utf-8"))
    printed = "".join(
        "".join(out.get("text", "")) for out in executed["cells"][0].get("outputs", [])
    )
    python = int(PYTHON_COUNT.search(printed).group(1))
    assert python > 0 and int(printed.split("results:")[1]) > 20_000  # details are capped
    guard = NetworkGuard()
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 1000})
    context.route("**/*", guard)
    page = context.new_page()
    try:
        page.goto(run.html.as_uri(), wait_until="load", timeout=120_000)
        root = page.locator(".hnx-compare").first
        root.wait_for(state="visible", timeout=60_000)
        page.wait_for_function(
            "(el) => /cases \\(evidence found by B/.test(el.querySelector('.hnx-page').innerText)",
            arg=root.element_handle(),
            timeout=60_000,
        )
        shown, text = _count_line(root)
        root.screenshot(path=str(screens / "counts-html.png"))
        assert shown == python, text
        assert "details loaded for" in text, text
    finally:
        context.close()
    assert guard.blocked == []


def test_found_by_b_missed_by_a_live_in_jupyterlab(lab, chromium_browser, screens):
    from tests.browser.conftest import REPO

    write_counts_notebook(lab.root, REPO)
    with notebook_run(lab, chromium_browser, NOTEBOOK) as page:
        page.wait_for_function(
            "() => { const el = document.querySelector('.jp-OutputArea-output .hnx-compare');"
            " return el && !el.querySelector('[data-note=preview]')"
            " && /cases \\(evidence found by B/.test(el.querySelector('.hnx-page').innerText); }",
            timeout=120_000,
        )
        printed = page.locator(".jp-OutputArea-output", has_text="python gained").first
        python = int(PYTHON_COUNT.search(printed.inner_text()).group(1))
        root = page.locator(".jp-OutputArea-output .hnx-compare").first
        shown, text = _count_line(root)
        root.screenshot(path=str(screens / "counts-lab.png"))
        assert shown == python > 0, text
        assert "details loaded for" in text, text
