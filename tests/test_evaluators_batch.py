"""evaluate_batch: many built-in evaluators over many cases, identical to the per-case path."""

from __future__ import annotations

import asyncio
import gc
import random

import pytest

from heta_notebook.evaluators._answer import AnswerContains, AnswerExactMatch, AnswerTokenF1
from heta_notebook.evaluators._decorators import evaluator
from heta_notebook.evaluators._retrieval import (
    BeirRetrievalMetric,
    EvidenceRecallAtK,
    beir_default_metrics,
    evaluate_batch,
    paused_gc,
    supports_batch,
)
from heta_notebook.schema import BenchmarkCase, BenchmarkExpected
from tests._evaluators_helpers import chunk, qrels_case, response


def mixed_cases(n: int = 80, seed: int = 5):
    rng = random.Random(seed)
    cases, responses = [], []
    for i in range(n):
        docs = [f"d{j}" for j in rng.sample(range(40), 12)]
        qrels = {d: rng.choice([-1, 0, 1, 2, 3]) for d in docs[:6]}
        case = qrels_case(qrels, case_id=f"c{i}", answers=("Paris",) if i % 2 else ())
        if i % 7 == 0:
            case = BenchmarkCase(case_id=f"c{i}", query="q", expected=BenchmarkExpected())
        ranked = rng.sample(docs + [f"x{j}" for j in range(8)], rng.randint(0, 15))
        answer = rng.choice([None, "paris", "It is Paris, France."])
        cases.append(case)
        responses.append(response([chunk(d, r) for r, d in enumerate(ranked)], answer=answer))
    return cases, responses


EVALUATORS = (
    *beir_default_metrics((1, 5, 10)),
    BeirRetrievalMetric("ndcg", 10, convention="heta"),
    BeirRetrievalMetric("map", 5, convention="heta"),
    EvidenceRecallAtK(5),
    AnswerContains(),
    AnswerExactMatch(),
    AnswerTokenF1(),
)


def test_mixed_batch_equals_awaiting_each_evaluator_case_by_case():
    cases, responses = mixed_cases()
    batch = evaluate_batch(EVALUATORS, cases, responses)

    async def one_by_one():
        return [
            tuple([await ev.evaluate(case=c, response=r) for ev in EVALUATORS])
            for c, r in zip(cases, responses, strict=True)
        ]

    assert batch == asyncio.run(one_by_one())
    statuses = {s.status for row in batch for s in row}
    assert statuses == {"scored", "skipped"}
    assert [s.name for s in batch[0]] == [ev.name for ev in EVALUATORS]


def test_custom_evaluators_are_not_batchable_and_are_named_in_the_error():
    @evaluator
    def custom(outputs, inputs, ground_truth):
        return 1.0

    assert supports_batch(AnswerContains()) and not supports_batch(custom)
    with pytest.raises(TypeError, match="custom"):
        evaluate_batch([AnswerContains(), custom], [], [])


def test_paused_gc_restores_the_collector_state():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_batch_scores_round_trip_through_json_unchanged():
    from heta_notebook.schema import EvaluationScore

    cases, responses = mixed_cases(20)
    for row in evaluate_batch(EVALUATORS, cases, responses):
        for score in row:
            again = EvaluationScore.model_validate_json(score.model_dump_json())
            assert again == score and again.to_dict() == score.to_dict()


def test_constructed_scores_are_the_objects_model_construct_builds():
    from heta_notebook.schema import EvaluationScore
    from heta_notebook.schema import _construct as retrieval

    assert retrieval._FAST_CONSTRUCT  # the fast path is the one measured in bench/metrics.py
    metadata = [{"k": 1}, {"k": 2}]
    fast = retrieval.constructed_scores("beir_ndcg@10", [0.5, 1.0], [None, True], metadata)
    slow = [
        EvaluationScore.model_construct(name="beir_ndcg@10", value=v, passed=p, metadata=m)
        for v, p, m in zip([0.5, 1.0], [None, True], metadata, strict=True)
    ]
    assert fast == slow
    for a, b in zip(fast, slow, strict=True):
        assert a.__dict__ == b.__dict__ and a.model_fields_set == b.model_fields_set
        assert a.__pydantic_extra__ == b.__pydantic_extra__ == {}
        assert a.__pydantic_private__ is b.__pydantic_private__ is None
        assert a.model_dump() == b.model_dump() and a.model_copy() == b
    assert fast[0].metadata is metadata[0]  # shared, read-only (records are frozen)
    copied = fast[0].model_copy(update={"passed": False, "note": "x"})
    assert copied.passed is False and copied.model_extra == {"note": "x"}
    assert fast[1].model_fields_set == set(slow[1].model_fields_set)  # the shared set is intact
    assert fast[1].model_extra == {} and fast[1] == slow[1]


def test_padded_rows_are_the_rows_cut_and_zero_filled():
    import numpy as np

    from heta_notebook.evaluators._kernels import padded

    rows = [[3, 0, 1], [], [2, 2, 2, 2, 2], [1], [0, -1, 4, 0]]
    for depth in (1, 3, 4, 6):
        expected = np.zeros((len(rows), depth))
        for i, row in enumerate(rows):
            expected[i, : len(row[:depth])] = row[:depth]
        got = padded(rows, depth)
        assert got.dtype == float and got.shape == (len(rows), depth)
        assert np.array_equal(got, expected)
    assert padded([], 5).shape == (0, 5)


def test_positive_ranks_are_each_rows_ranks_of_grades_above_zero():
    """The batch's facts (matched documents, their ranks) read the grade matrix in one pass:
    per row the ranks a comparison per grade finds (ints, the unjudged 0.0, negatives,
    a huge grade, rows shorter than the matrix, an empty batch)."""
    import random

    from heta_notebook.evaluators._kernels import padded, positive_ranks

    rng = random.Random(3)
    rows = [
        [rng.choice((0.0, 0.0, 0.0, 1, 2, -1, 2**70)) for _ in range(rng.randint(0, 12))]
        for _ in range(40)
    ]
    expected = [[rank for rank, grade in enumerate(row) if grade > 0] for row in rows]
    assert positive_ranks(padded(rows, 12)) == expected
    assert positive_ranks(padded([], 12)) == []
