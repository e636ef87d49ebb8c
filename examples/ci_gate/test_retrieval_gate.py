"""A retrieval regression gate: a small Cranfield run checked against a committed baseline.

    pytest examples/ci_gate                          # gate (fails on a significant drop)
    pytest examples/ci_gate --heta-update-baseline   # accept the current numbers on purpose

(With a development checkout whose ``pytest11`` entry point is not installed yet, add
``-p heta_notebook.testing.pytest_plugin``.) The baseline is ``baselines/cranfield_bm25.json``; the
comparison page of every gate goes to ``heta-gates/``.
"""

from __future__ import annotations

import pytest

from heta_notebook import BenchmarkRunConfig, Recipe, run_benchmark
from heta_notebook.benchmarks._beir import BeirBenchmark, cranfield_folder
from heta_notebook.evaluators._retrieval import BeirRetrievalMetric
from heta_notebook.testing import assert_scores

N_QUERIES = 50  # the first 50 judged Cranfield queries: a few seconds, still a real test
RECIPE = Recipe(name="bm25", dense=None, hybrid=None)  # the recipe this repo ships


class SmallCranfield(BeirBenchmark):
    """The first ``N_QUERIES`` Cranfield queries over the whole corpus (its own version key)."""

    def __init__(self) -> None:
        super().__init__(
            cranfield_folder(), "test", dataset="cranfield", version=f"1-first{N_QUERIES}"
        )

    def _parse(self):
        documents, cases, metadata = super()._parse()
        return documents, cases[:N_QUERIES], metadata


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Run the recipe once for every test of this module (no store: nothing left behind)."""
    result = run_benchmark(
        benchmark=SmallCranfield(),
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
