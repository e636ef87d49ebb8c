"""Honest aggregation: skipped and failed scores are excluded from means and counted."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy import stats

from heta_notebook.evaluators._aggregation import (
    aggregate,
    bootstrap_ci,
    mean,
    median,
    mode,
    summarize,
    summary_table,
    weighted_mean,
)
from heta_notebook.schema import EvaluationCaseResult, EvaluationError, EvaluationScore
from tests._evaluators_helpers import case_result


def s(value, name="m", passed=None):
    return EvaluationScore(name=name, value=value, passed=passed)


SKIP = EvaluationScore.skipped_score("m", "no qrels")
ERR = EvaluationScore.error_score("m", RuntimeError("boom"))


def test_honeyhive_examples():
    assert mean([0.8, 0.9, 0.7]) == pytest.approx(0.8)
    assert median([0.8, 0.9, 0.7, 0.6, 1.0]) == 0.8
    assert mode([0.8, 0.8, 0.9, 0.7, 0.8]) == 0.8


def test_mode_ties_go_to_first_seen_like_statistics_mode_and_counts_text():
    assert mode([0.2, 0.1, 0.1, 0.2]) == statistics.mode([0.2, 0.1, 0.1, 0.2]) == 0.2
    assert mode([s("yes"), s("no"), s("no")]) == "no"
    assert mode([]) is None


def test_booleans_count_as_one_and_zero():
    assert mean([True, False, True, True]) == 0.75
    assert mean([s(True), s(False)]) == 0.5


def test_skipped_and_errors_are_excluded_and_counted():
    agg = aggregate([s(1.0, passed=True), s(0.0, passed=False), SKIP, ERR, s(0.5)])
    assert agg.value == pytest.approx(0.5)
    assert (agg.n_scored, agg.n_skipped, agg.n_error, agg.n) == (3, 1, 1, 3)
    assert (agg.n_passed, agg.n_judged, agg.pass_rate) == (1, 2, 0.5)
    assert agg.name == "m"
    # the dishonest alternative (heta/ragas) would have averaged the zeros in:
    assert agg.value != np.mean([1.0, 0.0, 0.0, 0.0, 0.5])


def test_nothing_scored_gives_none_not_zero():
    agg = aggregate([SKIP, ERR])
    assert agg.value is None and agg.n_scored == 0 and agg.pass_rate is None


def test_strings_are_counted_not_averaged():
    agg = aggregate([s("good"), s("bad"), s("good"), s(1.0)])
    assert agg.counts == {"good": 2, "bad": 1}
    assert agg.value == 1.0 and agg.n_scored == 4


def test_weighted_mean_by_weight_and_methods():
    scores = [s(1.0, "a"), s(0.0, "b"), EvaluationScore.skipped_score("c", "x")]
    assert weighted_mean(scores, [3.0, 1.0, 100.0]) == 0.75
    assert aggregate(scores, "weighted_mean", [3.0, 1.0, 100.0]).value == 0.75
    assert aggregate(scores, "median").value == 0.5
    assert aggregate(scores, "mode").value == 1.0
    assert weighted_mean([s(1.0)], [0.0]) is None
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate(scores, "max")  # type: ignore[arg-type]


def test_summarize_per_mode_with_t_interval_pass_rate_and_query_errors():
    results = [
        case_result("bm25", s(v, "ndcg", passed=v > 0.5), case_id=str(i))
        for i, v in enumerate([0.2, 0.4, 0.9, 1.0])
    ]
    results.append(case_result("bm25", EvaluationScore.skipped_score("ndcg", "no qrels")))
    results.append(case_result("dense.v2", s(1.0, "ndcg"), s("A", "grade")))
    results.append(
        EvaluationCaseResult(
            case_id="x",
            query="q",
            query_mode="bm25",
            error=EvaluationError(message="down", error_type="IOError"),
        )
    )
    summary = summarize(results)
    agg = summary["bm25.ndcg"]
    values = np.array([0.2, 0.4, 0.9, 1.0])
    half = stats.t.ppf(0.975, 3) * values.std(ddof=1) / 2
    assert agg.value == pytest.approx(values.mean())
    assert agg.std == pytest.approx(values.std(ddof=1))
    expected = (max(values.mean() - half, values.min()), min(values.mean() + half, values.max()))
    assert (agg.ci_low, agg.ci_high) == pytest.approx(expected)
    assert (agg.n_scored, agg.n_skipped, agg.n_error, agg.pass_rate) == (4, 1, 1, 0.5)
    assert summary["dense.v2.ndcg"].query_mode == "dense.v2"
    assert summary["dense.v2.ndcg"].std is None and summary["dense.v2.ndcg"].n_error == 0
    assert summary["dense.v2.grade"].counts == {"A": 1}
    rows = summary_table(summary)
    assert {r["score"] for r in rows} == {"ndcg", "grade"} and "pass_rate" in rows[0]


def test_summarize_matches_aggregate_on_a_large_random_report():
    rng = np.random.default_rng(1)
    values = rng.random(500)
    results = [case_result("m", s(float(v), "x"), case_id=str(i)) for i, v in enumerate(values)]
    assert summarize(results)["m.x"].value == pytest.approx(
        aggregate([r.scores[0] for r in results]).value
    )


def test_bootstrap_ci_is_deterministic_and_brackets_the_mean():
    values = np.random.default_rng(0).random(200)
    low, high = bootstrap_ci(values, seed=3)
    assert (low, high) == bootstrap_ci(values, seed=3)
    assert low < values.mean() < high
    assert bootstrap_ci([1.0]) is None
    assert math.isclose(high - low, 2 * 1.96 * values.std(ddof=1) / math.sqrt(200), rel_tol=0.25)


def test_summary_ci_never_leaves_the_observed_range() -> None:
    from heta_notebook.evaluators._aggregation import summarize
    from heta_notebook.schema import EvaluationCaseResult, EvaluationScore, QueryResponse

    results = [
        EvaluationCaseResult(
            case_id=str(i),
            query="q",
            query_mode="m",
            response=QueryResponse(mode="m"),
            scores=[EvaluationScore(name="recall@10", value=1.0 if i else 0.5)],
        )
        for i in range(5)
    ]
    agg = summarize(results)["m.recall@10"]
    assert agg.ci_high == 1.0 and 0.5 <= agg.ci_low < agg.value


# --------------------------------------------------------------------------- the one engine


def test_status_rule_is_one_function_used_by_the_schema_and_the_vectorised_form():
    from heta_notebook.schema._status import STATUSES, status_code, status_codes

    cases = [
        {},
        {"reason": "x"},
        {"skipped": True},
        {"error": {"message": "m"}},
        {"error": {"message": "m"}, "skipped": True},
        {"skipped": False},
        {"error": None},
    ]
    codes = status_codes(cases)
    assert codes.tolist() == [status_code(md) for md in cases] == [0, 0, 1, 2, 2, 0, 0]
    for md, code in zip(cases, codes, strict=True):
        assert EvaluationScore(name="m", value=0.0, metadata=md).status == STATUSES[code]


def test_grouped_and_matrix_stats_match_hand_computed_numbers():
    from heta_notebook.evaluators._aggregation import grouped_stats, matrix_stats

    groups = np.array([0, 1, 0, 0, 1, 2, 1])
    values = np.array([0.2, 1.0, 0.4, 0.9, np.nan, 0.5, 0.0])
    status = np.array([0, 0, 0, 0, 0, 1, 2], dtype=np.int8)  # group 2 only skipped
    passed = np.array([0, 1, np.nan, 1, 1, np.nan, 0])
    out = grouped_stats(groups, 3, values, status=status, passed=passed)
    g0 = np.array([0.2, 0.4, 0.9])
    assert out["mean"][0] == pytest.approx(g0.mean()) and out["std"][0] == pytest.approx(
        g0.std(ddof=1)
    )
    half = stats.t.ppf(0.975, 2) * g0.std(ddof=1) / math.sqrt(3)
    assert out["ci_low"][0] == pytest.approx(max(g0.mean() - half, 0.2))
    assert out["ci_high"][0] == pytest.approx(min(g0.mean() + half, 0.9))
    # group 1: one number (1.0), one scored non-number (text), one error
    assert (out["n"][1], out["n_scored"][1], out["n_error"][1]) == (1, 2, 1)
    assert out["mean"][1] == 1.0 and np.isnan(out["std"][1])
    assert (out["n_passed"].tolist(), out["n_judged"].tolist()) == ([1, 2, 0], [2, 2, 0])
    assert (out["n_skipped"][2], out["n"][2]) == (1, 0) and np.isnan(out["mean"][2])
    matrix = np.array([[0.2, 1.0], [0.4, np.nan], [0.9, np.nan]])
    m = matrix_stats(matrix, axis=0)
    assert m["mean"][0] == out["mean"][0] or m["mean"][0] == pytest.approx(out["mean"][0])
    assert m["ci_low"][0] == pytest.approx(out["ci_low"][0]) and m["n"].tolist() == [3, 1]


def test_one_bootstrap_kernel_gives_the_same_draws_on_every_path():
    from heta_notebook.evaluators import _aggregation as agg

    rng = np.random.default_rng(5)
    x = rng.random((700, 3))
    cached = agg.bootstrap_means(x, 1000, seed=4)  # 700 × 1000 ≤ the cache size
    blocked = agg._resample_counts(np.random.default_rng(4), 1000, 700, np.float64) @ x / 700
    np.testing.assert_allclose(cached, blocked, rtol=1e-12)
    old = agg._STEP_ELEMENTS, agg._CHUNK_ELEMENTS, agg._CACHED_COUNTS
    try:  # force several blocks of several draw steps, no cache: still the same numbers
        agg._STEP_ELEMENTS, agg._CHUNK_ELEMENTS, agg._CACHED_COUNTS = 7000, 140_000, 0
        np.testing.assert_allclose(agg.bootstrap_means(x, 1000, seed=4), cached, rtol=1e-12)
    finally:
        agg._STEP_ELEMENTS, agg._CHUNK_ELEMENTS, agg._CACHED_COUNTS = old
    intervals = agg.bootstrap_intervals({"a": x[:, 0], "b": x[:, 1], "one": [1.0]}, seed=9)
    assert intervals["a"] == pytest.approx(list(bootstrap_ci(x[:, 0], seed=9)), abs=1e-12)
    assert intervals["one"] is None
    assert agg.bootstrap_intervals({"a": x[:, 0]}, budget=10)["a"] is None
