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
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from heta_notebook.kb._bm25 import tokenize
from heta_notebook.kb._embedders import normalize_rows
from heta_notebook.kb._fusion import reciprocal_rank_fusion
from heta_notebook.kb._recipe import FULL_TEXT, HYBRID

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
        return asdict(self)


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
    vectors = normalize_rows(kb.dense.embedder.embed(list(queries)))
    try:
        from heta_notebook.kb._ranking import rounded  # type: ignore[import-not-found]
    except ImportError:
        return vectors @ kb.dense.embeddings.T
    return rounded(vectors.astype(np.float64) @ kb.dense.embeddings.T.astype(np.float64))


def _from_scores(
    layout: _Layout, scores: np.ndarray, judged: Sequence[str], floor: float | None
) -> dict[str, DeepRank]:
    out = {}
    for doc in dict.fromkeys(str(d) for d in judged):
        which = layout.index.get(doc)
        if which is None or not layout.has_words(which):
            chunks = 0 if which is None else layout.rows[which][1] - layout.rows[which][0]
            out[doc] = DeepRank(doc, indexed=False, chunks=chunks)
            continue
        start, end = layout.rows[which]
        local = np.lexsort((layout.keys[start:end], -scores[start:end]))[0]
        best = start + int(local)
        value, key = scores[best], layout.keys[best]
        if floor is not None and value <= floor:
            out[doc] = DeepRank(doc, indexed=True, chunks=end - start, score=float(value))
            continue
        ahead = (scores > value) | ((scores == value) & (layout.keys < key))
        out[doc] = DeepRank(
            doc,
            indexed=True,
            chunks=end - start,
            chunk_rank=int(ahead.sum()) + 1,
            document_rank=int(np.unique(layout.document[ahead]).size) + 1,
            score=float(value),
            best_chunk=f"{layout.ids[which]}#{int(layout.chunk_index[best])}",
            tied=int((scores == value).sum()) - 1,
        )
    return out


def _hybrid_orders(
    kb: Any, queries: Sequence[str], top_k: int, options: Mapping[str, Any] | None
) -> list[list[tuple[int, float]]]:
    """The KB's fused ranking of every chunk either component puts within its candidates."""
    options = dict(options or {})
    depth = max(int(options.get("candidates", kb.recipe.hybrid.candidates)), top_k)
    rrf_k = int(options.get("rrf_k", kb.recipe.hybrid.rrf_k))
    layout = _layout(kb)
    keys = {"keys": layout.keys} if layout.has_keys else {}
    lexical = kb.bm25.search(queries, depth, **keys)
    dense = kb.dense.search(queries, depth, **keys)
    orders = []
    for (rows_a, _), (rows_b, _) in zip(lexical, dense, strict=True):
        fused = reciprocal_rank_fusion([rows_a, rows_b], k=rrf_k, top_k=None, **keys)
        orders.append([(row, score) for row, score, _ in fused])
    return orders


def _from_order(
    layout: _Layout, order: list[tuple[int, float]], judged: Sequence[str]
) -> dict[str, DeepRank]:
    first: dict[int, tuple[int, int, int, float]] = {}  # document -> chunk rank, doc rank, row
    for chunk_rank, (row, score) in enumerate(order, start=1):
        which = int(layout.document[row])
        if which not in first:
            first[which] = (chunk_rank, len(first) + 1, row, score)
    out = {}
    for doc in dict.fromkeys(str(d) for d in judged):
        which = layout.index.get(doc)
        if which is None or not layout.has_words(which):
            chunks = 0 if which is None else layout.rows[which][1] - layout.rows[which][0]
            out[doc] = DeepRank(doc, indexed=False, chunks=chunks)
            continue
        chunks = layout.rows[which][1] - layout.rows[which][0]
        if which not in first:
            out[doc] = DeepRank(doc, indexed=True, chunks=chunks)
            continue
        chunk_rank, document_rank, row, score = first[which]
        out[doc] = DeepRank(
            doc,
            indexed=True,
            chunks=chunks,
            chunk_rank=chunk_rank,
            document_rank=document_rank,
            score=float(score),
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

    For responses the KB just made (their metadata dict is still ours to fill); queries with
    no judged document are left alone. The miss taxonomy (``analysis._misses``) reads them.
    A failure never fails the queries: it is recorded as ``metadata["deep_ranks_error"]``.
    """
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


__all__ = ["DeepRank", "add_deep_ranks", "deep_ranks"]
