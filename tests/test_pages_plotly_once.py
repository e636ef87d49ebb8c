"""Every standalone page holds plotly.js once, gzip-compressed (as an exported notebook does):
report pages, comparison pages, and a ``compare_benchmarks`` card whose benchmarks each
show their comparison's charts."""

from __future__ import annotations

import numpy as np
import pytest

from heta_notebook import compare, compare_benchmarks
from tests._compare_helpers import scored_report
from tests._display_helpers import make_report, plotly_js_copies

ONCE = {"raw": 0, "compressed": 1, "cartesian": 0}  # the full library (a notebook's card)
PAGE = {"raw": 0, "compressed": 1, "cartesian": 1}  # a page of ours: the cartesian bundle


@pytest.fixture(scope="module")
def reports():
    return make_report(6, seed=0, label="base"), make_report(6, seed=1, label="new")


def test_report_and_comparison_pages_hold_one_compressed_copy(reports):
    base, new = reports
    assert plotly_js_copies(base.to_html(max_cases=0)) == PAGE
    page = compare([base, new]).to_html(max_cases=0)
    assert plotly_js_copies(page) == PAGE and page.count("Plotly.newPlot") >= 2
    assert plotly_js_copies(compare([base, new]).to_html(figures=False)) == {
        "raw": 0,
        "compressed": 0,
        "cartesian": 0,
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


def test_every_figure_of_ours_draws_with_the_cartesian_bundle(reports):
    """A page carries plotly.js's cartesian bundle (0.66 MB, not 2 MB) because every chart the
    library draws uses its trace types: checked on every plot method of a report and a
    comparison."""
    from heta_notebook.display._setup import CARTESIAN_TRACES

    base, new = reports
    figures = []
    for plots in (base.plot, compare([base, new]).plot):
        for name in dir(plots):
            method = getattr(plots, name)
            if name.startswith("_") or not callable(method):
                continue
            try:
                figures.append((name, method()))
            except (TypeError, ValueError):  # needs an argument, or nothing to draw here
                continue
    assert len(figures) >= 5
    for name, fig in figures:
        assert {t.type or "scatter" for t in fig.data} <= CARTESIAN_TRACES, name


def test_a_figure_outside_the_bundle_gets_the_full_library_on_its_page():
    import plotly.graph_objects as go

    from heta_notebook.display._export import figure_html, html_page

    sunburst = go.Figure(go.Sunburst(labels=["a", "b"], parents=["", "a"]))
    bars = go.Figure(go.Bar(x=[1], y=[2]))
    assert plotly_js_copies(html_page("t", [figure_html(bars)])) == PAGE
    full = html_page("t", [figure_html(bars), figure_html(sunburst)])
    assert plotly_js_copies(full) == {"raw": 0, "compressed": 1, "cartesian": 0}


def test_another_plotly_js_version_gets_its_own_full_library(monkeypatch):
    """The shipped bundle is used only for the plotly.js version plotly.py brings: figure JSON
    of another plotly.py is never drawn by a different plotly.js."""
    import plotly.offline

    from heta_notebook.display import _setup
    from heta_notebook.display._export import html_page

    monkeypatch.setattr(plotly.offline, "get_plotlyjs_version", lambda: "0.0.1")
    _setup._cartesian_gzip.cache_clear()
    _setup._plotlyjs_gzip_base64.cache_clear()
    try:
        page = html_page("t", ["no figure"])
        assert _setup._cartesian_gzip() is None
        assert 'id="hn-plotlyjs-gz"' in page and "cartesian - minified" not in page
    finally:
        monkeypatch.undo()
        _setup._cartesian_gzip.cache_clear()
        _setup._plotlyjs_gzip_base64.cache_clear()
    assert _setup._cartesian_gzip() is not None


def test_the_copy_count_reads_a_notebook_export_s_attribute_order():
    """nbconvert's export writes ``id`` before ``type``: the count that guards every executed
    notebook's export (tests/_nbval_export.py) must see those copies too."""
    from heta_notebook.display._setup import plotlyjs_block

    block = plotlyjs_block("cartesian")
    exported = block.replace(
        '<script type="text/plain" id="hn-plotlyjs-gz">',
        '<script id="hn-plotlyjs-gz" type="text/plain">',
    )
    assert exported != block
    assert plotly_js_copies(exported) == PAGE
    assert plotly_js_copies(exported + block)["compressed"] == 2
