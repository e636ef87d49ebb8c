"""Exact deep ranks of judged documents in the embedded KB, without retrieving the corpus.

For one query and one judged document, the *deep rank* is where the document's best chunk
would land if the KB returned everything, under the mode's own scorer and the KB's own
ranking rule (score descending, ties by the KB's tie key):

- ``chunk_rank``: its place in the chunk list (what ``top_k`` cuts);
- ``document_rank``: its place once chunks are mapped to documents, each document kept at its
  best chunk (what document-level metrics see).

The ranks are counted inside the KB's own search (``DeepRanker``, handed to
``KnowledgeBase.query_many(judged=...)``): ``full_text_search`` and ``vector_search`` visit each
query's score vector while the search holds it (bm25s's scores; the float32 cosines, rescored
exactly only near a judged document's score, ``_counts``), so a rank costs a
count, not a second retrieval, and no vector outlives its query. ``hybrid_search`` fuses its two
candidate lists (depth ``max(candidates, top_k)``) whole, once (``kb._fusion.fuse``): the top k
is the head of that order and the deep ranks are read from the rest of it; a
chunk outside both lists has no hybrid rank at any depth. A BM25 score of 0 (no shared term) is
never returned, so it has no rank either. A document the KB does not hold, or whose chunks hold
no word, is ``indexed=False``. In a run only queries whose judged documents are missing from
the top k do any of this.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from heta_notebook.kb._fusion import fuse as fuse_rows
from heta_notebook.kb._passages import Judged, Passage, is_cut, judged_item
from heta_notebook.kb._ranking import ScoreVector

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
    cut: bool | None = None  # no chunk holds its evidence passage whole (``kb._passages``)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (what case results store under ``deep_ranks``)."""
        return dict(self.__dict__)  # the fields, in order (frozen: nothing else is set)


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
        self.one_chunk_each = self.n == len(self.ids)  # document ranks are chunk ranks
        keys = getattr(chunks, "tie_keys", None)  # the KB's tie order when it declares one
        self.keys = np.arange(self.n) if keys is None else np.asarray(keys)
        self.key_list = self.keys.tolist()  # for comparisons in Python (a few rows a query)
        self.document_list = self.document.tolist()
        held = [i for i, (start, end) in enumerate(self.rows) if end > start]
        self.held_starts = starts[held]  # where each document with chunks starts
        self.held_place = {which: place for place, which in enumerate(held)}
        self._words: dict[int, bool] = {}
        self.chunk_index = np.asarray(chunks.columns["chunk_index"], dtype=np.int64)
        self.chunks = chunks

    def spans(self, which: int) -> list[tuple[int, int, str]]:
        """Document ``which``'s chunks as ``(start, end, text)`` (offsets in its text)."""
        start, end = self.rows[which]
        begin, stop = self.chunks.columns["start"], self.chunks.columns["end"]
        rows = range(start, end)
        return [(int(begin[r]), int(stop[r]), self.chunks.text(r)) for r in rows]

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


