"""Saving and loading a ``KnowledgeBase`` folder: JSON, JSONL and ``.npy`` files only (no pickle).

Layout::

    kb.json          format version, name, recipe, benchmark manifest, documents, build facts
    chunks/          the chunk table: texts once in one UTF-8 buffer, positions (``.npy`` columns)
    bm25/            bm25s index files (when the recipe has BM25)
    dense/           embeddings.npy + the embedder's state (when the recipe has a dense index)

Loading memory-maps every array (chunk texts, BM25 scores, embeddings), and its pages are
shared through the OS page cache.

**Sums.** ``kb.json`` names the sha256 of every file under ``chunks/``, ``bm25/`` and
``dense/`` (``"files"``) and is sealed with the sum of its own canonical JSON
(``_util/sums.seal``). Loading checks both before any array is used: one read of each file
(sha256 at about 1 GB/s), so a flipped byte that would still parse (a score, a vector, a
document id) is a ``ValueError`` naming the file, and the runner's cache rebuilds the KB
with a warning instead of retrieving from it. A ``kb.json`` written before sums (no
``_sha256``) is read as it is, unchecked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_notebook._util.redaction import redact
from heta_notebook._util.sums import NO_SUM, damaged_sum_key, file_sha256, seal, unseal
from heta_notebook.kb._bm25 import Bm25Index
from heta_notebook.kb._chunking import ChunkTable
from heta_notebook.kb._dense import DenseIndex
from heta_notebook.kb._recipe import Recipe
from heta_notebook.schema._records import BenchmarkManifest

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.kb._knowledge_base import KnowledgeBase

KB_FORMAT = 3  # 2: chunk table columns; 3: canonical LSA vocabulary, float64-normalised vectors
HEADER = "kb.json"


def save_knowledge_base(kb: KnowledgeBase, folder: Path) -> Path:
    """Write ``kb`` into ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    kb.chunks.save(folder / "chunks")
    written = ["chunks"]
    if kb.bm25 is not None:
        kb.bm25.save(folder / "bm25")
        written.append("bm25")
    if kb.dense is not None:
        kb.dense.save(folder / "dense")
        written.append("dense")
    header = {
        "format": KB_FORMAT,
        "name": kb.name,
        # secrets never stored (e.g. the chat answerer's base_url credentials): a cached KB
        # is loaded with the caller's live recipe, the one that still holds them
        "recipe": redact(kb.recipe.model_dump(mode="json")),
        "benchmark": kb.benchmark.to_dict() if kb.benchmark else None,
        "documents": kb.documents,
        "facts": redact(kb.facts),
        "files": _file_sums(folder, written),
    }
    text = json.dumps(seal(header), ensure_ascii=False, default=str)
    (folder / HEADER).write_text(text, "utf-8")
    return folder


def _file_sums(folder: Path, parts: list[str]) -> dict[str, str]:
    """``{relative path: sha256}`` of every file under ``parts`` of ``folder``."""
    return {
        path.relative_to(folder).as_posix(): file_sha256(path)
        for part in parts
        for path in sorted((folder / part).rglob("*"))
        if path.is_file()
    }


def read_header(folder: Path) -> dict[str, Any]:
    """``kb.json``, its seal and the sum of every file it names checked (a header written
    before sums is taken as it is); a ``ValueError`` naming the file that fails."""
    path = folder / HEADER
    if not path.is_file():
        raise FileNotFoundError(f"no knowledge base at {folder} ({HEADER} missing)")
    header, problem = unseal(path.read_bytes())
    if header is None:
        raise ValueError(f"{path}: {problem}")
    if problem == NO_SUM:
        if damaged_sum_key(header):  # its sum member is there, its name damaged
            raise ValueError(f"{path}: its checksum member is damaged")
        return header  # written before sums: nothing to check against
    sums = header.get("files")
    if not isinstance(sums, dict):
        raise ValueError(f"{path}: sealed, but without the sums of its files")
    for name, expected in sums.items():
        _check_file(folder / name, expected)
    return header


def _check_file(path: Path, expected: Any) -> None:
    try:
        actual = file_sha256(path)
    except FileNotFoundError:
        raise ValueError(f"{path}: missing ({HEADER} names it)") from None
    if actual != expected:
        raise ValueError(
            f"{path}: sha256 {actual[:16]}… differs from {HEADER}'s {str(expected)[:16]}… "
            "(the file is corrupt or was changed)"
        )


def load_knowledge_base(
    cls: type[KnowledgeBase], folder: Path, *, name: str | None = None, embedder: Any = None
) -> KnowledgeBase:
    """Read a folder written by ``save_knowledge_base`` (its sums checked first)."""
    header = read_header(folder)
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


__all__ = ["HEADER", "KB_FORMAT", "load_knowledge_base", "read_header", "save_knowledge_base"]
