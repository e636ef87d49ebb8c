"""No live markup from data: XSS payloads in every untrusted field stay inert everywhere."""

from __future__ import annotations

import json

import pytest

from heta_notebook.display._html import esc
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


def test_explorer_detail_and_static_view_escape_everything(hostile):
    ex = hostile.explore(page_size=30)
    for row in range(len(hostile.case_results)):
        _assert_inert(ex.select_row(row).detail_html)
    detail = ex.select("q0001", "dense").detail_html
    assert esc(PAYLOADS[2]) in detail  # judge reason, answer, chunk text, labels as text
    _assert_inert(ex.static_html())
    state = json.dumps(ex.widget.get_state(), default=str)
    assert "<script" not in state.replace('"_esm"', "")  # the data travels packed


def test_explorer_module_never_parses_data_as_html():
    from heta_notebook.display._widgets import explorer_esm

    esm = explorer_esm()
    assert "innerHTML" not in esm and "insertAdjacentHTML" not in esm
    assert "outerHTML" not in esm and "document.write" not in esm


def test_plotly_labels_and_hover_are_escaped(hostile):
    figs = [
        hostile.plot.metrics(),
        hostile.plot.at_k("ndcg"),
        hostile.plot.latency(),
        hostile.plot.distribution("ndcg@10"),
        hostile.plot.distribution("answer_contains"),
    ]
    for fig in figs:
        text = json.dumps(fig.to_plotly_json(), default=str)
        assert "<script" not in text and "<img" not in text and "<a href" not in text
    latency = figs[2]
    hover = " ".join(t for trace in latency.data for t in trace.text)
    assert esc(PAYLOADS[0]) in hover  # the hostile query is in the hover, escaped


def test_export_escapes_everything(hostile):
    from tests._display_helpers import page_payloads

    html = hostile.to_html()
    _assert_inert(html)
    payload = page_payloads(html)[0]
    assert any(PAYLOADS[0] in text for text in payload["strings"])  # data, drawn as text


def test_hostile_mode_and_score_names():
    report = make_report(3, modes=("<b onmouseover=alert(1)>m</b>",))
    html = report._repr_html_() + report.to_html(figures=True) + report.explore().static_html()
    _assert_inert(html)
    assert "onmouseover=alert(1)" not in html.replace("&lt;b onmouseover=alert(1)&gt;", "")
