"""``KnowledgeBase``: the embedded, offline knowledge base (chunks + BM25 / dense / hybrid search).

    kb = KnowledgeBase.build_sync(Recipe(name="docs"), documents)
    response = await kb.query("wing flutter", mode="full_text_search", top_k=10)

Every result is a chunk (``kind="chunk"``) whose ``source`` says where it came from:
``benchmark_document_id`` / ``document_id``, ``chunk_id`` (``"{document_id}#{index}"``),
``chunk_index``, ``start_offset`` / ``end_offset`` (characters in the document text), the
document's ``object_name`` and, when the KB knows the benchmark, heta-framework's raw key
``source_key`` = ``raw/benchmarks/{name}/{split}/{document_id}/{file}``. That is what evidence
matching and BEIR's document-level metrics read (``heta_notebook.evaluators._matching``).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from heta_notebook._util.loop import run_sync
from heta_notebook.kb._answer import answer_response, answer_response_sync
from heta_notebook.kb._bm25 import Bm25Index, tokenize
from heta_notebook.kb._chunking import Chunk, ChunkTable, chunk_documents
from heta_notebook.kb._corpus import corpus_hash
from heta_notebook.kb._deep_rank import DeepRanker
from heta_notebook.kb._dense import DenseIndex
from heta_notebook.kb._embedders import Embedder, LsaEmbedder, embedder_for
from heta_notebook.kb._fusion import fuse
from heta_notebook.kb._hits import METHODS as _METHOD
from heta_notebook.kb._hits import KbHits, RowFacts
from heta_notebook.kb._passages import Judged
from heta_notebook.kb._recipe import FULL_TEXT, VECTOR, Recipe
from heta_notebook.reports._lazy_results import LazyResults
from heta_notebook.schema._records import (
    BenchmarkDocument,
    BenchmarkManifest,
    QueryResponse,
    QueryResult,
    QueryTraceEvent,
)

KNOWN_OPTIONS = ("candidates", "rrf_k")
Hits = list[tuple[Any, ...]]


class KnowledgeBase:
    """Chunks of a corpus with the indexes a ``Recipe`` asked for; answers ``query_modes``."""

    def __init__(
        self,
        recipe: Recipe,
        chunks: Sequence[Chunk],
        documents: Mapping[str, Mapping[str, Any]],
        *,
        bm25: Bm25Index | None = None,
        dense: DenseIndex | None = None,
        name: str | None = None,
        benchmark: BenchmarkManifest | None = None,
        facts: Mapping[str, Any] | None = None,
    ):
        self.recipe = recipe
        self.chunks = chunks if isinstance(chunks, ChunkTable) else ChunkTable.from_chunks(chunks)
        self.documents = dict(documents)
        self.bm25 = bm25
        self.dense = dense
        self.name = name or recipe.name
        self.benchmark = benchmark
        self.facts = dict(facts or {})
        self._row_facts: dict[int, RowFacts] = {}  # per chunk row, for array results (kb._hits)

    # -- building ------------------------------------------------------------------------

    @classmethod
    async def build(
        cls,
        recipe: Recipe,
        documents: Sequence[BenchmarkDocument],
        *,
        name: str | None = None,
        benchmark: BenchmarkManifest | None = None,
        embedder: Embedder | None = None,
    ) -> KnowledgeBase:
        """Chunk ``documents`` and build the recipe's indexes (in a worker thread)."""
        documents = list(documents)
        return await asyncio.to_thread(
            cls._build, recipe, documents, name=name, benchmark=benchmark, embedder=embedder
        )

    @classmethod
    def build_sync(
        cls, recipe: Recipe, documents: Sequence[BenchmarkDocument], **options: Any
    ) -> KnowledgeBase:
        """``build`` for sync code (no event loop needed)."""
        return cls._build(recipe, list(documents), **options)

    @classmethod
    def _build(
        cls,
        recipe: Recipe,
        documents: list[BenchmarkDocument],
        *,
        name: str | None = None,
        benchmark: BenchmarkManifest | None = None,
        embedder: Embedder | None = None,
    ) -> KnowledgeBase:
        started = time.perf_counter()
        chunks = chunk_documents(documents, recipe.chunking)
        texts = [chunk.text for chunk in chunks]
        _require_words(texts, len(documents))
        table = ChunkTable.from_chunks(chunks)  # texts held once from here on
        del chunks
        embedder = embedder or (embedder_for(recipe.dense) if recipe.dense else None)
        tokens = tokenize(texts, recipe.bm25, as_ids=True) if recipe.bm25 else None
        bm25 = Bm25Index.build(texts, recipe.bm25, tokens=tokens) if recipe.bm25 else None
        shared = isinstance(embedder, LsaEmbedder) and bool(recipe.bm25)
        shared = shared and embedder.shares_tokens_with(recipe.bm25)  # type: ignore[union-attr]  # LsaEmbedder
        dense = None
        if embedder is not None:
            dense = DenseIndex.build(texts, embedder, tokens=tokens if shared else None)
        del texts, tokens
        facts = {
            "build_seconds": round(time.perf_counter() - started, 4),
            "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "corpus_hash": corpus_hash(documents),
        }
        infos = {d.document_id: {"name": d.name, "metadata": d.metadata} for d in documents}
        return cls(
            recipe,
            table,
            infos,
            bm25=bm25,
            dense=dense,
            name=name,
            benchmark=benchmark,
            facts=facts,
        )

    # -- querying ------------------------------------------------------------------------

    @property
    def query_modes(self) -> tuple[str, ...]:
        """Modes this KB answers: ``full_text_search``, ``vector_search``, ``hybrid_search``."""
        return self.recipe.query_modes

    async def query(
        self, text: str, *, mode: str, top_k: int = 10, options: Mapping[str, Any] | None = None
    ) -> QueryResponse:
        """The top ``top_k`` chunks for ``text`` in ``mode`` as a ``QueryResponse``.

        Best first; equal scores in the order of ``kb._ranking`` (document id descending as
        bytes, then chunk index; hybrid: the better single rank first), never corpus order.

        ``options``: ``candidates`` (hybrid: results taken from each part, default the
        recipe's) and ``rrf_k``; other keys are listed in ``metadata["ignored_options"]``.
        The recipe's answer step (``recipe.answer``) adds the answer and its citations.
        """
        response = self.query_many([text], mode=mode, top_k=top_k, options=options)[0]
        if self.recipe.answer is None:
            return response
        return await answer_response(self.recipe.answer, text, response)

    def query_sync(self, text: str, *, mode: str, top_k: int = 10, **kw: Any) -> QueryResponse:
        """``query`` for sync code."""
        return run_sync(lambda: self.query(text, mode=mode, top_k=top_k, **kw))

    def query_many(
        self,
        texts: Sequence[str],
        *,
        mode: str,
        top_k: int = 10,
        options: Mapping[str, Any] | None = None,
        answer: bool = False,
        judged: Sequence[Sequence[str | Judged]] | None = None,
    ) -> list[QueryResponse]:
        """Many queries at once (batched index calls); same results as ``query`` one by one.

        Retrieval only unless ``answer=True`` runs the recipe's answer step on each response.
        ``judged[i]``: the documents query i is judged against (ids, or ``Judged`` with their
        evidence passages); each one missing from its top k gets its exact deep rank in
        ``metadata["deep_ranks"]`` (``kb._deep_rank``), counted from the scores the search
        computes anyway, and whether the chunking cut its passages (``cut``).
        """
        self._check(mode, top_k)
        options = dict(options or {})
        ranker = None if judged is None else DeepRanker(self, judged)
        if ranker is not None and len(ranker.judged) != len(texts):
            raise ValueError(f"{len(texts)} queries but {len(ranker.judged)} judged-document lists")
        hits = self._hits(texts, mode=mode, top_k=top_k, options=options, ranker=ranker)
        responses = [self._response(mode, hit, top_k, options) for hit in hits]
        if ranker is not None:
            for i, response in enumerate(responses):
                response.metadata.update(ranker.metadata(i))
        if answer and self.recipe.answer is not None:
            step = self.recipe.answer
            responses = [
                answer_response_sync(step, t, r) for t, r in zip(texts, responses, strict=True)
            ]
        return responses

    def _hits(
        self,
        texts: Sequence[str],
        *,
        mode: str,
        top_k: int,
        options: Mapping[str, Any],
        ranker: DeepRanker | None = None,
    ) -> Hits:
        """The mode's search: ``(rows, scores[, fused ranks])`` per query; ``ranker`` counts
        deep ranks while each query's scores are in hand."""
        self._check(mode, top_k)
        keys = self.chunks.tie_keys
        visit = None if ranker is None else ranker.scored
        if mode == FULL_TEXT:
            assert self.bm25 is not None  # the mode exists only with its index
            return self.bm25.search(texts, top_k, keys=keys, visit=visit)
        if mode == VECTOR:
            assert self.dense is not None
            return self.dense.search(texts, top_k, keys=keys, visit=visit)
        return self._hybrid(texts, top_k, options, ranker)

    def _check(self, mode: str, top_k: int) -> None:
        if mode not in self.query_modes:
            modes = ", ".join(self.query_modes)
            raise ValueError(
                f"unknown query mode {mode!r}; knowledge base {self.name!r} answers: {modes}"
            )
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")

    def _hybrid(
        self,
        texts: Sequence[str],
        top_k: int,
        options: Mapping[str, Any],
        ranker: DeepRanker | None = None,
    ) -> Hits:
        assert self.recipe.hybrid is not None and self.bm25 is not None and self.dense is not None
        depth = max(int(options.get("candidates", self.recipe.hybrid.candidates)), top_k)
        rrf_k = int(options.get("rrf_k", self.recipe.hybrid.rrf_k))
        keys = self.chunks.tie_keys
        lexical_hits = self.bm25.search(texts, depth, keys=keys)
        pairs = zip(lexical_hits, self.dense.search(texts, depth, keys=keys), strict=True)
        hits: Hits = []
        for i, ((lexical, _), (dense, _)) in enumerate(pairs):
            fused = fuse(lexical, dense, rrf_k, keys)  # whole: the deep ranks read it too
            hits.append((fused.rows[:top_k], fused.scores[:top_k], fused.fusion(top_k)))
            if ranker is not None:
                ranker.fused(i, fused.rows[:top_k], fused.rows, fused.scores)
        return hits

    def _response(
        self, mode: str, hit: tuple, top_k: int, options: Mapping[str, Any]
    ) -> QueryResponse:
        rows = np.asarray(hit[0], dtype=np.int64)
        scores = np.asarray(hit[1])
        results = LazyResults(KbHits(self, mode, rows, scores, hit[2] if len(hit) > 2 else None))
        metadata: dict[str, Any] = {
            "knowledge_base": self.name,
            "recipe": self.recipe.name,
            "top_k": top_k,
        }
        ignored = sorted(set(options) - set(KNOWN_OPTIONS))
        if ignored:
            metadata["ignored_options"] = ignored
        trace = QueryTraceEvent(
            stage="retrieve",
            message=f"{_METHOD[mode]}: {len(results)} of {len(self.chunks)} chunks",
            metadata={"method": _METHOD[mode]},
        )
        # constructed: a validated response would turn the lazy results into records
        return QueryResponse.model_construct(
            mode=mode,
            results=results,  # type: ignore[arg-type]  # a lazy tuple of QueryResult
            trace=(trace,),
            metadata=metadata,
        )

    def _result(
        self, chunk: Chunk, score: float, rank: int, mode: str, fusion: list[int | None] | None
    ) -> QueryResult:
        metadata: dict[str, Any] = {"rank": rank, "retrieval_method": _METHOD[mode]}
        title = self.documents.get(chunk.document_id, {}).get("metadata", {}).get("title")
        if title:
            metadata["document_title"] = title
        if fusion is not None:
            metadata["fused_ranks"] = {FULL_TEXT: fusion[0], VECTOR: fusion[1]}
        return _result(
            id=chunk.chunk_id,
            text=chunk.text,
            score=score,
            kind="chunk",
            source=self.source(chunk),
            metadata=metadata,
        )

    def source(self, chunk: Chunk) -> dict[str, Any]:
        """Provenance of ``chunk``: document id, chunk id/index, offsets, raw key when known."""
        info = self.documents.get(chunk.document_id, {})
        source: dict[str, Any] = {
            "benchmark_document_id": chunk.document_id,
            "document_id": chunk.document_id,
            "chunk_id": chunk.chunk_id,
            "chunk_ids": [chunk.chunk_id],
            "chunk_index": chunk.chunk_index,
            "start_offset": chunk.start,
            "end_offset": chunk.end,
            "object_name": info.get("name"),
        }
        beir_id = info.get("metadata", {}).get("beir_document_id")
        if beir_id:
            source["beir_document_id"] = beir_id
        key = info.get("metadata", {}).get("heta_raw_key")  # set by the heta-framework adapter
        if key is None and self.benchmark is not None and info.get("name"):
            bench = self.benchmark
            key = f"raw/benchmarks/{bench.name}/{bench.split}/{chunk.document_id}/{info['name']}"
        if key:
            source.update(source_key=key, object_key=key)
        return source

    # -- facts and persistence -----------------------------------------------------------

    def manifest(self) -> dict[str, Any]:
        """Facts for the report's ``knowledge_base_manifest``: recipe hash, counts, index sizes, timing."""
        indexes: dict[str, Any] = {}
        if self.bm25 is not None:
            indexes["bm25"] = {
                "chunks": self.bm25.size,
                "vocabulary": self.bm25.vocabulary_size,
                "bytes": self.bm25.nbytes(),
            }
        if self.dense is not None:
            indexes["dense"] = {
                "chunks": len(self.dense.embeddings),
                "dims": self.dense.dims,
                "bytes": self.dense.nbytes(),
            }
        return {
            "knowledge_base_name": self.name,
            "kind": "heta_notebook.embedded",
            "recipe_name": self.recipe.name,
            "recipe_hash": self.recipe.hash,
            "documents": len(self.documents),
            "chunks": len(self.chunks),
            "query_modes": list(self.query_modes),
            "indexes": indexes,
            **self.facts,
        }

    def save(self, folder: str | Path) -> Path:
        """Write the KB to ``folder`` (JSON + ``.npy``; no pickle) and return it."""
        from heta_notebook.kb._storage import save_knowledge_base

        return save_knowledge_base(self, Path(folder))

    @classmethod
    def load(
        cls, folder: str | Path, *, name: str | None = None, embedder: Embedder | None = None
    ) -> KnowledgeBase:
        """Read a KB written by ``save`` (``embedder`` only for KBs built with a custom one)."""
        from heta_notebook.kb._storage import load_knowledge_base

        return load_knowledge_base(cls, Path(folder), name=name, embedder=embedder)

    def __repr__(self) -> str:
        return (
            f"<KnowledgeBase {self.name!r} recipe={self.recipe.name!r} documents={len(self.documents)} "
            f"chunks={len(self.chunks)} modes=[{', '.join(self.query_modes)}]>"
        )


def _result(**fields: Any) -> QueryResult:
    """``QueryResult.model_construct(**fields)`` for all six fields, ~4x cheaper.

    Fields come from validated chunks; skipping re-validation and pydantic's generic
    construct loop keeps 100-result responses cheap (they dominated query time).
    """
    result = QueryResult.__new__(QueryResult)
    object.__setattr__(result, "__dict__", fields)
    object.__setattr__(result, "__pydantic_fields_set__", set(fields))
    object.__setattr__(result, "__pydantic_extra__", {})
    object.__setattr__(result, "__pydantic_private__", None)
    return result


_WORD = re.compile(r"\w\w")


def _require_words(texts: Sequence[str], n_documents: int) -> None:
    """Refuse a corpus with nothing to index (bm25s would fail with ``max() arg is empty``)."""
    if not any(_WORD.search(text) for text in texts):
        raise ValueError(
            f"nothing to index: the {n_documents} document(s) have no words "
            "(empty corpus, or every document's text is empty)"
        )


__all__ = ["KnowledgeBase"]
