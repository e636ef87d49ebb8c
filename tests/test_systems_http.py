"""``HttpSystem`` against a real loopback service: the request template, where the reply keeps
results and answer, field renames, and errors (a 500, a timeout, a reply of another shape)."""

from __future__ import annotations

import asyncio

import pytest

from heta_notebook import BeirBenchmark, BeirRetrievalMetric, HttpSystem, run_benchmark
from heta_notebook.systems import HttpSystemError
from tests._kb_helpers import cranfield
from tests._systems_helpers import SearchService, per_case_scores, ranked_ids

EVALUATORS = [BeirRetrievalMetric("ndcg", 10), BeirRetrievalMetric("recall", 10)]


def _system(url: str, **options) -> HttpSystem:
    return HttpSystem(
        url,
        body={"q": "{query}", "k": "{top_k}", "tag": "mode={mode}"},
        results="data.hits",
        answer="data.answer",
        fields={"id": "doc_id", "text": "content"},
        **options,
    )


def _run(system, **options):
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=system,
        evaluators=EVALUATORS,
        progress=False,
        limit=12,
        **options,
    ).report


def test_a_service_scores_like_the_same_ranking_returned_by_a_function() -> None:
    with SearchService().running() as service:
        report = _run(_system(service.url), config={"top_k": 10})
    assert service.requests[0] == {"q": cranfield().cases[0].query, "k": 10, "tag": "mode=default"}
    assert len(service.requests) == 12  # the dry run's answers were reused
    assert per_case_scores(report) == per_case_scores(_run(ranked_ids))
    response = report.case_results[0].response
    assert response.answer == "10 hits"
    assert response.results[0].text.startswith("document ")
    assert report.recipe_manifest["kind"] == "http"


def test_a_500_fails_with_the_status_and_url() -> None:
    with SearchService().running() as service:
        service.status = 500
        with pytest.raises(RuntimeError, match="answered HTTP 500.*index unavailable"):
            _run(_system(service.url))


def test_a_status_error_after_good_replies_fails_that_query() -> None:
    with SearchService().running() as service:
        system = _system(service.url)
        answered = asyncio.run(system.query(cranfield().cases[0].query))
        assert len(answered["results"]) == 10
        service.status = 503
        with pytest.raises(HttpSystemError, match="HTTP 503"):
            asyncio.run(system.query(cranfield().cases[0].query))


def test_a_timeout_names_the_url_and_the_limit() -> None:
    with SearchService().running() as service:
        service.delay = 1.0
        system = _system(service.url, timeout=0.2)
        with pytest.raises(TimeoutError, match=r"did not answer within 0.2 s"):
            asyncio.run(system.query(cranfield().cases[0].query))


def test_a_reply_without_the_results_path_says_where_it_looked() -> None:
    with SearchService().running() as service:
        system = HttpSystem(service.url, body={"q": "{query}", "k": 3}, results="hits.items")
        with pytest.raises(HttpSystemError, match="no 'hits.items'.*holds \\['data'\\]"):
            asyncio.run(system.query(cranfield().cases[0].query))


def test_bad_settings_are_refused_and_secrets_stay_out_of_the_manifest() -> None:
    with pytest.raises(ValueError, match="must start with http"):
        HttpSystem("localhost:8000/search")
    system = HttpSystem("http://127.0.0.1:9/x", headers={"Authorization": "Bearer sk-secret"})
    assert "sk-secret" not in str(system.manifest())
