"""The case explorer: state synced both ways with the browser, paging, filters, detail, fallback."""

from __future__ import annotations

import pytest

from heta_notebook.display._explorer import FALLBACK_CLASS, ExplorerFilters, ReportExplorer
from tests._display_helpers import make_report


@pytest.fixture(scope="module")
def report():
    return make_report(40)


@pytest.fixture
def explorer(report):
    ex = report.explore(page_size=10)
    assert ex.widget is not None  # build the widgets
    return ex


def _click(ex, **changes) -> None:
    """What the browser does: change the widget's state trait (filters reset the page)."""
    ex.widget.state = {**ex.widget.state, **changes}


def _list_rows(ex) -> list[int]:
    return list(ex.page_rows()["row"])


def test_opens_on_first_page_with_first_case_selected(report, explorer):
    assert explorer.n_matching == len(report.case_results)
    assert _list_rows(explorer) == list(range(10))
    assert explorer.selected_row == 0 and explorer.widget.state["selected"] == 0
    assert "Case q0000" in explorer.detail_html
    assert explorer.widget.state["page"] == 0 and explorer.n_pages == 12


def test_paging_from_the_browser_and_from_python(explorer):
    _click(explorer, page=1)
    assert explorer.page == 1 and _list_rows(explorer) == list(range(10, 20))
    explorer.go_to_page(99)
    assert explorer.page == 11 and explorer.widget.state["page"] == 11
    assert len(explorer.page_rows()) == 120 - 110
    explorer.previous_page()
    assert explorer.page == 10 and explorer.widget.state["page"] == 10


def test_selecting_in_the_browser_updates_python(report, explorer):
    _click(explorer, selected=4)
    result = report.case_results[4]
    detail = explorer.detail_html
    assert explorer.selected_row == 4 and explorer.detail_html() == detail
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
    assert explorer.widget.state["selected"] == explorer.selected_row


def test_query_error_case_detail(explorer):
    explorer.select("q0007", "bm25")
    html = explorer.detail_html
    assert "query error" in html and "ConnectionError" in html and "connection reset" in html


def test_mode_and_search_filters_change_the_list(report, explorer):
    _click(explorer, mode="dense", page=0)
    assert explorer.filters.mode == "dense" and explorer.n_matching == 40
    assert set(explorer.page_rows()["query_mode"]) == {"dense"}
    word = report.case_results[0].query.split()[5]
    _click(explorer, search=word.upper())
    expected = [
        r for r in report.case_results if r.query_mode == "dense" and word in r.query.lower()
    ]
    assert explorer.n_matching == len(expected) > 0
    explorer.set_filters(search="no such words here")
    assert explorer.n_matching == 0 and explorer.page_rows().empty and explorer.detail_html == ""
    assert explorer.widget.state["search"] == "no such words here"


def test_search_finds_judge_reasons_and_evidence_labels(report):
    ex = report.explore()
    reason = next(s.reason for r in report.case_results for s in r.scores if s.reason)
    ex.set_filters(search=reason[:25])
    hits = {
        (r.case_id, r.query_mode)
        for r in report.case_results
        if any(reason[:25].casefold() in (s.reason or "").casefold() for s in r.scores)
    }
    assert len(hits) > 0 and ex.n_matching >= len(hits)
    label = report.case_results[0].metadata["expected"]["evidence"][0]["reference_id"]
    ex.set_filters(search=str(label))
    assert ex.n_matching > 0


def test_label_filter_keeps_one_slice(report):
    ex = report.explore()
    ex.set_filters(label="difficulty=hard")
    wanted = [r for r in report.case_results if r.metadata["labels"]["difficulty"] == "hard"]
    assert ex.n_matching == len(wanted) > 0
    assert ex.state["label"] == "difficulty=hard"


def test_score_range_verdict_and_errors_filters(report, explorer):
    _click(explorer, score="judge_correctness")
    assert explorer.n_matching == len(report.case_results)  # a score alone does not filter
    _click(explorer, verdict="failed")
    failed = [
        r for r in report.case_results if (s := r.score("judge_correctness")) and s.passed is False
    ]
    assert explorer.n_matching == len(failed) > 0
    _click(explorer, verdict="any", score="ndcg@10", min_value=0.0, max_value=0.5)
    low = [
        r
        for r in report.case_results
        if (s := r.score("ndcg@10")) and s.status == "scored" and s.value <= 0.5
    ]
    assert explorer.filters.max_value == 0.5 and explorer.n_matching == len(low)
    _click(explorer, min_value=None, max_value=None, errors_only=True)
    assert explorer.n_matching == 3 and explorer.page_rows()["error"].notna().all()


def test_sorting_by_a_score(report, explorer):
    _click(explorer, sort_by="ndcg@10")
    values = list(explorer.page_rows()["value"])
    assert values == sorted(values, reverse=True) and values[0] == 1.0
    _click(explorer, descending=False)
    values = list(explorer.page_rows()["value"])
    assert values == sorted(values)
    explorer.go_to_page(explorer.n_pages - 1)
    assert explorer.page_rows()["value"].isna().iloc[-1]  # unscored (errors, skipped) sort last
    explorer.sort("latency")
    assert explorer.page == 0 and explorer.widget.state["sort_by"] == "latency"


def test_page_rows_old_property_form_still_works_with_a_warning(explorer):
    with pytest.warns(DeprecationWarning, match="page_rows"):
        first = explorer.page_rows[0]
    assert first["row"] == 0 and set(first) >= {"case_id", "query_mode", "error"}


def test_programmatic_api_without_widgets(report):
    ex = ReportExplorer(report, page_size=5, mode="hybrid", errors_only=False)
    assert ex.filters == ExplorerFilters(mode="hybrid")
    ex.set_filters(score="judge_correctness", verdict="passed").sort("judge_correctness")
    assert all(
        report.case_results[row].score("judge_correctness").passed for row in ex.page_rows()["row"]
    )
    with pytest.raises(KeyError):
        ex.select("nope")


def test_mimebundle_has_widget_view_and_static_html(explorer):
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    html = bundle["text/html"]
    assert FALLBACK_CLASS in html and "static view" in html
    assert "Selected case" in html and "Expected evidence" in html
    # the widget view is format 2.0 (what the HTML widget manager of exports accepts) and
    # its module hides the static fallback once it renders
    assert bundle["application/vnd.jupyter.widget-view+json"]["version_minor"] == 0
    assert f".{FALLBACK_CLASS}," in explorer.widget._esm and "display:none" in explorer.widget._esm


def test_ipython_display_emits_fallback_then_widget(explorer, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append((obj, kw)))
    explorer._ipython_display_()
    assert shown[0][1] == {"raw": True} and FALLBACK_CLASS in shown[0][0]["text/html"]
    assert shown[1][0] is explorer.widget


def test_opening_does_not_build_frames(report):
    ex = report.explore()
    assert "scores" not in ex.frames._cache and "cases" not in ex.frames._cache


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
    assert ex.page == 2 and ex.widget.state["selected"] == ex.selected_row == 22
    assert ex.widget.state["page"] == 2
    ex.set_filters(mode="bm25")
    assert ex.selected.query_mode == "bm25" and ex.page == 0
