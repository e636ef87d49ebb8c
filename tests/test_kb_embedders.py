"""Embedders: LSA (offline default), custom embedders, sentence-transformers when available."""

from __future__ import annotations

import numpy as np
import pytest

from heta_notebook.kb._embedders import Embedder, LsaEmbedder
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Dense, Recipe
from heta_notebook.schema import BenchmarkDocument
from tests._kb_helpers import cranfield

TEXTS = [
    "the wing stalls at high angle of attack",
    "lift and drag of a swept wing",
    "heat transfer through a laminar boundary layer",
    "boundary layer transition and heat flux",
    "buckling of thin cylindrical shells",
]


def test_lsa_vectors_are_unit_length_and_deterministic():
    first = LsaEmbedder(dims=3).fit(TEXTS)
    vectors = first.embed(TEXTS)
    assert vectors.shape == (5, 3) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    again = LsaEmbedder(dims=3).fit(TEXTS).embed(TEXTS)
    assert np.allclose(np.abs(vectors @ vectors.T), np.abs(again @ again.T), atol=1e-5)
    assert isinstance(first, Embedder)


def test_lsa_puts_related_texts_together():
    embedder = LsaEmbedder(dims=3).fit(TEXTS)
    query = embedder.embed(["heat in the boundary layer"])[0]
    best = int(np.argmax(embedder.embed(TEXTS) @ query))
    assert best in (2, 3)
    assert np.allclose(embedder.embed(["zzz unknown words"]), 0)


def test_lsa_caps_dims_on_tiny_corpora_and_uses_svds_on_larger_ones():
    assert LsaEmbedder(dims=64).fit(TEXTS).output_dims == 5
    documents = [d.read_text() for d in cranfield().documents[:300]]
    assert LsaEmbedder(dims=32).fit(documents).output_dims == 32


def test_lsa_refuses_to_embed_before_fit():
    with pytest.raises(RuntimeError, match="before fit"):
        LsaEmbedder().embed(["x"])


class KeywordEmbedder:
    """A custom embedder: one dimension per keyword."""

    keywords = ("wing", "heat", "shell")

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([[float(k in t) for k in self.keywords] for t in texts])


def test_custom_embedder_drives_vector_search(tmp_path):
    documents = [BenchmarkDocument(document_id=str(i), text=t) for i, t in enumerate(TEXTS)]
    recipe = Recipe(name="custom", hybrid=None, bm25=None)
    kb = KnowledgeBase.build_sync(recipe, documents, embedder=KeywordEmbedder())
    top = kb.query_sync("thin shell", mode="vector_search", top_k=1).results[0]
    assert top.source["benchmark_document_id"] == "4"
    kb.save(tmp_path / "kb")
    with pytest.raises(ValueError, match="custom embedder"):
        KnowledgeBase.load(tmp_path / "kb")
    reloaded = KnowledgeBase.load(tmp_path / "kb", embedder=KeywordEmbedder())
    assert reloaded.query_sync("thin shell", mode="vector_search", top_k=1).results[0] == top


def test_sentence_transformers_adapter_with_a_local_model():
    pytest.importorskip("sentence_transformers", reason="sentence-transformers not installed")
    model = "all-MiniLM-L6-v2"
    try:
        recipe = Recipe(name="st", dense=Dense(embedder="sentence_transformers", model=model))
        documents = [BenchmarkDocument(document_id=str(i), text=t) for i, t in enumerate(TEXTS)]
        kb = KnowledgeBase.build_sync(recipe, documents)
    except OSError as exc:  # pragma: no cover - no local copy of the model
        pytest.skip(f"no local sentence-transformers model {model!r}: {exc}")
    assert kb.query_sync("heat", mode="vector_search", top_k=2).results
