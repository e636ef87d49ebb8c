"""The dense index: unit-length chunk embeddings and exact cosine search in numpy."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from heta_notebook._util.mapped import load_mapped, plain
from heta_notebook.kb._embedders import (
    Embedder,
    LsaEmbedder,
    SentenceTransformerEmbedder,
    normalize_rows,
)
from heta_notebook.kb._ranking import SCORE_DECIMALS, ScoreVector, Visit, rounded, top_k
from heta_notebook.kb._threads import one_blas_thread

QUERY_BLOCK_BYTES = 256 * 2**20  # scores of one block of queries against every chunk (float32)
_EPS32 = float(np.finfo(np.float32).eps)  # np.finfo costs microseconds per call, per query


class DenseIndex:
    """Chunk vectors (rows, unit length) plus the embedder that maps queries into the same space."""

    def __init__(self, embedder: Embedder, embeddings: np.ndarray):
        self.embedder = embedder
        self.embeddings: np.ndarray
        # a cached KB's mapped float32 rows stay mapped (pages shared through the OS cache):
        # ascontiguousarray copies only another dtype or layout
        self.embeddings = np.ascontiguousarray(plain(embeddings), dtype=np.float32)

    @classmethod
    def build(cls, texts: Sequence[str], embedder: Embedder, *, tokens: Any = None) -> DenseIndex:
        """Fit the embedder on ``texts`` when it can be fitted, then embed them.

        ``tokens`` (bm25s ``Tokenized`` of ``texts``) lets the LSA embedder skip tokenising again.
        """
        if isinstance(embedder, LsaEmbedder):
            with one_blas_thread():
                return cls(embedder, embedder.fit_embed(list(texts), tokens=tokens))
        fit = getattr(embedder, "fit", None)
        if callable(fit):
            fit(list(texts))
        with one_blas_thread():
            return cls(embedder, normalize_rows(embedder.embed(list(texts))))

    @property
    def dims(self) -> int:
        """Vector dimensions."""
        return int(self.embeddings.shape[1]) if self.embeddings.ndim == 2 else 0

    def search(
        self,
        queries: Sequence[str],
        k: int,
        *,
        keys: np.ndarray | None = None,
        visit: Visit | None = None,
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Top-``k`` ``(indices, cosine scores)`` per query, best first, ties by ``keys``.

        Scores are float64 cosines rounded to 1e-6 (``kb._ranking``): a float32 product picks a
        generous pool, which is rescored exactly, so the ranking does not depend on BLAS.
        ``visit(i, rows, scores)`` sees query i's hits and the float32 scores of every chunk
        (with their margin and exact rescoring) while the search holds them (deep ranks).
        """
        k = min(k, len(self.embeddings))
        if k <= 0 or not queries:
            return [(np.empty(0, dtype=np.int64), np.empty(0))] * len(queries)
        block = max(1, QUERY_BLOCK_BYTES // (4 * len(self.embeddings)))
        hits = []
        with one_blas_thread():
            vectors = normalize_rows(self.embedder.embed(list(queries)))
            for start in range(0, len(vectors), block):
                rows = vectors[start : start + block]
                scores = rows @ self.embeddings.T
                for i, (query, approx) in enumerate(zip(rows, scores, strict=True), start):
                    hits.append(self._exact(query, approx, k, keys))
                    if visit is not None:
                        visit(i, hits[-1][0], self._scores(query, approx))
        return hits

    def _margin(self) -> float:
        """How far a float32 cosine may be from the exact one rounded to ``SCORE_DECIMALS``."""
        return 4 * self.dims * _EPS32 + 10.0**-SCORE_DECIMALS

    def _rescored(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Exact (float64, rounded) cosines of ``rows``: the scores results rank by."""
        return rounded(self.embeddings[rows].astype(np.float64) @ query.astype(np.float64))

    def _scores(self, query: np.ndarray, approx: np.ndarray) -> ScoreVector:
        return ScoreVector(approx, self._margin(), lambda rows: self._rescored(query, rows))

    def _exact(
        self, query: np.ndarray, approx: np.ndarray, k: int, keys: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rescore every row the float32 ``approx`` scores cannot rule out, then rank exactly."""
        if k < len(approx):
            kth = np.partition(approx, len(approx) - k)[len(approx) - k]
            pool = np.flatnonzero(approx >= kth - self._margin())
        else:
            pool = np.arange(len(approx))
        chosen, scores = top_k(self._rescored(query, pool), k, None if keys is None else keys[pool])
        return pool[chosen], scores

    def nbytes(self) -> int:
        """Memory of the embedding matrix."""
        return int(self.embeddings.nbytes)

    def save(self, folder: Path) -> None:
        """``embeddings.npy`` plus the embedder's state (LSA) or settings (others)."""
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "embeddings.npy", self.embeddings, allow_pickle=False)
        if isinstance(self.embedder, LsaEmbedder):
            self.embedder.save(folder)
        config = getattr(self.embedder, "config", lambda: {"embedder": "custom"})()
        (folder / "embedder.json").write_text(json.dumps(config), "utf-8")

    @classmethod
    def load(cls, folder: Path, embedder: Embedder | None = None) -> DenseIndex:
        """Read an index written by ``save`` (embeddings memory-mapped, not copied).

        Custom embedders must be passed back in.
        """
        embeddings = load_mapped(folder / "embeddings.npy")
        return cls(embedder or _restore_embedder(folder), embeddings)


def _restore_embedder(folder: Path) -> Any:
    config = json.loads((folder / "embedder.json").read_text("utf-8"))
    if config.get("embedder") == "lsa":
        return LsaEmbedder.load(folder)
    if config.get("embedder") == "sentence_transformers":
        return SentenceTransformerEmbedder(config["model"])
    raise ValueError(f"{folder}: built with a custom embedder; pass it to load(embedder=...)")


__all__ = ["DenseIndex"]
