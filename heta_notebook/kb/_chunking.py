"""Split documents into chunks that remember where they came from (document, index, offsets).

Offsets are character offsets into the document's text, so ``text[start:end] == chunk.text``.
Word windows start and end on word boundaries (whitespace-separated words); character
windows are plain slices. A document with no text still yields one empty chunk, so every
document is represented in the KB.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, overload

import numpy as np

from heta_notebook._util.mapped import load_mapped
from heta_notebook.kb._ranking import tie_keys
from heta_notebook.kb._recipe import Chunking
from heta_notebook.schema._records import BenchmarkDocument

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
        """JSON-friendly form."""
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


class ChunkTable(Sequence[Chunk]):
    """Chunks as columns: every text once, in one UTF-8 buffer, positions in numpy arrays.

    A million chunks cost their text bytes plus ~40 bytes each, not a Python object apiece;
    ``save`` writes the columns as ``.npy`` files and ``load`` memory-maps them, so a cached
    KB opens without reading its texts. Indexing yields ``Chunk`` objects on demand.
    """

    COLUMNS = (
        "text",
        "text_offsets",
        "documents",
        "document_offsets",
        "document",
        "chunk_index",
        "start",
        "end",
    )

    def __init__(self, columns: dict[str, np.ndarray]):
        missing = set(self.COLUMNS) - set(columns)
        if missing:
            raise ValueError(f"chunk table is missing columns: {sorted(missing)}")
        self.columns = columns
        self._text, self._text_offsets = columns["text"], columns["text_offsets"]
        self._document = columns["document"]

    @classmethod
    def from_chunks(cls, chunks: Iterable[Chunk]) -> ChunkTable:
        """Pack ``chunks`` (in order) into columns."""
        text, documents = bytearray(), bytearray()
        text_ends, document_ends, document, chunk_index, start, end = [], [], [], [], [], []
        last = None
        for chunk in chunks:
            text += chunk.text.encode("utf-8")
            text_ends.append(len(text))
            if chunk.document_id != last:
                documents += chunk.document_id.encode("utf-8")
                document_ends.append(len(documents))
                last = chunk.document_id
            document.append(len(document_ends) - 1)
            chunk_index.append(chunk.chunk_index)
            start.append(chunk.start)
            end.append(chunk.end)
        return cls(
            {
                "text": np.frombuffer(text, dtype=np.uint8),
                "text_offsets": np.array([0, *text_ends], dtype=np.int64),
                "documents": np.frombuffer(documents, dtype=np.uint8),
                "document_offsets": np.array([0, *document_ends], dtype=np.int64),
                "document": np.array(document, dtype=np.int64),
                "chunk_index": np.array(chunk_index, dtype=np.int64),
                "start": np.array(start, dtype=np.int64),
                "end": np.array(end, dtype=np.int64),
            }
        )

    def __len__(self) -> int:
        return len(self._document)

    @overload
    def __getitem__(self, index: int) -> Chunk: ...
    @overload
    def __getitem__(self, index: slice) -> list[Chunk]: ...
    def __getitem__(self, index: int | slice) -> Chunk | list[Chunk]:
        if isinstance(index, slice):
            return self.rows(range(*index.indices(len(self))))
        if not -len(self) <= index < len(self):
            raise IndexError(f"chunk {index} out of range ({len(self)} chunks)")
        return self.rows([int(index) % len(self)])[0]

    def __iter__(self) -> Iterator[Chunk]:
        for start in range(0, len(self), 4096):
            yield from self.rows(range(start, min(start + 4096, len(self))))

    def rows(self, indices: Sequence[int] | np.ndarray) -> list[Chunk]:
        """The chunks at ``indices`` (non-negative), gathered column by column: cheap per chunk."""
        rows = np.asarray(indices, dtype=np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= len(self)):
            raise IndexError(f"chunk index out of range ({len(self)} chunks)")
        c = self.columns
        which = self._document[rows]
        text = self._text
        text_from, text_to = (
            self._text_offsets[rows].tolist(),
            self._text_offsets[rows + 1].tolist(),
        )
        names = c["documents"]
        doc_from, doc_to = (
            c["document_offsets"][which].tolist(),
            c["document_offsets"][which + 1].tolist(),
        )
        out = []
        for a, b, d0, d1, index, start, end in zip(
            text_from,
            text_to,
            doc_from,
            doc_to,
            c["chunk_index"][rows].tolist(),
            c["start"][rows].tolist(),
            c["end"][rows].tolist(),
            strict=True,
        ):
            document_id = names[d0:d1].tobytes().decode("utf-8")
            out.append(
                Chunk(
                    f"{document_id}#{index}",
                    document_id,
                    index,
                    start,
                    end,
                    text[a:b].tobytes().decode("utf-8"),
                )
            )
        return out

    @functools.cached_property
    def tie_keys(self) -> np.ndarray:
        """Each row's place among tied results (``kb._ranking``): document id descending, chunk index."""
        offsets = self.columns["document_offsets"].tolist()
        names = self.columns["documents"].tobytes()
        ids = [names[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        return tie_keys(ids, self._document, self.columns["chunk_index"])

    def text(self, index: int) -> str:
        """The text of chunk ``index``."""
        start, end = self._text_offsets[index : index + 2]
        return self._text[start:end].tobytes().decode("utf-8")

    def document_id(self, index: int) -> str:
        """The document id of chunk ``index``."""
        which = self._document[index]
        start, end = self.columns["document_offsets"][which : which + 2]
        return self.columns["documents"][start:end].tobytes().decode("utf-8")

    def save(self, folder: Path) -> None:
        """One ``.npy`` file per column (no pickle)."""
        folder.mkdir(parents=True, exist_ok=True)
        for name in self.COLUMNS:
            np.save(folder / f"{name}.npy", self.columns[name], allow_pickle=False)

    @classmethod
    def load(cls, folder: Path) -> ChunkTable:
        """Memory-map the columns written by ``save`` (nothing is read until used)."""
        return cls({name: load_mapped(folder / f"{name}.npy") for name in cls.COLUMNS})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChunkTable):
            return NotImplemented
        return all(np.array_equal(self.columns[n], other.columns[n]) for n in self.COLUMNS)

    __hash__ = None  # type: ignore[assignment]


__all__ = ["Chunk", "ChunkTable", "chunk_documents", "chunk_text", "windows"]
