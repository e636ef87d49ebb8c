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
    html = report.to_html(path)
    assert path.read_text(encoding="utf-8") == html
    return html


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


def test_plotly_js_embedded_once_and_figures_present(page):
    from plotly.offline import get_plotlyjs

    signature = get_plotlyjs()[:200]
    assert page.count(signature) == 1
    assert page.count("Plotly.newPlot") >= 4  # metrics, ndcg@k, map@k, distribution, latency


def test_card_and_case_sections_with_evidence_and_reasons(report, page):
    assert "cranfield-synthetic" in page and "hn-best" in page
    parser = Scripts()
    parser.feed(page)
    assert parser.details >= len(report.case_results)
    assert "Showing all 36 case results." in page
    reason = next(s.reason for r in report.case_results for s in r.scores if s.reason)
    assert reason in page and ">missing<" in page and ">matched<" in page


def test_large_reports_are_capped_and_say_so(report):
    html = report.to_html(max_cases=5, figures=False)
    assert "Showing the first 5 of 36 case results" in html and "max_cases=None" in html
    assert "Plotly.newPlot" not in html and "<script" not in html


def test_title_option(report):
    html = report.to_html(title="My <run>", figures=False, max_cases=0)
    assert "<title>My &lt;run&gt;</title>" in html and "<h1" in html
