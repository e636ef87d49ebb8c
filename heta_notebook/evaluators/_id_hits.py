"""``IdHits``: a plain function's bare result ids held as columns (``LazyResults``), no record
per result.

A system that returns benchmark document ids (``["d3", "d17", ...]``) used to become one
``QueryResult`` per id, then a stamped copy of each (``source.benchmark_document_id``), then
a redaction pass over each; a 5,000-query run built and checked half a million records that
the metrics and the checkpoint only read three fields of. :func:`id_results` keeps the ids and
their documents as two lists instead; the records, when someone reads them, are the stamped
records the slow path builds (``systems._adapt.stamp_documents``), field for field. The
metrics read ``document_scores()``, the checkpoint ``hit_columns()``, the miss classes
``reference_keys()`` (see ``reports._lazy_results``).

Only the clear case takes this path: every id a non-empty stripped string naming a benchmark
document (:func:`~heta_notebook.evaluators._matching.id_document`), whose stamped source
redaction leaves as it is. Anything else (an unknown id, a score, a dict) is read record by
record as before, so every number and every stored byte stays the same.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
from pydantic_core import to_json

from heta_notebook._util.redaction import declared_secrets, redact
from heta_notebook.evaluators._matching import id_document
from heta_notebook.reports._lazy_results import HitColumns, LazyResults
from heta_notebook.schema._records import QueryResult

_NO_KEYS: frozenset[str] = frozenset()


class IdHits:
    """One response's results given as bare ids, with the benchmark document each names."""

    __slots__ = ("ids", "docs")

    def __init__(self, ids: list[str], docs: list[str]) -> None:
        self.ids, self.docs = ids, docs

    def __len__(self) -> int:
        return len(self.ids)

    def records(self, part: slice = slice(None)) -> tuple[QueryResult, ...]:
        """The stamped records, as ``QueryResult(id=...)`` + ``stamp_documents`` build them."""
        construct = QueryResult.model_construct
        return tuple(
            construct(id=rid, source={"benchmark_document_id": doc})
            for rid, doc in zip(self.ids[part], self.docs[part], strict=True)
        )

    def document_scores(self) -> tuple[list[str], list[float] | None]:
        """Each document once, in order of first appearance; no scores (ids carry none)."""
        return list(dict.fromkeys(self.docs)), None

    def reference_keys(self) -> list[tuple[str, frozenset[str], tuple[str, ...]]]:
        """Per result: its id, no direct keys (a stamped source names none), its document."""
        return [(rid, _NO_KEYS, (doc,)) for rid, doc in zip(self.ids, self.docs, strict=True)]

    def hit_columns(self) -> HitColumns:
        """The report's ``results`` columns, as written from the stamped records."""
        n = len(self.ids)
        return HitColumns(
            ids=list(self.ids),
            texts=[""] * n,
            scores=np.full(n, np.nan),
            kind="chunk",
            sources=list(map(_source_json, self.docs)),
            metadata=[None] * n,
        )


_SOURCE_JSON: dict[str, str] = {}


def _source_json(doc: str) -> str:
    """``{"benchmark_document_id": doc}`` as the report's columns write a source dict."""
    text = _SOURCE_JSON.get(doc)
    if text is None:
        if len(_SOURCE_JSON) > 1_000_000:
            _SOURCE_JSON.clear()
        text = _SOURCE_JSON[doc] = to_json({"benchmark_document_id": doc}).decode("utf-8")
    return text


# per documents collection (by id()): the collection, the declared secrets the entries were
# checked against, and each result id's document (None: not for this path)
_MEMO: dict[int, tuple[Collection[str], tuple[str, ...], dict[str, str | None]]] = {}


def id_results(value: Sequence[Any], documents: Collection[str]) -> Sequence[QueryResult] | None:
    """``value`` (a list or tuple of id strings) as lazy stamped results; None when any item
    is not a plain id of one of ``documents`` (then the records path reads it)."""
    if not value or not documents:
        return None
    known = _known(documents)
    try:
        docs = list(map(known.get, value))
    except TypeError:  # an unhashable item (a dict, a list): not a bare id
        return None
    if None in docs:
        for i, item in enumerate(value):
            if docs[i] is None:
                if item.__class__ is not str:
                    return None
                doc = (
                    known[item]
                    if item in known
                    else known.setdefault(item, _document(item, documents))
                )
                if doc is None:  # known not to take this path
                    return None
                docs[i] = doc
    return LazyResults(IdHits(list(value), docs))  # type: ignore[arg-type]  # no None left


def _known(documents: Collection[str]) -> dict[str, str | None]:
    secrets = declared_secrets()
    entry = _MEMO.get(id(documents))
    if entry is None or entry[0] is not documents or entry[1] is not secrets:
        if len(_MEMO) >= 8:  # a few live runs at most: forget the oldest
            _MEMO.pop(next(iter(_MEMO)))
        entry = _MEMO[id(documents)] = (documents, secrets, {})
    return entry[2]


def _document(item: str, documents: Collection[str]) -> str | None:
    """The document a bare id names, when its stamped record is exactly ``(id, that source)``:
    an id that validation leaves as it is, a document that redaction leaves as it is."""
    if not item or item.strip() != item:
        return None
    doc = id_document(item, documents)
    if doc is None or doc.strip() != doc or not doc:
        return None
    stored = {"kind": "chunk", "source": {"benchmark_document_id": doc}}  # what is redacted
    return doc if redact(stored) == stored else None


__all__ = ["IdHits", "id_results"]
