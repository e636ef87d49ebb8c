"""Checked before it runs: the dry run, id coverage, and one matching rule for every metric."""

from __future__ import annotations

import time
import warnings

import pytest

from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    EvidenceRecallAtK,
    IdCoverageError,
    QueryResponse,
    QueryResult,
    run_benchmark,
)
from heta_notebook.evaluators._retrieval import evaluate_batch
from tests._kb_helpers import cranfield
from tests._runner_helpers import comparable
from tests._systems_helpers import per_case_scores, ranked_ids

EVALUATORS = [BeirRetrievalMetric("ndcg", 10), EvidenceRecallAtK(10)]


def _run(system, **options):
    options.setdefault("evaluators", EVALUATORS)
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(), recipe=system, progress=False, **options
    ).report


def test_ids_that_match_nothing_fail_before_the_run_showing_both_sides() -> None:
    calls = []

    def own_ids(text: str) -> list[str]:
        calls.append(text)
        return [f"vec-{d}" for d in ranked_ids(text)]

    with pytest.raises(IdCoverageError) as caught:
        _run(own_ids, limit=50)
    message = str(caught.value)
    first = ranked_ids(cranfield().cases[0].query)[0]
    assert f"'vec-{first}'" in message  # the system's ids
    assert "'1'" in message or "'10'" in message  # beside the benchmark's
    assert "document_id=" in message
    assert len(calls) == 20  # the dry run, widened to 4 x 5 before the error: no full batch


def test_partial_coverage_warns_and_is_recorded_and_shown() -> None:
    def half(text: str) -> list[str]:
        ids = ranked_ids(text)
        return [d if i % 2 == 0 else f"web-{d}" for i, d in enumerate(ids)]

    with pytest.warns(UserWarning, match="map to a benchmark document"):
        report = _run(half, limit=6)
    coverage = report.metadata["id_coverage"]
    assert coverage["share"] == pytest.approx(0.5)
    assert coverage["unmatched_examples"][0].startswith("web-")
    assert (
        "id coverage" in repr(report.card()).lower()
        or "id coverage" in report.card()._repr_html_().lower()
    )


def test_full_coverage_is_recorded_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        report = _run(ranked_ids, limit=6)
    assert report.metadata["id_coverage"]["share"] == 1.0


def test_the_dry_run_is_kept_not_asked_twice() -> None:
    calls = []

    def counted(text: str) -> list[str]:
        calls.append(text)
        return ranked_ids(text)

    _run(counted, limit=8)
    assert len(calls) == 8


def test_a_sync_query_works_instead_of_failing_every_case() -> None:
    class SyncKB:
        name = "sync-kb"
        query_modes = ("bm25",)

        def query(self, text, *, mode, top_k=10, options=None):
            ids = ranked_ids(text)[:top_k]
            return QueryResponse(mode=mode, results=tuple(QueryResult(id=d) for d in ids))

    report = _run(SyncKB(), limit=5)
    assert report.metadata["n_query_errors"] == 0
    assert not report.summary().empty


def test_a_system_failing_on_every_first_case_is_one_error() -> None:
    def down(text: str) -> list[str]:
        raise ConnectionError("index offline")

    with pytest.raises(RuntimeError, match="failed on each of the first 5 queries.*index offline"):
        _run(down, limit=40)


def test_one_matching_rule_for_beir_and_evidence_metrics() -> None:
    """Ids that name benchmark documents (or their ``doc#n`` chunks) match the same way
    for BEIR and evidence metrics, with or without the runner's stamping."""
    cases = cranfield().cases[:25]
    forms = {
        "source": lambda d, i: QueryResult(id=f"r{i}", source={"benchmark_document_id": d}),
        "id": lambda d, i: QueryResult(id=d),
        "chunk_id": lambda d, i: QueryResult(id=f"{d}#{i}"),
        "metadata": lambda d, i: QueryResult(id=f"r{i}", metadata={"beir_document_id": d}),
    }
    scored = {}
    for name, make in forms.items():
        responses = [
            QueryResponse(
                mode="m", results=tuple(make(d, i) for i, d in enumerate(ranked_ids(c.query)))
            )
            for c in cases
        ]
        scored[name] = [
            tuple((s.name, s.value) for s in row)
            for row in evaluate_batch(EVALUATORS, cases, responses)
        ]
    assert scored["id"] == scored["source"] == scored["chunk_id"] == scored["metadata"]
    assert any(value > 0 for row in scored["id"] for _, value in row)


def test_stamped_results_say_which_document_they_are() -> None:
    report = _run(lambda text: [f"{d}#2" for d in ranked_ids(text)], limit=2)
    result = report.case_results[0].response.results[0]
    assert result.source["benchmark_document_id"] == result.id.split("#")[0]
    assert per_case_scores(report) == per_case_scores(_run(ranked_ids, limit=2))


