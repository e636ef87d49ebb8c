"""No live markup from data: XSS payloads in every untrusted field stay inert everywhere."""

from __future__ import annotations

import json

import pytest

from heta_notebook.display.html import esc
from tests._display_helpers import PAYLOADS, live_markup, make_report


@pytest.fixture(scope="module")
def hostile():
    return make_report(8, hostile=True)


def _assert_inert(html: str) -> None:
    assert live_markup(html) == []
    assert "<script>alert(1)" not in html
    assert "<img src=x" not in html
    assert 'href="javascript:' not in html


def test_the_detector_catches_live_markup():
    assert live_markup("<p><img src=x onerror=alert(1)></p>")
    assert live_markup('<a href="javascript:alert(1)">x</a>')
    assert live_markup("<script>var a='<script>alert(1)'</script>")
    assert live_markup(esc(PAYLOADS[1])) == []


def test_card_escapes_everything(hostile):
    html = hostile._repr_html_()
    _assert_inert(html)
    assert esc(PAYLOADS[0]) in html  # shown as text, not dropped


def test_explorer_widget_html_and_static_view_escape_everything(hostile):
    ex = hostile.explore(page_size=30)
    assert ex.widget is not None
    for row in range(len(hostile.case_results)):
        ex.select_row(row)
        _assert_inert(ex.controls.detail.value)
    detail = ex.select("q0001", "dense").detail_html
    assert esc(PAYLOADS[2]) in detail  # judge reason, answer, chunk text, labels as text
    _assert_inert(ex.static_html())
    _assert_inert(ex.controls.detail.value)
    title = ex.widget.children[0].value
    _assert_inert(title)
    for label, _row in ex.controls.case_list.options:  # plain-text options, never HTML
        assert isinstance(label, str)


def test_plotly_labels_and_hover_are_escaped(hostile):
    figs = [hostile.plot.metrics(), hostile.plot.at_k("ndcg"), hostile.plot.latency(),
            hostile.plot.distribution("ndcg@10"), hostile.plot.distribution("answer_contains")]  # fmt: skip
    for fig in figs:
        text = json.dumps(fig.to_plotly_json(), default=str)
        assert "<script" not in text and "<img" not in text and "<a href" not in text
    latency = figs[2]
    hover = " ".join(t for trace in latency.data for t in trace.text)
    assert esc(PAYLOADS[0]) in hover  # the hostile query is in the hover, escaped


def test_export_escapes_everything(hostile):
    html = hostile.to_html()
    _assert_inert(html)
    assert html.count(esc(PAYLOADS[0])) > 10


def test_hostile_mode_and_score_names():
    report = make_report(3, modes=("<b onmouseover=alert(1)>m</b>",))
    html = report._repr_html_() + report.to_html(figures=True) + report.explore().static_html()
    _assert_inert(html)
    assert "onmouseover=alert(1)" not in html.replace("&lt;b onmouseover=alert(1)&gt;", "")
