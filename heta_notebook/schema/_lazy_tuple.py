"""``LazyTuple``: a tuple of records held as something cheaper, built on first read.

A run makes records nobody may ever read: 100 results and 25 scores per case. Producers
that hold them as columns (``reports._lazy_results.LazyResults`` for a response's results,
``schema._construct.LazyScores`` for a case's scores) put a ``LazyTuple`` where the record
tuple goes. It behaves as the tuple it stands for (``len``, indexing, slicing, iteration,
``==`` with tuples, ``+``, hashing, pickling and copying as a tuple) and builds the records
only when someone reads them, once; the run's own consumers read the columns instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar, overload

T = TypeVar("T")


class LazyTuple(Sequence[T]):
    """A tuple of records built on first access (then kept). Subclasses say how many there
    are (``_length``) and build them (``_build``: all, or a slice of them)."""

    __slots__ = ("_records",)
    _records: tuple[T, ...] | None

    def _length(self) -> int:
        raise NotImplementedError

    def _build(self, part: slice) -> tuple[T, ...]:
        """The records of ``part`` (``slice(None)``: all), as the eager producer builds them."""
        raise NotImplementedError

    def records(self) -> tuple[T, ...]:
        """The records as a plain tuple (built on the first call, then kept)."""
        if self._records is None:
            self._records = self._build(slice(None))
        return self._records

    @property
    def built(self) -> bool:
        """Whether the records exist yet (a test and debugging aid)."""
        return self._records is not None

    def __len__(self) -> int:
        return len(self._records) if self._records is not None else self._length()

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if self._records is not None:
            return self._records[index]
        if isinstance(index, slice):  # e.g. an answer step reading the top 3: build 3
            return self._build(index)
        n = self._length()
        row = index + n if index < 0 else index
        if not 0 <= row < n:
            raise IndexError("tuple index out of range")
        return self._build(slice(row, row + 1))[0]

    def __iter__(self) -> Iterator[T]:
        return iter(self.records())

    def __reversed__(self) -> Iterator[T]:
        return reversed(self.records())

    def __contains__(self, value: object) -> bool:
        return value in self.records()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyTuple):
            other = other.records()
        if isinstance(other, tuple):
            return self.records() == other
        return NotImplemented  # like a tuple: never equal to a list

    def __hash__(self) -> int:
        return hash(self.records())

    def __add__(self, other: object) -> tuple[T, ...]:
        if isinstance(other, (tuple, LazyTuple)):
            return self.records() + tuple(other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple[T, ...]:
        if isinstance(other, tuple):
            return other + self.records()
        return NotImplemented

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.records(),))  # pickles and copies as the tuple it stands for

    def __repr__(self) -> str:
        return repr(self.records())


__all__ = ["LazyTuple"]
