"""Scores held as the columns they are built from, records built at array speed when read.

The BEIR kernel makes hundreds of thousands of scores per run; building them through
pydantic's ``model_construct`` was most of its cost, then building them at all. A batch
scorer returns one :class:`ConstructedScores` per evaluator (name; values, verdicts and
metadata per case) and a case result holds its row of them as :class:`LazyScores`: the
columnar writer and the run's statistics read the columns, and a record is built (equal to
``model_construct``'s, ~7x faster) only when someone reads it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator, Sequence
from types import MemberDescriptorType
from typing import Any, TypeVar, overload

import numpy as np
from pydantic import BaseModel

from heta_notebook.schema._lazy_tuple import LazyTuple
from heta_notebook.schema._records import EvaluationScore
from heta_notebook.schema._status import ERROR, status_code

_SCORE_FIELDS = ("name", "value", "passed", "metadata")
_SLOTS = ("__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")


@functools.lru_cache(maxsize=32)
def _fast_construct_ok(cls: type[BaseModel], names: tuple[str, ...]) -> bool:
    """Whether a record of ``cls`` given exactly the fields ``names`` (all of them, in their
    order) may be built without ``model_construct``: no aliases, no post-init, extra fields
    allowed, and pydantic keeps its state in the slots filled here (anything else falls
    back to ``model_construct``)."""
    fields = cls.__pydantic_fields__
    return (
        tuple(fields) == names
        and all(f.alias is None and f.validation_alias is None for f in fields.values())
        and not cls.__pydantic_post_init__
        and not cls.__pydantic_root_model__
        and cls.model_config.get("extra") == "allow"
        and all(isinstance(BaseModel.__dict__.get(s), MemberDescriptorType) for s in _SLOTS)
    )


R = TypeVar("R", bound=BaseModel)


def constructed_record(cls: type[R], fields: dict[str, Any]) -> R:
    """``cls.model_construct(**fields)`` when ``fields`` names every field of ``cls`` in its
    order (already valid): the same object (``__dict__``, fields set, extra, private) for a
    fifth of the cost (a run builds one case result per case). ``fields`` becomes the
    record's ``__dict__``."""
    if not _fast_construct_ok(cls, tuple(fields)):
        return cls.model_construct(**fields)
    record = object.__new__(cls)
    object.__setattr__(record, "__dict__", fields)
    _SET_FIELDS(record, set(fields))
    _SET_EXTRA(record, {})
    _SET_PRIVATE(record, None)
    return record


_SET_FIELDS, _SET_EXTRA, _SET_PRIVATE = (BaseModel.__dict__[s].__set__ for s in _SLOTS)
_FAST_CONSTRUCT = _fast_construct_ok(EvaluationScore, _SCORE_FIELDS)


class ConstructedScores(Sequence[EvaluationScore]):
    """One evaluator's scores of a batch, held as the columns they are built from: one name;
    per case a value, a verdict and a metadata dict. The records are built only when read
    (``score(row)`` builds one; iterating builds them all, once): a run's consumers read the
    columns instead (the checkpoint writes them, the run's statistics take the values), so
    most scores of a run never become objects.

    ``metadata`` and ``metadata_json`` may be given as functions building the list on first
    use (e.g. BEIR's per-case facts: nothing is formatted unless someone reads it).
    ``skipped``: when known, the rows whose score is a skip (value 0.0, no verdict, a skip
    reason in its metadata), every other row being scored (no error score); None when
    only the metadata says.
    Records are frozen, so the columns and the records never disagree."""

    def __init__(
        self,
        name: str,
        values: Sequence[float] | np.ndarray,
        passed: Sequence[bool | None],
        metadata: Sequence[Any] | Callable[[], Sequence[Any]],
        metadata_json: Sequence[str | None]
        | Callable[[], Sequence[str | None] | None]
        | None = None,
        skipped: Collection[int] | None = None,
    ) -> None:
        self.name, self.values, self.passed, self.skipped = name, values, passed, skipped
        self._metadata, self._metadata_json = metadata, metadata_json
        self._records: list[EvaluationScore] | None = None

    @property
    def metadata(self) -> Sequence[Any]:
        """Each score's metadata dict (built on first use when given as a function)."""
        if callable(self._metadata):
            self._metadata = self._metadata()
        return self._metadata

    @property
    def metadata_json(self) -> Sequence[str | None] | None:
        """Each metadata dict as compact JSON (None for an empty one), when the scorer can
        write it for less than the checkpoint (None when it cannot)."""
        if callable(self._metadata_json):
            self._metadata_json = self._metadata_json()
        return self._metadata_json

    def score(self, row: int) -> EvaluationScore:
        """The record of one row (built now, not kept unless every record was built)."""
        if self._records is not None:
            return self._records[row]
        value = self.values[row : row + 1]
        values = value.tolist() if hasattr(value, "tolist") else value
        return _built(self.name, values, [self.passed[row]], [self.metadata[row]])[0]

    def records(self) -> list[EvaluationScore]:
        """Every record (built on the first call, then kept)."""
        if self._records is None:
            values = self.values.tolist() if hasattr(self.values, "tolist") else self.values
            self._records = _built(self.name, values, self.passed, self.metadata)
        return self._records

    def __len__(self) -> int:
        return len(self.passed)

    @overload
    def __getitem__(self, index: int) -> EvaluationScore: ...
    @overload
    def __getitem__(self, index: slice) -> list[EvaluationScore]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self.records()[index]
        n = len(self)
        row = index + n if index < 0 else index
        if not 0 <= row < n:
            raise IndexError("list index out of range")
        return self.score(row)

    def __iter__(self) -> Iterator[EvaluationScore]:
        return iter(self.records())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ConstructedScores):
            other = other.records()
        if isinstance(other, list):
            return self.records() == other
        return NotImplemented  # like a list

    __hash__ = None  # type: ignore[assignment]  # like a list

    def __repr__(self) -> str:
        return repr(self.records())


