"""The case explorer: state transitions driven through its widgets, paging, detail, fallback."""

from __future__ import annotations

import pytest

from heta_notebook.display.explorer import FALLBACK_CLASS, ExplorerFilters, ReportExplorer
from tests._display_helpers import make_report


@pytest.fixture(scope="module")
def report():
    return make_report(40)


@pytest.fixture
def explorer(report):
    ex = report.explore(page_size=10)
    assert ex.widget is not None  # build the widgets
    return ex


def _list_rows(ex) -> list[int]:
    return [value for _label, value in ex.controls.case_list.options]


def test_opens_on_first_page_with_first_case_selected(report, explorer):
    assert explorer.n_matching == len(report.case_results)
    assert _list_rows(explorer) == list(range(10))
    assert explorer.selected_row == 0 and explorer.controls.case_list.value == 0
    assert "Case q0000" in explorer.controls.detail.value
    assert explorer.controls.page_label.value.startswith("page 1 / 12")
    assert explorer.controls.prev.disabled and not explorer.controls.next.disabled


def test_paging_through_buttons(explorer):
    explorer.controls.next.click()
    assert explorer.page == 1 and _list_rows(explorer) == list(range(10, 20))
    explorer.go_to_page(99)
    assert explorer.page == 11 and explorer.controls.next.disabled
    assert len(explorer.page_rows) == 120 - 110
    explorer.controls.prev.click()
    assert explorer.page == 10


def test_selecting_in_the_list_updates_the_detail_pane(report, explorer):
    explorer.controls.case_list.value = 4
    result = report.case_results[4]
    detail = explorer.controls.detail.value
    assert explorer.selected_row == 4 and detail.endswith(explorer.detail_html)
    assert f"Case {result.case_id}" in detail and result.query_mode in detail
    assert "Expected evidence" in detail and "Retrieved results" in detail
    for score in result.scores:
        assert score.name in detail


def test_select_shows_matched_and_missing_evidence_and_judge_reason(report, explorer):
    # q0007 under dense misses 2 evidence items (see the synthetic data)
    explorer.select("q0007", "dense")
    html = explorer.detail_html
    meta = explorer.selected.score("evidence_recall@10").metadata
    assert html.count(">missing<") == len(meta["missing_evidence"]) == 2
    assert html.count(">matched<") == len(meta["matched_evidence"])
    for item in meta["matched_evidence"]:
        assert item["result_id"] in html
    reason = explorer.selected.score("judge_correctness").reason
    assert "Judge reasons" in html and reason in html and "hn-reason" in html
    assert "The " in html and "expected answers" in html
    assert explorer.controls.detail.value.endswith(html)


def test_query_error_case_detail(explorer):
    explorer.select("q0007", "bm25")
    html = explorer.detail_html
    assert "query error" in html and "ConnectionError" in html and "connection reset" in html


def test_mode_and_search_filters_change_the_list(report, explorer):
    explorer.controls.mode.value = "dense"
    assert explorer.filters.mode == "dense" and explorer.n_matching == 40
    assert all(r["query_mode"] == "dense" for r in explorer.page_rows)
    assert explorer.selected.query_mode == "dense"
    word = report.case_results[0].query.split()[5]
    explorer.controls.search.value = word.upper()
    expected = [r for r in report.case_results
                if r.query_mode == "dense" and word in r.query.lower()]  # fmt: skip
    assert explorer.n_matching == len(expected) > 0
    explorer.controls.search.value = "no such words here"
    assert explorer.n_matching == 0 and explorer.page_rows == [] and explorer.detail_html == ""
    assert "No case selected" in explorer.controls.detail.value


