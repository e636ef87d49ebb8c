"""Reciprocal rank fusion (Cormack et al., 2009): ``score(d) = Σ_rankings 1 / (k + rank(d))``.

Two forms of one rule: ``reciprocal_rank_fusion`` (Python, any number of id lists: the readable
definition) and ``fuse`` (numpy, two row arrays: what the KB's hybrid search runs, once per
query, for its top k and for the deep ranks of judged documents alike). They give the same
sums (added in the same order, so the same floats) in the same order; a test holds them equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]],
    *,
    k: int = 60,
    top_k: int | None = None,
    keys: np.ndarray | None = None,
) -> list[tuple[int, float, list[int | None]]]:
    """Fuse ranked id lists (best first) into ``(id, rrf score, [1-based rank in each or None])``.

    Best first; equal fused scores are ordered by the better single rank, then by
    ``keys[id]`` (the KB's tie order, ``kb._ranking``; the id itself when None), so the
    order never depends on corpus position or dict order.
    """
    scores: dict[int, float] = {}
    ranks: dict[int, list[int | None]] = {}
    for which, ranking in enumerate(rankings):
        for rank, item in enumerate(ranking, start=1):
            item = int(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            ranks.setdefault(item, [None] * len(rankings))[which] = rank
    tie = (lambda i: i) if keys is None else (lambda i: int(keys[i]))
    order = sorted(scores, key=lambda i: (-scores[i], min(r for r in ranks[i] if r), tie(i)))
    if top_k is not None:
        order = order[:top_k]
    return [(item, scores[item], ranks[item]) for item in order]


class Fused(NamedTuple):
    """Two ranked row lists fused whole, best first (``fuse``)."""

    rows: np.ndarray
    scores: np.ndarray  # RRF scores, float64
    rank_a: np.ndarray  # each row's 1-based rank in the first list, 0 when absent
    rank_b: np.ndarray  # ... in the second

    def fusion(self, top_k: int) -> list[list[int | None]]:
        """The first ``top_k`` rows' ``[rank in a, rank in b]`` (None when absent)."""
        a, b = self.rank_a[:top_k].tolist(), self.rank_b[:top_k].tolist()
        return [[x or None, y or None] for x, y in zip(a, b, strict=True)]


def fuse(rows_a: np.ndarray, rows_b: np.ndarray, k: int, keys: np.ndarray) -> Fused:
    """``reciprocal_rank_fusion([rows_a, rows_b], k=k, keys=keys)`` in numpy, every row kept.

    Order: fused score descending, then the better single rank, then ``keys[row]``.
    """
    rows_a = np.asarray(rows_a, dtype=np.int64)
    rows_b = np.asarray(rows_b, dtype=np.int64)
    rows = np.union1d(rows_a, rows_b)
    rank_a = np.zeros(len(rows), dtype=np.int64)
    rank_b = np.zeros(len(rows), dtype=np.int64)
    rank_a[np.searchsorted(rows, rows_a)] = np.arange(1, len(rows_a) + 1)
    rank_b[np.searchsorted(rows, rows_b)] = np.arange(1, len(rows_b) + 1)
    score = np.where(rank_a > 0, 1.0 / (k + rank_a), 0.0)  # 0.0 + x == x: Python's first sum
    score = score + np.where(rank_b > 0, 1.0 / (k + rank_b), 0.0)
    big = len(rows_a) + len(rows_b) + 1
    best = np.minimum(np.where(rank_a > 0, rank_a, big), np.where(rank_b > 0, rank_b, big))
    order = np.lexsort((keys[rows], best, -score))
    return Fused(rows[order], score[order], rank_a[order], rank_b[order])


__all__ = ["Fused", "fuse", "reciprocal_rank_fusion"]
