"""``ranked_grades`` puts each run in trec_eval's order (score descending, ties by id descending
as bytes) whichever sort it uses: distinct finite scores, ties, infinities and different run
lengths all give the grades of ``trec_ranking`` row by row; ``evaluate_run`` keeps exactly the
queries with a run and a relevant judged document, in the qrels' order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from heta_notebook.evaluators._kernels import ranked_grades, trec_ranking
from heta_notebook.evaluators._retrieval import evaluate_run


def _reference(runs, qrels, depth):
    out = np.zeros((len(runs), depth))
    for i, (run, q) in enumerate(zip(runs, qrels, strict=True)):
        ranked = trec_ranking(run)[:depth]
        out[i, : len(ranked)] = [q.get(d, 0) for d in ranked]
    return out


@pytest.mark.parametrize("kind", ["distinct", "ties", "infinite"])
def test_every_row_is_in_trec_eval_order(kind: str) -> None:
    rng = np.random.default_rng(7)
    runs, qrels = [], []
    for _ in range(200):
        n = int(rng.integers(1, 40))
        scores = rng.random(n) if kind == "distinct" else rng.integers(0, 5, n).astype(float)
        if kind == "infinite":  # one of each at most (tied infinities keep the run's order)
            scores[0], scores[-1] = math.inf, -math.inf
        docs = [f"d{int(x)}" for x in rng.choice(1000, n, replace=False)]
        runs.append(dict(zip(docs, scores.tolist(), strict=True)))
        qrels.append({d: int(rng.integers(-1, 4)) for d in rng.choice(docs, n // 2 + 1)})
    for depth in (5, 40):
        grades = ranked_grades(runs, qrels, depth)
        expected = _reference(runs, qrels, depth)
        width = grades.shape[1]  # at most the longest run
        np.testing.assert_array_equal(grades, expected[:, :width])
        assert not expected[:, width:].any()


def test_evaluate_run_keeps_queries_with_a_run_and_a_relevant_document_in_order() -> None:
    qrels = {"c": {"d1": 1}, "a": {"d1": 0}, "b": {"d2": 2}, "e": {}, "f": {"d1": 1}}
    run = {"a": {"d1": 1.0}, "b": {"d2": 1.0}, "c": {"d1": 0.5}, "e": {"d1": 1.0}, "f": {}}
    assert list(evaluate_run(qrels, run)) == ["c", "b"]
    zero = evaluate_run(qrels, run, missing="zero")
    assert list(zero) == list(qrels) and zero["a"]["beir_ndcg@10"] == 0.0
    assert zero["c"] == evaluate_run(qrels, run)["c"]


def _mixed_run(n_queries: int = 60, seed: int = 11) -> tuple[dict, dict]:
    """Queries of every kind evaluate_run meets: distinct and tied scores, infinities, runs of
    different lengths (shorter and longer than k), negative and zero grades, no relevant
    document, no run, an empty run; several in a row, so a whole block can hold none to score."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(n_queries):
        n = int(rng.integers(1, 130))
        docs = [f"d{int(x)}" for x in rng.choice(500, n, replace=False)]
        kind = i % 6
        scores = rng.integers(0, 4, n).astype(float) if kind == 1 else rng.random(n)
        if kind == 2:
            scores[0] = math.inf
        low = 0 if 20 <= i < 27 else -1  # queries 20-26 judge nothing relevant
        high = 1 if 20 <= i < 27 else 4
        qrels[f"q{i}"] = {d: int(rng.integers(low, high)) for d in rng.choice(docs, n // 3 + 1)}
        if kind != 5:
            run[f"q{i}"] = dict(zip(docs, scores.tolist(), strict=True))
    run["q4"] = {}
    return qrels, run


@pytest.mark.parametrize("missing", ["drop", "zero"])
def test_evaluate_run_gives_the_same_values_whatever_its_block_size(monkeypatch, missing) -> None:
    """evaluate_run scores RUN_BLOCK queries at a time: every value, bit for bit, and the order
    of the queries are those of one block holding the whole run, for every tie rule."""
    from heta_notebook.evaluators import _retrieval
    from heta_notebook.evaluators._retrieval import BeirRetrievalMetric, beir_default_metrics

    qrels, run = _mixed_run()
    metrics = [
        *beir_default_metrics((1, 3, 5, 10, 100)),
        BeirRetrievalMetric("ndcg", 20, ties="expected"),
        BeirRetrievalMetric("map", 20, ties="as_returned"),
        BeirRetrievalMetric("ndcg", 30, convention="heta"),
    ]
    assert len({m.name for m in metrics}) == len(metrics)
    monkeypatch.setattr(_retrieval, "RUN_BLOCK", 10**9)
    whole = evaluate_run(qrels, run, metrics, missing=missing)
    assert len(whole) >= 40
    for block in (1, 3, 7, 32):
        monkeypatch.setattr(_retrieval, "RUN_BLOCK", block)
        got = evaluate_run(qrels, run, metrics, missing=missing)
        assert list(got) == list(whole)
        assert got == whole
