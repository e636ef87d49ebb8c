"""``RecordHits``: a system's ``QueryResult`` records read once into columns, no pass per
consumer.

A user's system (an object with ``query``, a function returning records) answers with
``QueryResult``s that usually name their benchmark document already
(``source.benchmark_document_id``). Each of them used to be read three times in Python per
case: by the stamping check (``systems._adapt.stamp_documents``: does it name a benchmark
document?), by the redaction check (``schema._redact``: would a credential be hidden?) and
by the metrics (``evaluators._matching.document_scores``: which document, at which score?).
:func:`record_results` reads their fields once, in C-level passes over the whole list, and
answers the three questions from those columns: the response then holds a ``LazyResults``
whose records are the system's own records, unchanged (neither stamping nor redaction
changes them on this path, or the path is not taken). The metrics read
``document_scores()``, the checkpoint ``hit_columns()``, the miss classes
``reference_keys()`` (see ``reports._lazy_results``).

Only the clear case takes this path: every result a plain ``QueryResult`` (no subclass, no
extra field) of one kind, with no metadata, whose only document reference is a
``benchmark_document_id`` in its source naming one of the benchmark's documents
(``_matching._only_document_id``), or whose source is empty and whose id names one (then
its record is stamping's copy, built when read), and nothing in the response that
redaction would change
(``schema._redact.unchanged_by_redaction``). Anything else (an unknown document, metadata,
a secret-looking source value, a declared secret) is read record by record as before, so
every number and every stored byte stays the same. Nothing of the records is kept between
calls (the columns are read from each response's own records); only the keys, values and
document names of the clean sources seen, so that a source made of them is not checked
again (``_Checked``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Collection, Iterable, Sequence
from itertools import chain, compress
from operator import attrgetter, itemgetter
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from heta_notebook.evaluators._matching import _OTHER_ID_FIELDS, id_document, reference_keys
from heta_notebook.reports._lazy_results import HitColumns, LazyResults
from heta_notebook.schema._records import QueryResponse, QueryResult
from heta_notebook.schema._redact import unchanged_by_redaction

_DICT = attrgetter("__dict__")
_EXTRA = attrgetter("__pydantic_extra__")
_ID, _TEXT_FIELD, _SCORE, _KIND, _SOURCE, _METADATA = map(
    itemgetter, ("id", "text", "score", "kind", "source", "metadata")
)
_NAMED = itemgetter("benchmark_document_id")
_TEXT = {str}


def _all(column: Iterable[Any], value: Any) -> bool:
    """Whether every item of ``column`` equals ``value``: a list's count, which compares by
    identity first (types, one kind string), cheaper than a set of the column."""
    items = list(column)
    return items.count(value) == len(items)


_Frozen = TypeVar("_Frozen", bound=BaseModel)


class RecordHits:
    """One response's ``QueryResult`` records with their fields as columns and the benchmark
    document each names."""

    __slots__ = ("results", "fields", "kind", "docs", "stamped")

    def __init__(
        self,
        results: tuple[QueryResult, ...],
        fields: list[dict[str, Any]],
        kind: str,
        docs: list[str],
        stamped: dict[int, dict[str, str]] | None = None,
    ) -> None:
        self.results, self.fields, self.kind, self.docs = results, fields, kind, docs
        self.stamped = stamped or {}  # position -> the source stamping gives a bare record

    def __len__(self) -> int:
        return len(self.results)

    def records(self, part: slice = slice(None)) -> tuple[QueryResult, ...]:
        """The records as ``stamp_documents`` leaves them: the system's own, but for a
        record naming no document by its source, its copy stamped with the document its id
        names (redaction leaves them as they are)."""
        if not self.stamped:
            return self.results[part]
        stamped = self.stamped
        rows = range(len(self.results))[part]
        return tuple(
            with_source(self.results[row], stamped[row]) if row in stamped else self.results[row]
            for row in rows
        )

    def document_scores(self) -> tuple[list[str], list[float] | None]:
        """``_matching.document_scores`` of the records: each document once, in order of
        first appearance, with its best score (None when a result has no score)."""
        docs, scores = self.docs, list(map(_SCORE, self.fields))
        scored = None not in scores
        if len(set(docs)) == len(docs):  # the usual case: one result per document
            return list(docs), scores if scored else None
        best: dict[str, float] = {}
        get = best.get
        for doc, score in zip(docs, scores, strict=True):
            value = -math.inf if score is None else score
            previous = get(doc)
            if previous is None or value > previous:
                best[doc] = value
        return list(best), (list(best.values()) if scored else None)

    def reference_keys(self) -> list[tuple[str, frozenset[str], tuple[str, ...]]]:
        """Per result: its id, direct keys and documents (``_matching.reference_keys``)."""
        return [(r.id, *reference_keys(r)) for r in self.records()]

    def hit_columns(self) -> HitColumns:
        """The report's ``results`` columns, as written from the records."""
        from heta_notebook.reports._tables import _json

        fields, n = self.fields, len(self.results)
        return HitColumns(
            ids=list(map(_ID, fields)),
            texts=list(map(_TEXT_FIELD, fields)),
            scores=np.array(list(map(_SCORE, fields)), dtype=np.float64),  # None: NaN, a null
            kind=self.kind,
            sources=[
                _json(self.stamped.get(row) or field["source"]) for row, field in enumerate(fields)
            ],
            metadata=[None] * n,  # this path takes results without metadata only
        )


