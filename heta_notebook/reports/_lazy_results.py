"""``LazyResults``: a response's ranked results kept as arrays, records built on first access.

The embedded knowledge base answers a query with row indices and scores; building 100
``QueryResult`` records per query cost more than the search itself. A response it returns
holds a ``LazyResults`` instead of a tuple: it behaves as the tuple of records it stands for
(``len``, indexing, slicing, iteration, ``==`` with tuples, ``+``, pickling as a tuple,
``QueryResponse`` JSON), and builds those records only when someone reads them. The run's own
consumers read the columns directly: the BEIR metrics ask for ``document_scores()`` and the
checkpoint for ``hit_columns()``; no record is built on that path.

A producer passes any object with the ``ResultColumns`` methods.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np

from heta_notebook.schema._lazy_tuple import LazyTuple
from heta_notebook.schema._records import QueryResult


class HitColumns(NamedTuple):
    """The ``results`` table's columns of one response (what ``reports._tables`` writes)."""

    ids: list[str]
    texts: list[str]
    scores: np.ndarray  # float64
    kind: str  # the same for every result
    sources: list[str | None]  # compact JSON, as ``reports._tables`` writes a dict
    metadata: list[str | None]  # compact JSON


class ResultColumns(Protocol):
    """What a producer of array results provides (e.g. ``kb._hits.KbHits``)."""

    def __len__(self) -> int: ...

    def records(self, part: slice = slice(None)) -> tuple[QueryResult, ...]:
        """The results (``part`` of them: default all) as records, exactly as a
        tuple-returning producer would build them."""
        ...

    def document_scores(self) -> tuple[list[str], list[float] | None]:
        """``evaluators._matching.document_scores`` of the records, without building them."""
        ...

    def hit_columns(self) -> HitColumns:
        """The results' table columns, equal to those written from the records."""
        ...

    def reference_keys(self) -> list[tuple[str, frozenset[str], tuple[str, ...]]]:
        """Per result: its id, the keys a reference id equals directly and the documents it
        names (``evaluators._matching``'s reference rule), without building records."""
        ...


class LazyResults(LazyTuple[QueryResult]):
    """A tuple of ``QueryResult`` held as columns; records are built once, on first access
    (``schema._lazy_tuple.LazyTuple``: behaves as the tuple it stands for)."""

    __slots__ = ("columns",)

    def __init__(self, columns: ResultColumns) -> None:
        self.columns = columns
        self._records = None

    def _length(self) -> int:
        return len(self.columns)

    def _build(self, part: slice) -> tuple[QueryResult, ...]:
        return self.columns.records(part)


__all__ = ["HitColumns", "LazyResults", "ResultColumns"]
