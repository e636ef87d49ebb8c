"""Comparison table HTML, figures and the side-by-side explorer (driven programmatically)."""

from __future__ import annotations

import numpy as np
import pytest

from heta_notebook.analysis._compare import compare
from heta_notebook.display._theme import color_map
from tests._compare_helpers import rerun_report, scored_report
from tests._display_helpers import HOSTILE, live_markup, make_report


@pytest.fixture(scope="module")
def comparison():
    a = make_report(40, label="chunks-200", seed=1, n_results=5)
    b = rerun_report(
        a,
        "whole-doc",
        quality_shift=0.15,
        recipe={"chunk_size": "document"},
        drop_cases=("q0005",),
        n_results=5,
    )
    return compare([a, b])


def test_table_shows_variants_best_deltas_marks_and_notes():
    a, b = (
        scored_report("base", {"ndcg@10": list(np.linspace(0.2, 0.6, 40))}),
        scored_report(
            "better",
            {"ndcg@10": list(np.linspace(0.3, 0.7, 40))},
            recipe={"chunking": {"size": "document"}},
            case_ids=[f"c{i:03d}" for i in range(40)],
        ),
    )
    html = compare([a, b])._repr_html_()
    assert "base" in html and "better" in html and "bm25" in html
    assert 'class="hn-best"' in html and "+0.100**" in html
    assert "40/0/0" in html  # wins/ties/losses under the delta
    assert "chunking.size" in html and "document" in html
    assert "paired sign-flip permutation test" in html
    assert "Holm-corrected across the 1 comparisons of each score" in html


def test_table_lists_missing_cases_and_pivot_swaps_axes(comparison):
    html = comparison.select(scores=["ndcg@10", "judge_correctness"])._repr_html_()
    assert "case(s) missing (q0005)" in html
    pivoted = comparison.select(scores=["ndcg@10"]).pivot()._repr_html_()
    assert "<th>variant</th>" in pivoted and "<th>ndcg@10</th>" in pivoted


def test_hostile_labels_manifests_and_queries_are_escaped():
    a = make_report(12, seed=3, hostile=True, report_id="one")
    b = make_report(12, seed=4, hostile=True, report_id="two")
    c = compare([a, b])
    assert all(HOSTILE in label for label in c.labels)  # duplicate labels made unique
    html = c._repr_html_()
    assert live_markup(html) == [] and "&lt;script&gt;" in html
    explorer = c.explore(score="judge_correctness")
    assert live_markup(explorer.static_html()) == []
    for fig in (c.plot.bars(), c.plot.scatter(), c.plot.deltas()):
        assert "<script>" not in fig.to_json()


def test_bars_one_trace_per_variant_coloured_by_report(comparison):
    fig = comparison.plot.bars()
    assert [t.name for t in fig.data] == [v.name for v in comparison.variants]
    colors = color_map(comparison.labels)
    for trace, v in zip(fig.data, comparison.variants, strict=True):
        assert trace.marker.color == colors[v.report]
        assert trace.error_y.array is not None
    assert fig.layout.yaxis.title.text


def test_scatter_has_diagonal_and_one_point_per_paired_case(comparison):
    fig = comparison.plot.scatter("ndcg@10")
    diagonal, points = fig.data
    assert list(diagonal.x) == list(diagonal.y)
    assert len(points.x) == len(comparison.deltas("ndcg@10", *comparison.pairs()[0]))
    assert "chunks-200 · bm25" in fig.layout.xaxis.title.text


def test_delta_histogram_and_at_k(comparison):
    fig = comparison.plot.deltas("ndcg@10")
    d = comparison.deltas("ndcg@10", *comparison.pairs()[0])
    np.testing.assert_allclose(fig.data[0].x, d["delta"])
    assert "W/T/L" in fig.layout.title.text
    curves = comparison.plot.at_k("ndcg")
    assert len(curves.data) == len(comparison.variants)
    assert list(curves.data[0].x) == [1, 3, 5, 10]
    with pytest.raises(ValueError, match="no 'nope@k'"):
        comparison.plot.at_k("nope")


def test_explorer_lists_cases_by_largest_change(comparison):
    x = comparison.explore()
    state = x.state
    assert (state["a"], state["b"]) == ("chunks-200 · bm25", "whole-doc · bm25")
    deltas = np.abs(x.rows["delta"].dropna().to_numpy())
    assert np.all(np.diff(deltas) <= 1e-12)
    assert state["selected"] == state["case_ids"][0]
    assert state["selected"] in x.detail_html()


