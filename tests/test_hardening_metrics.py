"""heta-convention nDCG with huge grades stays finite, and such a run reads back (issue #16)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from heta_notebook import BeirRetrievalMetric, RecordsBenchmark, ReportStore, run_benchmark
from heta_notebook.evaluators._retrieval import evaluate_run


def exact_heta_ndcg(ranked_grades: list[int], all_grades: list[int], k: int) -> float:
    """nDCG@k with gain 2**g - 1 in exact rational arithmetic (Python ints never overflow)."""

    def dcg(grades):
        # log2(rank + 1) is irrational; 2**g - 1 is exact: keep gains exact, discounts as floats
        return sum(
            Fraction(2**g - 1) / Fraction(math.log2(i + 2)) for i, g in enumerate(grades[:k])
        )

    return float(dcg(ranked_grades) / dcg(sorted(all_grades, reverse=True)))


@pytest.mark.parametrize("top", [1023, 1024, 1100, 5000, 10**6])
def test_heta_ndcg_with_huge_grades_is_finite_and_right(top):
    qrels = {"q": {"a": top, "b": top - 1, "c": 1}}
    run = {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}
    metric = BeirRetrievalMetric("ndcg", 10, convention="heta")
    value = evaluate_run(qrels, run, [metric])["q"][metric.name]
    assert math.isfinite(value)
    assert value == pytest.approx(
        exact_heta_ndcg([1, top, top - 1], [top, top - 1, 1], 10), rel=1e-12
    )


def test_ordinary_grades_are_unchanged():
    qrels = {"q": {"a": 3, "b": 2, "c": 1}}
    run = {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}
    metric = BeirRetrievalMetric("ndcg", 10, convention="heta")
    value = evaluate_run(qrels, run, [metric])["q"][metric.name]
    assert value == pytest.approx(exact_heta_ndcg([1, 3, 2], [3, 2, 1], 10), rel=1e-15)


class _Kb:
    """A built KB that always returns the same three documents."""

    async def query(self, text, *, mode, top_k, options=None):
        from heta_notebook import QueryResponse, QueryResult

        results = [
            QueryResult(id=d, text=d, score=3.0 - i, metadata={"document_id": d})
            for i, d in enumerate("cab")
        ]
        return QueryResponse(mode=mode, results=results)


def test_a_run_with_huge_grades_saves_a_report_that_loads(tmp_path):
    evidence = [
        {"reference_id": "a", "metadata": {"relevance": 4096}},
        {"reference_id": "b", "metadata": {"relevance": 2000}},
        {"reference_id": "c", "metadata": {"relevance": 1}},
    ]
    bench = RecordsBenchmark([{"id": "q1", "query": "anything", "evidence": evidence}])
    store = ReportStore(tmp_path)
    metric = BeirRetrievalMetric("ndcg", 10, convention="heta")
    result = run_benchmark(
        benchmark=bench, recipe=_Kb(), query_modes=["m"], evaluators=[metric], store=store
    )
    report = result.report if hasattr(result, "report") else result
    loaded = store.load(report.knowledge_base_name, report.report_id)
    (score,) = loaded.case_results[0].scores
    assert score.status == "scored" and math.isfinite(score.value) and 0 < score.value < 1
