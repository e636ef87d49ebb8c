"""report.to_html: one self-contained offline page with card, charts and per-case sections."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests._display_helpers import make_report


class Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict] = []
        self.links: list[dict] = []
        self.details = 0

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts.append(dict(attrs))
        if tag in {"link", "img", "iframe"}:
            self.links.append(dict(attrs))
        if tag == "details":
            self.details += 1


@pytest.fixture(scope="module")
def report():
    return make_report(12)


@pytest.fixture(scope="module")
def page(report, tmp_path_factory):
    path = tmp_path_factory.mktemp("export") / "nested" / "report.html"
    assert report.to_html(path) == path  # a path in: the page is written, its path comes back
    return path.read_text(encoding="utf-8")


def test_self_contained_no_external_sources(page):
    parser = Scripts()
    parser.feed(page)
    assert parser.scripts, "plotly.js and figures must be inline scripts"
    assert not [s for s in parser.scripts if "src" in s]
    assert not [
        link
        for link in parser.links
        if re.match(r"https?:", link.get("href", "") + link.get("src", ""))
    ]
    assert not re.search(r"<script[^>]+src=[\"']?https?:", page)


def test_plotly_js_embedded_once_compressed_and_figures_present(page):
    from tests._display_helpers import plotly_js_copies

    assert plotly_js_copies(page) == {"raw": 0, "compressed": 1, "cartesian": 1}
    assert page.count("Plotly.newPlot") >= 4  # metrics, ndcg@k, map@k, distribution, latency


def _payload(page: str) -> dict:
    from tests._display_helpers import page_payloads

    (payload,) = page_payloads(page)
    return payload


def test_card_and_the_case_explorer_with_every_case(report, page):
    assert "cranfield-synthetic" in page and "hn-best" in page
    assert 'data-hn-explorer="' in page and "export default { render }" in page
    payload = _payload(page)
    assert payload["rows"] == list(range(36)) and payload["left_out"] == 0
    reason = next(s.reason for r in report.case_results for s in r.scores if s.reason)
    assert reason in payload["strings"]


def test_large_reports_are_capped_most_informative_first_and_say_so(report):
    html = report.to_html(max_cases=5, figures=False)
    payload = _payload(html)
    assert len(payload["rows"]) == 5 and payload["left_out"] == 31 and payload["n_total"] == 36
    errors = [i for i, r in enumerate(report.case_results) if r.error is not None]
    assert set(errors) <= set(payload["rows"])  # query errors are embedded first
    assert "Plotly.newPlot" not in html


def test_title_option(report):
    html = report.to_html(title="My <run>", figures=False, max_cases=0)
    assert "<title>My &lt;run&gt;</title>" in html and "<h1" in html
