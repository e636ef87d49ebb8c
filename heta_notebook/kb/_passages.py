"""Whether a recipe's chunking cut an evidence passage across a chunk boundary.

A benchmark may say *what text* in a judged document is the evidence: SQuAD gives the answer's
character offset in its context, Heta evidence may carry the passage's text. When no single
chunk of the document holds that text, no chunk can be retrieved *with* the evidence: the miss
is the chunking's doing (``split`` in ``analysis._misses``), however the chunks rank.

A passage with a ``start`` is checked at that offset (and only when the document's text there
is the passage: an offset that does not point at it says nothing); one without is looked for
anywhere in the document, casefolded with whitespace collapsed (as evidence text is matched,
``evaluators._matching``). The document's text is put back from its chunks (``text[start:end]
== chunk.text``; gaps between word windows are whitespace).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

_SPACE = re.compile(r"\s+")


class Passage(NamedTuple):
    """Evidence text in a judged document; ``start``: its character offset, when known."""

    text: str
    start: int | None = None


class Judged(NamedTuple):
    """A judged document of one query and the evidence passages it holds (may be none)."""

    document_id: str
    passages: tuple[Passage, ...] = ()


def is_cut(chunks: Sequence[tuple[int, int, str]], passages: Sequence[Passage]) -> bool | None:
    """True when some passage is in the document but no chunk holds any passage whole; False
    when one chunk holds one; None when no passage could be found in the document at all.

    ``chunks``: the document's chunks as ``(start, end, text)``, in order.
    """
    document = None
    cut = False
    for passage in passages:
        if not passage.text.strip():
            continue
        if any(_holds(chunk, passage) for chunk in chunks):
            return False
        document = _document(chunks) if document is None else document
        cut = cut or _within(document, passage)
    return True if cut else None


def _holds(chunk: tuple[int, int, str], passage: Passage) -> bool:
    start, end, text = chunk
    if passage.start is None:
        return _norm(passage.text) in _norm(text)
    stop = passage.start + len(passage.text)
    inside = start <= passage.start and stop <= end
    return inside and _norm(text[passage.start - start : stop - start]) == _norm(passage.text)


def _within(document: str, passage: Passage) -> bool:
    if passage.start is None:
        return _norm(passage.text) in _norm(document)
    at = document[passage.start : passage.start + len(passage.text)]
    return _norm(at) == _norm(passage.text)


def _document(chunks: Sequence[tuple[int, int, str]]) -> str:
    """The document's text from its chunks (uncovered gaps as spaces)."""
    text = ""
    for start, end, chunk in chunks:
        if end > len(text):
            text += " " * max(start - len(text), 0) + chunk[max(len(text) - start, 0) :]
    return text


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def judged_item(item: Any) -> Judged:
    """``item`` as a ``Judged`` (a bare document id has no passages)."""
    return item if isinstance(item, Judged) else Judged(str(item))


__all__ = ["Judged", "Passage", "is_cut", "judged_item"]
