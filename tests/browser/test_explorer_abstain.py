"""An abstention and a skipped score in the exported explorer: the detail pane shows the
"abstained: reason" badge instead of an empty answer, and "skipped: reason" next to the score."""

from __future__ import annotations

import pytest

import heta_notebook as hn
from heta_notebook.evaluators._answer import AnswerContains
from heta_notebook.evaluators._squad import SquadExactMatch
from tests.browser import _explorer as steps
from tests.browser.test_explorer_pages import _open
from tests.test_systems_abstain import _CASES, _SAMPLE, WHY, _abstains_on_unanswerable

pytestmark = pytest.mark.browser


def test_an_abstention_and_a_skip_reason_in_an_exported_report(chromium_browser, tmp_path, screens):
    report = hn.run_benchmark(
        benchmark=_SAMPLE,
        recipe=_abstains_on_unanswerable,
        case_ids=[c.case_id for c in _CASES[:12]],
        evaluators=[SquadExactMatch(), AnswerContains()],
        progress=False,
    ).report
    abstained = next(r for r in report.case_results if r.response.abstained)
    path = tmp_path / "report.html"
    report.to_html(path, figures=False)
    context, page, guard, problems = _open(chromium_browser, path)
    try:
        root = page.locator(".hnx-report").first
        root.wait_for(state="visible", timeout=30_000)
        steps.type_into(root, "search", abstained.case_id)
        detail = steps.select_row(root, 0)
        assert f"abstained: {WHY}" in detail
        assert "skipped: case has no expected answers" in detail
        assert "no answer (retrieval only)" not in detail
        root.screenshot(path=str(screens / "report-abstention.png"))
    finally:
        context.close()
    assert guard.blocked == [] and problems == []
