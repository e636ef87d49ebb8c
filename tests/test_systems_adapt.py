"""One door for a system under test: functions, objects with ``query``, any return shape.

On Cranfield a plain function returning document ids scores exactly what pytrec_eval scores
for the same run, case by case; the same ranking returned in every accepted form (ids,
``QueryResult``s, dicts, pairs, answer + results, sync or async, object or function) gives
the same per-case scores.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import pytrec_eval

from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    EvidenceRecallAtK,
    QueryResponse,
    QueryResult,
    SystemOutputError,
    as_system,
    run_benchmark,
)
from tests._kb_helpers import cranfield, qrels_of
from tests._systems_helpers import N_CASES, TOP_K, per_case_scores, ranked_ids

METRICS = {
    "ndcg_cut_10": "beir_ndcg@10",
    "map_cut_10": "beir_map@10",
    "recall_10": "beir_recall@10",
    "P_10": "beir_precision@10",
}
EVALUATORS = [
    BeirRetrievalMetric("ndcg", 10),
    BeirRetrievalMetric("recall", 10),
    EvidenceRecallAtK(10),
]


def _run(system, **options):
    options.setdefault("evaluators", EVALUATORS)
    options.setdefault("limit", N_CASES)
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(), recipe=system, progress=False, **options
    ).report


def search_ids(text: str) -> list[str]:
    """A user's retriever: document ids, best first."""
    return ranked_ids(text)


def test_a_function_returning_ids_equals_pytrec_eval_per_case() -> None:
    evaluators = [BeirRetrievalMetric(m, 10) for m in ("ndcg", "map", "recall", "precision")]
    report = _run(search_ids, evaluators=evaluators, limit=None)
    cases = cranfield().cases
    run = {
        c.case_id: {d: float(TOP_K - i) for i, d in enumerate(ranked_ids(c.query))} for c in cases
    }
    expected = pytrec_eval.RelevanceEvaluator(qrels_of(cases), set(METRICS)).evaluate(run)
    ours = per_case_scores(report)
    judged = [c.case_id for c in cases if any(e.relevance > 0 for e in c.expected.evidence)]
    assert len(report.case_results) == len(cases)
    assert {case for case, _ in ours} == set(judged)
    for case_id in judged:
        for theirs, name in METRICS.items():
            assert ours[(case_id, name)] == pytest.approx(expected[case_id][theirs], abs=1e-12)
    assert report.metadata["id_coverage"]["share"] == 1.0


class SyncQuery:
    """An object with a sync ``query`` and its own modes and manifest."""

    name = "sync-object"
    query_modes = ("plain",)

    def query(self, text: str, *, mode: str, top_k: int) -> QueryResponse:
        ids = ranked_ids(text)[:top_k]
        return QueryResponse(mode=mode, results=tuple(QueryResult(id=d) for d in ids))

    def manifest(self) -> dict:
        return {"index": "bm25", "version": 3}


class AsyncQuery:
    """An object with an async ``query`` taking only the text."""

    async def query(self, text: str) -> list[dict]:
        await asyncio.sleep(0)
        return [{"id": f"{d}#0", "text": f"chunk of {d}"} for d in ranked_ids(text)]


async def async_pairs(text: str, *, top_k: int) -> list[tuple[str, float]]:
    return [(d, float(TOP_K - i)) for i, d in enumerate(ranked_ids(text)[:top_k])]


FORMS = {
    "ids": search_ids,
    "query_results": lambda text: [QueryResult(id=d) for d in ranked_ids(text)],
    "dicts": lambda text: [
        {"id": d, "text": "...", "score": TOP_K - i} for i, d in enumerate(ranked_ids(text))
    ],
    "document_id_field": lambda text: [
        {"id": f"c{i}", "document_id": d} for i, d in enumerate(ranked_ids(text))
    ],
    "answer_and_results": lambda text: ("an answer", ranked_ids(text)),
    "answer_dict": lambda text: {
        "answer": "an answer",
        "results": ranked_ids(text),
        "citations": [1],
    },
    "async_pairs": async_pairs,
    "sync_object": SyncQuery(),
    "async_object_chunk_ids": AsyncQuery(),
    "mapped_field": as_system(
        lambda text: [{"id": f"hit-{i}", "docno": d} for i, d in enumerate(ranked_ids(text))],
        document_id="docno",
    ),
    "mapped_callable": as_system(
        lambda text: [{"id": f"x/{d}"} for d in ranked_ids(text)],
        document_id=lambda result: result.id.removeprefix("x/"),
    ),
}