def record_results(
    response: QueryResponse, documents: Collection[str]
) -> Sequence[QueryResult] | None:
    """``response``'s results as lazy columns over its records; None when any result is not
    plainly a record naming one of ``documents`` (then the records path reads them).
    ``documents``: the benchmark's document ids as a frozenset, as a ``System`` holds them
    (any other collection: None)."""
    results = response.results
    if type(results) is not tuple or not results or not isinstance(documents, frozenset):
        return None
    if not _all(map(type, results), QueryResult) or any(map(_EXTRA, results)):
        return None
    fields = list(map(_DICT, results))
    if any(map(_METADATA, fields)):  # may name a document: the records path reads it
        return None
    kind = fields[0]["kind"]
    sources = list(map(_SOURCE, fields))
    if not _all(map(_KIND, fields), kind) or not _all(map(type, sources), dict):
        return None
    stamped: dict[int, dict[str, str]] = {}
    if all(sources):
        found = _named_documents(sources, documents)
    else:  # records naming no document by their source: stamped with the one their id names
        found = _id_documents(fields, sources, documents, stamped)
    if found is None:
        return None
    docs, unseen = found
    # each distinct value once is enough for the check: kinds, no metadata, and of the
    # sources (as stamped) those whose content was not checked before
    checked, known = [*unseen, *stamped.values()], _checked(documents)
    columns = {"kind": (kind,), "source": checked, "metadata": ()}
    if not unchanged_by_redaction(
        response, columns if checked or kind not in known.kinds else None
    ):
        return None
    known.kinds.add(kind)
    if unseen:
        known.add(unseen, [d for row, d in enumerate(docs) if row not in stamped])
    return LazyResults(RecordHits(results, fields, kind, docs, stamped))


def _named_documents(
    sources: list[dict[str, Any]], documents: frozenset[str]
) -> tuple[list[str], list[dict[str, Any]]] | None:
    """Each result's document when every one names a benchmark document only by
    ``source.benchmark_document_id`` (``_matching._only_document_id`` over columns: a str, no
    other id field; metadata checked by the caller) and it is one of ``documents``: what
    ``stamp_documents`` keeps as it is and ``document_scores`` reads. With them, the sources
    redaction must still check: none when every source is made of checked parts
    (``_Checked``). None otherwise."""
    try:
        named = list(map(_NAMED, sources))
    except KeyError:  # a source without one: the records path
        return None
    if not _all(map(type, named), str):
        return None
    if _checked(documents).holds(named, sources):  # every key, value and name known
        return named, []  # what the checks below found before: clean, naming their documents
    if not _OTHER_ID_FIELDS.isdisjoint(chain.from_iterable(sources)):
        return None
    docs = list(map(str.strip, named))
    if not all(docs) or not documents.issuperset(docs):
        return None
    return docs, sources


def _id_documents(
    fields: list[dict[str, Any]],
    sources: list[dict[str, Any]],
    documents: frozenset[str],
    stamped: dict[int, dict[str, str]],
) -> tuple[list[str], list[dict[str, Any]]] | None:
    """``_named_documents`` for a list where some records have an empty source: each of
    those names the document its id names (``stamp_documents``' rule for a bare id,
    looked up once per distinct id), and gets its stamped source in ``stamped``; None when
    such an id names none (``stamp_documents`` would leave it for the metrics to read) or a
    document that ``document_scores`` would read otherwise (empty, padded)."""
    named_rows = [row for row, source in enumerate(sources) if source]
    found = (
        _named_documents([sources[row] for row in named_rows], documents)
        if named_rows
        else ([], [])
    )
    if found is None:
        return None
    named_docs, unseen = found
    docs: list[str] = [""] * len(sources)
    for row, doc in zip(named_rows, named_docs, strict=True):
        docs[row] = doc
    known = id_documents(documents)
    for row, source in enumerate(sources):
        if source:
            continue
        rid = fields[row]["id"]
        found_doc = (
            known[rid] if rid in known else known.setdefault(rid, id_document(rid, documents))
        )
        if not found_doc or found_doc.strip() != found_doc:
            return None
        docs[row], stamped[row] = found_doc, {"benchmark_document_id": found_doc}
    return docs, unseen


