"""Issue 28's papercuts: deltas take a and b independently, a typo in by= is an error, the
palette tells nine lines apart, long titles wrap instead of being cut off."""

from __future__ import annotations

import re

import pytest

from heta_notebook.analysis._compare import compare
from heta_notebook.display._theme import PALETTE, color_map, fit_title
from tests._compare_helpers import scored_report


def _three():
    a = scored_report("a", {"s": [0.1, 0.2, 0.3]}, modes=("bm25", "dense"))
    b = scored_report("b", {"s": [0.2, 0.4, 0.3]}, modes=("bm25", "dense"))
    c = scored_report("c", {"s": [0.5, 0.5, 0.5]}, modes=("bm25", "dense"))
    return compare([a, b, c], baseline="a")


def test_deltas_take_a_and_b_independently():
    c = _three()
    only_b = c.deltas("s", b="c · dense")
    pairs = set(zip(only_b["baseline"], only_b["variant"], strict=True))
    assert pairs == {("a · dense", "c · dense")}
    only_a = c.deltas("s", a="b · bm25")
    assert set(only_a["baseline"]) == {"b · bm25"}
    assert set(only_a["variant"]) == {v.name for v in c.variants} - {"b · bm25"}
    fig = c.plot.deltas("s", b="c · dense")
    assert "c · dense − a · dense" in fig.layout.title.text.replace("<br>", " ")
    fig = c.plot.deltas("s", a="c · bm25", b="b · bm25")
    assert "b · bm25 − c · bm25" in fig.layout.title.text.replace("<br>", " ")


def test_an_unknown_by_label_names_the_labels_that_exist():
    report = scored_report("a", {"s": [0.1, 0.2]})
    labelled = report.model_copy(
        update={
            "case_results": tuple(
                r.model_copy(update={"metadata": {"labels": {"topic": "x"}, "source": "y"}})
                for r in report.case_results
            )
        }
    )
    with pytest.raises(KeyError, match=r"'topci'.*labels: topic; metadata keys: source"):
        labelled.summary(by="topci")
    with pytest.raises(KeyError, match=r"'topci'.*labels: topic"):
        compare(labelled, by="topci").significance()
    assert set(labelled.summary(by="topic")["topic"]) == {"x"}
    assert set(labelled.summary(by="source")["source"]) == {"y"}


def test_nine_lines_get_nine_distinct_colour_blind_safe_colours():
    assert len(set(PALETTE)) >= 10 and "#332288" in PALETTE  # Paul Tol's muted scheme
    labels = [f"recipe{i} · {m}" for i in range(3) for m in ("bm25", "dense", "hybrid")]
    assert len(set(color_map(labels).values())) == 9


def test_long_titles_wrap_for_static_export():
    layout = fit_title("word " * 40, width=50)
    lines = layout["title"]["text"].split("<br>")
    assert len(lines) >= 4 and all(len(line) <= 50 for line in lines)
    assert layout["margin"]["t"] > fit_title("short")["margin"]["t"]  # room for every line
    fig = _three().plot.scatter("s", "a · bm25", "b · bm25")
    assert all(len(x) <= 70 for x in re.split("<br>", fig.layout.title.text))
