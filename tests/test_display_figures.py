"""Figures: traces, axis titles, stable colours, escaped hover text, multi-report frames."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from heta_notebook.display._figures import at_k_frame, bar_figure
from heta_notebook.display._theme import color_for, color_map
from heta_notebook.schema._headline import headline_score, parse_at_k
from tests._display_helpers import make_report


@pytest.fixture(scope="module")
def report():
    return make_report(24)


def _colors(fig) -> dict[str, str]:
    out = {}
    for trace in fig.data:
        color = getattr(trace, "marker", None) and trace.marker.color
        if trace.type == "scatter":
            color = trace.line.color
        out[trace.name] = color
    return out


def test_parse_at_k_and_headline():
    assert parse_at_k("ndcg@10") == ("ndcg", 10) and parse_at_k("ndcg_cut_5") == ("ndcg", 5)
    assert parse_at_k("recall_at_3") == ("recall", 3) and parse_at_k("judge") is None
    assert headline_score(["map@5", "ndcg@10"]) == "ndcg@10"
    assert headline_score(["map@5", "map@100", "x"]) == "map@100"
    assert headline_score(["judge"]) == "judge" and headline_score([]) is None


def test_metrics_bars_per_mode_with_ci(report):
    fig = report.plot.metrics()
    assert [t.name for t in fig.data] == list(report.query_modes)
    assert all(t.type == "bar" for t in fig.data) and fig.layout.barmode == "group"
    assert fig.layout.xaxis.title.text == "score"
    assert fig.layout.yaxis.title.text == "mean over scored cases"
    summary = report.summary()
    dense = summary[summary["query_mode"] == "dense"].dropna(subset=["mean"])
    trace = fig.data[1]
    np.testing.assert_allclose(trace.y, dense["mean"].to_numpy())
    np.testing.assert_allclose(
        np.asarray(trace.error_y.array) + trace.y, dense["ci_high"].to_numpy()
    )
    assert "95% CI" in trace.customdata[0] and "n=" in trace.customdata[0]


def test_colours_stable_across_figures_and_calls(report):
    expected = {m: color_for(m) for m in report.query_modes}
    assert _colors(report.plot.metrics()) == expected
    assert _colors(report.plot.at_k("ndcg")) == expected
    assert _colors(report.plot.latency()) == expected
    assert _colors(report.plot.distribution("ndcg@10")) == expected
    assert _colors(report.plot.metrics()) == _colors(make_report(5, seed=3).plot.metrics())


def test_at_k_curves(report):
    fig = report.plot.at_k("ndcg")
    assert fig.layout.xaxis.title.text == "k (cut-off)"
    assert fig.layout.yaxis.title.text == "mean ndcg@k"
    assert list(fig.data[0].x) == [1, 3, 5, 10]
    table = report.frames().metrics_table()
    np.testing.assert_allclose(
        fig.data[0].y, [table.loc[f"ndcg@{k}", "bm25"] for k in (1, 3, 5, 10)]
    )
    with pytest.raises(ValueError, match="no 'bleu@k'"):
        report.plot.at_k("bleu")


def test_distribution_and_latency(report):
    fig = report.plot.distribution("ndcg@10")
    assert [t.type for t in fig.data] == ["box"] * 3
    scored = report.frames().scores().query("score == 'ndcg@10' and status == 'scored'")
    assert sum(len(t.y) for t in fig.data) == len(scored)
    assert fig.layout.yaxis.title.text == "ndcg@10"
    booleans = report.plot.distribution("answer_contains")
    assert booleans.data[0].type == "histogram" and booleans.layout.yaxis.title.text == "cases"
    latency = report.plot.latency()
    assert latency.layout.yaxis.title.text == "latency (ms)"
    assert latency.layout.yaxis.type == "log"  # the 5 s query errors spread the axis
    with pytest.raises(ValueError, match="no scored values"):
        report.plot.distribution("nope")


def test_bar_figure_from_a_multi_report_tidy_frame():
    frames = []
    for label, shift in (("recipe A", 0.0), ("recipe B", 0.2)):
        summary = make_report(10, label=label, quality_shift=shift).summary()
        frames.append(summary.assign(variant=label + " · " + summary["query_mode"]))
    tidy = pd.concat(frames)
    fig = bar_figure(tidy[tidy["score"] == "ndcg@10"], color="variant", title="compare")
    names = [t.name for t in fig.data]
    assert len(names) == 6
    assert _colors(fig) == color_map(names)
    assert len(set(_colors(fig).values())) == 6


def test_at_k_frame_picks_only_the_metric(report):
    frame = at_k_frame(report.summary(), "map")
    assert set(frame["score"]) == {"map@1", "map@3", "map@5", "map@10"}
    assert sorted(frame["k"].unique()) == [1, 3, 5, 10]


def test_comparison_charts_escape_quotes_like_report_charts():
    """One plotly escaper: a quote in a label is a decimal entity plotly decodes, never the
    literal ``&quot;`` comparison charts used to show."""
    from heta_notebook.analysis._compare import compare
    from heta_notebook.display._figures import esc

    a = make_report(6, label='say "hi"', report_id="a")
    b = make_report(6, label="plain", report_id="b", quality_shift=-0.1)
    text = json.dumps(compare([a, b]).plot.scatter("ndcg@10").to_plotly_json(), default=str)
    assert "&quot;" not in text and esc('say "hi"') in text


def test_one_headline_rule_for_charts_and_comparisons():
    assert headline_score(["map@10", "beir_ndcg@10"]) == "beir_ndcg@10"
    assert headline_score(["precision@10", "mrr@10", "map@10"]) == "map@10"
    assert headline_score(["recall@1", "recall@5"]) == "recall@5"
    assert headline_score(["judge"]) == "judge" and headline_score([]) is None
