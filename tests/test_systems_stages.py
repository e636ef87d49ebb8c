"""The stages record: a system reports what each step ranked, and the saved report keeps it."""

from __future__ import annotations

import pytest

from heta_notebook import BeirBenchmark, BeirRetrievalMetric, ReportStore, Stages, run_benchmark
from heta_notebook.systems import Stage, response_stages
from tests._systems_helpers import ranked_ids


def pipeline(text: str) -> dict:
    """Retrieve 10, rerank (here: reverse), keep 5; each step reported as a stage."""
    stages = Stages()
    retrieved = ranked_ids(text)
    stages.add("retrieve", retrieved)
    reranked = list(reversed(retrieved))
    stages.add("rerank", reranked, scores=[float(i) for i in range(len(reranked), 0, -1)])
    return stages.response(results=reranked[:5], answer=None)


def test_stages_are_kept_in_the_saved_report(tmp_path) -> None:
    result = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=pipeline,
        evaluators=[BeirRetrievalMetric("recall", 10)],
        store=ReportStore(tmp_path),
        limit=3,
        progress=False,
    )
    saved = ReportStore(tmp_path).load(result.report.knowledge_base_name, result.report.report_id)
    first = saved.case_results[0]
    stages = response_stages(first.response)
    retrieved = ranked_ids(first.query)
    assert [s.name for s in stages] == ["retrieve", "rerank"]
    assert stages[0].ids == tuple(retrieved) and stages[0].scores is None
    assert stages[1].ids == tuple(reversed(retrieved)) and stages[1].scores[0] == 10.0
    assert [r.id for r in first.response.results] == list(reversed(retrieved))[:5]


def test_attach_adds_trace_events_and_a_record_is_checked() -> None:
    from heta_notebook import QueryResponse

    response = Stages().add("retrieve", ["a", "b"]).attach(QueryResponse(mode="m"))
    assert response.metadata["stages"] == [{"stage": "retrieve", "ids": ["a", "b"]}]
    assert response.trace[-1].stage == "retrieve"
    with pytest.raises(ValueError, match="2 scores for 1 ids"):
        Stage("rerank", ("a",), (1.0, 2.0))
    with pytest.raises(ValueError, match="non-empty name"):
        Stages().add(" ", ["a"])


def test_a_two_stage_system_shows_evidence_lost_at_its_rerank_stage(tmp_path) -> None:
    """Stages recorded through the systems door feed the miss classes: evidence the retrieve
    stage ranked but the rerank stage dropped is 'lost at stage rerank', with its rank."""

    def two_stage(text: str) -> dict:
        stages = Stages()
        retrieved = ranked_ids(text)
        stages.add("retrieve", retrieved)
        kept = retrieved[5:]  # a (bad) reranker that drops the first five
        stages.add("rerank", kept)
        return stages.response(results=kept, answer=None)

    result = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=two_stage,
        evaluators=[BeirRetrievalMetric("recall", 10)],
        store=ReportStore(tmp_path),
        limit=20,
        progress=False,
    )
    misses = result.report.misses(level="evidence")
    lost = misses[misses["miss_class"] == "lost at stage"]
    assert len(lost) and set(lost["stage"]) == {"rerank"}
    assert lost["rank"].between(1, 5).all()  # where the retrieve stage had them
