"""Exact deep ranks of judged documents in the embedded KB, without retrieving the corpus.

For one query and one judged document, the *deep rank* is where the document's best chunk
would land if the KB returned everything, under the mode's own scorer and the KB's own
ranking rule (score descending, ties by the KB's tie key):

- ``chunk_rank``: its place in the chunk list (what ``top_k`` cuts);
- ``document_rank``: its place once chunks are mapped to documents, each document kept at its
  best chunk (what document-level metrics see).

``full_text_search`` and ``vector_search`` score every chunk exactly as a search does (bm25s's
score vector; one matrix product) but sort and materialise nothing: a rank is a count of the
chunks that precede. ``hybrid_search`` fuses its two components' candidate lists (depth
``max(candidates, top_k)``, as the KB does) with the same RRF; a chunk outside both lists has
no hybrid rank at any depth. A BM25 score of 0 (no shared term) is never returned, so it has
no rank either. A document the KB does not hold, or whose chunks hold no word, is
``indexed=False``.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from heta_notebook.kb._bm25 import tokenize
from heta_notebook.kb._embedders import normalize_rows
from heta_notebook.kb._recipe import FULL_TEXT, HYBRID
from heta_notebook.kb._threads import one_blas_thread

_WORD = re.compile(r"\w\w")


@dataclass(frozen=True)
class DeepRank:
    """Where one judged document stands in one query's full ranking (None: never ranked)."""

    document_id: str
    indexed: bool
    chunks: int  # chunks the recipe made of the document
    chunk_rank: int | None = None
    document_rank: int | None = None
    score: float | None = None
    best_chunk: str | None = None
    tied: int = 0  # other chunks with exactly the best chunk's score (rank set by the tie key)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (what case results store under ``deep_ranks``)."""
        return {name: getattr(self, name) for name in _FIELDS}  # asdict() deep-copies: slow


_FIELDS = tuple(f.name for f in fields(DeepRank))


class _Layout:
    """Per-KB arrays the ranks need: document of each chunk, tie keys, rows per document."""

    def __init__(self, kb: Any) -> None:
        chunks = kb.chunks
        self.n = len(chunks)
        self.document = np.asarray(chunks.columns["document"], dtype=np.int64)
        offsets = chunks.columns["document_offsets"].tolist()
        names = chunks.columns["documents"].tobytes()
        self.ids = [
            names[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:], strict=True)
        ]
        self.index = {doc: i for i, doc in enumerate(self.ids)}
        for doc, info in kb.documents.items():  # BEIR ids name the same document
            beir = (info.get("metadata") or {}).get("beir_document_id")
            if beir and doc in self.index:
                self.index.setdefault(str(beir), self.index[doc])
        starts = np.searchsorted(self.document, np.arange(len(self.ids)), side="left")
        ends = np.searchsorted(self.document, np.arange(len(self.ids)), side="right")
        self.rows = list(zip(starts.tolist(), ends.tolist(), strict=True))
        self.starts, self.ends = starts, ends
        keys = getattr(chunks, "tie_keys", None)  # the KB's tie order when it declares one
        self.keys = np.arange(self.n) if keys is None else np.asarray(keys)
        self.has_keys = keys is not None
        self._words: dict[int, bool] = {}
        self.chunk_index = np.asarray(chunks.columns["chunk_index"], dtype=np.int64)
        self.chunks = chunks

    def has_words(self, which: int) -> bool:
        """Whether any chunk of document ``which`` holds a word (else nothing was indexed)."""
        if which not in self._words:
            start, end = self.rows[which]
            texts = (self.chunks.text(row) for row in range(start, end))
            self._words[which] = any(_WORD.search(text) for text in texts)
        return self._words[which]


_LAYOUTS: weakref.WeakKeyDictionary[Any, _Layout] = weakref.WeakKeyDictionary()


def _layout(kb: Any) -> _Layout:
    if kb not in _LAYOUTS:
        _LAYOUTS[kb] = _Layout(kb)
    return _LAYOUTS[kb]


def deep_ranks(
    kb: Any,
    queries: Sequence[str],
    judged: Sequence[Sequence[str]],
    *,
    mode: str,
    top_k: int = 10,
    options: Mapping[str, Any] | None = None,
) -> list[dict[str, DeepRank]]:
    """Per query, the exact deep rank of each judged document id (``judged[i]`` for query i)."""
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
        if _ROUNDED is None:
            return vectors @ embeddings.T
        exact = np.empty((len(vectors), len(embeddings)))
        wide = vectors.astype(np.float64)
        for start in range(0, len(embeddings), _BLOCK):  # float64 copies one block at a time
            block = embeddings[start : start + _BLOCK].astype(np.float64)
            exact[:, start : start + _BLOCK] = wide @ block.T
        return _ROUNDED(exact)


