"""The deep ranks as they were first computed (issue 24): every chunk rescored per query.

A reference for ``kb._deep_rank``, which now counts the ranks from the score vectors the KB's
search already holds: both must give the same ranks. bm25s's scores of every chunk (tokenised
again), every chunk's exact cosine (float64, rounded, in blocks), and for hybrid the KB's two
component searches run again and fused whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from heta_notebook.kb._bm25 import tokenize
from heta_notebook.kb._deep_rank import DeepRank, _from_order, _Layout, _layout, fuse
from heta_notebook.kb._embedders import normalize_rows
from heta_notebook.kb._ranking import rounded
from heta_notebook.kb._recipe import FULL_TEXT, HYBRID
from heta_notebook.kb._threads import one_blas_thread

_BLOCK = 65_536


def recomputed_deep_ranks(
    kb: Any,
    queries: Sequence[str],
    judged: Sequence[Sequence[str]],
    *,
    mode: str,
    top_k: int = 10,
    options: Mapping[str, Any] | None = None,
) -> list[dict[str, DeepRank]]:
    """Per query, the exact deep rank of each judged document id, each chunk rescored."""
    if len(queries) != len(judged):
        raise ValueError(f"{len(queries)} queries but {len(judged)} judged-document lists")
    kb._check(mode, top_k)
    layout = _layout(kb)
    if mode == HYBRID:
        return [
            _from_order(layout, order, docs)
            for order, docs in zip(_hybrid_orders(kb, queries, top_k, options), judged, strict=True)
        ]
    scores = _bm25_scores(kb, queries) if mode == FULL_TEXT else _dense_scores(kb, queries)
    floor = 0.0 if mode == FULL_TEXT else None  # BM25 never returns a chunk scoring 0
    return [_from_scores(layout, s, docs, floor) for s, docs in zip(scores, judged, strict=True)]


def _bm25_scores(kb: Any, queries: Sequence[str]) -> list[np.ndarray]:
    """bm25s's score of every chunk per query (what its ``retrieve`` selects from)."""
    retriever = kb.bm25.retriever
    out = []
    for tokens in tokenize(queries, kb.bm25.config):
        ids = retriever.get_tokens_ids(tokens)
        out.append(retriever.get_scores_from_ids(ids) if ids else np.zeros(kb.bm25.size))
    return out


def _dense_scores(kb: Any, queries: Sequence[str]) -> np.ndarray:
    """Cosine of every chunk per query, computed as ``DenseIndex.search`` ranks them.

    When the KB rescores exactly (``kb._ranking``: float64, rounded), so do we.
    """
    with one_blas_thread():  # as the search does: no BLAS thread pool per small batch
        vectors = normalize_rows(kb.dense.embedder.embed(list(queries)))
        embeddings = kb.dense.embeddings
        exact = np.empty((len(vectors), len(embeddings)))
        wide = vectors.astype(np.float64)
        for start in range(0, len(embeddings), _BLOCK):  # float64 copies one block at a time
            block = embeddings[start : start + _BLOCK].astype(np.float64)
            exact[:, start : start + _BLOCK] = wide @ block.T
        return rounded(exact)


def _from_scores(
    layout: _Layout, scores: np.ndarray, judged: Sequence[str], floor: float | None
) -> dict[str, DeepRank]:
    """Ranks from every chunk's score: only chunks scoring at least the lowest judged best
    chunk can precede one, so only those are ordered (score desc, then the tie key)."""
    out: dict[str, DeepRank] = {}
    docs, which = [], []
    for doc in dict.fromkeys(str(d) for d in judged):
        w = layout.index.get(doc)
        if w is None or not layout.has_words(w):
            chunks = 0 if w is None else layout.rows[w][1] - layout.rows[w][0]
            out[doc] = DeepRank(doc, indexed=False, chunks=chunks)
        else:
            docs.append(doc)
            which.append(w)
    if docs:
        out.update(_ranked(layout, scores, docs, np.asarray(which), floor))
    return {doc: out[doc] for doc in dict.fromkeys(str(d) for d in judged)}


def _ranked(
    layout: _Layout, scores: np.ndarray, docs: list[str], which: np.ndarray, floor: float | None
) -> dict[str, DeepRank]:
    """Deep ranks of indexed documents ``which`` (vectorised: a few numpy calls per query)."""
    starts, ends = layout.starts[which], layout.ends[which]
    group = np.repeat(np.arange(len(which)), ends - starts)
    rows = np.arange(len(group)) - np.repeat(
        np.cumsum(ends - starts) - (ends - starts), ends - starts
    )
    rows = rows + np.repeat(starts, ends - starts)
    picked = np.lexsort((layout.keys[rows], -scores[rows], group))
    first = np.searchsorted(group[picked], np.arange(len(which)))
    best = rows[picked[first]]  # each document's best chunk
    values = scores[best]
    ranked = values > floor if floor is not None else np.ones(len(best), dtype=bool)
    at = np.zeros(len(best), dtype=np.int64)
    document_rank, tied = at.copy(), at.copy()
    if ranked.any():
        pool = np.flatnonzero(scores >= values[ranked].min())
        order = np.lexsort((layout.keys[pool], -scores[pool]))
        inverse = np.empty(len(pool), dtype=np.int64)
        inverse[order] = np.arange(len(pool))
        at[ranked] = inverse[np.searchsorted(pool, best[ranked])]
        firsts = np.sort(np.unique(layout.document[pool[order]], return_index=True)[1])
        document_rank = np.searchsorted(firsts, at) + 1
        ascending = np.sort(scores[pool])
        tied = np.searchsorted(ascending, values, "right") - np.searchsorted(ascending, values) - 1
    out = {}
    for i, doc in enumerate(docs):
        chunks = int(ends[i] - starts[i])
        if not ranked[i]:
            out[doc] = DeepRank(doc, indexed=True, chunks=chunks, score=float(values[i]))
            continue
        out[doc] = DeepRank(
            doc,
            indexed=True,
            chunks=chunks,
            chunk_rank=int(at[i]) + 1,
            document_rank=int(document_rank[i]),
            score=float(values[i]),
            best_chunk=f"{layout.ids[which[i]]}#{int(layout.chunk_index[best[i]])}",
            tied=int(tied[i]),
        )
    return out


def _hybrid_orders(
    kb: Any, queries: Sequence[str], top_k: int, options: Mapping[str, Any] | None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The KB's fused ranking (rows, RRF scores) of every chunk either component puts within
    its candidates: the KB's own component searches, fused as ``reciprocal_rank_fusion`` does."""
    options = dict(options or {})
    depth = max(int(options.get("candidates", kb.recipe.hybrid.candidates)), top_k)
    rrf_k = int(options.get("rrf_k", kb.recipe.hybrid.rrf_k))
    layout = _layout(kb)
    keys = {"keys": layout.keys} if getattr(kb.chunks, "tie_keys", None) is not None else {}
    lexical = kb.bm25.search(queries, depth, **keys)
    dense = kb.dense.search(queries, depth, **keys)
    return [
        fuse(rows_a, rows_b, rrf_k, layout.keys)
        for (rows_a, _), (rows_b, _) in zip(lexical, dense, strict=True)
    ]