class LazyScores(LazyTuple[EvaluationScore]):
    """One case's scores (in evaluator order) held as a row of its batch's columns, one per
    evaluator: a ``ConstructedScores`` (built on read) or a list of records.

    ``EvaluationCaseResult.scores`` holds one where the batch scorer filled the case; the
    run's statistics and progress read the columns (``columns``, ``row``, ``summaries``)."""

    __slots__ = ("columns", "row")

    def __init__(self, columns: Sequence[Sequence[EvaluationScore]], row: int) -> None:
        self.columns, self.row = columns, row
        self._records = None

    def _length(self) -> int:
        return len(self.columns)

    def _build(self, part: slice) -> tuple[EvaluationScore, ...]:
        row = self.row
        return tuple(
            c.score(row) if isinstance(c, ConstructedScores) else c[row] for c in self.columns[part]
        )

    def summaries(self) -> Iterator[tuple[str, float | None, bool]]:
        """Per score, without building records: its name, its ``numeric`` value and whether
        it is an error score (what a progress bar reads)."""
        if self._records is not None:
            for score in self._records:
                yield score.name, score.numeric, status_code(score.metadata) == ERROR
            return
        row = self.row
        for column in self.columns:
            if isinstance(column, ConstructedScores) and column.skipped is not None:
                value = None if row in column.skipped else float(column.values[row])
                yield column.name, value, False  # known statuses: no metadata read
            else:
                score = column[row]
                yield score.name, score.numeric, status_code(score.metadata) == ERROR


def constructed_scores(
    name: str,
    values: Sequence[float],
    passed: Sequence[bool | None],
    metadata: Sequence[Any],
    metadata_json: Sequence[str | None] | None = None,
) -> ConstructedScores:
    """The records ``EvaluationScore.model_construct(name=name, value=v, passed=p,
    metadata=m)`` for each (v, p, m), built now, as a ``ConstructedScores`` remembering its
    columns. ``metadata_json``: each metadata dict as ``pydantic_core.to_json`` writes it
    (None for an empty one), when the caller can write it for less (kept for the
    checkpoint)."""
    column = ConstructedScores(name, values, passed, metadata, metadata_json)
    column._records = _built(name, values, passed, metadata)
    return column


def _built(
    name: str, values: Sequence[float], passed: Sequence[bool | None], metadata: Sequence[Any]
) -> list[EvaluationScore]:
    """The records, equal to ``model_construct``'s (``__dict__``, fields set, extra, private)
    and ~7x faster, since model_construct's per-field alias/default loop was most of the
    batch path's cost at 250,000 scores. Values must already be valid (finite floats).

    The scores of one call share one fields-set and one (empty) extra dict, as they share
    their metadata dicts: records are frozen, pydantic only mutates those on a copy
    (``model_copy`` copies them first), so treat them as read-only."""
    if not _FAST_CONSTRUCT:
        return [
            EvaluationScore.model_construct(name=name, value=v, passed=p, metadata=m)
            for v, p, m in zip(values, passed, metadata, strict=True)
        ]
    return _fast_scores(name, values, passed, metadata)


def _fast_scores(
    name: str, values: Sequence[float], passed: Sequence[bool | None], metadata: Sequence[Any]
) -> list[EvaluationScore]:
    new, cls, set_dict = object.__new__, EvaluationScore, object.__setattr__
    set_fields, set_extra, set_private = _SET_FIELDS, _SET_EXTRA, _SET_PRIVATE
    fields_set, extra = set(_SCORE_FIELDS), dict[str, Any]()
    scores: list[EvaluationScore] = []
    append = scores.append
    for value, ok, meta in zip(values, passed, metadata, strict=True):
        score = new(cls)
        set_dict(score, "__dict__", {"name": name, "value": value, "passed": ok, "metadata": meta})
        set_fields(score, fields_set)
        set_extra(score, extra)
        set_private(score, None)
        append(score)
    return scores


__all__ = ["ConstructedScores", "LazyScores", "constructed_record", "constructed_scores"]
