"""Scores built in bulk at array speed, remembering the columns they were built from.

The BEIR kernel makes hundreds of thousands of scores per run; building them through
pydantic's ``model_construct`` was most of its cost. ``constructed_scores`` builds equal
records directly, and the :class:`ConstructedScores` list it returns lets the columnar
writer take the scores' columns instead of reading each record back.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MemberDescriptorType
from typing import Any

from pydantic import BaseModel

from heta_notebook.schema._records import EvaluationScore

_SCORE_FIELDS = ("name", "value", "passed", "metadata")
_SLOTS = ("__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")


def _fast_construct_ok() -> bool:
    """Whether :func:`constructed_scores` may skip ``model_construct``: EvaluationScore has
    exactly these four fields, no aliases, no post-init, and pydantic keeps its state in the
    slots it fills (checked once at import; anything else falls back to ``model_construct``)."""
    fields = EvaluationScore.__pydantic_fields__
    return (
        tuple(fields) == _SCORE_FIELDS
        and all(f.alias is None and f.validation_alias is None for f in fields.values())
        and not EvaluationScore.__pydantic_post_init__
        and not EvaluationScore.__pydantic_root_model__
        and EvaluationScore.model_config.get("extra") == "allow"
        and all(isinstance(BaseModel.__dict__.get(s), MemberDescriptorType) for s in _SLOTS)
    )


_FAST_CONSTRUCT = _fast_construct_ok()


class ConstructedScores(list[Any]):  # a list of EvaluationScore
    """The scores ``constructed_scores`` built, remembering what they were built from (one
    name; values, passed and metadata per score), so a checkpoint can write their columns
    from those lists instead of reading every record back. Records are frozen, so the two
    never disagree; a plain list everywhere else."""

    def __init__(
        self,
        scores: list[EvaluationScore],
        name: str,
        values: Sequence[float],
        passed: Sequence[bool | None],
        metadata: Sequence[Any],
        metadata_json: Sequence[str | None] | None = None,
    ) -> None:
        super().__init__(scores)
        self.name, self.values, self.passed, self.metadata = name, values, passed, metadata
        self.metadata_json = metadata_json  # each metadata dict as compact JSON, if known


def constructed_scores(
    name: str,
    values: Sequence[float],
    passed: Sequence[bool | None],
    metadata: Sequence[Any],
    metadata_json: Sequence[str | None] | None = None,
) -> list[EvaluationScore]:
    """``EvaluationScore.model_construct(name=name, value=v, passed=p, metadata=m)`` for each
    (v, p, m): equal objects (``__dict__``, fields set, extra, private), ~7x faster, since
    model_construct's per-field alias/default loop was most of the batch path's cost at
    250,000 scores. Values must already be valid (finite floats). ``metadata_json``: each
    metadata dict as ``pydantic_core.to_json`` writes it (None for an empty one), when the
    caller can write it for less (kept for the checkpoint).

    The scores of one call share one fields-set and one (empty) extra dict, as they share
    their metadata dicts: records are frozen, pydantic only mutates those on a copy
    (``model_copy`` copies them first), so treat them as read-only."""
    if not _FAST_CONSTRUCT:
        built = [
            EvaluationScore.model_construct(name=name, value=v, passed=p, metadata=m)
            for v, p, m in zip(values, passed, metadata, strict=True)
        ]
        return ConstructedScores(built, name, values, passed, metadata, metadata_json)
    new, cls, set_dict = object.__new__, EvaluationScore, object.__setattr__
    set_fields, set_extra, set_private = (BaseModel.__dict__[s].__set__ for s in _SLOTS)
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
    return ConstructedScores(scores, name, values, passed, metadata, metadata_json)


__all__ = ["ConstructedScores", "constructed_scores"]
