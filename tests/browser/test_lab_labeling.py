"""The labeling widget live in JupyterLab: keys 0-3 label, s skips, u undoes; every label is
on disk at once; document text is highlighted through text nodes (markup stays text)."""

from __future__ import annotations

import pytest

from heta_notebook.labels import LabelSet
from tests.browser.test_quickstart_lab import notebook_run, write_notebook

pytestmark = pytest.mark.browser

NOTEBOOK = "labeling.ipynb"


def write_labeling_notebook(folder, repo) -> None:
    cells = [
        f"import sys\nsys.path.insert(0, {str(repo)!r})\n"
        "from heta_notebook import Label, Labeler, LabelSet\n"
        "labels = LabelSet.open('labels', {'1': {'184': 2}})\n"
        "labels.add(Label('1', '12', 3, 'judge', 'relevance', model='m', "
        "reason='About <b>wing</b> flutter.'))",
        "queries = {'1': 'similarity laws for wing flutter at supersonic speed'}\n"
        "docs = {'12': 'Flutter of a wing <img src=x onerror=\"document.title=1\"> at supersonic speed.',\n"
        "        '13': 'Heat transfer in a laminar boundary layer.',\n"
        "        '14': 'Supersonic similarity laws.'}\n"
        "labeler = Labeler(labels, [('1', '12'), ('1', '13'), ('1', '14')], queries=queries, "
        "documents=docs, who='browser')\n"
        "labeler",
    ]
    write_notebook(folder, NOTEBOOK, cells)


def test_labeling_by_keyboard_in_jupyterlab(lab, chromium_browser, screens) -> None:
    from tests.browser.conftest import REPO

    write_labeling_notebook(lab.root, REPO)
    with notebook_run(lab, chromium_browser, NOTEBOOK) as page:
        root = page.locator(".jp-OutputArea-output .hnl").first
        root.wait_for(state="visible", timeout=60_000)
        page.wait_for_function(
            "() => document.querySelector('.hnl .hnl-keys') !== null", timeout=30_000
        )
        assert root.locator("mark").count() >= 3  # wing, flutter, supersonic...
        assert root.locator(".hnl-doc img").count() == 0  # markup in a document stays text
        assert "<img" in root.locator(".hnl-doc").inner_text()
        assert "judge: 3" in root.inner_text()
        root.screenshot(path=str(screens / "labeling-lab.png"))
        root.locator(".hnl-toggle").click()  # blind labeling: the judge's grade is hidden
        assert "judge: 3" not in root.inner_text()
        root.locator(".hnl-toggle").click()
        assert "judge: 3" in root.inner_text()
        root.click()
        for key, expected in (("2", "1 labelled"), ("s", "pair 3 of 3"), ("u", "0 labelled")):
            root.press(key)
            page.wait_for_function(
                "t => document.querySelector('.hnl .hnl-progress').textContent.includes(t)",
                arg=expected,
                timeout=30_000,
            )
        root.press("1")  # pair 1 again after the undo
        page.wait_for_function(
            "() => document.querySelector('.hnl .hnl-progress').textContent.startsWith('1 labelled')",
            timeout=30_000,
        )
        root.screenshot(path=str(screens / "labeling-lab-after.png"))
    saved = LabelSet.open(lab.root / "labels", {"1": {"184": 2}})
    assert [(x.pair, x.grade, x.who) for x in saved.labels("human").values()] == [
        (("1", "12"), 1, "browser")
    ]