def fuse(
    rows_a: np.ndarray, rows_b: np.ndarray, rrf_k: int, keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Two ranked row lists fused whole (``kb._fusion.fuse``, the hybrid search's own fusion):
    rows best first and their RRF scores."""
    fused = fuse_rows(rows_a, rows_b, rrf_k, keys)
    return fused.rows, fused.scores


def _from_order(
    layout: _Layout, fused: tuple[np.ndarray, np.ndarray], judged: Sequence[str]
) -> dict[str, DeepRank]:
    """Deep ranks from a whole ranking (rows best first, their scores): each judged document
    at its first chunk in it, its document rank the number of distinct documents up to there.
    Python dicts over the few hundred rows: cheaper than numpy's calls at this size."""
    order, scores = fused
    documents = layout.document[order].tolist()
    places = range(len(documents) - 1, -1, -1)
    at_of = dict(zip(reversed(documents), places, strict=True))  # the first place wins
    firsts = None if layout.one_chunk_each else dict.fromkeys(documents)
    document_rank = None if firsts is None else {d: i for i, d in enumerate(firsts, start=1)}
    out = {}
    for doc in dict.fromkeys(str(d) for d in judged):
        which = layout.index.get(doc)
        chunks = 0 if which is None else layout.rows[which][1] - layout.rows[which][0]
        if which is None or not layout.has_words(which):
            out[doc] = DeepRank(doc, indexed=False, chunks=chunks)
            continue
        at = at_of.get(which)
        if at is None:
            out[doc] = DeepRank(doc, indexed=True, chunks=chunks)
            continue
        out[doc] = DeepRank(
            doc,
            indexed=True,
            chunks=chunks,
            chunk_rank=at + 1,
            document_rank=at + 1 if document_rank is None else document_rank[which],
            score=float(scores[at]),
            best_chunk=f"{layout.ids[which]}#{layout.chunk_index[order[at]]}",
        )
    return out


class DeepRanker:
    """The deep ranks of one batch of queries' judged documents, counted during the search.

    ``judged[i]``: the documents query i is judged against: ids, or ``Judged`` with the
    evidence passages each holds (a missed one whose passages no chunk holds whole is marked
    ``cut``, ``kb._passages``). ``missing_only``: rank only
    those the query's own top k does not hold (a run's case: the found ones have their rank).
    ``strict``: raise a failure; else record it per query (a diagnostic never fails a query).
    """

    def __init__(
        self,
        kb: Any,
        judged: Sequence[Sequence[str | Judged]],
        *,
        missing_only: bool = True,
        strict: bool = False,
    ) -> None:
        self.layout = _layout(kb)
        self.passages: list[dict[str, tuple[Passage, ...]]] = []
        for items in judged:
            passages: dict[str, tuple[Passage, ...]] = {}
            for item in map(judged_item, items):
                passages[item.document_id] = passages.get(item.document_id, ()) + item.passages
            self.passages.append(passages)
        self.judged = [list(docs) for docs in self.passages]
        self.ranks: list[dict[str, DeepRank] | None] = [None] * len(self.judged)
        self.errors: list[str | None] = [None] * len(self.judged)
        self.missing_only, self.strict = missing_only, strict

    def scored(self, i: int, rows: np.ndarray, scores: ScoreVector) -> None:
        """``kb._ranking.Visit``: rank query i's judged documents from its score vector."""
        todo = self._todo(i, rows)
        if todo:
            self._keep(i, lambda: _from_vector(self.layout, scores, todo))

    def fused(self, i: int, rows: np.ndarray, order: np.ndarray, scores: np.ndarray) -> None:
        """Hybrid: rank query i's judged documents in its whole fused ranking (``order``, best
        first, with its RRF ``scores``: the fusion the search made for its top k)."""
        todo = self._todo(i, rows)
        if todo:
            self._keep(i, lambda: _from_order(self.layout, (order, scores), todo))

    def metadata(self, i: int) -> dict[str, Any]:
        """What query i's response records: ``deep_ranks`` (JSON) or ``deep_ranks_error``."""
        if self.errors[i] is not None:
            return {"deep_ranks_error": self.errors[i]}
        ranks = self.ranks[i]
        return {"deep_ranks": {d: r.to_dict() for d, r in ranks.items()}} if ranks else {}

    def _todo(self, i: int, rows: np.ndarray) -> list[str]:
        docs = self.judged[i]
        if not self.missing_only or not docs:
            return docs
        owner = self.layout.document_list
        held = {owner[row] for row in np.asarray(rows).tolist()}
        return [d for d in docs if self.layout.index.get(d) not in held]

    def _keep(self, i: int, rank: Any) -> None:
        try:
            self.ranks[i] = self._with_cuts(i, rank())
        except Exception as exc:  # noqa: BLE001 - a diagnostic never fails the query it explains
            if self.strict:
                raise
            self.errors[i] = f"{type(exc).__name__}: {exc}"

    def _with_cuts(self, i: int, ranks: dict[str, DeepRank]) -> dict[str, DeepRank]:
        """``ranks`` with ``cut`` set for the indexed documents whose passages are known."""
        for doc, rank in ranks.items():
            passages = self.passages[i].get(doc)
            if passages and rank.indexed and rank.chunks > 1:
                spans = self.layout.spans(self.layout.index[doc])
                ranks[doc] = replace(rank, cut=is_cut(spans, passages))
        return ranks


def _from_vector(layout: _Layout, scores: ScoreVector, judged: list[str]) -> dict[str, DeepRank]:
    """Deep ranks from one query's score vector: each document's best chunk (its rows scored
    exactly), then the chunks and documents that rank before it (``_counts``)."""
    out: dict[str, DeepRank] = {}
    docs, which = [], []
    for doc in judged:
        w = layout.index.get(doc)
        if w is None or not layout.has_words(w):
            chunks = 0 if w is None else layout.rows[w][1] - layout.rows[w][0]
            out[doc] = DeepRank(doc, indexed=False, chunks=chunks)
        else:
            docs.append(doc)
            which.append(w)
    if docs:
        out.update(_ranked(layout, scores, docs, which))
    return {doc: out[doc] for doc in judged}


def _ranked(
    layout: _Layout, scores: ScoreVector, docs: list[str], which: list[int]
) -> dict[str, DeepRank]:
    """Deep ranks of indexed documents ``which`` (a BM25 score at the floor has none)."""
    sizes = [layout.rows[w][1] - layout.rows[w][0] for w in which]
    best, values = _best_chunks(layout, scores, which)
    ranked = [scores.floor is None or value > scores.floor for value in values]
    picked = [i for i, is_ranked in enumerate(ranked) if is_ranked]
    counts = _counts(layout, scores, [best[i] for i in picked], [values[i] for i in picked])
    ids, chunk_index = layout.ids, layout.chunk_index
    out = {}
    for i, doc in enumerate(docs):
        if not ranked[i]:
            out[doc] = DeepRank(doc, indexed=True, chunks=sizes[i], score=values[i])
            continue
        chunk_rank, document_rank, tied = counts[picked.index(i)]
        out[doc] = DeepRank(
            doc,
            indexed=True,
            chunks=sizes[i],
            chunk_rank=chunk_rank,
            document_rank=document_rank,
            score=values[i],
            best_chunk=f"{ids[which[i]]}#{chunk_index[best[i]]}",
            tied=tied,
        )
    return out


def _best_chunks(
    layout: _Layout, scores: ScoreVector, which: list[int]
) -> tuple[list[int], list[float]]:
    """Each document's best chunk (score, then tie key) and its exact score: one exact scoring
    of all their rows, the pick in Python (a few dozen rows: cheaper than numpy calls)."""
    spans = [range(*layout.rows[w]) for w in which]
    rows = [row for span in spans for row in span]
    exact = iter(scores.exact(np.asarray(rows, dtype=np.int64)).tolist())
    keys, best, values = layout.key_list, [], []
    for span in spans:
        scored = [(-next(exact), keys[row], row) for row in span]
        minus, _, row = min(scored)
        best.append(row)
        values.append(-minus)
    return best, values


def _counts(
    layout: _Layout, scores: ScoreVector, best: list[int], values: list[float]
) -> list[tuple[int, int, int]]:
    """Per best chunk (``best``, exact scores ``values``): the chunks ranked before it, the
    documents owning one, and the other chunks with exactly its score.

    Few numpy calls per query, whatever the number of judged documents: inside a run each one
    that releases the GIL costs a handoff to the thread that scores (bench/README.md). The
    approximate scores sorted once place every row more than the margin from a judged value
    (``kb._ranking.ScoreVector``); only the rows within it (the band: ties, for exact scores)
    are scored exactly, and compared in Python with the tie key. Judged documents are counted
    in groups of at most ``_MASK // rows``.
    """
    if not best:
        return []
    ordered = np.sort(scores.approx)
    documents = None if layout.one_chunk_each else _document_bests(layout, scores)
    size = max(1, _MASK // max(len(ordered), 1))
    out: list[tuple[int, int, int]] = []
    for start in range(0, len(best), size):
        part = slice(start, start + size)
        out += _counted(layout, scores, (ordered, documents), best[part], values[part])
    return out


def _document_bests(layout: _Layout, scores: ScoreVector) -> tuple[np.ndarray, np.ndarray]:
    """Each document's best approximate score (by its place among documents with chunks), and
    those scores sorted."""
    bests = np.maximum.reduceat(scores.approx, layout.held_starts)
    return bests, np.sort(bests)


def _bands(
    scores: ScoreVector, best: list[int], lows: list[float], highs: list[float], wide: list[bool]
) -> list[list[tuple[int, float]]]:
    """Per judged value, the other rows whose approximate score lies in its band
    (``lows[i]`` to ``highs[i]``), with their exact scores. Only ``wide`` bands hold other rows
    (the sorted count said so); the rows of all of them are found in three calls (a
    ``searchsorted`` of every score among the merged bands' edges: odd places are inside),
    split among the bands in Python and scored exactly in one call."""
    if not any(wide):
        return [[] for _ in best]
    edges = _edges([(lo, hi) for lo, hi, w in zip(lows, highs, wide, strict=True) if w])
    places = np.searchsorted(np.asarray(edges, dtype=np.float64), scores.approx, side="right")
    rows = np.flatnonzero(places & 1)
    spans = list(zip(rows.tolist(), scores.approx[rows].tolist(), strict=True))  # exact floats
    bands = [
        [r for r, a in spans if w and r != row and lo <= a <= hi]
        for row, lo, hi, w in zip(best, lows, highs, wide, strict=True)
    ]
    flat = [r for band in bands for r in band]
    exact = iter(scores.exact(np.asarray(flat, dtype=np.int64)).tolist() if flat else ())
    return [[(r, next(exact)) for r in band] for band in bands]


def _edges(bands: list[tuple[float, float]]) -> list[float]:
    """Closed bands merged, as ascending edges ``lo, above(hi), ...``: a score ``x`` is inside
    one when the count of edges ``<= x`` is odd (``above(hi)``: the next float after ``hi``)."""
    merged: list[list[float]] = []
    for lo, hi in sorted(bands):
        if merged and lo <= math.nextafter(merged[-1][1], math.inf):  # touching: one
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return [edge for lo, hi in merged for edge in (lo, math.nextafter(hi, math.inf))]


def _counted(
    layout: _Layout,
    scores: ScoreVector,
    sorted_scores: tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None],
    best: list[int],
    values: list[float],
) -> list[tuple[int, int, int]]:
    """``_counts`` for one group: rows (and documents) beyond the band from two (three)
    ``searchsorted`` calls, the band's rows scored exactly in one call."""
    ordered, documents = sorted_scores
    margin = scores.margin
    lows = np.asarray([value - margin for value in values], dtype=np.float64)
    highs = np.asarray([value + margin for value in values], dtype=np.float64)
    # one call for both edges: the rows below ``low`` are those at most the float before it
    below = [math.nextafter(low, -math.inf) for low in lows.tolist()]
    edges = np.searchsorted(ordered, np.asarray(below + highs.tolist()), side="right").tolist()
    lo, hi = edges[: len(values)], edges[len(values) :]
    bands = _bands(
        scores,
        best,
        lows.tolist(),
        highs.tolist(),
        [b - a > 1 for a, b in zip(lo, hi, strict=True)],
    )
    n = len(ordered)
    if documents is None:
        certain = [n - h for h in hi]
    else:
        bests, sorted_bests = documents
        above = np.searchsorted(sorted_bests, highs, side="right").tolist()
        certain = [len(sorted_bests) - a for a in above]
    out = []
    for row, value, high, h, band, docs in zip(
        best, values, highs.tolist(), hi, bands, certain, strict=True
    ):
        key = layout.key_list[row]
        first = [r for r, e in band if e > value or (e == value and layout.key_list[r] < key)]
        tied = sum(1 for _, e in band if e == value)
        chunk_rank = n - h + len(first) + 1
        if documents is None:  # one chunk per document: documents are chunks
            out.append((chunk_rank, chunk_rank, tied))
            continue
        place, owner = layout.held_place, layout.document_list
        new = {owner[r] for r in first if not float(bests[place[owner[r]]]) > high}
        out.append((chunk_rank, docs + len(new) + 1, tied))
    return out


_MASK = 4 * 2**20


def deep_ranks(
    kb: Any,
    queries: Sequence[str],
    judged: Sequence[Sequence[str | Judged]],
    *,
    mode: str,
    top_k: int = 10,
    options: Mapping[str, Any] | None = None,
) -> list[dict[str, DeepRank]]:
    """Per query, the exact deep rank of each judged document id (``judged[i]`` for query i),
    found or not: one search of the KB per batch, as ``query`` makes, with the ranks counted."""
    if len(queries) != len(judged):
        raise ValueError(f"{len(queries)} queries but {len(judged)} judged-document lists")
    ranker = DeepRanker(kb, judged, missing_only=False, strict=True)
    kb._hits(queries, mode=mode, top_k=top_k, options=dict(options or {}), ranker=ranker)
    return [ranks or {} for ranks in ranker.ranks]


__all__ = ["DeepRank", "DeepRanker", "deep_ranks"]