def _exact_rounding() -> Any:
    """``kb._ranking.rounded`` when the KB ranks float64 cosines rounded (else None)."""
    try:
        from heta_notebook.kb._ranking import rounded  # type: ignore[import-not-found]
    except ImportError:
        return None
    return rounded


_ROUNDED = _exact_rounding()
_BLOCK = 65_536


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
    keys = {"keys": layout.keys} if layout.has_keys else {}
    lexical = kb.bm25.search(queries, depth, **keys)
    dense = kb.dense.search(queries, depth, **keys)
    return [
        fuse(rows_a, rows_b, rrf_k, layout.keys)
        for (rows_a, _), (rows_b, _) in zip(lexical, dense, strict=True)
    ]


def fuse(
    rows_a: np.ndarray, rows_b: np.ndarray, rrf_k: int, keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``reciprocal_rank_fusion`` of two ranked row lists, whole, in numpy: the same sums (in
    the same order, so the same floats) and the same order (score, best single rank, tie key)."""
    rows = np.union1d(rows_a, rows_b)
    rank_a = np.zeros(len(rows), dtype=np.int64)
    rank_b = np.zeros(len(rows), dtype=np.int64)
    rank_a[np.searchsorted(rows, rows_a)] = np.arange(1, len(rows_a) + 1)
    rank_b[np.searchsorted(rows, rows_b)] = np.arange(1, len(rows_b) + 1)
    score = np.where(rank_a > 0, 1.0 / (rrf_k + rank_a), 0.0)
    score = score + np.where(rank_b > 0, 1.0 / (rrf_k + rank_b), 0.0)
    big = len(rows_a) + len(rows_b) + 1
    best = np.minimum(np.where(rank_a > 0, rank_a, big), np.where(rank_b > 0, rank_b, big))
    order = np.lexsort((keys[rows], best, -score))
    return rows[order], score[order]


def _from_order(
    layout: _Layout, fused: tuple[np.ndarray, np.ndarray], judged: Sequence[str]
) -> dict[str, DeepRank]:
    order, scores = fused
    docs, first = np.unique(layout.document[order], return_index=True)
    firsts = np.sort(first)
    at_of = dict(zip(docs.tolist(), first.tolist(), strict=True))
    out = {}
    for doc in dict.fromkeys(str(d) for d in judged):
        which = layout.index.get(doc)
        chunks = 0 if which is None else layout.rows[which][1] - layout.rows[which][0]
        if which is None or not layout.has_words(which):
            out[doc] = DeepRank(doc, indexed=False, chunks=chunks)
            continue
        if which not in at_of:
            out[doc] = DeepRank(doc, indexed=True, chunks=chunks)
            continue
        at = at_of[which]
        row = int(order[at])
        out[doc] = DeepRank(
            doc,
            indexed=True,
            chunks=chunks,
            chunk_rank=at + 1,
            document_rank=int(np.searchsorted(firsts, at)) + 1,
            score=float(scores[at]),
            best_chunk=f"{layout.ids[which]}#{int(layout.chunk_index[row])}",
        )
    return out


def add_deep_ranks(
    kb: Any,
    queries: Sequence[str],
    responses: Sequence[Any],
    judged: Sequence[Sequence[str]],
    *,
    mode: str,
    top_k: int = 10,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Store each judged document's deep rank in its response's ``metadata["deep_ranks"]``.

    For responses the KB just made (their metadata dict is still ours to fill). Documents the
    response already holds have their rank there and are skipped; queries with nothing left
    are left alone. The miss taxonomy (``analysis._misses``) reads them.
    A failure never fails the queries: it is recorded as ``metadata["deep_ranks_error"]``.
    """
    judged = [_unfound(response, docs) for response, docs in zip(responses, judged, strict=True)]
    todo = [i for i, docs in enumerate(judged) if docs]
    if not todo:
        return
    try:
        ranks = deep_ranks(
            kb,
            [queries[i] for i in todo],
            [judged[i] for i in todo],
            mode=mode,
            top_k=top_k,
            options=options,
        )
    except Exception as exc:  # noqa: BLE001 - a diagnostic never fails the query it explains
        for i in todo:
            responses[i].metadata["deep_ranks_error"] = f"{type(exc).__name__}: {exc}"
        return
    for i, found in zip(todo, ranks, strict=True):
        responses[i].metadata["deep_ranks"] = {doc: r.to_dict() for doc, r in found.items()}


def _unfound(response: Any, judged: Sequence[str]) -> list[str]:
    """The judged documents none of ``response``'s chunks comes from (read from the array
    results' columns when the KB returned them: no record is built for this)."""
    columns = getattr(response.results, "columns", None)
    if columns is not None:
        returned = set(columns.document_scores()[0])
    else:
        returned = {r.source.get("document_id") for r in response.results}
    return [doc for doc in judged if doc not in returned]


__all__ = ["DeepRank", "add_deep_ranks", "deep_ranks"]
