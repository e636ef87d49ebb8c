"""Reciprocal rank fusion (Cormack et al., 2009): ``score(d) = Σ_rankings 1 / (k + rank(d))``."""

from __future__ import annotations

from collections.abc import Sequence

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


__all__ = ["reciprocal_rank_fusion"]
