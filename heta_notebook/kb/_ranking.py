"""How the embedded knowledge base orders results: one rule for every index and query mode.

Results are sorted by score, best first; equal scores are ordered by a *tie key* that depends
neither on the corpus order nor on the CPU: trec_eval's order for tied documents (document id
descending, compared as UTF-8 bytes), then the chunk index ascending. So for one-chunk-per-
document recipes the KB's own order is the order trec_eval gives the same ``(id, score)`` run.

Selection never trusts an unstable sort: the candidate pool holds every row whose score reaches
the ``k``-th best (all rows tied with it included), then ``np.lexsort`` orders the pool by
(score descending, tie key).

Dense cosine scores are ranked and reported at a stated precision, ``SCORE_DECIMALS`` (1e-6):
they are recomputed in float64 from the stored float32 vectors and rounded, so BLAS kernels,
thread counts and block sizes (whose float32 sums differ in the last bits) cannot reorder them.

A *deep rank* (``kb._deep_rank``) is where one row would land if every row were returned under
this rule: it is counted from the score vector a search already holds (``ScoreVector``), scoring
exactly only the rows its approximation cannot place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

SCORE_DECIMALS = 6  # dense scores are rounded to 1e-6 before ranking


def tie_keys(
    document_ids: Sequence[str], documents: np.ndarray, chunk_index: np.ndarray
) -> np.ndarray:
    """Each chunk row's place in the tie order (document id descending as bytes, then chunk index).

    ``document_ids`` are the distinct documents, ``documents[row]`` indexes them and
    ``chunk_index[row]`` is the chunk's index in its document.
    """
    by_id = sorted(range(len(document_ids)), key=lambda i: document_ids[i].encode(), reverse=True)
    document_rank = np.empty(len(document_ids), dtype=np.int64)
    document_rank[by_id] = np.arange(len(document_ids))
    order = np.lexsort((np.asarray(chunk_index), document_rank[np.asarray(documents)]))
    keys = np.empty(len(order), dtype=np.int64)
    keys[order] = np.arange(len(order))
    return keys


def top_k(
    scores: np.ndarray, k: int, keys: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Rows and scores of the ``k`` best ``scores``: score descending, ties by ``keys`` ascending.

    ``keys`` (one integer per row, default the row index) is the tie order; the pool holds
    every row tied with the ``k``-th score, so the result never depends on an unstable sort.
    """
    n = len(scores)
    if k <= 0 or n == 0:
        return np.empty(0, dtype=np.int64), scores[:0]
    if k < n:
        kth = np.partition(scores, n - k)[n - k]
        pool = np.flatnonzero(scores >= kth)
    else:
        pool = np.arange(n)
    tie = pool if keys is None else keys[pool]
    chosen = pool[np.lexsort((tie, -scores[pool]))[:k]]
    return chosen, scores[chosen]


def rounded(scores: np.ndarray) -> np.ndarray:
    """``scores`` as float64 rounded to ``SCORE_DECIMALS``: the precision dense results rank at."""
    return np.round(np.asarray(scores, dtype=np.float64), SCORE_DECIMALS) + 0.0  # no -0.0


class ScoreVector(NamedTuple):
    """Every row's score for one query, as a search holds it (valid only during the search).

    ``approx[row]`` is within ``margin`` of the exact score ``exact(rows)`` computes (margin 0:
    ``approx`` is exact); rows scoring at most ``floor`` are never returned (None: all are).
    """

    approx: np.ndarray
    margin: float
    exact: Callable[[np.ndarray], np.ndarray]
    floor: float | None = None


# what a search calls per query while it holds the scores: (query index, hits' rows, scores)
Visit = Callable[[int, np.ndarray, ScoreVector], None]


__all__ = [
    "SCORE_DECIMALS",
    "ScoreVector",
    "Visit",
    "rounded",
    "tie_keys",
    "top_k",
]
