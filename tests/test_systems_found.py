"""The dry run checks that results were found at all, messages show the system's own ids (or
say none were given) with the adapter's own option, and warnings point at the user's line."""

from __future__ import annotations

import warnings

import pytest

from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    DepthWarning,
    EvidenceRecallAtK,
    HttpSystem,
    IdCoverageError,
    NoResultsError,
    as_system,
    run_benchmark,
)
from tests._systems_helpers import SearchService, ranked_ids, rankings

EVALUATORS = [BeirRetrievalMetric("ndcg", 10), EvidenceRecallAtK(10)]


def _run(system, **options):
    options.setdefault("evaluators", EVALUATORS)
    options.setdefault("limit", 24)
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(), recipe=system, progress=False, **options
    ).report


def test_an_http_results_path_matching_nothing_fails_with_the_reply_keys() -> None:
    with SearchService().running() as service:
        system = HttpSystem(
            service.url, body={"q": "{query}", "k": "{top_k}"}, results="data.results"
        )
        with pytest.raises(NoResultsError) as caught:
            _run(system)
        asked = len(service.requests)
    message = str(caught.value)
    assert "'data.results' matched nothing" in message
    assert "top-level keys: ['data']" in message and "'data' holds ['answer', 'hits']" in message
    assert asked == 20  # the escalated dry run (4 x 5 queries) asked before calling it an error
    assert isinstance(caught.value, IdCoverageError)  # older `except IdCoverageError` still catches


def test_a_function_returning_nothing_fails_with_the_value_type_and_length() -> None:
    with pytest.raises(NoResultsError, match="list of length 0"):
        _run(lambda text: [])
    with pytest.raises(NoResultsError, match=r"a dict with keys \['hits', 'results'\]"):
        _run(lambda text: {"results": None, "hits": ranked_ids(text)})


def test_partial_emptiness_warns_with_its_share_and_is_kept_in_the_report() -> None:
    texts = sorted(rankings())

    def sometimes(text: str) -> list[str]:
        return [] if texts.index(text) % 2 else ranked_ids(text)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = _run(sometimes, limit=10)
    share = report.metadata["id_coverage"]
    empty = sum(1 for r in report.case_results[:5] if not r.response.results)
    assert empty and share["empty_queries"] == empty and share["checked_queries"] == 5
    found = [w for w in caught if "found nothing for" in str(w.message)]
    assert len(found) == 1 and f"{empty} of the first 5 queries ({empty / 5:.0%})" in str(
        found[0].message
    )
    assert found[0].filename == __file__
    assert f"{empty} of the first 5 queries found nothing" in report._repr_html_()  # the card


def test_answer_only_replies_are_not_empty() -> None:
    report = _run(lambda text: f"about {text[:10]}", evaluators=[EvidenceRecallAtK(10)], limit=6)
    assert "empty_queries" not in report.metadata.get("id_coverage", {})
    assert len(report.case_results) == 6


def test_langchain_without_ids_says_none_were_given_and_suggests_id_key() -> None:
    documents = pytest.importorskip("langchain_core.documents")
    runnables = pytest.importorskip("langchain_core.runnables")
    retriever = runnables.RunnableLambda(
        lambda q: [documents.Document(page_content=f"doc {d}") for d in ranked_ids(q)]
    )
    with pytest.raises(IdCoverageError) as caught:
        _run(retriever)
    message = str(caught.value)
    assert "result-1" not in message and "The system gave no ids" in message
    assert "id_key=" in message and "document_id=" not in message.split("say where they are")[1]


def test_http_fields_suggestion_and_own_ids_shown() -> None:
    with SearchService().running() as service:
        system = HttpSystem(service.url, body={"q": "{query}", "k": "{top_k}"}, results="data.hits")
        with pytest.raises(IdCoverageError) as caught:  # hits carry 'doc_id', not 'id'
            _run(system)
    message = str(caught.value)
    assert "result-1" not in message and "The system gave no ids" in message
    assert "fields={'id':" in message


def test_a_function_with_own_ids_shows_them() -> None:
    with pytest.raises(IdCoverageError) as caught:
        _run(lambda text: [f"vec-{d}" for d in ranked_ids(text)])
    assert "'vec-" in str(caught.value) and "as_system(obj, document_id=" in str(caught.value)


def test_depth_warning_points_at_the_users_call() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _run(as_system(lambda text: ranked_ids(text)[:4]), limit=3, config={"top_k": 4})
    depth = [w for w in caught if issubclass(w.category, DepthWarning)]
    assert depth and depth[0].filename == __file__
