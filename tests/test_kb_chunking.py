"""Chunking: windows cover the text, offsets slice the document, ids map back to documents."""

from __future__ import annotations

import pytest

from heta_notebook.kb._chunking import chunk_documents, chunk_text
from heta_notebook.kb._recipe import Chunking
from heta_notebook.schema import BenchmarkDocument

TEXT = " ".join(f"w{i}" for i in range(25)) + "\n"


def test_word_windows_with_overlap():
    chunks = chunk_text("d", TEXT, Chunking(unit="words", size=10, overlap=3))
    assert [c.text.split()[0] for c in chunks] == ["w0", "w7", "w14", "w21"]
    assert [len(c.text.split()) for c in chunks] == [10, 10, 10, 4]
    assert chunks[-1].text.split()[-1] == "w24"
    for i, chunk in enumerate(chunks):
        assert TEXT[chunk.start : chunk.end] == chunk.text
        assert (chunk.chunk_id, chunk.document_id, chunk.chunk_index) == (f"d#{i}", "d", i)


@pytest.mark.parametrize(("size", "overlap"), [(1, 0), (4, 1), (7, 6), (25, 5), (100, 0)])
def test_every_word_is_covered_exactly_in_order(size, overlap):
    chunks = chunk_text("d", TEXT, Chunking(unit="words", size=size, overlap=overlap))
    words = TEXT.split()
    step = size - overlap
    for i, chunk in enumerate(chunks):
        assert chunk.text.split() == words[i * step : i * step + size]
    assert chunks[-1].text.split()[-1] == words[-1]


def test_character_windows():
    chunks = chunk_text("d", "abcdefghij", Chunking(unit="characters", size=4, overlap=1))
    assert [c.text for c in chunks] == ["abcd", "defg", "ghij"]
    assert [(c.start, c.end) for c in chunks] == [(0, 4), (3, 7), (6, 10)]


def test_whole_documents_and_empty_documents():
    documents = [
        BenchmarkDocument(document_id="a", text="one two three"),
        BenchmarkDocument(document_id="b", text=""),
        BenchmarkDocument(document_id="c", data=b"bytes too"),
    ]
    chunks = chunk_documents(documents, Chunking())
    assert [(c.chunk_id, c.text, c.start, c.end) for c in chunks] == [
        ("a#0", "one two three", 0, 13),
        ("b#0", "", 0, 0),
        ("c#0", "bytes too", 0, 9),
    ]
    assert chunk_text("w", "   ", Chunking(unit="words", size=5))[0].text == "   "
