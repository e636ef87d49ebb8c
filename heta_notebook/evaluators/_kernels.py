"""Vectorised ranking-metric kernels: every (metric, k) for every query in one numpy pass.

Input is two padded matrices, one row per query: ``grades`` (the qrels grade of the
document at each rank; 0 for unjudged or missing ranks, negative labels kept) and
``ideal`` (the query's relevant grades sorted descending), plus ``n_relevant`` (R, the
number of judged documents with grade > 0).

Two conventions:

- ``"trec_eval"`` (default; what pytrec_eval and BEIR's published numbers use): nDCG gain is
  the grade (negative grades count 0), MAP@k divides by R.
- ``"heta"`` (heta-framework 0.1.2): nDCG gain is ``2**grade - 1``, MAP@k divides by min(R, k).

Precision@k divides by k, recall@k by R, MRR@k is 1/rank of the first relevant document
within k (BEIR's MRR@k) in both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np

Convention = Literal["trec_eval", "heta"]
MetricName = Literal["ndcg", "map", "recall", "precision", "mrr"]
METRICS: tuple[MetricName, ...] = ("ndcg", "map", "recall", "precision", "mrr")
CONVENTIONS: tuple[Convention, ...] = ("trec_eval", "heta")


def padded(rows: Sequence[Sequence[float]], depth: int) -> np.ndarray:
    """Rows of different lengths as a zero-padded float matrix of ``depth`` columns."""
    matrix = np.zeros((len(rows), depth), dtype=float)
    for i, row in enumerate(rows):
        cut = row[:depth]
        matrix[i, : len(cut)] = cut
    return matrix


def score_matrix(
    grades: np.ndarray,
    ideal: np.ndarray,
    n_relevant: np.ndarray,
    metrics: Iterable[tuple[MetricName, int]],
    convention: Convention = "trec_eval",
) -> dict[tuple[MetricName, int], np.ndarray]:
    """Every requested ``(metric, k)`` for every row, as arrays of one value per query."""
    metrics = list(metrics)
    depth = max(k for _, k in metrics)
    grades, ideal = _to_depth(grades, depth), _to_depth(ideal, depth)
    parts = _Parts(grades, ideal, np.asarray(n_relevant, dtype=float), convention)
    return {(metric, k): parts.metric(metric, k) for metric, k in metrics}


def _to_depth(matrix: np.ndarray, depth: int) -> np.ndarray:
    if matrix.shape[1] >= depth:
        return matrix[:, :depth]
    return np.pad(matrix, ((0, 0), (0, depth - matrix.shape[1])))


class _Parts:
    """Cumulative sums shared by all metrics, computed lazily once per batch."""

    def __init__(
        self, grades: np.ndarray, ideal: np.ndarray, n_relevant: np.ndarray, convention: Convention
    ) -> None:
        if convention not in CONVENTIONS:
            raise ValueError(f"unknown convention {convention!r}; use one of {CONVENTIONS}")
        self.grades, self.ideal, self.n_relevant = grades, ideal, n_relevant
        self.convention = convention
        self.relevant = grades > 0
        self.hits = np.cumsum(self.relevant, axis=1)
        self.ranks = np.arange(1, grades.shape[1] + 1, dtype=float)
        self._cache: dict[str, np.ndarray] = {}

    def metric(self, metric: MetricName, k: int) -> np.ndarray:
        if metric == "precision":
            return self.hits[:, k - 1] / k
        if metric == "recall":
            return _safe_divide(self.hits[:, k - 1], self.n_relevant)
        if metric == "map":
            return _safe_divide(self._cumulative("ap")[:, k - 1], self._map_denominator(k))
        if metric == "ndcg":
            ideal = self._cumulative("idcg")[:, k - 1]
            return _safe_divide(self._cumulative("dcg")[:, k - 1], ideal)
        if metric == "mrr":
            first = self._first_relevant_rank()
            return np.where(first <= k, 1.0 / first, 0.0)
        raise ValueError(f"unknown metric {metric!r}; use one of {METRICS}")

    def _map_denominator(self, k: int) -> np.ndarray:
        if self.convention == "heta":
            return np.minimum(self.n_relevant, k)
        return self.n_relevant

    def _cumulative(self, what: str) -> np.ndarray:
        if what not in self._cache:
            self._cache[what] = np.cumsum(self._terms(what), axis=1)
        return self._cache[what]

    def _terms(self, what: str) -> np.ndarray:
        if what == "ap":
            return np.where(self.relevant, self.hits / self.ranks, 0.0)
        grades = self.grades if what == "dcg" else self.ideal
        return self._gain(grades) / np.log2(self.ranks + 1.0)

    def _gain(self, grades: np.ndarray) -> np.ndarray:
        positive = np.maximum(grades, 0.0)
        return np.exp2(positive) - 1.0 if self.convention == "heta" else positive

    def _first_relevant_rank(self) -> np.ndarray:
        if "first" not in self._cache:
            any_relevant = self.relevant.any(axis=1)
            first = self.relevant.argmax(axis=1) + 1.0
            self._cache["first"] = np.where(any_relevant, first, np.inf)
        return self._cache["first"]


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    numerator = np.asarray(numerator, dtype=float)
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=np.asarray(denominator) > 0)
    return out
