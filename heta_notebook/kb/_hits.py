"""``KbHits``: one query's results as the knowledge base found them (row indices and scores).

A ``QueryResponse`` of the embedded KB holds its results as ``LazyResults(KbHits(...))``: the
records (``QueryResult``, with their ``source`` provenance and ``metadata``) are built only
when someone reads them, by the KB's own ``_result``, so they are the records it always built.
The run's metrics and its checkpoint read the arrays instead, through what a chunk row always
yields (``RowFacts``: its id, text, provenance as JSON, benchmark documents), kept per KB.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from pydantic_core import to_json

from heta_notebook.evaluators._matching import reference_keys
from heta_notebook.kb._recipe import FULL_TEXT, HYBRID, VECTOR
from heta_notebook.reports._lazy_results import HitColumns
from heta_notebook.schema._records import QueryResult

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.kb._knowledge_base import KnowledgeBase


KEEP_ROWS = 200_000  # chunk rows whose facts a KB keeps (~1 KB each with its text)


class RowFacts(NamedTuple):
    """What every result of one chunk row shares, whatever the query."""

    chunk_id: str
    text: str
    source_json: str
    documents: tuple[str, ...]  # benchmark document ids (``evaluators._matching``)
    direct: frozenset[str]  # what a reference id equals directly (``_matching.reference_keys``)
    title_json: str  # ``,"document_title":...`` or ""


class KbHits:
    """One response's results: chunk ``rows``, their ``scores`` (best first) and, for hybrid,
    each result's ``[full-text rank, vector rank]`` (``fusion``)."""

    __slots__ = ("kb", "mode", "rows", "scores", "fusion")

    def __init__(
        self,
        kb: KnowledgeBase,
        mode: str,
        rows: np.ndarray,
        scores: np.ndarray,
        fusion: list[list[int | None]] | None = None,
    ):
        self.kb, self.mode, self.rows, self.scores, self.fusion = kb, mode, rows, scores, fusion

    def __len__(self) -> int:
        return len(self.rows)

    def records(self, part: slice = slice(None)) -> tuple[QueryResult, ...]:
        """The results (``part`` of them) as records, built as the KB has always built them."""
        kb, fusion = self.kb, self.fusion
        ranks = range(1, len(self.rows) + 1)[part]
        chunks = kb.chunks.rows(self.rows[part])
        return tuple(
            kb._result(chunk, float(s), rank, self.mode, fusion[rank - 1] if fusion else None)
            for rank, chunk, s in zip(ranks, chunks, self.scores[part], strict=True)
        )

    def document_scores(self) -> tuple[list[str], list[float] | None]:
        """Each benchmark document once, in order of first appearance, with its best score."""
        best: dict[str, float] = {}
        get = best.get
        for facts, score in zip(row_facts(self.kb, self.rows), self.scores.tolist(), strict=True):
            for doc in facts.documents:
                previous = get(doc)
                if previous is None or score > previous:
                    best[doc] = score
        return list(best), list(best.values())

    def reference_keys(self) -> list[tuple[str, frozenset[str], tuple[str, ...]]]:
        """Per hit: chunk id, direct reference keys and documents, as matching reads records."""
        return [(f.chunk_id, f.direct, f.documents) for f in row_facts(self.kb, self.rows)]

    def hit_columns(self) -> HitColumns:
        """The report's ``results`` columns of these hits, as written from their records."""
        facts = row_facts(self.kb, self.rows)
        heads = _heads(self.mode, len(facts))
        titles = [f.title_json for f in facts]
        metadata: list[str | None]
        if self.fusion:
            tails = [_fused(*ranks) for ranks in self.fusion]
            metadata = list(map("".join, zip(heads, titles, tails, strict=True)))
        else:
            metadata = list(map("".join, zip(heads, titles, ["}"] * len(facts), strict=True)))
        return HitColumns(
            ids=[f.chunk_id for f in facts],
            texts=[f.text for f in facts],
            scores=np.asarray(self.scores, dtype=np.float64),
            kind="chunk",
            sources=[f.source_json for f in facts],
            metadata=metadata,
        )


def row_facts(kb: KnowledgeBase, rows: np.ndarray) -> list[RowFacts]:
    """The ``RowFacts`` of ``rows`` (computed once per chunk row and kept on the KB)."""
    cache: dict[int, RowFacts] = kb._row_facts
    keys = rows.tolist()
    missing = [row for row in dict.fromkeys(keys) if row not in cache]
    if missing:
        if len(cache) + len(missing) > KEEP_ROWS:  # bounded memory on a large corpus
            cache.clear()
        for row, chunk in zip(missing, kb.chunks.rows(missing), strict=True):
            cache[row] = _facts_of(kb, chunk)
    return list(map(cache.__getitem__, keys))


def _facts_of(kb: KnowledgeBase, chunk: Any) -> RowFacts:
    source = kb.source(chunk)
    bare = QueryResult.model_construct(id=chunk.chunk_id, source=source, metadata={})
    title = kb.documents.get(chunk.document_id, {}).get("metadata", {}).get("title")
    direct, documents = reference_keys(bare)  # result metadata never names a document here
    return RowFacts(
        chunk_id=chunk.chunk_id,
        text=chunk.text,
        source_json=_json(source),
        documents=documents,
        direct=direct,
        title_json=f',"document_title":{_json(title)}' if title else "",
    )


def _json(value: Any) -> str:
    """Compact JSON, as the report's columns write dicts (``reports._tables``)."""
    return to_json(value, inf_nan_mode="null").decode("utf-8")


@functools.lru_cache(maxsize=65536)
def _fused(lexical: int | None, dense: int | None) -> str:
    """The end of a hybrid result's metadata JSON: its rank in each part, then ``}``."""
    a, b = ("null" if r is None else str(r) for r in (lexical, dense))
    return f',"fused_ranks":{{"{FULL_TEXT}":{a},"{VECTOR}":{b}}}}}'


@functools.lru_cache(maxsize=16)
def _heads(mode: str, n: int) -> list[str]:
    """The start of the metadata JSON of ranks 1..n in ``mode`` (rank, retrieval method)."""
    return [f'{{"rank":{rank}{_METADATA_HEAD[mode]}' for rank in range(1, n + 1)]


METHODS = {FULL_TEXT: "bm25", VECTOR: "dense_cosine", HYBRID: "reciprocal_rank_fusion"}
_METADATA_HEAD = {mode: f',"retrieval_method":{_json(m)}' for mode, m in METHODS.items()}


__all__ = ["METHODS", "KbHits", "RowFacts", "row_facts"]