def test_score_range_verdict_and_errors_filters(report, explorer):
    c = explorer.controls
    c.score.value = "judge_correctness"
    assert explorer.n_matching == len(report.case_results)  # a score alone does not filter
    c.verdict.value = "failed"
    failed = [r for r in report.case_results
              if (s := r.score("judge_correctness")) and s.passed is False]  # fmt: skip
    assert explorer.n_matching == len(failed) > 0
    c.verdict.value = "any"
    c.score.value = "ndcg@10"
    c.value_range.value = (0.0, 0.5)
    low = [r for r in report.case_results
           if (s := r.score("ndcg@10")) and s.status == "scored" and s.value <= 0.5]  # fmt: skip
    assert explorer.filters.max_value == 0.5 and explorer.n_matching == len(low)
    c.value_range.value = (0.0, 1.0)
    c.errors_only.value = True
    assert explorer.n_matching == 3 and all(r["error"] for r in explorer.page_rows)


def test_sorting_by_a_score(report, explorer):
    explorer.controls.sort_by.value = "ndcg@10"
    values = [r["value"] for r in explorer.page_rows]
    assert values == sorted(values, reverse=True) and values[0] == 1.0
    explorer.controls.descending.value = False
    assert [r["value"] for r in explorer.page_rows] == sorted(
        r["value"] for r in explorer.page_rows
    )
    explorer.go_to_page(explorer.n_pages - 1)
    assert explorer.page_rows[-1]["value"] is None  # unscored (errors, skipped) sort last
    explorer.controls.sort_by.value = "latency"
    assert explorer.page == 0


def test_programmatic_api_without_widgets(report):
    ex = ReportExplorer(report, page_size=5, mode="hybrid", errors_only=False)
    assert ex.filters == ExplorerFilters(mode="hybrid")
    ex.set_filters(score="judge_correctness", verdict="passed").sort("judge_correctness")
    assert all(report.case_results[r["row"]].score("judge_correctness").passed
               for r in ex.page_rows)  # fmt: skip
    with pytest.raises(KeyError):
        ex.select("nope")


def test_mimebundle_has_widget_view_and_static_html(explorer):
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    html = bundle["text/html"]
    assert FALLBACK_CLASS in html and "static view" in html
    assert "Selected case" in html and "Expected evidence" in html
    # the live widget hides the static fallback once it renders
    assert f".{FALLBACK_CLASS}{{display:none" in explorer.controls.detail.value


def test_ipython_display_emits_fallback_then_widget(explorer, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append((obj, kw)))
    explorer._ipython_display_()
    assert shown[0][1] == {"raw": True} and FALLBACK_CLASS in shown[0][0]["text/html"]
    assert shown[1][0] is explorer.widget


def test_opening_does_not_build_frames(report):
    ex = report.explore()
    assert "scores" not in ex.frames._cache and "cases" not in ex.frames._cache
    assert ex.widget is not None
    assert "scores" not in ex.frames._cache


def test_heta_framework_report_degrades_gracefully():
    from pathlib import Path

    from heta_notebook.schema import EvaluationReport

    path = Path(__file__).parent / "fixtures" / "heta" / "report.json"
    if not path.exists():
        pytest.skip("heta-framework fixture not present")
    heta = EvaluationReport.load(path)
    first = heta.case_results[0]
    meta = next(s.metadata for s in first.scores if "matched_reference_ids" in s.metadata)
    ex = heta.explore()
    assert ex.selected_row == 0
    html = ex.detail_html
    assert html.count(">matched<") == meta["matched"]
    assert f"{meta['expected'] - meta['matched']} more expected items were not found" in html
    rows = ex.frames.evidence().query("row == 0")
    assert len(rows) == meta["expected"] and rows["matched"].sum() == meta["matched"]
    assert "relevant" in html and heta._repr_html_()
    fig = heta.plot.at_k("ndcg")  # heta names its metrics beir_ndcg@k
    assert len(fig.data) >= 1 and list(fig.data[0].x) == [1, 3, 5, 10]


def test_select_jumps_to_the_page_listing_the_case(report):
    ex = report.explore(page_size=10)
    assert ex.widget is not None
    ex.select("q0007", "dense")
    assert ex.page == 2 and ex.controls.case_list.value == ex.selected_row == 22
    assert "page 3 / 12" in ex.controls.page_label.value
    ex.set_filters(mode="bm25")
    assert ex.selected.query_mode == "bm25" and ex.page == 0
