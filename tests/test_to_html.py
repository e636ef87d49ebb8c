"""to_html(path=None) on reports and comparisons alike: a path writes the page and returns the
path; no path returns a page that displays as a short note, never megabytes of text."""

from __future__ import annotations

import re

import pytest

from heta_notebook import compare
from heta_notebook.display._export import HtmlPage
from heta_notebook.testing import check_regression
from tests._display_helpers import make_report


@pytest.fixture(scope="module")
def reports():
    base = make_report(12, label="base", report_id="base")
    worse = make_report(12, label="worse", report_id="worse", seed=1, quality_shift=-0.3)
    return base, worse


@pytest.mark.parametrize("kind", ["report", "comparison"])
def test_to_html_writes_to_a_path_and_returns_it(kind, reports, tmp_path):
    subject = reports[0] if kind == "report" else compare(list(reports))
    path = tmp_path / "nested" / f"{kind}.html"
    assert subject.to_html(path, figures=False) == path
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and 'class="hnx' not in text  # the module builds it
    assert "explorer.js" not in text and "hn-explorer" in text  # the case explorer is embedded


@pytest.mark.parametrize("kind", ["report", "comparison"])
def test_to_html_without_a_path_is_a_page_that_displays_as_a_note(kind, reports, tmp_path):
    subject = reports[0] if kind == "report" else compare(list(reports))
    page = subject.to_html(figures=False)
    assert isinstance(page, HtmlPage) and page.startswith("<!DOCTYPE html>")
    assert len(repr(page)) < 200 and "MB" in repr(page)
    assert len(page._repr_html_()) < 500 and "save(path)" in page._repr_html_()
    saved = page.save(tmp_path / "again.html")
    assert saved.read_text(encoding="utf-8") == str(page)


def test_a_comparison_page_holds_the_table_the_charts_and_the_cases(reports):
    page = compare(list(reports), baseline="base").to_html()
    assert "Cases side by side" in page and "Plotly.newPlot" in page
    assert "Comparison: 2 report(s)" in page  # the table
    table = compare(list(reports))._repr_html_()  # the notebook shows the table only
    assert "Comparison: 2 report(s)" in table and "<html" not in table


def test_the_gate_page_opens_its_explorer_on_the_regressed_cases(reports, tmp_path):
    base, worse = reports
    result = check_regression(worse, base, scores=["ndcg@10"], output_dir=tmp_path)
    assert not result.passed and result.page.is_file()
    text = result.page.read_text(encoding="utf-8")
    assert "Regression gate FAILED" in text and "Cases side by side" in text
    assert re.search(r'"filter":\s*"worse"', text) and re.search(r'"score":\s*"ndcg@10"', text)
