"""A retrieval regression gate: a small Cranfield run checked against a committed baseline.

    pytest examples/ci_gate                          # gate (fails on a significant drop)
    pytest examples/ci_gate --heta-update-baseline   # accept the current numbers on purpose

(With a development checkout whose ``pytest11`` entry point is not installed yet, add
``-p heta_notebook.testing.pytest_plugin``.) The baseline is ``baselines/cranfield_bm25.json``; the
comparison page of every gate goes to ``heta-gates/``.
"""

from __future__ import annotations

import pytest

from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    BenchmarkRunConfig,
    Recipe,
    run_benchmark,
)
from heta_notebook.testing import assert_scores

N_QUERIES = 50  # the first 50 judged Cranfield queries: a few seconds, still a real test
RECIPE = Recipe(name="bm25", dense=None, hybrid=None)  # the recipe this repo ships


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Run the recipe once for every test of this module (no store: nothing left behind)."""
    result = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        limit=N_QUERIES,  # the first N queries over the whole corpus
        recipe=RECIPE,
        evaluators=[BeirRetrievalMetric("ndcg", 10), BeirRetrievalMetric("recall", 10)],
        config=BenchmarkRunConfig(top_k=10),
        progress=False,
        workspace=tmp_path_factory.mktemp("workspace"),
    )
    return result.report


def test_retrieval_did_not_regress(report, heta_baseline):
    """nDCG@10 and recall@10 may not drop significantly (paired test, Holm) by more than 0.01."""
    heta_baseline("baselines/cranfield_bm25.json").check(
        report, scores=["beir_ndcg@10", "beir_recall@10"], max_drop=0.01
    )


def test_retrieval_floor(report):
    """An absolute floor as well, for numbers that must never be accepted."""
    assert_scores(report, {"beir_ndcg@10": ">= 0.25"})