class _Checked:
    """What the sources checked so far (for one documents collection) were made of: their
    sets of keys, their text values and the document names they gave as they are. Each
    passed the checks on its own: a key is text naming neither a credential nor another
    document reference (``_OTHER_ID_FIELDS``), a value is text no redaction rule touches (the
    rules read each value apart: ``_columns_clean`` scans them joined by newlines, which no
    rule's gate spans), a name is a benchmark document's id with no spaces to strip. So a
    source made of a known set of keys, known values and a known name passes every check,
    whichever dict holds them and however it changed since: a run's results name the same
    few thousand documents with the same few keys and values again and again, in new or the
    same dicts, and are not checked again. Anything new (another key, a value never seen,
    one that is not text) takes the checks.

    A reply is read by columns, no iterator per source: its sources' lengths, then, for a
    known set of keys of that length, each key's column (all present and the length equal:
    exactly those keys). Keys and values are found by equality, as the dict comparison this
    replaced found them."""

    __slots__ = ("values", "names", "shapes", "kinds")

    def __init__(self) -> None:
        self.values: set[str] = set()
        self.names: set[str] = set()
        self.kinds: set[str] = set()  # the results' kinds checked (values too)
        # length -> each known set of keys of that length, as getters of its other keys
        self.shapes: dict[int, dict[frozenset[str], tuple[itemgetter[Any], ...]]] = {}

    def holds(self, named: list[str], sources: list[dict[str, Any]]) -> bool:
        """Whether every source names a known document (``named``: each one's
        ``benchmark_document_id``, all text) and holds a known set of keys, whose other
        values are known."""
        if not self.names.issuperset(named):
            return False
        length = len(sources[0])
        if not _all(map(len, sources), length):
            return False  # sources of several shapes: the checks
        for getters in self.shapes.get(length, {}).values():
            try:
                if all(self.values.issuperset(map(get, sources)) for get in getters):
                    return True
            except (KeyError, TypeError):  # not these keys; a value that is not hashable
                continue
        return False

    def add(self, sources: list[dict[str, Any]], docs: list[str]) -> None:
        """Remember what these checked sources (clean, naming ``docs``) are made of: their
        sets of ``str`` keys (16 at most), their ``str`` values, and each name that is its
        document as it is. Past ``_KEEP_VALUES`` values it starts again."""
        if len(self.values) > _KEEP_VALUES:
            self.values, self.names, self.shapes, self.kinds = set(), set(), {}, set()
        named = list(map(_NAMED, sources))
        self.names.update(compress(docs, map(operator.eq, named, docs)))
        values = chain.from_iterable(map(dict.values, sources))
        self.values.update(v for v in values if type(v) is str)
        for keys in set(map(frozenset, sources)):
            shapes = self.shapes.setdefault(len(keys), {})
            if keys not in shapes and len(shapes) < 16 and set(map(type, keys)) == _TEXT:
                others = sorted(keys - {"benchmark_document_id"})
                shapes[keys] = tuple(map(itemgetter, others))


# Per documents collection (by id()): what its checked sources were made of. At most 4
# collections (a system bound to a benchmark has its own) of 300,000 values.
_SOURCES: dict[int, tuple[Collection[str], _Checked]] = {}
_KEEP_VALUES = 300_000  # per collection (the strings are the sources' own: ~20 MB of set)


def _checked(documents: Collection[str]) -> _Checked:
    """The checked sources of this documents collection (see ``_Checked``)."""
    return _memo_of(_SOURCES, documents, 4, _Checked)  # a few live systems at most


def _memo_of(
    memos: dict[int, tuple[Collection[str], Any]],
    documents: Collection[str],
    most: int,
    empty: Callable[[], Any] = dict,
) -> Any:
    """The memo ``memos`` keeps for this documents collection (by identity: a run holds its
    collection for its whole length), ``empty()`` when first asked; past ``most``
    collections the oldest is forgotten."""
    entry = memos.get(id(documents))
    if entry is None or entry[0] is not documents:
        if len(memos) >= most:
            memos.pop(next(iter(memos)))
        entry = memos[id(documents)] = (documents, empty())
    return entry[1]


_ID_DOCUMENTS: dict[int, tuple[Collection[str], dict[str, str | None]]] = {}  # by documents' id()


def id_documents(documents: Collection[str]) -> dict[str, str | None]:
    """The document each result id names among ``documents`` (``id_document``), memoised for
    that collection: a run asks the same few thousand ids thousands of times."""
    return _memo_of(_ID_DOCUMENTS, documents, 8)  # a few live runs at most


def with_source(result: QueryResult, source: dict[str, Any]) -> QueryResult:
    """``result`` with ``source`` replaced (:func:`with_fields`)."""
    return with_fields(result, source=source)


def with_fields(record: _Frozen, **fields: Any) -> _Frozen:
    """``record.model_copy(update=fields)`` for declared fields of a frozen record, without
    pydantic's generic copying: a new ``__dict__`` with ``fields`` replaced, every other
    value shared; the fields set, extra fields and private values copied as ``model_copy``
    copies them. A reply read as columns is one such copy per case (``System.read``)."""
    new = object.__new__(type(record))
    extra, private = record.__pydantic_extra__, record.__pydantic_private__
    object.__setattr__(new, "__dict__", {**record.__dict__, **fields})
    object.__setattr__(
        new, "__pydantic_fields_set__", record.__pydantic_fields_set__ | fields.keys()
    )
    object.__setattr__(new, "__pydantic_extra__", None if extra is None else dict(extra))
    object.__setattr__(
        new,
        "__pydantic_private__",
        None
        if private is None
        else {k: v for k, v in private.items() if v is not PydanticUndefined},
    )
    return new


__all__ = ["RecordHits", "id_documents", "record_results", "with_fields", "with_source"]
