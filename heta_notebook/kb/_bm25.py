"""The full-text index: BM25 scored by the ``bm25s`` library (no hand-written scoring loop).

Tokenisation is bm25s's (``tokenize``): lower case, ``\\w\\w+`` runs, stopwords removed, an
optional PyStemmer stemmer. ``tokenize`` is public so a second BM25 implementation can be fed
exactly the same tokens (see ``bench/kb.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from heta_notebook._util.mapped import plain
from heta_notebook.kb._ranking import ScoreVector, Visit, top_k
from heta_notebook.kb._recipe import Bm25

_PATTERN = r"(?u)\b\w\w+\b"


def stemmer_for(config: Bm25) -> Callable[[list[str]], list[str]] | None:
    """PyStemmer's ``stemWords`` for ``config.stemmer``, or None; a clear error when missing."""
    if config.stemmer is None:
        return None
    try:
        import Stemmer  # PyStemmer
    except ImportError:
        raise ImportError(
            f"Bm25(stemmer={config.stemmer!r}) needs PyStemmer: pip install PyStemmer "
            "(or set stemmer=None)"
        ) from None
    return Stemmer.Stemmer(config.stemmer).stemWords


def tokenize(texts: Sequence[str], config: Bm25, *, as_ids: bool = False) -> Any:
    """bm25s tokens for ``texts``: lists of strings, or a ``Tokenized`` (ids + vocab) for indexing."""
    stopwords = list(config.stopwords) if isinstance(config.stopwords, tuple) else config.stopwords
    return bm25s.tokenize(
        list(texts),
        lower=True,
        token_pattern=_PATTERN,
        stopwords=stopwords,
        stemmer=stemmer_for(config),
        return_ids=as_ids,
        show_progress=False,
    )


class Bm25Index:
    """A bm25s retriever over chunk texts; ``search`` returns row indices and scores."""

    def __init__(self, retriever: bm25s.BM25, config: Bm25):
        self.retriever = retriever
        self.config = config

    @classmethod
    def build(cls, texts: Sequence[str], config: Bm25, *, tokens: Any = None) -> Bm25Index:
        """Index ``texts``; ``tokens`` is their ``tokenize(texts, config, as_ids=True)`` if known."""
        retriever = bm25s.BM25(k1=config.k1, b=config.b, method=config.method, delta=config.delta)
        if tokens is None:
            tokens = tokenize(texts, config, as_ids=True)
        retriever.index(tokens, show_progress=False)
        return cls(retriever, config)

    @property
    def size(self) -> int:
        """Number of indexed chunks."""
        return int(self.retriever.scores["num_docs"])

    @property
    def vocabulary_size(self) -> int:
        """Number of distinct terms."""
        return len(self.retriever.vocab_dict)

    def search(
        self,
        queries: Sequence[str],
        k: int,
        *,
        keys: np.ndarray | None = None,
        visit: Visit | None = None,
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Top-``k`` ``(indices, scores)`` per query, best first, ties by ``keys`` (``kb._ranking``).

        Chunks with score 0 (no shared term) are dropped before selecting (a partition of
        every chunk's score, mostly zeros, cost more than the scoring). bm25s scores every
        chunk; the selection is ours, because bm25s's own top-k breaks ties by an unstable sort.
        ``visit(i, rows, scores)`` sees query i's hits and every chunk's score while the search
        holds them (deep ranks, ``kb._deep_rank``); nothing keeps the vector afterwards.
        """
        k = min(k, self.size)
        if k <= 0 or not queries:
            return [(np.empty(0, dtype=np.int64), np.empty(0))] * len(queries)
        hits = []
        for i, tokens in enumerate(tokenize(queries, self.config)):
            ids = self.retriever.get_tokens_ids(tokens)
            if not ids:
                hits.append((np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)))
                scores = np.zeros(self.size, dtype=np.float32)
            else:
                scores = self.retriever.get_scores_from_ids(ids)
                matched = np.flatnonzero(scores > 0)  # usually a small share of the chunks
                rows, best = top_k(scores[matched], k, None if keys is None else keys[matched])
                hits.append((matched[rows], best))
            if visit is not None:
                visit(i, hits[-1][0], ScoreVector(scores, 0.0, scores.__getitem__, floor=0.0))
        return hits

    def save(self, folder: Path) -> None:
        """Write the bm25s index files (``.npy`` arrays + JSON; no pickle)."""
        self.retriever.save(str(folder), show_progress=False)
        (folder / "bm25_config.json").write_text(self.config.model_dump_json(), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> Bm25Index:
        """Read an index written by ``save``; the score arrays are memory-mapped, not copied."""
        config = Bm25.model_validate(json.loads((folder / "bm25_config.json").read_text("utf-8")))
        retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False, allow_pickle=False)
        retriever.scores = {key: plain(value) for key, value in retriever.scores.items()}
        return cls(retriever, config)

    def nbytes(self) -> int:
        """Approximate memory of the score matrix."""
        scores = self.retriever.scores
        return int(sum(scores[key].nbytes for key in ("data", "indices", "indptr")))


__all__ = ["Bm25Index", "stemmer_for", "tokenize"]
