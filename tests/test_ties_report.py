"""A report says when ties move its headline: tied cases counted per mode, the headline's mean
under each tie rule, a card line when tie-aware and as-returned differ, kept in saved reports."""

from __future__ import annotations

import pytest

from heta_notebook import BeirBenchmark, BenchmarkRunConfig, EvaluationReport, Recipe, run_benchmark
from heta_notebook.evaluators._retrieval import BeirRetrievalMetric
from tests._kb_helpers import write_beir

TEXTS = (
    "wing flutter at supersonic speed in a wind tunnel",
    "boundary layer transition on a flat plate with heat transfer",
    "shock wave interaction with a laminar boundary layer",
)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> EvaluationReport:
    """Each text twice (ids "1"/"1n", ...); the relevant twin is the one trec_eval puts second."""
    folder = tmp_path_factory.mktemp("twins")
    corpus = [
        {"_id": doc, "title": "", "text": text}
        for i, text in enumerate(TEXTS, start=1)
        for doc in (str(i), f"{i}n")
    ]
    queries = [{"_id": f"q{i}", "text": text} for i, text in enumerate(TEXTS, start=1)]
    qrels = [f"q{i}\t{i}\t1" for i in range(1, len(TEXTS) + 1)]
    write_beir(folder, corpus, queries, qrels)
    result = run_benchmark(
        benchmark=BeirBenchmark(folder, "test", dataset="twins"),
        recipe=Recipe(name="bm25", dense=None, hybrid=None),
        evaluators=[BeirRetrievalMetric("ndcg", 1), BeirRetrievalMetric("recall", 5)],
        config=BenchmarkRunConfig(top_k=5),
        progress=False,
        workspace=tmp_path_factory.mktemp("workspace"),
    )
    return result.report


def test_tied_cases_are_counted_with_the_headline_under_each_rule(report):
    (row,) = report.frames().ties().to_dict("records")
    assert row["query_mode"] == "full_text_search" and row["score"] == "beir_ndcg@1"
    assert (row["n"], row["n_tied"]) == (3, 3)
    assert row["trec_eval"] == row["mean"] == 0.0  # "1n" > "1": the twin wins the tie
    assert row["as_returned"] == 0.0  # the KB returns ties in that same order
    assert row["expected"] == pytest.approx(0.5)  # either twin first, equally likely


def test_the_card_says_so_and_a_saved_report_keeps_it(report, tmp_path):
    line = "full_text_search: 3 of 3 cases have tied scores in their top 1"
    assert line in str(report.card())
    assert "0.500 tie-aware" in str(report.card())
    loaded = EvaluationReport.load(report.save(tmp_path / "columnar", format="columnar"))
    assert loaded.frames().ties().equals(report.frames().ties())
    assert line in str(loaded.card())


def test_no_line_without_ties(report):
    untied = report.frames().ties().assign(expected=0.0)
    from heta_notebook.analysis._ties import notable_ties

    assert notable_ties(untied).empty
