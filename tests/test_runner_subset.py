"""Run economically: limit, sample (seeded), case_ids and labels pick exactly those cases, on
run_benchmark and evaluate; the subset is part of the fingerprint, so resuming a report with
another subset is refused like any other change of settings."""

from __future__ import annotations

import pytest

from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    RecordsBenchmark,
    evaluate,
    run_benchmark,
)
from heta_notebook.reports._run import CheckpointMismatchError
from tests._kb_helpers import cranfield
from tests._systems_helpers import ranked_ids

EVALUATORS = [BeirRetrievalMetric("ndcg", 10)]
ALL_IDS = [c.case_id for c in cranfield().cases]


def _asked(**subset) -> tuple[list[str], object]:
    asked: list[str] = []
    by_text = {c.query: c.case_id for c in cranfield().cases}

    def search(text: str) -> list[str]:
        asked.append(by_text[text])
        return ranked_ids(text)

    report = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=search,
        evaluators=EVALUATORS,
        progress=False,
        **subset,
    ).report
    assert sorted(asked) == sorted(r.case_id for r in report.case_results)
    return [r.case_id for r in report.case_results], report


def test_limit_runs_the_first_cases() -> None:
    ran, report = _asked(limit=7)
    assert ran == ALL_IDS[:7]
    assert report.metadata["subset"] == {"limit": 7}


def test_case_ids_run_exactly_those_in_benchmark_order() -> None:
    wanted = [ALL_IDS[40], ALL_IDS[3], ALL_IDS[12]]
    ran, _ = _asked(case_ids=wanted)
    assert ran == [ALL_IDS[3], ALL_IDS[12], ALL_IDS[40]]


def test_sample_is_seeded_and_repeatable() -> None:
    first, report = _asked(sample=9, seed=3)
    again, _ = _asked(sample=9, seed=3)
    other, _ = _asked(sample=9, seed=4)
    assert first == again and len(first) == 9 and len(set(first)) == 9
    assert first != other
    assert set(first) <= set(ALL_IDS)
    assert report.metadata["subset"] == {"sample": 9, "seed": 3}


def test_unknown_case_ids_are_named() -> None:
    with pytest.raises(ValueError, match="case_ids not in the benchmark: \\['nope'\\]"):
        _asked(case_ids=["nope"])


def test_a_label_filter_runs_the_matching_cases() -> None:
    records = [
        {"id": f"q{i}", "query": f"question {i}", "answer": "a", "labels": {"topic": t}}
        for i, t in enumerate(["x", "y", "x", "z", "x"])
    ]
    benchmark = RecordsBenchmark(records, manifest="topics")
    ran = run_benchmark(
        benchmark=benchmark,
        recipe=lambda text: {"answer": "a"},
        evaluators=[],
        labels={"topic": ["x", "z"]},
        limit=3,
        progress=False,
    ).report
    assert [r.case_id for r in ran.case_results] == ["q0", "q2", "q3"]


def test_evaluate_takes_the_same_subset() -> None:
    data = [{"inputs": {"query": f"q{i}"}, "ground_truth": {"answer": "x"}} for i in range(10)]
    report = evaluate(lambda inputs: "x", data, limit=4, progress=False)
    assert len(report.case_results) == 4
    sampled = evaluate(lambda inputs: "x", data, sample=3, seed=1, progress=False)
    assert len(sampled.case_results) == 3
    assert report.metadata["fingerprint"] != sampled.metadata["fingerprint"]


def test_resuming_a_report_with_another_subset_is_refused(tmp_path) -> None:
    options = {
        "benchmark": BeirBenchmark.cranfield(),
        "recipe": ranked_ids,
        "evaluators": EVALUATORS,
        "store": tmp_path,
        "config": {"report_id": "first-look"},
        "progress": False,
    }
    run_benchmark(**options, limit=5)
    again = run_benchmark(**options, limit=5)  # the same subset: the saved report, unchanged
    assert len(again.report.case_results) == 5
    with pytest.raises(CheckpointMismatchError, match="other settings"):
        run_benchmark(**options, limit=10)


def test_evaluate_on_a_benchmark_checks_ids_before_the_run() -> None:
    from heta_notebook import IdCoverageError

    def own_ids(inputs: dict) -> dict:
        return {"answer": "x", "results": [{"id": f"v{d}"} for d in ranked_ids(inputs["query"])]}

    with pytest.raises(IdCoverageError, match="function 'own_ids'"):
        evaluate(own_ids, BeirBenchmark.cranfield(), EVALUATORS, limit=8, progress=False)
    report = evaluate(
        lambda inputs: {"results": ranked_ids(inputs["query"])},
        BeirBenchmark.cranfield(),
        EVALUATORS,
        limit=8,
        progress=False,
    )
    assert report.metadata["id_coverage"]["share"] == 1.0
    assert report.metadata["subset"] == {"limit": 8}
