"""The explorers in plain pages, as one API: the comparison explorer filtered to a slice, long
SQuAD-style case ids that never push the list under the detail pane, the verdict filter only
for scores with a threshold, and titles that tell two reports with one label apart."""

from __future__ import annotations

import pytest

from heta_notebook.analysis._compare import compare
from heta_notebook.display._export import comparison_cases, html_page
from tests._display_helpers import make_report
from tests.browser import _explorer as steps
from tests.browser.test_explorer_pages import _open

pytestmark = pytest.mark.browser


def _squad_ids(report):
    """SQuAD ids are 24 hex characters; these are longer still, to stress the layout."""
    results = tuple(
        r.model_copy(update={"case_id": f"56be4db0acb8001400a502{r.case_id[1:]}-squad-v2-question"})
        for r in report.case_results
    )
    return report.model_copy(update={"case_results": results})


def _boxes(root) -> tuple[dict, dict]:
    lists = root.locator(".hnx-listcol").first.bounding_box()
    pane = root.locator(".hnx-pane").first.bounding_box()
    return lists, pane


def test_comparison_explorer_filtered_to_a_slice(chromium_browser, tmp_path, screens):
    a = make_report(30, label="base", report_id="base")
    b = make_report(30, label="better", report_id="better", seed=1, quality_shift=0.2)
    comparison = compare({"base": a, "better": b}, baseline="base")
    path = tmp_path / "compare.html"
    path.write_text(html_page("comparison", [comparison_cases(comparison)], plotly=False))
    context, page, guard, problems = _open(chromium_browser, path)
    try:
        root = page.locator(".hnx-compare").first
        root.wait_for(state="visible", timeout=30_000)
        steps.choose(root, "label", "difficulty=hard")
        expected = comparison.explore(label="difficulty=hard")
        assert steps.n_matching(root) == len(expected.rows) > 0
        assert steps.list_ids(root) == list(expected.page_rows()["case_id"])
        assert "difficulty=hard" in steps.page_text(root)
        steps.select_row(root, 0)
        root.screenshot(path=str(screens / "comparison-slice.png"))
    finally:
        context.close()
    assert guard.blocked == [] and problems == []


def test_long_case_ids_are_cut_with_the_full_id_on_hover_and_never_overlap(
    chromium_browser, tmp_path, screens
):
    report = _squad_ids(make_report(12, label="squad"))
    path = tmp_path / "report.html"
    report.to_html(path, figures=False)
    better = _squad_ids(make_report(12, label="squad-b", report_id="b", quality_shift=0.2))
    cmp_path = tmp_path / "compare.html"
    page_html = html_page("c", [comparison_cases(compare([report, better]))], plotly=False)
    cmp_path.write_text(page_html)
    for target, selector in ((path, ".hnx-report"), (cmp_path, ".hnx-compare")):
        context, page, guard, problems = _open(chromium_browser, target)
        try:
            root = page.locator(selector).first
            root.wait_for(state="visible", timeout=30_000)
            steps.select_row(root, 1)
            lists, pane = _boxes(root)
            assert lists["x"] + lists["width"] <= pane["x"] + 0.5  # the pane never covers it
            cell = root.locator(".hnx-list tbody tr td.hnx-id").first
            full = cell.get_attribute("title")
            assert full.endswith("-squad-v2-question") and full in report_ids(report)
            cut = cell.evaluate("td => td.scrollWidth > td.clientWidth")
            assert cut  # shown with an ellipsis; the whole id is in the title
            root.screenshot(path=str(screens / f"squad-ids-{target.stem}.png"))
        finally:
            context.close()
        assert guard.blocked == [] and problems == []


def report_ids(report) -> set[str]:
    return {r.case_id for r in report.case_results}


def test_verdict_filter_only_for_scores_with_a_threshold_and_titles_name_the_report(
    chromium_browser, tmp_path
):
    first = make_report(8, label="same", report_id="run-one")
    path = tmp_path / "one.html"
    first.to_html(path, figures=False)
    context, page, _guard, problems = _open(chromium_browser, path)
    try:
        root = page.locator(".hnx-report").first
        root.wait_for(state="visible", timeout=30_000)
        title = root.locator(".hnx-title").first.inner_text()
        assert "same" in title and "run-one" in title
        verdict = root.locator('[data-control="verdict-label"]').first
        assert not verdict.is_visible()  # no score chosen
        steps.choose(root, "score", "ndcg@10", changes=False)
        assert not verdict.is_visible()  # no threshold, no verdicts
        steps.choose(root, "score", "judge_correctness", changes=False)
        verdict.wait_for(state="visible", timeout=10_000)
        steps.choose(root, "verdict", "failed")
        expected = first.explore(score="judge_correctness", verdict="failed").n_matching
        assert steps.n_matching(root) == expected > 0
    finally:
        context.close()
    assert problems == []


def test_the_gate_page_opens_a_regressed_case(chromium_browser, tmp_path, screens):
    from heta_notebook.testing import check_regression

    base = make_report(30, label="base", report_id="base")
    worse = make_report(30, label="worse", report_id="worse", seed=1, quality_shift=-0.3)
    result = check_regression(worse, base, scores=["ndcg@10"], output_dir=tmp_path)
    assert not result.passed
    context, page, guard, problems = _open(chromium_browser, result.page)
    try:
        root = page.locator(".hnx-compare").first
        root.wait_for(state="visible", timeout=30_000)
        assert "B worse" in steps.page_text(root)  # opened on the regressed cases
        detail = steps.select_row(root, 0)
        a_value, b_value = (
            float(root.locator(".hnx-side .hnx-val").nth(k).inner_text()) for k in (0, 1)
        )
        assert b_value < a_value and "A: baseline" in detail and "B: new" in detail
        root.screenshot(path=str(screens / "gate-regressed-case.png"))
    finally:
        context.close()
    assert guard.blocked == [] and problems == []