@pytest.fixture(scope="module")
def baseline() -> dict:
    return per_case_scores(_run(search_ids))


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_gives_the_same_report(form: str, baseline: dict) -> None:
    report = _run(FORMS[form])
    assert len(report.case_results) == N_CASES
    assert not [r for r in report.case_results if r.error is not None]
    assert per_case_scores(report) == baseline
    assert any(value > 0 for value in baseline.values())


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_reply_read_later_is_what_query_returns(form: str) -> None:
    """The runner asks (``System.ask``) and reads the reply after its next query is asked:
    the same response as ``query``, field for field, results included."""
    from heta_notebook.systems._adapt import as_system as adapt

    documents = [doc.document_id for doc in cranfield().documents]
    system = adapt(FORMS[form], benchmark_documents=documents)
    text = cranfield().cases[3].query
    asked = asyncio.run(system.ask(text, top_k=TOP_K)).read()
    queried = asyncio.run(system.query(text, top_k=TOP_K))
    assert asked.model_dump() == queried.model_dump()
    assert [r.model_dump() for r in asked.results] == [r.model_dump() for r in queried.results]


def test_an_unreadable_reply_after_the_dry_run_is_that_case_error() -> None:
    texts = [case.query for case in cranfield().cases[:N_CASES]]

    def sometimes_broken(text: str) -> list[str] | int:
        return 42 if text == texts[7] else ranked_ids(text)

    report = _run(sometimes_broken)
    failed = [r for r in report.case_results if r.error is not None]
    assert [r.query for r in failed] == [texts[7]]
    assert failed[0].error.error_type == "SystemOutputError"
    assert "returned int" in failed[0].error.message


def test_a_function_is_labelled_by_its_name_in_one_default_mode() -> None:
    report = _run(search_ids, limit=3)
    assert report.query_modes == ("default",)
    assert report.metadata["label"] == "search_ids"
    assert report.recipe_manifest["kind"] == "function"


def test_an_object_keeps_its_modes_and_manifest() -> None:
    report = _run(SyncQuery(), limit=3)
    assert report.query_modes == ("plain",)
    assert report.recipe_manifest["index"] == "bm25"
    assert report.metadata["label"] == "sync-object"


def test_answers_and_citations_are_kept() -> None:
    report = _run(FORMS["answer_dict"], limit=2)
    response = report.case_results[0].response
    assert response.answer == "an answer"
    assert response.citations[0].result_id == response.results[0].id


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")  # shallow on purpose
def test_mode_and_top_k_reach_the_function() -> None:
    seen = []

    def search(text: str, *, mode: str, top_k: int) -> list[str]:
        seen.append((mode, top_k))
        return ranked_ids(text)[:top_k]

    _run(search, limit=3, config={"top_k": 4})
    assert set(seen) == {("default", 4)}


def test_sync_functions_run_in_worker_threads_under_the_concurrency_limit() -> None:
    lock, state = threading.Lock(), {"now": 0, "most": 0, "threads": set()}

    def slow(text: str) -> list[str]:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
            state["threads"].add(threading.current_thread() is threading.main_thread())
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        return ranked_ids(text)

    _run(slow, limit=12, config={"max_concurrent_queries": 2})
    assert state["threads"] == {False}
    assert 1 <= state["most"] <= 2


def test_an_unreadable_return_value_is_one_error_before_the_run() -> None:
    calls = []

    def broken(text: str) -> int:
        calls.append(text)
        return 42

    with pytest.raises(SystemOutputError) as caught:
        _run(broken)
    message = str(caught.value)
    assert "system 'broken' returned int" in message
    assert "QueryResult" in message and "(answer, results)" in message
    assert len(calls) == 1


def test_an_unreadable_result_item_names_its_rank() -> None:
    with pytest.raises(SystemOutputError, match="as result 2"):
        _run(lambda text: ["d1", object()])


def test_something_that_is_not_a_system_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="object with query"):
        as_system(42)


@pytest.mark.parametrize("entry", ["run_benchmark", "evaluate", "as_system"])
def test_help_lists_what_the_entry_points_accept(entry: str) -> None:
    import pydoc

    import heta_notebook

    text = pydoc.render_doc(getattr(heta_notebook, entry), renderer=pydoc.plaintext)
    for accepted in ("query", "LangChain", "LlamaIndex", "HttpSystem"):
        assert accepted in text, (entry, accepted)
