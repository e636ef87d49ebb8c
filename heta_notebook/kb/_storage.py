"""Saving and loading a ``KnowledgeBase`` folder: JSON, JSONL and ``.npy`` files only (no pickle).

Layout::

    kb.json          format version, name, recipe, benchmark manifest, documents, build facts
    chunks/          the chunk table: texts once in one UTF-8 buffer, positions (``.npy`` columns)
    bm25/            bm25s index files (when the recipe has BM25)
    dense/           embeddings.npy + the embedder's state (when the recipe has a dense index)

Loading memory-maps every array (chunk texts, BM25 scores, embeddings): a cached KB opens in
about the time it takes to read ``kb.json``, and its pages are shared through the OS page cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_notebook._util.redaction import redact
from heta_notebook.kb._bm25 import Bm25Index
from heta_notebook.kb._chunking import ChunkTable
from heta_notebook.kb._dense import DenseIndex
from heta_notebook.kb._recipe import Recipe
from heta_notebook.schema._records import BenchmarkManifest

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.kb._knowledge_base import KnowledgeBase

KB_FORMAT = 3  # 2: chunk table columns; 3: canonical LSA vocabulary, float64-normalised vectors


def save_knowledge_base(kb: KnowledgeBase, folder: Path) -> Path:
    """Write ``kb`` into ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    kb.chunks.save(folder / "chunks")
    if kb.bm25 is not None:
        kb.bm25.save(folder / "bm25")
    if kb.dense is not None:
        kb.dense.save(folder / "dense")
    header = {
        "format": KB_FORMAT,
        "name": kb.name,
        # secrets never stored (e.g. the chat answerer's base_url credentials): a cached KB
        # is loaded with the caller's live recipe, the one that still holds them
        "recipe": redact(kb.recipe.model_dump(mode="json")),
        "benchmark": kb.benchmark.to_dict() if kb.benchmark else None,
        "documents": kb.documents,
        "facts": redact(kb.facts),
    }
    (folder / "kb.json").write_text(json.dumps(header, ensure_ascii=False, default=str), "utf-8")
    return folder


def load_knowledge_base(
    cls: type[KnowledgeBase], folder: Path, *, name: str | None = None, embedder: Any = None
) -> KnowledgeBase:
    """Read a folder written by ``save_knowledge_base``."""
    header_path = folder / "kb.json"
    if not header_path.is_file():
        raise FileNotFoundError(f"no knowledge base at {folder} (kb.json missing)")
    header = json.loads(header_path.read_text("utf-8"))
    if header.get("format") != KB_FORMAT:
        raise ValueError(f"{folder}: KB format {header.get('format')!r}, expected {KB_FORMAT}")
    saved = dict(header["recipe"])
    if isinstance(saved.get("answer"), dict) and saved["answer"].get("kind") == "custom":
        saved["answer"] = None  # a function is not saved: the caller's recipe brings it back
    recipe = Recipe.model_validate(saved)
    chunks = ChunkTable.load(folder / "chunks")
    bm25 = Bm25Index.load(folder / "bm25") if recipe.bm25 else None
    dense = DenseIndex.load(folder / "dense", embedder) if recipe.dense else None
    benchmark = header.get("benchmark")
    return cls(
        recipe,
        chunks,
        header["documents"],
        bm25=bm25,
        dense=dense,
        name=name or header["name"],
        benchmark=BenchmarkManifest.model_validate(benchmark) if benchmark else None,
        facts=header.get("facts", {}),
    )


__all__ = ["KB_FORMAT", "load_knowledge_base", "save_knowledge_base"]