def test_explorer_filters(comparison):
    x = comparison.explore()
    changes = comparison.evidence_changes(x.a, x.b)
    x.set_filter("lost")
    lost = set(changes.loc[changes["change"] == "lost", "case_id"])
    assert set(x.rows["case_id"]) == lost and lost
    assert "lost" in x.detail_html()
    x.set_score("judge_correctness").set_filter("flipped")
    flips = comparison.verdict_flips("judge_correctness", x.a, x.b)
    assert set(x.rows["case_id"]) == set(flips["case_id"])
    x.set_filter("worse")
    assert (x.rows["delta"] < 0).all()
    with pytest.raises(KeyError, match="unknown filter"):
        x.set_filter("bogus")


def _click(x, **changes) -> None:
    """What the browser does: change the widget's state trait."""
    x.widget.state = {**x.widget.state, **changes}


def test_explorer_state_syncs_both_ways(comparison):
    x = comparison.explore(page_size=5)
    _click(x, b="whole-doc · dense", page=0)
    assert x.state["b"] == "whole-doc · dense" and x.state["page"] == 0
    x.next_page()
    assert x.widget.state["page"] == 1 == x.state["page"]
    pick = x.state["case_ids"][2]
    _click(x, selected=pick)
    assert x.selected == pick and f"<code>{pick}</code>" in x.detail_html()
    x.set_score("judge_correctness")
    assert x.widget.state["score"] == "judge_correctness" and x.widget.state["page"] == 0
    _click(x, filter="gained")
    assert x.state["filter"] == "gained"
    data = x.widget.data
    assert set(data) == set(comparison.reports)
    assert x.widget.variants[0]["name"] == comparison.variants[0].name


def test_explorer_keeps_cases_missed_as_a_class_under_a_or_b(comparison):
    x = comparison.explore()
    classes = x.miss_classes()
    assert classes and "found" not in classes

    def missed(variant, cls) -> set[str]:
        frame = comparison.frames(variant.report).misses(level="evidence")
        frame = frame[(frame["query_mode"] == variant.mode) & (frame["miss_class"] == cls)]
        return set(frame["case_id"])

    cls = classes[0]
    x.set_filters(miss_b=cls)
    assert set(x.rows["case_id"]) == missed(x.b, cls) and len(x.rows)
    assert f"B missed as {cls}" in x.static_html() and x.widget.state["miss_b"] == cls
    x.set_filters(miss_a=cls)
    assert set(x.rows["case_id"]) == missed(x.a, cls) & missed(x.b, cls)
    _click(x, miss_a=None, miss_b=None)  # the browser clears them
    assert (x.miss_a, x.miss_b) == (None, None) and len(x.rows) > len(missed(x.b, cls))
    with pytest.raises(KeyError, match="unknown miss_a"):
        x.set_filters(miss_a="lost in the post")


def test_reason_search_scoped_to_b_but_not_a(comparison):
    x = comparison.explore(score="judge_correctness")
    word = "missing"
    x.search(word, scope="b_not_a")
    for case_id in x.rows["case_id"]:
        ra, rb = comparison.case_result(x.a, case_id), comparison.case_result(x.b, case_id)
        in_a = ra is not None and any(word in (s.reason or "").lower() for s in ra.scores)
        in_b = rb is not None and any(word in (s.reason or "").lower() for s in rb.scores)
        assert in_b and not in_a
    assert x.widget.state["scope"] == "b_not_a"
    with pytest.raises(KeyError, match="unknown scope"):
        x.search(word, scope="sideways")


def test_explorer_side_by_side_and_static_fallback(comparison):
    x = comparison.explore(score="judge_correctness")
    x.set_filter("lost")
    case = x.state["case_ids"][0]
    html = x.detail_html(case)
    assert "A: chunks-200 · bm25" in html and "B: whole-doc · bm25" in html
    assert "hn-lost" in html and "hn-reason" in html and "retrieved results" in html
    bundle = x._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert case in bundle["text/html"] and "static view" in bundle["text/html"]


def test_explorer_shows_a_missing_case(comparison):
    x = comparison.explore()
    html = x.detail_html("q0005")
    assert "case missing" in html
