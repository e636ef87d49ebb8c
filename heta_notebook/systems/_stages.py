"""Stages: what each step of a pipeline ranked for one query (retrieve → rerank → generate).

A system reports them with :class:`Stages` and returns ``stages.response(...)`` (or puts
``stages.to_metadata()`` under a response's ``metadata["stages"]``). The record is small on
purpose, one entry per stage in pipeline order::

    {"stages": [{"stage": "retrieve", "ids": ["d3", "d7", ...]},
                {"stage": "rerank", "ids": ["d7", "d3", ...], "scores": [0.9, 0.4, ...]}]}

``ids`` are ranked result ids or document ids (best first); ``scores`` and ``document_ids``
(each id's document, when ids are chunk ids) are optional and align with them. Each stage is
also kept as a trace event (``event.stage``, its ``metadata`` the same entry), so explorers
list them. :func:`response_stages` is the one reader (the miss classes of
``analysis._misses`` use it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_notebook.schema._records import QueryResponse, QueryTraceEvent


@dataclass(frozen=True)
class Stage:
    """One pipeline step: its name and the ids it ranked (best first), scores optional."""

    name: str
    ids: tuple[str, ...]
    scores: tuple[float, ...] | None = None
    document_ids: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a stage needs a non-empty name, got {self.name!r}")
        if self.scores is not None and len(self.scores) != len(self.ids):
            raise ValueError(
                f"stage {self.name!r}: {len(self.scores)} scores for {len(self.ids)} ids"
            )
        if self.document_ids is not None and len(self.document_ids) != len(self.ids):
            raise ValueError(
                f"stage {self.name!r}: {len(self.document_ids)} document_ids for "
                f"{len(self.ids)} ids"
            )

    def to_dict(self) -> dict[str, Any]:
        """The stage as kept in ``metadata["stages"]``."""
        out: dict[str, Any] = {"stage": self.name, "ids": list(self.ids)}
        if self.scores is not None:
            out["scores"] = list(self.scores)
        if self.document_ids is not None:
            out["document_ids"] = list(self.document_ids)
        return out


@dataclass
class Stages:
    """Collects a query's stages in pipeline order: ``stages.add("retrieve", ids)``."""

    stages: list[Stage] = field(default_factory=list)

    def add(self, name: str, ids: Iterable[Any], scores: Sequence[float] | None = None) -> Stages:
        """Record stage ``name`` ranking ``ids`` (result ids, or objects with ``.id``)."""
        ranked = tuple(str(getattr(i, "id", i)) for i in ids)
        kept = None if scores is None else tuple(float(s) for s in scores)
        self.stages.append(Stage(name, ranked, kept))
        return self

    def to_metadata(self) -> list[dict[str, Any]]:
        """The list kept under a response's ``metadata["stages"]``."""
        return [stage.to_dict() for stage in self.stages]

    def attach(self, response: QueryResponse) -> QueryResponse:
        """``response`` with these stages in ``metadata["stages"]`` and as trace events."""
        trace = tuple(
            QueryTraceEvent(
                stage=s.name, message=f"{s.name}: {len(s.ids)} ranked", metadata=s.to_dict()
            )
            for s in self.stages
        )
        return response.model_copy(
            update={
                "metadata": {**response.metadata, "stages": self.to_metadata()},
                "trace": (*response.trace, *trace),
            }
        )

    def response(self, results: Any = (), answer: str | None = None, **extra: Any) -> dict:
        """What a system returns: ``{"answer", "results", "metadata": {"stages": ...}}``."""
        return {
            "answer": answer,
            "results": list(results),
            "metadata": {**extra, "stages": self.to_metadata()},
        }


def response_stages(response: QueryResponse | None) -> list[Stage]:
    """The stages a response recorded, in pipeline order (empty when it recorded none).

    Read from ``response.metadata["stages"]``, else from the trace events whose
    ``metadata["ids"]`` is a list; an entry of another shape is a ``ValueError`` naming it.
    """
    if response is None:
        return []
    raw = response.metadata.get("stages")
    if raw is None:
        raw = [
            {**e.metadata, "stage": e.stage}
            for e in response.trace
            if isinstance(e.metadata.get("ids"), list)
        ]
    if not isinstance(raw, list):
        raise ValueError(
            "response.metadata['stages']: expected a list of {'stage': name, 'ids': [...]}, "
            f"got {type(raw).__name__}"
        )
    return [_stage(i, entry) for i, entry in enumerate(raw)]


def _stage(i: int, entry: Any) -> Stage:
    where = f"response.metadata['stages'][{i}]"
    if not isinstance(entry, Mapping) or not isinstance(entry.get("stage"), str):
        raise ValueError(f"{where}: expected {{'stage': name, 'ids': [...]}}, got {entry!r:.80}")
    ids, docs = entry.get("ids"), entry.get("document_ids")
    if not isinstance(ids, (list, tuple)):
        raise ValueError(f"{where}.ids: expected a list of ranked ids, got {ids!r:.80}")
    if docs is not None and not isinstance(docs, (list, tuple)):
        raise ValueError(f"{where}.document_ids: expected a list, got {docs!r:.80}")
    try:
        return Stage(
            entry["stage"],
            tuple(str(x) for x in ids),
            _scores(entry.get("scores")),
            None if docs is None else tuple(str(d) for d in docs),
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from exc


def _scores(value: Any) -> tuple[float, ...] | None:
    return None if value is None else tuple(float(v) for v in value)


__all__ = ["Stage", "Stages", "response_stages"]
