"""The runner end to end with the real embedded KB on Cranfield (1,400 docs, 225 queries)."""

from __future__ import annotations

import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, Recipe, ReportStore
from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.benchmarks._protocol import load_benchmark
from heta_notebook.evaluators._retrieval import beir_default_metrics


@pytest.fixture(scope="module")
def cranfield():
    return BeirBenchmark.cranfield()


async def test_bm25_on_cranfield_end_to_end_with_kb_cache(tmp_path, cranfield):
    store = ReportStore(tmp_path)
    recipe = Recipe(name="bm25", dense=None, hybrid=None)
    config = BenchmarkRunConfig(top_k=100, max_concurrent_queries=4)
    options = dict(
        benchmark=cranfield,
        recipe=recipe,
        knowledge_base_name="cran",
        config=config,
        store=store,
        progress=False,
    )
    report = (await BenchmarkRunner().run(**options)).report
    assert report.query_modes == ("full_text_search",)
    assert len(report.case_results) == 225 and report.metadata["n_query_errors"] == 0
    assert len(report.score_names) == 25  # the benchmark's default BEIR metrics
    assert 0.3 < report.score_summary["full_text_search.beir_ndcg@10"] < 0.5  # BM25 on Cranfield
    assert report.knowledge_base_manifest["cache"]["hit"] is False
    assert report.recipe_manifest["name"] == "bm25"
    assert report.case_results[0].metadata["expected"]["evidence"]  # qrels travel with results

    # the runner's one-pass batch scoring equals each metric scored on its own
    _, _, cases = await load_benchmark(cranfield)
    by_id = {case.case_id: case for case in cases}
    for result in report.case_results[:15]:
        for metric in beir_default_metrics():
            alone = await metric.evaluate(case=by_id[result.case_id], response=result.response)
            assert result.score(metric.name).value == alone.value

    again = (await BenchmarkRunner().run(**options)).report  # a notebook cell run twice
    assert again.knowledge_base_manifest["cache"]["hit"] is True
    assert again.score_summary == report.score_summary