def test_dry_run_cases_keep_the_latency_they_took() -> None:
    def slow(text: str) -> list[str]:
        time.sleep(0.05)
        return ranked_ids(text)

    report = _run(slow, limit=7)
    assert all(r.latency_ms >= 40 for r in report.case_results)


@pytest.mark.parametrize(("concurrency", "asked"), [(1, 3), (8, 9)])
def test_a_stop_during_the_dry_run_keeps_what_was_answered(tmp_path, concurrency, asked) -> None:
    """The dry run asks its first 5 queries up to the run's concurrency at once (the first
    mapping, the run's next queries fill its second round: 1 + 8 at concurrency 8); a stop on
    the third keeps the two answers before it in the run's order either way."""
    first = [c.query for c in cranfield().cases[:10]]
    calls = []

    def stops_on_the_third(text: str) -> list[str]:
        calls.append(text)
        if text == first[2]:
            raise KeyboardInterrupt
        return ranked_ids(text)

    config = {"max_concurrent_queries": concurrency}
    with pytest.warns(RuntimeWarning, match="interrupted with 2 of 10"):
        report = _run(stops_on_the_third, limit=10, store=tmp_path, config=config)
    assert report.is_partial and [r.query for r in report.case_results] == first[:2]
    assert sorted(calls) == sorted(first[:asked])


def test_first_answers_that_miss_but_later_ones_match_is_a_warning_not_an_error() -> None:
    """Nothing maps in the first 5 queries, the 7th does: partial coverage, so a warning and a
    run (the dry run went on only until a query mapped, and its answers are reused)."""
    calls = []
    first = {c.query for c in cranfield().cases[:6]}

    def late(text: str) -> list[str]:
        calls.append(text)
        return [f"web-{d}" if text in first else d for d in ranked_ids(text)]

    with pytest.warns(UserWarning, match="first 7 queries map to a benchmark document"):
        report = _run(late, limit=12)
    assert report.metadata["id_coverage"]["checked_queries"] == 7
    assert len(report.case_results) == 12 and len(calls) == 12  # nothing asked twice


def test_the_dry_run_size_is_a_setting_and_zero_turns_the_check_off() -> None:
    def own_ids(text: str) -> list[str]:
        return [f"vec-{d}" for d in ranked_ids(text)]

    calls = []

    def counted(text: str) -> list[str]:
        calls.append(text)
        return own_ids(text)

    with pytest.raises(IdCoverageError, match="first 8 queries"):
        _run(counted, limit=30, config={"preflight_queries": 2})
    assert len(calls) == 8
    report = _run(own_ids, limit=3, config={"preflight_queries": 0})
    assert "id_coverage" not in report.metadata
    assert len(report.case_results) == 3


def test_the_dry_run_asks_its_queries_as_concurrently_as_the_run_may() -> None:
    """The first query alone (its shape checked), then two at a time under
    ``max_concurrent_queries=2``: the second and third meet at a barrier that a one-at-a-time
    dry run would never pass (it would time out and fail the run)."""
    import threading

    meet = threading.Barrier(2, timeout=20)
    first = cranfield().cases[0].query
    calls = []

    def pairs_up(text: str) -> list[str]:
        calls.append(text)
        if text != first:
            meet.wait()
        return ranked_ids(text)

    config = {"max_concurrent_queries": 2, "preflight_queries": 3}
    report = _run(pairs_up, limit=3, config=config)
    assert len(report.case_results) == 3 and len(calls) == 3  # asked once each, reused
    assert all(r.error is None for r in report.case_results)


def test_queries_asked_ahead_with_the_dry_run_are_the_run_s_own() -> None:
    """The first answer mapping, the dry run's second round is filled up to the run's
    concurrency with the run's next queries; each is asked once, and the run records them
    (answers and a failure alike) as a run without a dry run does."""
    texts = [c.query for c in cranfield().cases[:12]]
    calls: list[str] = []

    def fails_on_the_seventh(text: str) -> list[str]:
        calls.append(text)
        if text == texts[6]:
            raise RuntimeError("backend down for this one")
        return ranked_ids(text)

    config = {"max_concurrent_queries": 8, "preflight_queries": 3}
    checked = _run(fails_on_the_seventh, limit=12, config=config)
    assert sorted(calls) == sorted(texts)  # asked once each
    calls.clear()
    plain = _run(fails_on_the_seventh, limit=12, config={**config, "preflight_queries": 0})
    assert sorted(calls) == sorted(texts)
    assert checked.metadata["id_coverage"]["checked_queries"] == 3
    assert comparable(checked) == comparable(plain)
    (failed,) = [r for r in checked.case_results if r.error is not None]
    assert failed.query == texts[6] and failed.error.message == "backend down for this one"
