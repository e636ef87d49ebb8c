"""A tied case keeps its main rule's values under another tie rule only where rescoring it
would give them bit for bit (``evaluators._tie_rules``): random tied batches scored with the
shortcut equal the same batches rescored case by case, every value's bits compared (the sign
of a zero included), and the shortcut is taken for most tied cases and refused for the rest."""

from __future__ import annotations

import random
import struct

import pytest

from heta_notebook.evaluators import _retrieval, _tie_rules
from heta_notebook.evaluators._retrieval import BeirRetrievalMetric, beir_scores
from tests._evaluators_helpers import chunk, qrels_case, response

METRICS = ("ndcg", "map", "recall", "precision", "mrr")


def tied_batch(seed: int, n_cases: int = 30) -> tuple[list, list]:
    """Cases with many exact ties: a few score values, grades that are often (not always) one
    per tied group, tied groups across the deepest cutoff, and now and then a grade the
    shortcut must refuse (negative, huge) or a system order that is not sorted."""
    rng = random.Random(seed)
    cases, found = [], []
    for row in range(n_cases):
        n_docs = rng.randint(2, 16)
        docs = [f"d{row}-{rng.randint(0, 999)}-{i}" for i in range(n_docs)]
        scores = {d: float(rng.choice((1, 2, 2, 3, 3, 3, 4))) for d in docs}
        by_score = {s: rng.choice((0, 0, 1, 2, 3)) for s in set(scores.values())}
        uniform = rng.random() < 0.6  # one grade per tied group: the shortcut's case
        qrels = {d: by_score[s] if uniform else rng.choice((0, 0, 1, 2)) for d, s in scores.items()}
        qrels = {d: g for d, g in qrels.items() if g or rng.random() < 0.5}  # some unjudged
        if rng.random() < 0.1:
            qrels[docs[0]] = rng.choice((-1, 2**40))  # a negative or an inexact grade
        qrels["unretrieved"] = 1
        order = sorted(docs, key=lambda d: (-scores[d], d))  # ties by id ascending
        if rng.random() < 0.3:
            rng.shuffle(order)  # a system that does not sort
        cases.append(qrels_case(qrels, case_id=f"q{row}"))
        found.append(response([chunk(d, score=scores[d]) for d in order]))
    return cases, found


def by_tie_rule(columns) -> list[list[dict]]:
    """Per metric, per case: the tie-rule values as bytes (so -0.0 and 0.0 differ)."""
    return [
        [
            {rule: struct.pack("<d", value) for rule, value in meta["by_tie_rule"].items()}
            if "by_tie_rule" in meta
            else {}
            for meta in column.metadata
        ]
        for column in columns
    ]


@pytest.mark.parametrize("convention", ["trec_eval", "heta"])
@pytest.mark.parametrize("seed", range(8))
def test_kept_values_equal_the_rescored_ones_bit_for_bit(seed, convention, monkeypatch):
    cases, found = tied_batch(seed)
    metrics = [
        BeirRetrievalMetric(m, k, convention=convention, ties="trec_eval")  # type: ignore[arg-type]
        for m in METRICS
        for k in (1, 3, 5, 10)
    ]
    calls = {True: 0, False: 0}

    def counted(*args):
        same = _tie_rules.same_values(*args)
        calls[same] += 1
        return same

    monkeypatch.setattr(_retrieval, "same_values", counted)
    kept = beir_scores(metrics, cases, found)
    monkeypatch.setattr(_retrieval, "same_values", lambda *args: False)  # rescore every case
    rescored = beir_scores(metrics, cases, found)
    assert by_tie_rule(kept) == by_tie_rule(rescored)
    for mine, theirs in zip(kept, rescored, strict=True):
        assert mine.values.tobytes() == theirs.values.tobytes()
        assert list(mine.metadata_json) == list(theirs.metadata_json)
    assert calls[True] > 0 and calls[False] > 0  # both ways taken


def test_the_comparison_would_see_a_wrong_shortcut(monkeypatch):
    """Keeping the main values for every tied case changes some tie-rule values: the
    comparison above fails on a shortcut that takes a case it should not."""
    cases, found = tied_batch(0)
    metrics = [BeirRetrievalMetric(m, k) for m in METRICS for k in (1, 3, 5, 10)]
    monkeypatch.setattr(_retrieval, "same_values", lambda *args: True)
    wrong = beir_scores(metrics, cases, found)
    monkeypatch.setattr(_retrieval, "same_values", lambda *args: False)
    assert by_tie_rule(wrong) != by_tie_rule(beir_scores(metrics, cases, found))


@pytest.mark.parametrize(
    "grades, scores, rule, same",
    [
        ([2, 2, 0], [3.0, 3.0, 1.0], "expected", True),  # one grade per tied group
        ([2, 1, 0], [3.0, 3.0, 1.0], "expected", False),  # a group of two grades
        ([2, 2, 0], [3.0, 3.0, 3.0], "expected", False),  # the group runs past depth 2
        ([2**40, 2**40], [1.0, 1.0], "expected", False),  # sums no longer exact
        ([1, 1], [float("nan"), float("nan")], "expected", True),  # NaN: alone
    ],
)
def test_same_values_reads_the_groups_to_the_end_of_the_one_at_depth(grades, scores, rule, same):
    class Item:  # what a _Judged tied under trec_eval keeps
        def __init__(self) -> None:
            ids = [f"d{i}" for i in range(len(grades))]
            self.qrels = dict(zip(ids, grades, strict=True))
            self.ranked, self.grades = ids[:2], grades[:2]
            self.sorted = self.returned = (ids, scores)

    assert _tie_rules.same_values(Item(), rule, 2, "trec_eval") is same
    assert _tie_rules.same_values(Item(), rule, 2, "heta") is False  # 2**g - 1 gains: rescored
