"""Embedders turn texts into vectors for the dense index.

Any object with ``embed(list[str]) -> np.ndarray`` (shape ``(n, dims)``) is an ``Embedder``;
one with a ``fit(list[str])`` method is fitted on the corpus first. Two come built in:

- ``LsaEmbedder`` (default, offline, no weights): TF-IDF (sublinear tf, smoothed idf) over
  bm25s tokens, then a truncated SVD (``scipy.sparse.linalg.svds``) fitted on the corpus.
- ``SentenceTransformerEmbedder``: a sentence-transformers model that is already on disk
  (``local_files_only``); needs ``pip install sentence-transformers``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

from heta_notebook._util.mapped import load_mapped
from heta_notebook.kb._bm25 import tokenize
from heta_notebook.kb._recipe import Bm25
from heta_notebook.kb._threads import one_blas_thread


@runtime_checkable
class Embedder(Protocol):
    """Anything that maps texts to an ``(n, dims)`` float array."""

    def embed(self, texts: list[str]) -> np.ndarray:
        """One row per text."""
        ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), computed in float64, as float32.

    Float64 keeps SIMD-dependent summation noise far below float32's last bit, so the
    stored vectors are the same on every CPU.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, np.newaxis]
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)


class LsaEmbedder:
    """Latent semantic analysis: TF-IDF projected on the corpus's top ``dims`` singular vectors.

    Memory stays bounded at any corpus size: vocabulary and idf are counted over every
    document in blocks of ``batch_rows``; the SVD basis is fitted on at most ``fit_sample``
    documents (a seeded random sample; all of them when the corpus is smaller, so results
    on such corpora are those of a fit on everything); the corpus is embedded in blocks.
    """

    name = "lsa"

    def __init__(
        self,
        dims: int = 128,
        *,
        stopwords: str | None = "en",
        seed: int = 0,
        fit_sample: int = 100_000,
        batch_rows: int = 50_000,
    ):
        self.dims = dims
        self.stopwords = stopwords
        self.seed = seed
        self.fit_sample = fit_sample
        self.batch_rows = batch_rows
        self.vocabulary: dict[str, int] = {}
        self.idf = np.empty(0, dtype=np.float32)
        self.components = np.empty((0, 0), dtype=np.float32)
        self._projection_cache: np.ndarray | None = None
        self._remap: np.ndarray | None = None  # tokenizer ids -> canonical ids, while fitting
        self.fit_facts: dict[str, Any] = {}

    def _tokens(self, texts: Sequence[str]) -> list[list[str]]:
        return tokenize(texts, Bm25(stopwords=self.stopwords))

    def shares_tokens_with(self, config: Bm25) -> bool:
        """Whether BM25 tokens under ``config`` are this embedder's tokens (so one pass serves both)."""
        return config.stemmer is None and config.stopwords == self.stopwords

    def fit(self, texts: list[str], *, tokens: Any = None) -> LsaEmbedder:
        """Learn vocabulary, idf and the SVD basis from the corpus ``texts``.

        ``tokens``: the bm25s ``Tokenized`` of ``texts`` under this embedder's settings, when
        the caller already has it (see ``shares_tokens_with``).
        """
        self._fit_ids(self._ids(texts, tokens))
        return self

    def fit_embed(self, texts: list[str], *, tokens: Any = None) -> np.ndarray:
        """``fit(texts)`` then the unit-length vectors of ``texts``, tokenising them once."""
        ids = self._ids(texts, tokens)
        self._fit_ids(ids)
        out = np.empty((len(ids), self.output_dims), dtype=np.float32)
        for start, stop in self._blocks(len(ids)):
            weighted = self._weigh(self._counts_of_ids(ids[start:stop], self._remap))
            out[start:stop] = normalize_rows(normalize_rows(weighted @ self._projection()))
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length LSA vectors; words unseen at fit time are ignored."""
        if not self.vocabulary:
            raise RuntimeError("LsaEmbedder.embed before fit(): fit it on the corpus first")
        weighted = self._weigh(self._counts(self._tokens(texts)))
        return normalize_rows(weighted @ self._projection())

    def _ids(self, texts: list[str], tokens: Any) -> list[list[int]]:
        """Token ids of ``texts`` in a canonical vocabulary (terms sorted), whatever the corpus
        order: shuffling the corpus then changes no sum's order, so no vector's last bits."""
        if tokens is None:
            tokens = tokenize(texts, Bm25(stopwords=self.stopwords), as_ids=True)
        terms = sorted(tokens.vocab)
        self.vocabulary = {term: i for i, term in enumerate(terms)}
        self._remap = np.empty(len(terms), dtype=np.int32)
        self._remap[[tokens.vocab[t] for t in terms]] = np.arange(len(terms), dtype=np.int32)
        return tokens.ids

    def _blocks(self, n: int) -> list[tuple[int, int]]:
        return [(a, min(a + self.batch_rows, n)) for a in range(0, n, self.batch_rows)]

    def _fit_ids(self, ids: list[list[int]]) -> None:
        n = len(ids)
        df = np.zeros(len(self.vocabulary), dtype=np.int64)
        for start, stop in self._blocks(n):
            df += np.bincount(
                self._counts_of_ids(ids[start:stop], self._remap).indices, minlength=len(df)
            )
        self.idf = (np.log((1 + n) / (1 + df)) + 1).astype(np.float32)
        rows = np.arange(n)
        if n > self.fit_sample:
            rng = np.random.default_rng(self.seed)
            rows = np.sort(rng.choice(n, self.fit_sample, replace=False))
        sample = self._weigh(self._counts_of_ids([ids[i] for i in rows], self._remap))
        with one_blas_thread():
            self.components = _top_right_singular_vectors(sample, self.dims, self.seed)
        self._projection_cache = None
        self._projection()
        self.fit_facts = {"documents": n, "fit_rows": len(rows), "fit_nnz": int(sample.nnz)}

    def _counts_of_ids(
        self, ids: Sequence[Sequence[int]], remap: np.ndarray | None = None
    ) -> sp.csr_matrix:
        lengths = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
        cols = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int32, count=lengths.sum())
        if remap is not None:
            cols = remap[cols]
        rows = np.repeat(np.arange(len(ids), dtype=np.int32), lengths)
        data = np.ones(len(cols), dtype=np.float32)
        counts = sp.csr_matrix((data, (rows, cols)), shape=(len(ids), len(self.vocabulary)))
        counts.sum_duplicates()
        return counts

    def _projection(self) -> np.ndarray:
        # (vocabulary, dims), C-contiguous: sparse @ components.T copied the whole matrix per call.
        # ``components`` becomes its transposed view, so the basis is held once (and stays a
        # memory map when loaded from a cached KB).
        if self._projection_cache is None:
            self._projection_cache = np.ascontiguousarray(self.components.T)
            self.components = self._projection_cache.T
        return self._projection_cache

    def _counts(self, tokens: list[list[str]]) -> sp.csr_matrix:
        vocab = self.vocabulary
        return self._counts_of_ids([[vocab[t] for t in row if t in vocab] for row in tokens])

    def _weigh(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        weighted = counts.copy()
        weighted.data = 1 + np.log(weighted.data)
        return sp.csr_matrix(weighted.multiply(self.idf[np.newaxis, :]))

    @property
    def output_dims(self) -> int:
        """Dimensions actually kept (``dims`` capped by the corpus size)."""
        return int(self.components.shape[0])

    def config(self) -> dict[str, Any]:
        """Settings for manifests."""
        return {
            "embedder": "lsa",
            "dims": self.dims,
            "stopwords": self.stopwords,
            "seed": self.seed,
            "fit_sample": self.fit_sample,
        }

    def save(self, folder: Path) -> None:
        """vocabulary as JSON, idf and components as ``.npy`` (no pickle)."""
        folder.mkdir(parents=True, exist_ok=True)
        terms = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        (folder / "lsa.json").write_text(json.dumps({**self.config(), "terms": terms}), "utf-8")
        np.save(folder / "lsa_idf.npy", self.idf, allow_pickle=False)
        np.save(folder / "lsa_components.npy", self.components, allow_pickle=False)

    @classmethod
    def load(cls, folder: Path) -> LsaEmbedder:
        """Read an embedder written by ``save``."""
        state = json.loads((folder / "lsa.json").read_text("utf-8"))
        embedder = cls(
            state["dims"],
            stopwords=state["stopwords"],
            seed=state["seed"],
            fit_sample=state.get("fit_sample", 100_000),
        )
        embedder.vocabulary = {term: i for i, term in enumerate(state["terms"])}
        embedder.idf = np.load(folder / "lsa_idf.npy", allow_pickle=False)
        embedder.components = load_mapped(folder / "lsa_components.npy")
        embedder._projection_cache = None
        return embedder


def _top_right_singular_vectors(matrix: sp.csr_matrix, dims: int, seed: int) -> np.ndarray:
    """The top ``dims`` right singular vectors (rows), largest first; dense SVD when tiny."""
    smallest = min(matrix.shape)
    if smallest == 0 or matrix.nnz == 0:
        return np.zeros((1, matrix.shape[1]), dtype=np.float32)
    if dims < smallest - 1:
        _, values, vt = svds(matrix.astype(np.float64), k=dims, random_state=seed)
    else:
        _, values, vt = np.linalg.svd(matrix.toarray().astype(np.float64), full_matrices=False)
        vt = vt[:dims]
        values = values[:dims]
    order = np.argsort(-values, kind="stable")
    # Directions with a zero singular value span no document: their basis is arbitrary (it
    # follows the corpus order), and a query's part along them would change its cosines.
    order = (
        order[values[order] > values.max(initial=0.0) * _RANK_TOLERANCE] if len(order) else order
    )
    if len(order) == 0:
        return np.zeros((1, matrix.shape[1]), dtype=np.float32)
    return np.ascontiguousarray(vt[order], dtype=np.float32)


_RANK_TOLERANCE = 1e-9  # relative singular value below which a direction is numerical noise


class SentenceTransformerEmbedder:
    """A local sentence-transformers model (never downloaded: ``local_files_only=True``)."""

    name = "sentence_transformers"

    def __init__(
        self, model: str, *, batch_size: int = 64, device: str | None = None, **options: Any
    ):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ImportError(
                "SentenceTransformerEmbedder needs: pip install sentence-transformers"
            ) from None
        self.model_name = model
        self.batch_size = batch_size
        self.model = SentenceTransformer(model, device=device, local_files_only=True, **options)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Normalised sentence embeddings."""
        vectors = self.model.encode(
            list(texts), batch_size=self.batch_size, show_progress_bar=False
        )
        return normalize_rows(vectors)

    def config(self) -> dict[str, Any]:
        """Settings for manifests."""
        return {"embedder": "sentence_transformers", "model": self.model_name}


def embedder_for(dense: Any) -> Embedder:
    """The embedder a recipe's ``Dense`` settings ask for (unfitted)."""
    if dense.embedder == "lsa":
        return LsaEmbedder(dense.dims, **dense.options)
    return SentenceTransformerEmbedder(dense.model, **dense.options)


__all__ = [
    "Embedder",
    "LsaEmbedder",
    "SentenceTransformerEmbedder",
    "embedder_for",
    "normalize_rows",
]
