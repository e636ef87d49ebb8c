"""Every standalone page holds plotly.js once, gzip-compressed (as an exported notebook does):
report pages, comparison pages, and a ``compare_benchmarks`` card whose benchmarks each
show their comparison's charts."""

from __future__ import annotations

import numpy as np
import pytest

from heta_notebook import compare, compare_benchmarks
from tests._compare_helpers import scored_report
from tests._display_helpers import make_report, plotly_js_copies

ONCE = {"raw": 0, "compressed": 1}


@pytest.fixture(scope="module")
def reports():
    return make_report(6, seed=0, label="base"), make_report(6, seed=1, label="new")


def test_report_and_comparison_pages_hold_one_compressed_copy(reports):
    base, new = reports
    assert plotly_js_copies(base.to_html(max_cases=0)) == ONCE
    page = compare([base, new]).to_html(max_cases=0)
    assert plotly_js_copies(page) == ONCE and page.count("Plotly.newPlot") >= 2
    assert plotly_js_copies(compare([base, new]).to_html(figures=False)) == {
        "raw": 0,
        "compressed": 0,
    }


def test_compare_benchmarks_card_holds_one_copy_for_all_its_comparisons():
    rng = np.random.default_rng(0)
    ids = [str(i) for i in range(1, 11)]
    reports = [
        scored_report(
            f"{system}-{bench}",
            {"ndcg@10": list(rng.uniform(0, 1, 10))},
            case_ids=ids,
            benchmark=(bench, "1", "test"),
            recipe={"name": system},
        )
        for system in ("a", "b")
        for bench in ("cran", "other")
    ]
    card = compare_benchmarks(reports)._repr_html_()
    assert plotly_js_copies(card) == ONCE
    assert card.count("Plotly.newPlot") >= 4  # bars and deltas of each benchmark
    assert "<html" not in card  # sections, not nested pages
