"""Split documents into chunks that remember where they came from (document, index, offsets).

Offsets are character offsets into the document's text, so ``text[start:end] == chunk.text``.
Word windows start and end on word boundaries (whitespace-separated words); character
windows are plain slices. A document with no text still yields one empty chunk, so every
document is represented in the KB.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from heta_notebook.kb.recipe import Chunking
from heta_notebook.schema import BenchmarkDocument

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Chunk:
    """One indexed passage: ``chunk_id`` is ``"{document_id}#{chunk_index}"``."""

    chunk_id: str
    document_id: str
    chunk_index: int
    start: int
    end: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (for the KB's ``chunks.jsonl``)."""
        return asdict(self)


def chunk_documents(documents: Iterable[BenchmarkDocument], chunking: Chunking) -> list[Chunk]:
    """All chunks of ``documents`` in document order."""
    chunks: list[Chunk] = []
    for document in documents:
        chunks.extend(chunk_text(document.document_id, document.read_text(), chunking))
    return chunks


def chunk_text(document_id: str, text: str, chunking: Chunking) -> list[Chunk]:
    """Chunks of one document's ``text`` under ``chunking``."""
    if chunking.unit == "document" or not text:
        spans = [(0, len(text))]
    elif chunking.unit == "words":
        words = [match.span() for match in _WORD.finditer(text)] or [(0, len(text))]
        spans = [(words[a][0], words[b - 1][1]) for a, b in windows(len(words), chunking)]
    else:
        spans = list(windows(len(text), chunking))
    return [
        Chunk(f"{document_id}#{index}", document_id, index, start, end, text[start:end])
        for index, (start, end) in enumerate(spans)
    ]


def windows(length: int, chunking: Chunking) -> Sequence[tuple[int, int]]:
    """``[start, end)`` windows of ``size`` with ``overlap`` covering ``range(length)``."""
    size = chunking.size or length
    step = size - chunking.overlap
    starts = range(0, max(length - chunking.overlap, 1), step)
    return [(start, min(start + size, length)) for start in starts]


__all__ = ["Chunk", "chunk_documents", "chunk_text", "windows"]
