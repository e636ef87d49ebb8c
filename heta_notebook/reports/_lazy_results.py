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

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, Protocol, overload

import numpy as np

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


class LazyResults(Sequence[QueryResult]):
    """A tuple of ``QueryResult`` held as columns; records are built once, on first access."""

    __slots__ = ("columns", "_records")

    def __init__(self, columns: ResultColumns) -> None:
        self.columns = columns
        self._records: tuple[QueryResult, ...] | None = None

    def records(self) -> tuple[QueryResult, ...]:
        """The records as a plain tuple (built on the first call, then kept)."""
        if self._records is None:
            self._records = self.columns.records()
        return self._records

    @property
    def built(self) -> bool:
        """Whether the records exist yet (a test and debugging aid)."""
        return self._records is not None

    def __len__(self) -> int:
        return len(self._records) if self._records is not None else len(self.columns)

    @overload
    def __getitem__(self, index: int) -> QueryResult: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[QueryResult, ...]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if self._records is not None:
            return self._records[index]
        if isinstance(index, slice):  # e.g. an answer step reading the top 3: build 3
            return self.columns.records(index)
        n = len(self.columns)
        row = index + n if index < 0 else index
        if not 0 <= row < n:
            raise IndexError("tuple index out of range")
        return self.columns.records(slice(row, row + 1))[0]

    def __iter__(self) -> Iterator[QueryResult]:
        return iter(self.records())

    def __reversed__(self) -> Iterator[QueryResult]:
        return reversed(self.records())

    def __contains__(self, value: object) -> bool:
        return value in self.records()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyResults):
            other = other.records()
        if isinstance(other, tuple):
            return self.records() == other
        return NotImplemented  # like a tuple: never equal to a list

    def __hash__(self) -> int:
        return hash(self.records())

    def __add__(self, other: object) -> tuple[QueryResult, ...]:
        if isinstance(other, (tuple, LazyResults)):
            return self.records() + tuple(other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple[QueryResult, ...]:
        if isinstance(other, tuple):
            return other + self.records()
        return NotImplemented

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.records(),))  # pickles and copies as the tuple it stands for

    def __repr__(self) -> str:
        return repr(self.records())


__all__ = ["HitColumns", "LazyResults", "ResultColumns"]
