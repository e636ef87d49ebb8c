"""The KB at scale: memory-mapped cached KBs, chunk texts held once, batched and sampled LSA fits."""

from __future__ import annotations

import numpy as np
import pytest

from heta_notebook.kb import _dense as dense_module
from heta_notebook.kb._chunking import Chunk, ChunkTable, chunk_documents
from heta_notebook.kb._embedders import LsaEmbedder, normalize_rows
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Chunking, Recipe
from heta_notebook.schema import BenchmarkDocument, QueryResult
from tests._kb_helpers import cranfield

QUERIES = ["shock waves on wings", "heat transfer in laminar boundary layers", "buckling"]


@pytest.fixture(scope="module")
def documents() -> list[BenchmarkDocument]:
    return cranfield().documents[:300]


@pytest.fixture(scope="module")
def kb(documents) -> KnowledgeBase:
    recipe = Recipe(name="w40", chunking=Chunking(unit="words", size=40, overlap=8))
    return KnowledgeBase.build_sync(recipe, documents, benchmark=cranfield().manifest)


def answers(kb: KnowledgeBase) -> dict:
    return {mode: kb.query_many(QUERIES, mode=mode, top_k=20) for mode in kb.query_modes}


def is_mapped(array: np.ndarray) -> bool:
    """True when ``array`` reads a memory-mapped file (it or one of its bases is a memmap)."""
    current: object = array
    while isinstance(current, np.ndarray):
        if isinstance(current, np.memmap):
            return True
        current = current.base
    return False


def test_a_cached_kb_loads_memory_mapped_and_answers_the_same(tmp_path, kb):
    kb.save(tmp_path / "kb")
    loaded = KnowledgeBase.load(tmp_path / "kb")
    mapped = {
        "embeddings": loaded.dense.embeddings,
        "lsa basis": loaded.dense.embedder._projection().base,
        **{f"bm25 {k}": loaded.bm25.retriever.scores[k] for k in ("data", "indices", "indptr")},
        **{f"chunks {k}": v for k, v in loaded.chunks.columns.items()},
    }
    for what, array in mapped.items():
        assert is_mapped(array), what  # pages of the file, not a copy
        assert type(array) is np.ndarray, what  # no memmap subclass: its slicing runs Python
        assert not array.flags.writeable, what
    assert answers(loaded) == answers(kb)
    assert loaded.chunks == kb.chunks and list(loaded.chunks) == list(kb.chunks)


def test_chunk_texts_are_held_once_in_memory_and_on_disk(tmp_path, kb, documents):
    assert isinstance(kb.chunks, ChunkTable)
    chunks = chunk_documents(documents, kb.recipe.chunking)
    assert list(kb.chunks) == chunks
    assert kb.chunks.columns["text"].nbytes == sum(len(c.text.encode()) for c in chunks)
    assert not any(isinstance(v, list) for v in vars(kb).values())  # no per-chunk Python lists
    kb.save(tmp_path / "kb")
    files = [p for p in (tmp_path / "kb").rglob("*") if p.is_file()]
    passage = chunks[7].text[:60].encode()  # a run of words: no index stores it, only the table
    assert len(passage) == 60
    assert sum(p.read_bytes().count(passage) for p in files) == 1


def test_chunk_table_indexing_and_odd_texts(tmp_path):
    chunks = [
        Chunk("a#0", "a", 0, 0, 0, ""),
        Chunk("é/ü#0", "é/ü", 0, 0, 5, "naïve"),
        Chunk("é/ü#1", "é/ü", 1, 6, 10, "日本語!"),
    ]
    table = ChunkTable.from_chunks(chunks)
    assert len(table) == 3 and table[1] == chunks[1] and table[-1] == chunks[2]
    assert table[0:2] == chunks[:2] and list(table) == chunks
    assert table.text(2) == "日本語!" and table.document_id(1) == "é/ü"
    with pytest.raises(IndexError, match="out of range"):
        table[3]
    table.save(tmp_path / "chunks")
    assert list(ChunkTable.load(tmp_path / "chunks")) == chunks
    (tmp_path / "chunks" / "start.npy").unlink()
    with pytest.raises(FileNotFoundError):
        ChunkTable.load(tmp_path / "chunks")
    with pytest.raises(ValueError, match="missing columns"):
        ChunkTable({"text": np.zeros(0, np.uint8)})


def test_results_equal_pydantic_constructed_ones(kb):
    result = kb.query_many(QUERIES[:1], mode="hybrid_search", top_k=3)[0].results[0]
    fields = {name: getattr(result, name) for name in QueryResult.model_fields}
    assert result == QueryResult.model_construct(**fields) == QueryResult(**fields)
    assert result.model_dump() == QueryResult(**fields).model_dump()
    assert result.model_fields_set == set(QueryResult.model_fields)
    assert result.model_copy(update={"score": 1.0}).score == 1.0


def test_batched_lsa_fit_and_embedding_equal_the_one_shot_ones(documents):
    texts = [d.read_text() for d in documents]
    whole = LsaEmbedder(dims=16, batch_rows=10**9)
    vectors = whole.fit_embed(texts)
    batched = LsaEmbedder(dims=16, batch_rows=7)
    assert np.array_equal(batched.fit_embed(texts), vectors)
    assert np.array_equal(batched.components, whole.components)
    one_shot = normalize_rows(LsaEmbedder(dims=16).fit(texts).embed(texts))  # DenseIndex's old way
    assert np.array_equal(one_shot, vectors)
    assert whole.fit_facts == {
        "documents": 300,
        "fit_rows": 300,
        "fit_nnz": whole.fit_facts["fit_nnz"],
    }


def principal_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosines of the principal angles between the row spaces of ``a`` and ``b``."""
    qa, _ = np.linalg.qr(a.T.astype(np.float64))
    qb, _ = np.linalg.qr(b.T.astype(np.float64))
    return np.linalg.svd(qa.T @ qb, compute_uv=False)


def test_lsa_fitted_on_a_sample_finds_the_same_subspace():
    rng = np.random.default_rng(1)
    topics = [[f"{name}{i}" for i in range(30)] for name in ("wing", "heat", "shell", "flow")]
    texts = [" ".join(rng.choice(topics[i % 4], 25)) for i in range(2000)]
    full = LsaEmbedder(dims=4).fit(texts)
    sampled = LsaEmbedder(dims=4, fit_sample=300, seed=3).fit(texts)
    assert sampled.fit_facts["fit_rows"] == 300 and full.fit_facts["fit_rows"] == 2000
    assert np.array_equal(sampled.idf, full.idf) and sampled.vocabulary == full.vocabulary
    assert principal_cosines(sampled.components, full.components).min() > 0.99
    # and the neighbours agree: every text's nearest topic centre is the same
    for embedder in (full, sampled):
        vectors = embedder.embed(texts)
        nearest = np.argmax(vectors @ vectors[:4].T, axis=1)
        assert np.array_equal(nearest, np.arange(2000) % 4)


def test_dense_queries_in_small_blocks_give_the_same_hits(kb, monkeypatch):
    expected = kb.dense.search(QUERIES, 15)
    monkeypatch.setattr(dense_module, "QUERY_BLOCK_BYTES", 1)  # one query per block
    for (ids, scores), (want_ids, want_scores) in zip(
        kb.dense.search(QUERIES, 15), expected, strict=True
    ):
        # a one-row product may round differently from a many-row one (BLAS kernels)
        assert np.array_equal(ids, want_ids) and np.allclose(scores, want_scores, atol=1e-6)
